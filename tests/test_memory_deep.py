"""The curse of memory, Sec. 5 / App. D: BERT-like inputs, deep recurrent networks at initialisation."""

import types

import numpy as np
import pytest
import torch

from lscnb.data import embeddings as E
from lscnb.experiments import memory as ex
from lscnb.models.deep_recurrent import (
    ChronoGRU,
    DeepRecurrentNet,
    DiagonalRecurrence,
    next_token_loss,
    signal_propagation,
)


def test_bert_like_has_the_papers_autocorrelation():
    x = E.bert_like(64, 512, 96, generator=torch.Generator().manual_seed(0))
    R = E.autocorrelation(x, 256)
    assert R[0] == pytest.approx(E.PAPER_FIRST_ORDER, rel=0.02)
    fit = E.fit_two_component(R)
    assert abs(fit["rho"] - E.PAPER_AUTOCORRELATION["rho"]) < 1e-3  # the paper's fitted autocorrelation (App. D.3)
    assert fit["slow"] == pytest.approx(E.PAPER_AUTOCORRELATION["slow"], rel=0.1)
    assert fit["white"] == pytest.approx(E.PAPER_AUTOCORRELATION["white"], rel=0.03)
    assert R[100] == pytest.approx(0.044 * 0.997**100, rel=0.1)


def test_ar1_is_stationary_with_geometric_autocorrelation():
    z = E.ar1(256, 64, 32, 0.8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert z[:, 0].var().item() == pytest.approx(1, rel=0.05)
    assert z[:, -1].var().item() == pytest.approx(1, rel=0.05)
    R = E.autocorrelation(z, 3)
    assert pytest.approx(0.8 ** np.arange(4), abs=0.02) == R


def test_embedding_arguments_are_checked():
    with pytest.raises(ValueError, match="rho"):
        E.ar1(2, 3, 4, 1.5)
    with pytest.raises(ValueError, match="max_lag"):
        E.autocorrelation(torch.zeros(1, 4, 2), 4)
    with pytest.raises(ValueError, match="R must be"):
        E.fit_two_component([1.0, 0.1])
    with pytest.raises(ValueError, match="white"):
        E.bert_like(1, 2, 3, white=-1.0)


def test_real_pipeline_says_what_it_needs():
    try:
        import datasets  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="transformers"):
            E.bert_wikipedia(2, 8)
    else:
        pytest.skip("transformers and datasets are installed; the real pipeline needs a network")


def test_diagonal_layers_initialise_as_the_paper():
    g = torch.Generator().manual_seed(0)
    lru = DiagonalRecurrence(8, 200, nu_min=0.9, nu_max=0.95, param="exp", generator=g)
    with torch.no_grad():
        nu = lru.eigenvalues().abs().double()
        gamma = torch.exp(lru.w_gamma).double()
    assert nu.min() >= 0.9 - 1e-6 and nu.max() <= 0.95 + 1e-6
    assert torch.allclose(gamma, torch.sqrt(1 - nu**2), rtol=1e-4)
    crnn = DiagonalRecurrence(8, 16, nu_min=0.5, nu_max=0.6, param="default", generator=g)
    assert {"lam_re", "lam_im"} <= dict(crnn.named_parameters()).keys()
    with pytest.raises(ValueError, match="nu_min"):
        DiagonalRecurrence(4, 4, nu_min=0.9, nu_max=0.5)


def test_chrono_gru_bias_and_orthogonal_recurrence():
    gru = ChronoGRU(6, 32, t_min=10, t_max=20, generator=torch.Generator().manual_seed(0))
    n = 32
    T = torch.exp(gru.cell.bias_ih[n : 2 * n])
    assert T.min() >= 10 - 1e-4 and T.max() <= 20 + 1e-4
    for k in range(3):
        W = gru.cell.weight_hh[k * n : (k + 1) * n].double()
        assert torch.allclose(W @ W.T, torch.eye(n, dtype=torch.float64), atol=1e-5)
    x = torch.randn(3, 5, 6)
    assert gru(x).shape == (3, 5, 32)
    with pytest.raises(ValueError, match="t_min"):
        ChronoGRU(2, 2, t_min=0.0)


