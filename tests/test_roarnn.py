"""roaFNN / roaRNN: semi-orthogonal filters, layer Jacobians, the corrected bounds and their counterexample."""

import math
import types

import numpy as np
import pytest
import torch

from lscnb import jacobian
from lscnb.data import find
from lscnb.data.moons import double_moon
from lscnb.experiments import roarnn as _chapter
from lscnb.models.roa import RoaFNN, RoaRNNCell, semi_orthogonal
from lscnb.theory import roa as bounds


@pytest.mark.parametrize("shape", [(2, 2), (1, 2), (2, 1), (190, 190), (64, 16), (16, 64)])
@pytest.mark.parametrize("method", ["paper", "haar", "perm", "identity"])
def test_semi_orthogonal(shape, method):
    q = semi_orthogonal(*shape, method=method, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    n, m = shape
    gram = q.T @ q if n >= m else q @ q.T
    torch.testing.assert_close(gram, torch.eye(min(n, m), dtype=torch.float64), atol=1e-10, rtol=0)


def test_layer_jacobian_is_eq14():
    net = RoaFNN(6, 6, 1, 8, rho=2.0, init_std=None, seed=3).double()
    x = torch.randn(6, dtype=torch.float64)
    analytic = net.hidden_jacobians(x)
    h = net.layer(x.unsqueeze(0), net.W_in, net.b_in, net.O_in)[0]
    auto = torch.func.jacrev(lambda v: net.layer(v.unsqueeze(0), net.W_h[0], net.b_h[0], net.O_h[0])[0])(h)
    torch.testing.assert_close(analytic[0], auto)


def test_gradient_is_alpha_times_vanilla():
    """Eq. 13: with the same W, b, input and upstream gradient, a roa layer's weight gradient is alpha times the
    vanilla layer's."""
    net = RoaFNN(4, 4, 1, 6, rho=1.0, seed=0).double()
    x, g = torch.randn(3, 4, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64)
    W = net.W_h[0].detach().clone().requires_grad_(True)
    (grad_roa,) = torch.autograd.grad((net.layer(x, W, net.b_h[0], net.O_h[0]) * g).sum(), W)
    (grad_van,) = torch.autograd.grad((torch.tanh(x @ W.T + net.b_h[0]) * g).sum(), W)
    torch.testing.assert_close(grad_roa, net.alpha * grad_van)


@pytest.mark.parametrize("maps,rho,sigma", [(10, 2.0, 1.0), (2, 0.9, 1.0), (1000, 5.0, 3.0)])
def test_scalar_counterexample_breaks_the_printed_lower_bound(maps, rho, sigma):
    value = bounds.scalar_counterexample(maps, rho, sigma)
    assert value < bounds.lower_bound_paper(rho, sigma)  # eq. 16 as printed fails
    assert value == pytest.approx(bounds.lower_bound(rho, sigma, maps))  # the corrected bound is tight
    # the same value from an actual width-1 tanh network: x = b = 0 keeps every pre-activation at 0 (phi' = 1 = r)
    net = RoaFNN(1, 1, 1, maps + 3, rho=rho * (maps + 2) / maps, method="identity").double()
    with torch.no_grad():
        net.W_h.fill_(-sigma)
        net.b_h.zero_()
        net.b_in.zero_()
        J = net.hidden_jacobians(torch.zeros(1, dtype=torch.float64))
    assert J.shape[0] == maps
    assert float(torch.prod(J)) == pytest.approx(value, rel=1e-9)


def test_counterexample_network_exactly():
    L, rho, sigma = 11, 2.0, 1.0  # paper's counterexample numbers: IOJ 0.00605 < e^-4 = 0.0183
    assert bounds.scalar_counterexample(L - 1, rho, sigma) == pytest.approx(0.00605, abs=1e-5)
    assert bounds.lower_bound_paper(rho, sigma) == pytest.approx(math.exp(-4))


def test_fnn_singular_values_within_corrected_bounds():
    for L in (100, 1000):
        net = RoaFNN(16, 16, 1, L, rho=1.0, init_std=None, seed=1).double()
        with torch.no_grad():
            logs = jacobian.product_log_singular_values(net.hidden_jacobians(torch.randn(16, dtype=torch.float64)))
        sig = float(torch.linalg.matrix_norm(net.W_h.detach(), ord=2).max())
        assert float(logs.min()) >= math.log(bounds.lower_bound(1.0, sig, L - 1))
        assert float(logs.max()) <= math.log(bounds.upper_bound(1.0, sig, L - 1))
        vanilla = RoaFNN(16, 16, 1, L, rho=None, init_std=None, seed=1).double()
        with torch.no_grad():
            vlogs = jacobian.product_log_singular_values(vanilla.hidden_jacobians(torch.randn(16, dtype=torch.float64)))
        assert float(vlogs.max()) < -15


def test_rnn_singular_values_within_bounds_and_eye_disc():
    T = 1000
    cell = RoaRNNCell(1, 32, alpha=3.0 / T, init_std=None, seed=0).double()
    x = torch.randn(1, T, 1, dtype=torch.float64)
    J, _ = jacobian.time_jacobians(cell, x)
    logs = jacobian.product_log_singular_values(J[0, 1:].detach())
    sig = float(torch.linalg.matrix_norm(cell.weight_hh.detach(), ord=2))
    assert float(logs.min()) >= math.log(bounds.lower_bound(3.0, sig, T))
    assert float(logs.max()) <= math.log(bounds.upper_bound(3.0, sig, T))
    # eigenvalues of one step: annulus for a random O, disc around 1 - alpha for O = I
    alpha = 0.01
    W = torch.randn(128, 128, dtype=torch.float64) / math.sqrt(128)
    D = (torch.rand(128) > 0.5).double().unsqueeze(1)
    s = float(torch.linalg.matrix_norm(W, ord=2))
    O = semi_orthogonal(128, 128, method="haar", dtype=torch.float64)
    lo, hi = bounds.annulus(alpha, s)
    mods = torch.linalg.eigvals(alpha * D * W + (1 - alpha) * O).abs()
    assert float(mods.min()) >= lo and float(mods.max()) <= hi
    c, rad = bounds.eye_disc(alpha, s)
    ev = torch.linalg.eigvals(alpha * D * W + (1 - alpha) * torch.eye(128, dtype=torch.float64))
    assert float((ev - c).abs().max()) <= rad


def test_double_moon():
    x, y = double_moon(1000, seed=0)
    assert x.shape == (1000, 2) and set(y.unique().tolist()) == {-1.0, 1.0}
    assert float(x[:, 0].min()) > -16 and float(x[:, 0].max()) < 24
    with pytest.raises(ValueError, match="w must be"):
        double_moon(10, r=2.0, w=5.0)


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="method"):
        semi_orthogonal(3, 3, method="householder")
    with pytest.raises(ValueError, match="rho must be at most"):
        RoaFNN(2, 2, 1, 5, rho=10.0)
    with pytest.raises(ValueError, match="depth"):
        RoaFNN(2, 2, 1, 2)
    with pytest.raises(ValueError, match="alpha"):
        RoaRNNCell(1, 4, alpha=2.0)
    with pytest.raises(ValueError, match="lower bound needs"):
        bounds.lower_bound(10.0, 3.0, 5)


