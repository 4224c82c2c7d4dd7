"""Relevancy screening: the linearised propagation model (Thms 4.4.2-4.4.3) and the RelRNN memory."""
import types

import numpy as np
import pytest
import torch

from lscnb.models.relevancy import RelRNN
from lscnb.theory import relevancy as theory


def test_four_patterns_at_k_1000():
    g = {p: theory.propagation(p, 0.9, 1001)[1000] for p in theory.PATTERNS}
    assert g["none"] == pytest.approx(1.7e-46, rel=0.05)
    assert g["uniform"] > 1e-3 and g["sparse"] / g["window"] > 1e15
    assert g["sparse"] == pytest.approx(theory.sparse_plateau(0.9, 5), abs=1e-3)
    assert theory.sparse_plateau(0.9, 20) == pytest.approx(0.2041, abs=1e-4)


@pytest.mark.parametrize("lam,combine", [(0.3, "mean"), (0.6, "mean"), (0.9, "mean"), (0.1, "sum"), (0.3, "sum"), (0.45, "sum")])
def test_uniform_attention_power_law(lam, combine):
    a, b = (400, 4000) if combine == "mean" else (800, 8000)
    g = theory.propagation("uniform", lam, b + 1, combine=combine)
    slope = np.log(g[b] / g[a]) / np.log(b / a)
    assert slope == pytest.approx(theory.uniform_exponent(lam, combine), abs=0.02)
    assert theory.uniform_exponent(lam, combine) >= -1


def test_memory_is_bounded_and_scores_pick_the_top():
    torch.manual_seed(0)
    m = RelRNN(3, 8, nu=4, rho=3)
    _, attn = m(torch.randn(2, 30, 3), return_attention=True)
    assert all(idx.shape[1] <= 7 for idx, _ in attn)
    assert all(torch.allclose(a.sum(-1), torch.ones(2)) for _, a in attn)
    # streaming top-rho against brute force on hand-made scores
    slots, idx, score = torch.zeros(1, 3, 2), torch.full((1, 3), -1), torch.full((1, 3), -float("inf"))
    scores = [0.5, 2.0, 0.1, 1.5, 3.0, 0.2]
    for i, sc in enumerate(scores):
        slots, idx, score = m._admit(slots, idx, score, torch.zeros(1, 2), i, torch.tensor([sc]))
    assert sorted(idx[0].tolist()) == sorted(np.argsort(scores)[-3:].tolist())


def test_gradient_reaches_a_stored_state():
    torch.manual_seed(0)
    m = RelRNN(4, 16, nu=5, rho=5).double()
    norms = {}
    for T in (100, 400):
        x = torch.randn(2, T, 4, dtype=torch.float64)
        for att in (True, False):
            hs = []
            m(x, pin=(0,), attention=att, hidden=hs)[:, -1].sum().backward()
            norms[(T, att)] = float(hs[0].grad.norm())
            m.zero_grad()
    assert norms[(100, True)] / norms[(400, True)] < 10
    assert norms[(400, False)] < 1e-5 * norms[(400, True)]


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="pattern"):
        theory.propagation("dense", 0.9, 10)
    with pytest.raises(ValueError, match="nu"):
        RelRNN(3, 4, nu=0)


def test_chapter_runs_at_full_configuration_shrunk():
    from lscnb.experiments import relevancy as ex
    ctx = types.SimpleNamespace(device="cpu", seed=0, checkpoint=None, progress=False)
    for name, build in ex.FIGURES.items():
        run = build("full")[0]
        assert run.fn(dict(run.config, seeds=1, width=8, length=20, steps=50, lams=[0.5]), ctx), name
    assert {e["figure"] for e in ex.REPRODUCES if e["figure"]} <= set(ex.FIGURES)
