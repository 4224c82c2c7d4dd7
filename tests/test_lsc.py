"""The Local Stability Condition: path counting, Lemma 1, the PascalRNN, Corollary 1 and pre-training."""

import math

import numpy as np
import pytest
import torch
from seedcheck import assert_seed_reaches

from lscnb.experiments import lsc as _lsc
from lscnb.models import GRUCell, LSTMCell, RNNCell, Stack
from lscnb.models.ffn import DeepFFN
from lscnb.pretrain import differentiable_radius, final_radii, pretrain_ffn, pretrain_stack, stack_transitions
from lscnb.theory import lsc as theory


def test_parallel_summation_identity():
    for T in range(20):
        for dl in range(10):
            direct = sum(math.comb(dl + dt, dt) for t in range(T + 1) for dt in range(t + 1))
            assert direct == theory.summed_path_count(T, dl)


def test_path_count_growth_regimes():
    T = np.array([1e3, 1e4])
    slope = np.diff(theory.log_binomial(T + 5, T)) / np.diff(np.log(T))
    assert abs(float(slope[0]) - 5) < 0.05  # (i) polynomial in T at fixed depth
    Ts = np.linspace(2000, 10000, 9)
    fit = np.polyfit(Ts, theory.log_binomial(1.01 * Ts, Ts), 1)[0]  # (iii) exponential at fixed ratio
    assert fit == pytest.approx(1.01 * math.log(1.01) - 0.01 * math.log(0.01), rel=0.01)
    assert theory.log_binomial(10100, 10000) / math.log(10) == pytest.approx(242.25, abs=0.01)


def test_lemma1_chi_means_and_variance():
    np.testing.assert_allclose(
        theory.chi_mean([1, 2, 10, 64, 128, 256]), [0.7979, 1.2533, 3.0843, 7.9688, 11.2916, 15.9844], atol=1e-4
    )
    assert abs(float(theory.chi_variance(256)) - 0.5) < 1e-3  # tends to 1/2, not 0


@pytest.mark.parametrize("rho", [1.0, 0.7, 0.5, 0.3])
def test_pascal_closed_form_equals_recursion(rho):
    np.testing.assert_allclose(
        theory.pascal_gradient(100, 10, rho), theory.pascal_gradient_recursion(100, 10, rho), rtol=1e-10
    )


def test_pascal_limits():
    assert theory.pascal_gradient(100, 10, 1.0)[0] == pytest.approx(math.comb(109, 10), rel=1e-10)
    g = theory.pascal_gradient(100, 10, 0.5)
    assert abs(g[: 100 - 1 - 30] - 1).max() < 1e-3  # N >= 3L: exactly unit gain
    for rho in (0.7, 0.3):
        assert theory.pascal_gradient(400, 10, rho)[0] == pytest.approx((rho / (1 - rho)) ** 10, rel=1e-3)


@pytest.mark.parametrize(
    "init,act,lo,hi",
    [("he", "relu", 0.95, 1.15), ("glorot", "linear", 0.95, 1.10), ("orthogonal", "linear", 1 - 1e-6, 1 + 1e-6)],
)
def test_corollary1_radii(init, act, lo, hi):
    net = DeepFFN(64, 64, 10, 1, activation=act, init=init, seed=0).double()
    with torch.no_grad():
        Ms = torch.stack(net.transition_derivatives(torch.randn(4, 64, dtype=torch.float64)))
    r = float(torch.linalg.eigvals(Ms).abs().amax(-1).mean())
    assert lo <= r <= hi


def test_differentiable_radius_and_non_square():
    A = torch.tensor([[0.0, 2.0], [-2.0, 0.0]], requires_grad=True)
    r = differentiable_radius(A)
    r.backward()
    assert float(r.detach()) == pytest.approx(2.0) and A.grad is not None
    assert differentiable_radius(torch.randn(3, 5, 8)).shape == (3,)


