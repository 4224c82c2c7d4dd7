"""The curse of memory, Sec. 5 / App. D: BERT-like inputs, deep recurrent networks at initialisation."""
import math
import types

import numpy as np
import pytest
import torch

from lscnb.data import embeddings as E
from lscnb.experiments import memory as ex
from lscnb.models.deep_recurrent import (ChronoGRU, DeepRecurrentNet, DiagonalRecurrence, next_token_loss,
                                         signal_propagation)


def test_bert_like_has_the_papers_autocorrelation():
    x = E.bert_like(64, 512, 96, generator=torch.Generator().manual_seed(0))
    R = E.autocorrelation(x, 256)
    assert R[0] == pytest.approx(E.PAPER_FIRST_ORDER, rel=0.02)
    fit = E.fit_two_component(R)
    assert abs(fit["rho"] - E.PAPER_AUTOCORRELATION["rho"]) < 1e-3  # spec Q11
    assert fit["slow"] == pytest.approx(E.PAPER_AUTOCORRELATION["slow"], rel=0.1)
    assert fit["white"] == pytest.approx(E.PAPER_AUTOCORRELATION["white"], rel=0.03)
    assert R[100] == pytest.approx(0.044 * 0.997 ** 100, rel=0.1)


def test_ar1_is_stationary_with_geometric_autocorrelation():
    z = E.ar1(256, 64, 32, 0.8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert z[:, 0].var().item() == pytest.approx(1, rel=0.05)
    assert z[:, -1].var().item() == pytest.approx(1, rel=0.05)
    R = E.autocorrelation(z, 3)
    assert R == pytest.approx(0.8 ** np.arange(4), abs=0.02)


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
    assert torch.allclose(gamma, torch.sqrt(1 - nu ** 2), rtol=1e-4)
    crnn = DiagonalRecurrence(8, 16, nu_min=0.5, nu_max=0.6, param="default", generator=g)
    assert {"lam_re", "lam_im"} <= dict(crnn.named_parameters()).keys()
    with pytest.raises(ValueError, match="nu_min"):
        DiagonalRecurrence(4, 4, nu_min=0.9, nu_max=0.5)


def test_chrono_gru_bias_and_orthogonal_recurrence():
    gru = ChronoGRU(6, 32, t_min=10, t_max=20, generator=torch.Generator().manual_seed(0))
    n = 32
    T = torch.exp(gru.cell.bias_ih[n:2 * n])
    assert T.min() >= 10 - 1e-4 and T.max() <= 20 + 1e-4
    for k in range(3):
        W = gru.cell.weight_hh[k * n:(k + 1) * n].double()
        assert torch.allclose(W @ W.T, torch.eye(n, dtype=torch.float64), atol=1e-5)
    x = torch.randn(3, 5, 6)
    assert gru(x).shape == (3, 5, 32)
    with pytest.raises(ValueError, match="t_min"):
        ChronoGRU(2, 2, t_min=0.0)


@pytest.mark.parametrize("kind,norm", [("crnn", None), ("lru", None), ("gru", None), ("crnn", "layer"),
                                       ("lru", "batch")])
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
    assert {(r.config["d_in"], r.config["d_model"], r.config["length"], r.config["batch"] * r.config["batches"])
            for r in full} == {(768, 256, 512, 128)}
    assert len({r.key for r in full + ex.deep_runs("quick")}) == 40
    ctx = types.SimpleNamespace(device="cpu")
    cfg = dict(full[-1].config, d_in=12, d_model=8, length=16, batch=2, batches=2)
    out = ex.deep_run(cfg, ctx)
    assert len(out["h2"]) == 4 and set(out["grad2"]) == {"lam", "other", "all"}
    assert all(len(v) == 4 for v in out["grad2_layers"].values())
    with pytest.raises(ValueError, match="data"):
        ex.deep_inputs(dict(cfg, data="imdb"))
    ac = ex.autocorrelation_run(dict(ex.autocorrelation_runs("full")[0].config, batch=8, length=100, d_in=8,
                                     max_lag=10), ctx)
    assert ac["R"].shape == (11,) and 0.9 < ac["fit_rho"] < 1.1
