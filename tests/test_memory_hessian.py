"""Curvature at the optimum (Fig. 4A, B) and Adam's effective learning rates (Fig. 4C, D): lscnb.hessian."""
import types

import numpy as np
import pytest
import torch
from torch import nn

from lscnb import hessian as hs
from lscnb.models.linear_rnn import DenseLinearRNN, DiagonalLRU, conjugate_pair_system


def test_hessian_of_a_quadratic_is_its_matrix():
    model = nn.Linear(3, 1, bias=False).double()
    x = torch.randn(50, 3, dtype=torch.float64)
    H = hs.loss_hessian(model, x, lambda out: 0.5 * out.pow(2).mean())
    torch.testing.assert_close(H, x.T @ x / 50)
    torch.testing.assert_close(hs.gauss_newton(model, x), x.T @ x / 50)


def test_conjugate_pair_students_sit_at_the_optimum_and_hessian_is_gauss_newton():
    system = conjugate_pair_system(3)
    assert torch.allclose(torch.linalg.eigvals(system["A"]).abs().sort().values,
                          system["lam"].abs().sort().values, atol=1e-10)
    assert bool((system["lam"].abs() >= 0.99).all() and (system["lam"].abs() <= 0.993).all())
    dense = DenseLinearRNN.from_system(system["A"], system["B"], system["C"], system["D"])
    diag = DiagonalLRU.from_system(system["lam"], system["b"], system["c"], system["D"])
    x = torch.randn(4, 120, dtype=torch.float64)
    y = dense(x).detach()
    torch.testing.assert_close(diag(x), y, rtol=1e-9, atol=1e-9)
    for model in (dense, diag):
        assert sum(p.numel() for p in model.parameters()) == 25
        H = hs.loss_hessian(model, x, lambda out: 0.5 * (out - y).pow(2).mean())
        torch.testing.assert_close(H, hs.gauss_newton(model, x), rtol=1e-8, atol=1e-8 * float(H.abs().max()))


def test_spectrum_participation_and_group_mass():
    H = torch.diag(torch.tensor([1.0, 5.0, 3.0], dtype=torch.float64))
    vals, vecs = hs.spectrum(H)
    torch.testing.assert_close(vals, torch.tensor([5.0, 3.0, 1.0], dtype=torch.float64))
    torch.testing.assert_close(hs.participation(vecs), torch.ones(3, dtype=torch.float64))
    spread = torch.ones(4, 1, dtype=torch.float64)
    assert float(hs.participation(spread)) == pytest.approx(4.0)
    mass = hs.group_mass(spread, {"a": slice(0, 1), "b": slice(1, 4)})
    assert float(mass["a"]) == pytest.approx(0.25) and float(mass["b"]) == pytest.approx(0.75)
    model = DenseLinearRNN(4, seed=0)
    assert hs.parameter_groups(model) == {"A": slice(0, 16), "B": slice(16, 20), "C": slice(20, 24), "D": slice(24, 25)}


def test_adam_effective_lr_is_lr_over_root_mean_square_gradient():
    w = nn.Parameter(torch.zeros(2))
    model = nn.Module()
    model.w = w
    opt = torch.optim.Adam([w], lr=0.1, betas=(0.9, 0.5), eps=1e-8)
    grads = [torch.tensor([1.0, 10.0]), torch.tensor([3.0, 10.0])]
    for g in grads:
        opt.zero_grad()
        w.grad = g.clone()
        opt.step()
    v = 0.5 * (0.5 * grads[0] ** 2) + 0.5 * grads[1] ** 2  # exp_avg_sq after two steps with beta2 = 0.5
    expected = 0.1 / (torch.sqrt(v / (1 - 0.5 ** 2)) + 1e-8)
    torch.testing.assert_close(hs.adam_effective_lr(opt, model)["w"], expected)


def test_bad_arguments_name_themselves():
    with pytest.raises(TypeError, match="model"):
        hs.loss_hessian("not a module", torch.zeros(1), lambda o: o.sum())
    with pytest.raises(TypeError, match="loss_fn"):
        hs.loss_hessian(nn.Linear(2, 1), torch.zeros(1, 2), None)
    with pytest.raises(ValueError, match="H"):
        hs.spectrum(torch.zeros(2, 3))
    with pytest.raises(TypeError, match="optimizer"):
        hs.adam_effective_lr(torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1), nn.Linear(2, 1))


def test_figure_four_runs_shrunk():
    from lscnb.experiments import memory as ex
    ctx = types.SimpleNamespace(device="cpu", seed=0, checkpoint=None, progress=False)
    out = ex.hessian_run(dict(ex.hessian_runs("full")[0].config, batch=4, length=150), ctx)
    assert out["optimum_loss_dense"] < 1e-20 and out["H_dense"].shape == (25, 25)
    assert out["recurrent_mass_diag"] > 0.9
    run = ex.adam_runs("full")[0]
    out = run.fn(dict(run.config, steps=3, batch=2, length=20), ctx)
    assert out["lr_A"].shape == (64 * 64,) and np.all(out["lr_A"] > 0)