@pytest.mark.parametrize(
    "kind,norm", [("crnn", None), ("lru", None), ("gru", None), ("crnn", "layer"), ("lru", "batch")]
)
def test_deep_net_groups_cover_every_parameter(kind, norm):
    model = DeepRecurrentNet(5, kind=kind, d_model=8, depth=2, nu0=0.9, norm=norm)
    names = [n for members in model.groups().values() for _, n in members]
    assert sorted(names) == sorted(n for n, _ in model.named_parameters())
    x = torch.randn(2, 7, 5)
    out = signal_propagation(model, x)
    assert len(out["h2"]) == len(out["out2"]) == 2 and out["loss"] > 0
    assert all(np.isfinite(v[0]) and v[0] > 0 for v in out["grad2"].values())
    assert all(p.grad is None for p in model.parameters())


def test_next_token_loss_compares_with_the_next_input():
    x = torch.arange(6.0).view(1, 6, 1)
    assert next_token_loss(x[:, :] + 1, x).item() == 0.0  # predicting x_{t+1} = x_t + 1 exactly
    with pytest.raises(ValueError, match="kind"):
        DeepRecurrentNet(3, kind="lstm")


def test_deep_figure_builders_and_a_shrunk_full_run():
    full = ex.deep_runs("full")
    assert len(full) == 20 and {r.config["nu0"] for r in full} == set(ex.DEEP_NU0)
    assert {
        (r.config["d_in"], r.config["d_model"], r.config["length"], r.config["batch"] * r.config["batches"])
        for r in full
    } == {(768, 256, 512, 128)}
    assert len({r.key for r in full + ex.deep_runs("quick")}) == 40
    ctx = types.SimpleNamespace(device="cpu", seed=0)
    cfg = dict(full[-1].config, d_in=12, d_model=8, length=16, batch=2, batches=2)
    out = ex.deep_run(cfg, ctx)
    assert len(out["h2"]) == 4 and set(out["grad2"]) == {"lam", "other", "all"}
    assert all(len(v) == 4 for v in out["grad2_layers"].values())
    with pytest.raises(ValueError, match="data"):
        ex.deep_inputs(dict(cfg, data="imdb"), 0)
    ac = ex.autocorrelation_run(
        dict(ex.autocorrelation_runs("full")[0].config, batch=8, length=100, d_in=8, max_lag=10), ctx
    )
    assert ac["R"].shape == (11,) and 0.9 < ac["fit_rho"] < 1.1


# --------------------------------------------------------------------------------------------- App. D.3
from lscnb.models.deep_recurrent import SimplifiedGRU  # noqa: E402
from lscnb.theory import memory as m  # noqa: E402


def test_gated_theory_white_noise_closed_forms():
    lam = np.array([0.3, 0.5, 0.9, 0.99])
    out = m.gated_moments(lam, ((1.0, 0.0),))
    assert out["h2"] == pytest.approx((1 - lam) / (1 + lam), rel=1e-12)
    assert out["dlam2"] == pytest.approx(2 / ((1 - lam) * (1 + lam) ** 3), rel=1e-10)
    assert out["db2"] == pytest.approx(2 * lam**2 * (1 - lam) / (1 + lam) ** 3, rel=1e-10)
    # eq. 161 at lambda = 0.5 and 0.9 (a Monte Carlo simulation gives 1.191 and 2.897)
    assert out["dlam2"][1] == pytest.approx(1.185, abs=1e-3)
    assert m.gated_moments(0.9, ((1.0, 0.0),))["dlam2"][0] == pytest.approx(2.916, abs=1e-3)


def test_gated_theory_finite_length_tends_to_the_stationary_one():
    lam = np.array([0.5, 0.9, 0.99])
    comps = ((0.332, 0.0), (0.044, 0.9))
    far, near = m.gated_moments(lam, comps, steps=3000), m.gated_moments(lam, comps)
    for q in ("h2", "dlam2"):
        assert far[q] == pytest.approx(near[q], rel=1e-8)
    assert m.gated_moments(0.99, m.BERT_COMPONENTS, steps=50)["h2"][0] < m.gated_moments(0.99)["h2"][0]
    with pytest.raises(ValueError, match="lam"):
        m.gated_moments(1.0)
    with pytest.raises(ValueError, match="components"):
        m.gated_moments(0.5, ((1.0, 1.0),))