def test_stack_transitions_match_jacobian_tooling():
    from lscnb import jacobian

    torch.manual_seed(0)
    stack = Stack([RNNCell(3, 5, activation="tanh"), LSTMCell(5, 4)]).double()
    x = torch.randn(2, 6, 3, dtype=torch.float64)
    ours = stack_transitions(stack, x, 4)
    ref = jacobian.grid_jacobians(stack, x)
    for l in range(2):
        torch.testing.assert_close(ours[f"time{l}"].detach(), ref["time"][l][:, 4])
        torch.testing.assert_close(ours[f"depth{l}"].detach(), ref["depth"][l][:, 4])


def test_pretraining_reaches_its_targets():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    stack = Stack([GRUCell(8 if l == 0 else 12, 12) for l in range(3)])
    hist = pretrain_stack(
        stack, lambda s: torch.randn(4, 10, 8, generator=g), target=1.0, steps=120, lr=1e-2, eps=0.05, progress=False
    )
    radii = final_radii(hist, last=30)
    assert all(abs(v - 1.0) < 0.15 for v in radii.values()), radii
    ffn = DeepFFN(16, 16, 8, 1, activation="cos", init="glorot", seed=0)
    hist = pretrain_ffn(
        ffn, lambda s: torch.randn(2, 16, generator=g), target=1.0, steps=150, lr=1e-3, eps=0.05, progress=False
    )
    assert abs(np.mean(list(final_radii(hist, last=20).values())) - 1.0) < 0.1


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="kappa_clip"):
        from lscnb.pretrain import pretrain

        pretrain(lambda s: {}, {}, kappa_clip=(1.2, 1.5))
    with pytest.raises(ValueError, match="init"):
        DeepFFN(4, 4, 3, 1, init="lecun")
    with pytest.raises(ValueError, match="k must be positive"):
        theory.chi_mean(0)
    with pytest.raises(ValueError, match="dl"):
        theory.path_count(-1, 3)


SMALL = {name: fig.smoke for name, fig in _lsc.FIGURES.items()}  # the registry's shrink per figure
"""Each figure's run shrunk to a fraction of a second (the chapter's full configurations otherwise)."""


@pytest.mark.parametrize("figure", sorted(SMALL))
def test_the_readers_seed_reaches_every_figure(figure):
    """Every figure draws matrices, weights, inputs or batches (none is pure theory): SEED must change it, and only
    SEED. Pre-training runs (target 1) so that its draws are covered too."""
    from lscnb.experiments import lsc as ex
    from lscnb.sweep import Run

    runs = ex.FIGURES[figure]("full")
    run = next((r for r in runs if r.config.get("target") == 1.0 or r.config.get("pretrained")), runs[0])
    assert_seed_reaches(Run(run.chapter, run.figure, run.name, run.fn, dict(run.config, **SMALL[figure])))


def test_every_figure_has_a_seed_test():
    from lscnb.experiments import lsc as ex

    assert set(SMALL) == set(ex.FIGURES)
    assert all(r.config["real_data"] for r in ex.lru_runs("full") + ex.lru_table_runs("full"))