SHRINK = _chapter.SMOKE  # the chapter's smoke-test shrink (lscnb.experiments.roarnn)
"""Every figure's run cut to seconds (moons keeps its width: 2 or 72; digits gets 8 units, at 4 one epoch can end on
the same test accuracy at two seeds)."""


def shrunk(name: str, run):
    """``run`` (a run of figure ``name``) with the entries of ``SHRINK`` it has."""
    from lscnb.sweep import Run

    cfg = dict(run.config)
    cfg.update(
        {
            k: v
            for k, v in dict(
                SHRINK, width=cfg.get("width") if name == "moons" else 8 if name == "digits" else 4
            ).items()
            if k in cfg
        }
    )
    if cfg.get("source") == "mnist" and find("mnist/t10k-images-idx3-ubyte.gz") is None:
        cfg["source"] = "digits"  # no MNIST files here: the full run would refuse to fall back to a subset
    return Run(run.chapter, run.figure, run.name, run.fn, cfg)


TIMING = {"seconds_per_iteration", "peak_rss_mb"}
"""Outputs that measure the machine, not the run: left out of the seed test."""


@pytest.mark.parametrize("name", ["ioj", "rnn_ioj", "moons", "digits", "copy", "adding", "ablation", "psmnist"])
def test_the_readers_seed_reaches_every_figure(name):
    """Every figure of the chapter samples or trains (none is pure theory): its last quick run, shrunk, repeats at
    one seed and changes at another (seedcheck, without the timings)."""
    from seedcheck import assert_seed_reaches

    from lscnb.experiments import roarnn as ex

    assert set(ex.FIGURES) == {"ioj", "rnn_ioj", "moons", "digits", "copy", "adding", "ablation", "psmnist"}
    run = shrunk(name, ex.FIGURES[name]("quick")[-1])
    assert_seed_reaches(run, ignore=TIMING)