@pytest.mark.parametrize("lam", [0.5, 0.8, 0.9, 0.95])
def test_gated_theory_matches_monte_carlo(lam):
    """Spec §1.7: h' = lam h + (1 - lam) x, s = dh/dlam with s' = lam s + h - x, on BERT-like inputs."""
    steps = 300
    x = E.bert_like(8192, steps, 1, generator=torch.Generator().manual_seed(int(100 * lam)), dtype=torch.float64)[
        ..., 0
    ]
    h = torch.zeros(8192, dtype=torch.float64)
    s = torch.zeros_like(h)
    for t in range(steps):
        s = lam * s + h - x[:, t]
        h = lam * h + (1 - lam) * x[:, t]
    th = m.gated_moments(lam, steps=steps)
    assert h.pow(2).mean().item() == pytest.approx(th["h2"][0], rel=0.05)
    assert s.pow(2).mean().item() == pytest.approx(th["dlam2"][0], rel=0.05)


@pytest.mark.parametrize("gates", ["constant", "input", "hidden"])
def test_simplified_gru_bias_sensitivity_is_the_jacobian_diagonal(gates):
    from torch.func import jacfwd

    net = SimplifiedGRU(
        5, 6, networks=3, gates=gates, t_max=20, scale_h=2.0, generator=torch.Generator().manual_seed(0)
    ).double()
    x = torch.randn(3, 30, 5, dtype=torch.float64)
    h, diag = net.bias_sensitivity(x)
    b = net.b_f.detach()
    J = jacfwd(lambda bias: net.final_state(x, bias))(b)  # (3, 6, 3, 6)
    ref = torch.stack([torch.diagonal(J[k, :, k, :]) for k in range(3)])
    assert torch.allclose(diag, ref.detach(), atol=1e-12)
    assert torch.allclose(h, net.final_state(x, b).detach(), atol=1e-12)
    if gates != "hidden":  # the units do not couple: the Jacobian is diagonal
        off = J.detach().clone()
        for k in range(3):
            off[k, :, k, :] -= torch.diag(torch.diagonal(J[k, :, k, :]))
        assert off.abs().max() < 1e-12
    with pytest.raises(ValueError, match="gates"):
        SimplifiedGRU(2, 2, gates="forget")


def test_gated_figure_builders_and_a_shrunk_full_run():
    full = ex.gated_runs("full")
    assert [r.config["gates"] for r in full] == ["constant", "input", "hidden"]
    assert {(r.config["networks"], r.config["d"], r.config["length"]) for r in full} == {(100, 256, 512)}
    out = ex.gated_run(
        dict(full[2].config, networks=2, d=4, d_in=6, length=20), types.SimpleNamespace(device="cpu", seed=0)
    )
    assert out["T"].shape == out["h2"].shape == out["db2"].shape == (8,)
    assert np.all((out["T"] >= 1) & (out["T"] <= 256))
    grid = np.linspace(0, 1, 5)
    assert ex.kernel_regression(grid, 2 * np.ones(5), grid) == pytest.approx(2.0)


def test_gru_jacobian_builder_and_a_shrunk_run():
    runs = ex.gru_jacobian_runs("full")
    assert len(runs) == 9 and len({r.key for r in runs + ex.gru_jacobian_runs("quick")}) == 18
    cfg = dict(runs[-1].config, d=5, d_in=4, length=16, offdiag=6)
    ctx = types.SimpleNamespace(device="cpu", seed=cfg["seed"])
    out = ex.gru_jacobian_run(cfg, ctx)
    assert out["lags"][0] == 1 and out["lags"][-1] == 16
    assert out["diag"].shape == (len(out["lags"]), 5) and out["offdiag"].shape == (len(out["lags"]), 6)
    constant = ex.gru_jacobian_run(dict(cfg, scale_x=0.0, scale_h=0.0), ctx)
    assert np.all(constant["offdiag"] == 0)
