"""The linear students and teacher of the curse of memory (lscnb.models.linear_rnn) against answers they did not
compute: initial laws by their moments, the S4 student's documented equality with the LRU's draws, and Fig. 4's
system against its own definition (issue 27)."""

import math

import numpy as np
import pytest
import torch

from lscnb.models import linear_rnn as L


def _params(model):
    return {k: v.detach().clone() for k, v in model.named_parameters()}


@pytest.mark.parametrize("param", ["exp", "default"])
def test_lru_initial_law(param):
    model = L.DiagonalLRU(20_000, nu0=0.4, theta0=1.0, param=param, seed=1, dtype=torch.float64)
    lam = model.eigenvalues().detach()
    nu, theta = lam.abs(), lam.angle()
    assert nu.min() >= 0.4 - 1e-9 and nu.max() < 1
    assert (nu**2).mean().item() == pytest.approx((0.16 + 1) / 2, rel=0.01)  # uniform in area on [nu0, 1]
    assert theta.abs().max() <= 1.0 + 1e-9 and theta.abs().mean().item() == pytest.approx(0.5, abs=0.01)
    gamma = torch.exp(model.w_gamma) if param == "exp" else model.gamma
    torch.testing.assert_close(gamma.detach(), torch.sqrt(1 - nu**2))
    assert model.B_re.std().item() == pytest.approx(1 / math.sqrt(20_000), rel=0.02)
    assert model.B_im.std().item() == pytest.approx(1 / math.sqrt(20_000), rel=0.02)
    assert model.C_re.std().item() == pytest.approx(1.0, rel=0.02) and model.C_im.std().item() == pytest.approx(
        1.0, rel=0.02
    )
    assert model.D.shape == () and model.D.dtype == torch.float64


def test_lru_defaults_and_gamma_switch():
    model = L.DiagonalLRU()
    assert model.n == 64 and model.param == "exp" and model.use_gamma and model.w_gamma.dtype == torch.float32
    assert model.eigenvalues().abs().min() < 0.3  # nu0 = 0: moduli from 0
    assert model.eigenvalues().angle().abs().max() > 2.5  # theta0 = pi
    bare = L.DiagonalLRU(8, gamma=False, param="default")
    assert bare.gamma is None and bare.w_gamma is None
    torch.testing.assert_close(bare._input(), torch.complex(bare.B_re, bare.B_im))
    assert all(
        torch.equal(a, b) for a, b in zip(_params(L.DiagonalLRU()).values(), _params(L.DiagonalLRU(seed=0)).values())
    )


def test_seeds_repeat_and_differ():
    for cls in (L.DiagonalLRU, L.DiagonalS4):
        a, b, c = _params(cls(16, seed=3)), _params(cls(16, seed=3)), _params(cls(16, seed=4))
        assert all(torch.equal(a[k], b[k]) for k in a)
        assert all(not torch.equal(a[k], c[k]) for k in a if k != "w_delta")


@pytest.mark.parametrize("delta", [1.0, 0.5])
def test_s4_starts_at_the_lrus_draws(delta):
    """App. A.3 as implemented: the same eigenvalues, B, C and D as the LRU with the same seed; Delta = delta."""
    s4 = L.DiagonalS4(12, nu0=0.3, theta0=2.0, delta=delta, seed=5, dtype=torch.float64)
    lru = L.DiagonalLRU(12, nu0=0.3, theta0=2.0, param="default", seed=5, dtype=torch.float64)
    torch.testing.assert_close(s4.eigenvalues(), lru.eigenvalues())
    torch.testing.assert_close(s4.delta(), torch.full((12,), delta, dtype=torch.float64))
    for name in ("B_re", "B_im", "C_re", "C_im", "D"):
        assert torch.equal(getattr(s4, name), getattr(lru, name)), name
    torch.testing.assert_close(s4._input(), delta * torch.complex(s4.B_re, s4.B_im))
    assert L.DiagonalS4().n == 64 and L._softplus_inverse(2.0) == pytest.approx(math.log(math.exp(2.0) - 1))