def test_roarnn_sequence_matches_the_cell_and_baselines_are_orthogonal():
    from lscnb.models.roa import PaperBaseline, RoaRNN

    m = RoaRNN(3, 8, 2, alpha=0.1, seed=0).double()
    x = torch.randn(4, 20, 3, dtype=torch.float64)
    h = m.cell.initial_state(4, dtype=torch.float64)
    for t in range(20):
        h = m.cell(h, x[:, t])
    torch.testing.assert_close(m.states(x)[:, -1], h)
    assert m(x).shape == (4, 20, 2)
    eye = RoaRNN(3, 8, 2, alpha=0.1, method="identity", seed=0)
    torch.testing.assert_close(eye.cell.weight_hh, m.cell.weight_hh.float())  # footnote 5: same init, only O differs
    for kind in ("rnn", "lstm"):
        b = PaperBaseline(kind, 3, 8, 2, readout="last")
        assert b(x.float()).shape == (4, 2)
        for block in b.core.weight_hh_l0.detach().split(8):
            torch.testing.assert_close(block @ block.T, torch.eye(8), atol=1e-5, rtol=0)
    with pytest.raises(ValueError, match="kind"):
        PaperBaseline("gru", 3, 8, 2)
    with pytest.raises(ValueError, match="readout"):
        RoaRNN(3, 8, 2, alpha=0.1, readout="first")


def test_task_runs_record_curves_and_baselines():
    from lscnb.experiments import roarnn as ex

    ctx = types.SimpleNamespace(device="cpu", seed=0, checkpoint=None, progress=False)
    out = ex.copy_run(
        dict(
            model="roa",
            lag=5,
            symbols=10,
            width=8,
            batch=4,
            steps=4,
            eval_every=2,
            lr=0.5,
            rho=3.0,
            alpha=3 / 15,
            seed=0,
        ),
        ctx,
    )
    assert len(out["loss"]) == 4 and out["baseline"] == pytest.approx(10 * math.log(8) / 25)
    assert 0 <= out["accuracy"][-1] <= 1
    out = ex.adding_run(dict(model="lstm", length=10, width=8, batch=4, steps=4, eval_every=2, lr=5e-3, seed=0), ctx)
    assert list(out["eval_step"]) == [2, 4] and np.isfinite(out["mse"]).all()