def test_lru_transitions_and_pretraining():
    from lscnb.models.lru import DeepLRU
    from lscnb.pretrain import _block_output, lru_states, lru_transitions, pretrain_lru

    torch.manual_seed(0)
    m = DeepLRU(20, 20, d_model=8, d_state=6, depth=3, tokens=True, dropout=0.0, r_min=0.5, r_max=1.0).double().eval()
    tok = torch.randint(20, (3, 9))
    grid = lru_states(m, tok)
    for (h, x), block in zip(grid, m.blocks):  # the state-wise block output is the block's own
        torch.testing.assert_close(_block_output(block, h, x.real, x.imag), block(h))
    jac = lru_transitions(m, tok, 4)
    assert set(jac) == {"time0", "time1", "time2", "depth1", "depth2"} and jac["depth1"].shape == (3, 12, 12)
    lam = m.blocks[1].lru.eigenvalues().abs()
    assert float(differentiable_radius(jac["time1"]).detach()) == pytest.approx(float(lam.detach().max()))
    x_below = grid[0][1][:, 4]  # depth derivative against a finite difference
    e = torch.zeros(6, dtype=torch.cdouble)
    e[2] = 1e-6

    def state1(xb):
        u = m.blocks[1].norm(_block_output(m.blocks[0], grid[0][0][:, 4], xb.real, xb.imag))
        lru = m.blocks[1].lru
        return torch.complex(u @ lru.B_re.T, u @ lru.B_im.T) * lru.gamma()

    with torch.no_grad():
        fd = (state1(x_below + e) - state1(x_below - e)) / 2e-6
    torch.testing.assert_close(jac["depth1"][:, :6, 2].detach(), fd.real, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(jac["depth1"][:, 6:, 2].detach(), fd.imag, atol=1e-6, rtol=1e-5)
    m = DeepLRU(20, 20, d_model=16, d_state=16, depth=3, tokens=True, dropout=0.1, r_min=0.5, r_max=1.0)
    g = torch.Generator().manual_seed(0)
    hist = pretrain_lru(
        m, lambda s: torch.randint(20, (4, 12), generator=g), target=0.5, steps=60, lr=1e-2, eps=0.05, progress=False
    )
    assert hist.converged and m.training  # reached 1/2 and left the model in training mode
    with pytest.raises(ValueError, match="tokens"):
        lru_transitions(m, torch.zeros(3, dtype=torch.long), 0)


def test_decaying_covariance_statistics():
    from lscnb.experiments.lsc import decaying_covariance

    rng = np.random.default_rng(0)
    a = np.zeros((400, 40))
    a[:, 5] = rng.normal(size=400)
    for t in range(6, 40):  # AR(1) across time, per sample: corr(t0, t0 + k) = 0.5^k
        a[:, t] = 0.5 * a[:, t - 1] + np.sqrt(1 - 0.25) * rng.normal(size=400)
    st = decaying_covariance(a + 1.0)
    assert st["t0"] == 5 and st["corr"][0] == pytest.approx(1.0)
    assert st["corr"][1] == pytest.approx(0.5, abs=0.1) and st["corr"][2] == pytest.approx(0.25, abs=0.1)
    assert np.median(np.abs(st["corr"][10:])) < 0.1 and np.mean(st["pvalue"][10:] > 0.05) > 0.7
    assert st["cov"][0] == pytest.approx(np.var(a[:, 5]), rel=1e-6)
    with pytest.raises(ValueError, match="a must"):
        decaying_covariance(np.zeros(5))
    with pytest.raises(ValueError, match="vary"):
        decaying_covariance(np.ones((5, 4)))


def test_pretraining_to_a_norm():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    stack = Stack([LSTMCell(6 if l == 0 else 10, 10) for l in range(2)])
    hist = pretrain_stack(
        stack,
        lambda s: torch.randn(8, 10, 6, generator=g),
        target=1.0,
        steps=80,
        lr=1e-2,
        eps=0.05,
        measure="norm",
        progress=False,
    )
    with torch.no_grad():
        J = stack_transitions(stack, torch.randn(64, 10, 6, generator=g), 5)["time1"]
    assert abs(float(torch.linalg.matrix_norm(J, ord=2).mean()) - 1) < 0.15, final_radii(hist, last=10)
    with pytest.raises(ValueError, match="measure"):
        pretrain_stack(stack, lambda s: torch.randn(2, 4, 6), steps=1, measure="frobenius")


def test_full_language_model_runs_refuse_the_stand_in(monkeypatch):
    from lscnb.data import markov_corpus
    from lscnb.experiments import lsc as ex

    monkeypatch.setattr(ex.lru, "_corpus", lambda level: markov_corpus(20, lengths=(500, 100, 100)))
    with pytest.raises(FileNotFoundError, match="Penn Treebank"):
        ex._ptb("word", None, real=True)
    assert ex._ptb("word", 300)[0].numel() == 300
    assert ex.lru_targets("bar", 100, 3) == {"time": 100 / 103, "depth": 3 / 103} and ex.lru_targets(0.5, 9, 9) == 0.5


def test_lr_grid_table_and_optima():
    from lscnb.experiments import lsc as ex
    from lscnb.results import Result
    from lscnb.sweep import Collected

    ppl = {
        ("lstm", 1e-2): 5.0,
        ("lstm", 1e-3): 4.0,
        ("lstm", 1e-4): 9.0,
        ("alif+", 1e-2): float("nan"),
        ("alif+", 1e-3): 8.0,
        ("alif+", 1e-4): 7.0,
    }
    results = [
        Result(
            f"{k}-{lr}-s{seed}",
            dict(task="sl-digits", kind=k, lr=lr, width=8, seed=seed),
            metrics=dict(test_ce=np.log(p) + d, train_ce=np.log(p), accuracy=0.5, diverged=not np.isfinite(p)),
        )
        for (k, lr), p in ppl.items()
        for seed, d in ((0, -0.1), (1, 0.1))
    ]
    col = Collected("lsc", "lr_grid", "quick", "quick", results, "cpu", 0, len(results))
    table = ex.lr_grid_table(col)
    assert [r["learning rate"] for r in table[:3]] == [1e-2, 1e-3, 1e-4] and table[0]["cell"] == "lstm"
    assert table[1]["test perplexity"] == pytest.approx(4.0) and table[3]["diverged"] == "2/2"
    optima = {o["cell"]: o for o in ex.lr_optima(col)}
    assert optima["lstm"]["our optimum"] == 1e-3 and optima["lstm"]["paper's optimum (Tab. S1)"] == 1e-2
    assert optima["alif+"]["our optimum"] == 1e-4  # a diverged rate counts as the worst
    assert optima["alif+"]["perplexity range"] == pytest.approx(1.0)
    runs = ex.lr_grid_runs("full")
    assert len(runs) == 2 * 2 * 7 and len({r.key for r in runs}) == len(runs)
    assert {r.config["width"] for r in runs if r.config["kind"] == "lstm"} == {42, 94}


@pytest.mark.parametrize("kind", ["lstm", "alif+"])
def test_the_learning_rate_grid_trains_together_as_alone(kind):
    """Fig. S1's twin: runs that differ only in learning rate, trained together, end as each alone (same initial
    d-RNN, same batches), up to float rounding; a GPU groups the full grid by task and cell, a CPU only the narrow
    sl-MNIST LSTM's (where it pays there)."""
    from lscnb import config
    from lscnb.experiments import lsc as ex
    from lscnb.experiments.lsc.drnn import drnn_group, drnn_run
    from lscnb.runs import group_key
    from lscnb.sweep import RunContext

    p = config.resolve("quick", seed=0, device="cpu")
    cfg = dict(task="sl-digits", kind=kind, depth=2, width=8, target=None, pre_steps=0, pre_lr=0.0, steps=6, batch=8)
    cfgs = [{**cfg, "lr": lr, "seed": 0, "gradient": False, "limit": 40} for lr in (1e-1, 1e-2, 1e-4)]
    ctx = lambda: RunContext(p, "cpu", 0, None, False)  # noqa: E731
    solo = [drnn_run(c, ctx()) for c in cfgs]
    together = drnn_group(cfgs, [ctx() for _ in cfgs])
    for a, b in zip(solo, together):
        np.testing.assert_allclose(b["loss"], a["loss"], rtol=1e-4, atol=1e-6)
        assert b["test_ce"] == pytest.approx(a["test_ce"], rel=1e-4) and b["accuracy"] == pytest.approx(a["accuracy"])
    assert len({round(float(r["loss"][-1]), 6) for r in together}) == 3  # each at its own rate
    runs = ex.lr_grid_runs("full")
    assert len({group_key(r, "cuda") for r in runs}) == 4
    on_cpu = {(r.config["task"], r.config["kind"]) for r in runs if group_key(r, "cpu") is not None}
    assert on_cpu == {("sl-mnist", "lstm")}


def test_pretraining_records_divergence_instead_of_raising():
    from lscnb.pretrain import pretrain

    w = torch.nn.Parameter(torch.eye(3))

    def transitions(step):  # the Jacobian blows up to NaN at step 2
        scale = float("nan") if step >= 2 else 1.0
        return {"time0": (w * scale).expand(4, 3, 3)}

    for measure in ("radius", "norm"):
        hist = pretrain(transitions, {"time0": [w]}, target=0.5, steps=10, measure=measure, progress=False)
        assert hist.diverged and not hist.converged and hist.steps == 2 and len(hist.loss) == 2
