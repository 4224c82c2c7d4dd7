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
    assert torch.allclose(
        torch.linalg.eigvals(system["A"]).abs().sort().values, system["lam"].abs().sort().values, atol=1e-10
    )
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
    expected = 0.1 / (torch.sqrt(v / (1 - 0.5**2)) + 1e-8)
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


def test_s4_is_the_complex_diagonal_rnn_with_lambda_exp_a_delta_and_input_delta_b():
    from lscnb.models.linear_rnn import DiagonalS4

    s4 = DiagonalS4(6, nu0=0.9, theta0=1.0, seed=2, dtype=torch.float64)
    with torch.no_grad():
        s4.w_delta.copy_(torch.linspace(-3.0, 2.0, 6, dtype=torch.float64))
    delta = torch.nn.functional.softplus(s4.w_delta.detach())
    lam = torch.exp(torch.complex(s4.w_A_re.detach(), s4.w_A_im.detach()) * delta)
    diag = DiagonalLRU.from_system(
        lam,
        torch.complex(s4.B_re.detach(), s4.B_im.detach()) * delta,
        torch.complex(s4.C_re.detach(), s4.C_im.detach()),
        s4.D.detach(),
    )
    x = torch.randn(3, 120, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(s4(x), diag(x), rtol=1e-9, atol=1e-10)
        torch.testing.assert_close(s4(x), s4.forward_recurrent(x), rtol=1e-9, atol=1e-10)


def test_s4_init_is_delta_one_and_the_lrus_eigenvalues():
    from lscnb.models.linear_rnn import DiagonalS4

    s4, lru = DiagonalS4(16, nu0=0.9, seed=5), DiagonalLRU(16, nu0=0.9, seed=5)
    torch.testing.assert_close(s4.delta(), torch.ones(16))
    torch.testing.assert_close(s4.eigenvalues(), lru.eigenvalues(), rtol=1e-5, atol=1e-6)
    assert sum(p.numel() for p in DiagonalS4(64).parameters()) == 7 * 64 + 1
    assert {n for n, _ in s4.named_parameters()} == {"w_A_re", "w_A_im", "w_delta", "B_re", "B_im", "C_re", "C_im", "D"}


def test_s4_from_system_sits_at_the_optimum_with_curvature_on_delta():
    from lscnb.models.linear_rnn import DiagonalS4

    system = conjugate_pair_system(0)
    diag = DiagonalLRU.from_system(system["lam"], system["b"], system["c"], system["D"])
    s4 = DiagonalS4.from_system(system["lam"], system["b"], system["c"], system["D"], delta=0.01)
    torch.testing.assert_close(s4.delta(), torch.full((4,), 0.01, dtype=torch.float64))
    x = torch.randn(4, 150, dtype=torch.float64)
    y = diag(x).detach()
    with torch.no_grad():
        torch.testing.assert_close(s4(x), y, rtol=1e-9, atol=1e-9)
    H = hs.loss_hessian(s4, x, lambda out: 0.5 * (out - y).pow(2).mean())
    groups = hs.parameter_groups(s4)
    top = hs.group_mass(hs.spectrum(H)[1][:, :1], groups)
    assert float(top["w_delta"][0]) > 0.9


def test_s4_bad_arguments_name_themselves():
    from lscnb.models.linear_rnn import DiagonalS4

    with pytest.raises(ValueError, match="delta"):
        DiagonalS4(4, delta=0.0)
    with pytest.raises(ValueError, match="nu0"):
        DiagonalS4(4, nu0=1.0)
    with pytest.raises(ValueError, match="n"):
        DiagonalS4(0)
    with pytest.raises(ValueError, match="lam"):
        DiagonalS4.from_system(torch.zeros(2, 2), torch.zeros(2), torch.zeros(2), 0.0)
    with pytest.raises(ValueError, match="x"):
        DiagonalS4(4)(torch.zeros(3))


def test_figure_nine_and_ten_runs_shrunk():
    from lscnb.experiments import memory as ex

    ctx = types.SimpleNamespace(device="cpu", seed=0, checkpoint=None, progress=False)
    out = ex.hessian_run(dict(ex.hessian_s4_runs("full")[0].config, batch=4, length=150), ctx)
    assert out["H_s4"].shape == (29, 29) and out["optimum_loss_s4"] < 1e-15
    assert out["top_mass_s4"]["w_delta"] > 0.9 and set(out["block_max_s4_1"]) == {"w_A_re", "w_A_im", "w_delta"}
    runs = ex.adam_ssm_runs("full")
    assert [r.config["model"] for r in runs] == ["lru", "s4"] and runs[0].figure == "adam_lr_ssm"
    assert [r.key for r in ex.adam_runs("full")] == [r.key for r in ex.adam_runs("full", ("dense", "complex"))]
    out = runs[1].fn(dict(runs[1].config, steps=3, batch=2, length=20), ctx)
    assert out["lr_w_delta"].shape == (64,) and np.all(out["lr_w_delta"] > 0)
    full = ex.theta0_runs("full")
    assert len(full) == 5 * 3 * (4 + 4 + 8)  # 3 of the paper's 10 seeds
    assert sorted({round(r.config["theta0"] / np.pi, 6) for r in full}) == [0.01, 0.031623, 0.1, 0.316228, 1.0]
    quick = ex.theta0_runs("quick")
    out = quick[0].fn(dict(quick[0].config, steps=3, batch=2, length=20), ctx)
    assert np.isfinite(out["final_loss"])
    assert {r["model"] for r in ex.theta0_grids()} == set(ex.THETA0_LABELS.values())


def test_theta0_reaches_students_and_teacher():
    from lscnb.experiments import memory as ex
    from lscnb.models.linear_rnn import Teacher

    th = np.pi / 100
    with torch.no_grad():
        for model in ("dense", "complex", "lru", "s4"):
            student = ex.make_student(model, 8, 0.9, 0, th)
            lam = torch.linalg.eigvals(student.A[0].double()) if model == "dense" else student.eigenvalues()
            assert float(torch.angle(lam).abs().max()) <= th + 1e-6, model
    assert float(torch.angle(torch.linalg.eigvals(Teacher(10, nu0=0.99, theta0=th).A)).abs().max()) <= th + 1e-9