@pytest.mark.parametrize("task", ["copy", "adding"])
def test_roarnn_seeds_train_together_as_alone(task):
    """The copy and adding twins: roaRNN runs that differ only in seed, trained together, record each solo run's
    curves (its own initial weights and batches) up to float rounding; a baseline (nn.RNN, nn.LSTM) trains alone."""
    from lscnb.experiments.roarnn import tasks
    from lscnb.runs import group_key
    from lscnb.sweep import Run

    common = dict(model="roa", width=8, batch=4, steps=4, eval_every=2, lr=0.05, rho=3.0)
    cfg = (
        {**common, "lag": 5, "symbols": 10, "alpha": 3 / 15}
        if task == "copy"
        else {**common, "length": 10, "alpha": 0.1}
    )
    cfgs = [{**cfg, "seed": s} for s in (0, 1, 2)]
    ctxs = [types.SimpleNamespace(device="cpu", seed=s, checkpoint=None, progress=False) for s in (0, 1, 2)]
    run_fn, group_fn = (tasks.copy_run, tasks.copy_group) if task == "copy" else (tasks.adding_run, tasks.adding_group)
    solo = [run_fn(c, x) for c, x in zip(cfgs, ctxs)]
    together = group_fn(cfgs, ctxs)
    for a, b in zip(solo, together):
        np.testing.assert_allclose(b["loss"], a["loss"], rtol=1e-4)
        for k in ("ce", "accuracy", "baseline") if task == "copy" else ("mse",):
            np.testing.assert_allclose(b[k], a[k], rtol=1e-4)
    assert len({float(r["loss"][0]) for r in together}) == 3  # each seed its own model and batches
    keyed = lambda c: group_key(Run("roarnn", task, f"s{c['seed']}", run_fn, c))  # noqa: E731
    assert keyed(cfgs[0]) == keyed(cfgs[1]) is not None
    lstm = [{**c, "model": "lstm", "alpha": None} for c in cfgs[:2]]
    assert keyed(lstm[0]) != keyed(lstm[1])


def test_killed_deep_moons_run_resumes_without_losing_epochs(tmp_path, monkeypatch):
    """The 50,000-layer Fig. 1 run checkpoints every epoch through lscnb.train.fit: a run killed after its second
    checkpoint resumes from it and ends exactly where an uninterrupted run ends."""
    from lscnb import train
    from lscnb.experiments import roarnn as ex

    cfg = dict(label="roaFNN", depth=30, width=2, rho=5.0, optimizer="adam", lr=0.05, epochs=4, seed=0)
    straight = ex.moons_run(cfg, types.SimpleNamespace(seed=0, checkpoint=None, progress=False))
    ckpt = tmp_path / "deep.ckpt"
    save, calls = train._save, []

    class Killed(Exception):
        pass

    def save_then_die(path, state):
        save(path, state)
        calls.append(state["step"])
        if len(calls) == 2:
            raise Killed

    monkeypatch.setattr(train, "_save", save_then_die)
    with pytest.raises(Killed):
        ex.moons_run(cfg, types.SimpleNamespace(seed=0, checkpoint=ckpt, progress=False))
    assert calls == [10, 20] and ckpt.exists()
    monkeypatch.setattr(train, "_save", save)
    resumed = ex.moons_run(cfg, types.SimpleNamespace(seed=0, checkpoint=ckpt, progress=False))
    assert len(resumed["mse"]) == 4
    np.testing.assert_allclose(resumed["mse"], straight["mse"], rtol=1e-5)
    assert resumed["seconds_per_iteration"] > 0 and resumed["peak_rss_mb"] > 0


def test_psmnist_run_on_the_digits_stand_in_drops_the_learning_rate():
    from lscnb.experiments import roarnn as ex

    ctx = types.SimpleNamespace(device="cpu", seed=0, checkpoint=None, progress=False)
    out = ex.psmnist_run(
        dict(source="digits", n_train=0, n_test=0, width=8, rho=0.5, lr=0.1, lr_drop=2, epochs=2, seed=0), ctx
    )
    assert out["length"] == 64 and out["params"] == 8 * 8 + 12 * 8 + 10 and len(out["accuracy"]) == 2
    assert out["accuracy"].min() >= 0 and out["accuracy"].max() <= 1