@pytest.mark.parametrize("seed", [0, 1])
def test_conjugate_pair_system_is_its_definition(seed):
    sys_ = L.conjugate_pair_system(seed, nu=0.9, spread=0.05)
    lam = sys_["lam"].numpy()
    assert np.allclose(lam[1], lam[0].conj()) and np.allclose(lam[3], lam[2].conj())
    assert np.all((np.abs(lam) >= 0.9) & (np.abs(lam) <= 0.95))
    A = sys_["A"].numpy()
    assert A.dtype == np.float64 and A.shape == (4, 4)
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(A)), np.sort_complex(lam), atol=1e-9)
    B, C = sys_["B"].numpy(), sys_["C"].numpy()
    for k in (0, 1, 7):
        direct = C @ np.linalg.matrix_power(A, k) @ B
        assert direct == pytest.approx(float(np.real(np.sum(sys_["c"].numpy() * lam**k * sys_["b"].numpy()))))
    other = L.conjugate_pair_system(seed + 7)
    assert not np.allclose(other["A"].numpy(), A)
    assert np.all(np.abs(other["lam"].numpy()) >= 0.99) and np.all(np.abs(other["lam"].numpy()) <= 0.993)


def test_conjugate_pair_scales_over_seeds():
    """B ~ N(0, 1), C ~ N(0, 1/4), D ~ N(0, 1) (App. C.3), over many seeds."""
    draws = [L.conjugate_pair_system(s) for s in range(400)]
    B = np.concatenate([d["B"].numpy() for d in draws])
    C = np.concatenate([d["C"].numpy() for d in draws])
    D = np.array([float(d["D"]) for d in draws])
    assert B.std() == pytest.approx(1.0, rel=0.06) and C.std() == pytest.approx(0.5, rel=0.06)
    assert D.std() == pytest.approx(1.0, rel=0.1)
    angles = np.concatenate([np.angle(d["lam"].numpy()[[0, 2]]) for d in draws])
    assert np.abs(angles).mean() == pytest.approx(math.pi / 2, rel=0.06)  # angles uniform on the circle


def test_dense_student_initial_law():
    model = L.DenseLinearRNN(400, seed=2, dtype=torch.float64)
    assert model.B.std().item() == pytest.approx(1.0, rel=0.1)
    assert model.C.std().item() == pytest.approx(1 / 20, rel=0.1)
    eig = np.linalg.eigvals(model.A[0].detach().numpy())
    assert np.abs(eig).max() < 1 and np.abs(eig).max() > 0.6  # tanh of moduli near 1: about tanh(1) = 0.76
    blocks = L.DenseLinearRNN(6, heads=3, seed=0)
    assert blocks.A.shape == (3, 2, 2) and blocks.heads == 3
    x = torch.randn(2, 9, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(blocks(x), blocks.forward_recurrent(x), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="heads must divide n, got n=6, heads=4"):
        L.DenseLinearRNN(6, heads=4)


def test_from_system_students_reproduce_the_system():
    sys_ = L.conjugate_pair_system(0)
    x = torch.randn(2, 30, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    dense = L.DenseLinearRNN.from_system(sys_["A"], sys_["B"], sys_["C"], sys_["D"])
    y = dense(x)
    for student in (
        L.DiagonalLRU.from_system(sys_["lam"], sys_["b"], sys_["c"], sys_["D"]),
        L.DiagonalLRU.from_system(sys_["lam"], sys_["b"], sys_["c"], sys_["D"], param="exp"),
        L.DiagonalS4.from_system(sys_["lam"], sys_["b"], sys_["c"], sys_["D"], delta=0.01),
    ):
        torch.testing.assert_close(student(x), y, rtol=1e-8, atol=1e-8)
    s4 = L.DiagonalS4.from_system(sys_["lam"], sys_["b"], sys_["c"], sys_["D"], delta=0.01)
    torch.testing.assert_close(s4.delta(), torch.full((4,), 0.01, dtype=torch.float64))


def test_teacher_by_value():
    teacher = L.Teacher(n=12, nu0=0.5, seed=3)
    lam = np.linalg.eigvals(teacher.A.numpy())
    assert np.all(np.abs(lam) >= 0.5 - 1e-9) and np.all(np.abs(lam) < 1)  # eq. 15: nu0 + (1 - nu0) tanh|lam|
    K = teacher.kernel(6)
    A, B, C = teacher.A.numpy(), teacher.B.numpy(), teacher.C.numpy()
    np.testing.assert_allclose(K.numpy(), [C @ np.linalg.matrix_power(A, k) @ B for k in range(6)], rtol=1e-10)
    assert teacher.output_variance(50) == pytest.approx(
        float(sum((C @ np.linalg.matrix_power(A, k) @ B) ** 2 for k in range(50)) + float(teacher.D) ** 2), rel=1e-8
    )
    assert L.Teacher().n == 10
    with pytest.raises(ValueError, match=r"nu0 must lie in \[0, 1\), got 1.0"):
        L.Teacher(nu0=1.0)