def test_psmnist_seeds_train_together_as_alone_with_the_rate_drop():
    """Fig. 5's twin: seeds trained together, each on its own shuffles, with the solo run's rate drop (after epoch
    ``lr_drop - 1``): the same losses and test accuracies up to float rounding."""
    from lscnb.experiments.roarnn import psmnist

    cfg = dict(source="digits", n_train=0, n_test=0, width=8, rho=0.5, lr=0.1, lr_drop=2, epochs=3)
    ctxs = [types.SimpleNamespace(device="cpu", seed=s, checkpoint=None, progress=False) for s in (0, 1)]
    solo = [psmnist.psmnist_run({**cfg, "seed": x.seed}, x) for x in ctxs]
    together = psmnist.psmnist_group([{**cfg, "seed": x.seed} for x in ctxs], ctxs)
    for a, b in zip(solo, together):
        np.testing.assert_allclose(b["loss"], a["loss"], rtol=1e-4)
        np.testing.assert_allclose(b["accuracy"], a["accuracy"], atol=1 / 397)  # one test digit at most
        assert b["params"] == a["params"] and len(b["loss"]) == 3 * 14
    nodrop = psmnist.psmnist_run({**cfg, "lr_drop": 9, "seed": 0}, ctxs[0])
    assert not np.allclose(nodrop["loss"][14:], solo[0]["loss"][14:], rtol=1e-4)  # the drop changes the run


def test_bilinear_bytes_predicts_saved_memory_exactly():
    from lscnb.experiments import roarnn as ex
    from lscnb.memprof import bilinear_bytes

    cfg = ex.copy_runs("quick")[-1].config  # a roaRNN run
    predict = bilinear_bytes(lambda t, b: ex.step_saved_bytes(cfg, "copy", t, b))
    assert predict(48, 6) == ex.step_saved_bytes(cfg, "copy", 48, 6)
    with pytest.raises(ValueError, match="lengths"):
        bilinear_bytes(lambda t, b: 0, (8, 8))
    with pytest.raises(ValueError, match="task"):
        ex.step_saved_bytes(cfg, "denoise", 8, 2)


def test_psmnist_table_rows_for_one_seed_and_for_several():
    """Our rows of Fig. 5's table: best / median over seeds, or the one run's best with one seed (the declared
    subset); the gap names only our rows, beside the paper's numbers."""
    from lscnb.experiments.roarnn.psmnist import gap_psmnist, psmnist_table
    from lscnb.results import Result
    from lscnb.sweep import Collected

    def col(accs: dict, scale: str = "full") -> Collected:
        results = [
            Result(f"N{n}-s{s}", {"width": n, "seed": s}, {"params": n * n, "length": 784}, {"accuracy": np.array(a)})
            for n, runs in accs.items()
            for s, a in enumerate(runs)
        ]
        return Collected("roarnn", "psmnist", scale, scale, results, "cpu")

    one = col({178: [[0.9, 0.95, 0.94]]})
    ours = [r for r in psmnist_table(one) if r["source"].startswith("ours")]
    assert ours == [
        {
            "model": "roaRNN (N = 178), 1 seed",
            "parameters": "31,684",
            "test accuracy (%)": "95.00",
            "source": "ours, psMNIST",
        }
    ]
    assert (
        gap_psmnist(one)
        == "roaRNN (N = 178): 95.00% (ours, psMNIST) (paper: 97.24 / 97.88 / 98.25% at N = 178 / 256 / 512)"
    )
    many = psmnist_table(col({16: [[0.5], [0.7], [0.6]]}, "quick"))
    assert many[-1]["model"] == "roaRNN (N = 16), best / median of 3 seeds"
    assert many[-1]["test accuracy (%)"] == "70.00 / 60.00" and many[-1]["source"].startswith("ours, quick scale")
