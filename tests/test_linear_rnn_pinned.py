"""lscnb.models.linear_rnn pinned against answers it did not compute (issue 27, surviving mutants): closed forms for
the power vectors, the eigenvalue remap and the causal convolution, initial draws written out in the test, the
documented defaults, dtypes kept exactly, and seeded draws under different global RNG states.

The first two tests come first on purpose: a broken doubling loop or angle map fails them before anything loops."""

import math

import numpy as np
import pytest
import torch
from pinning import assert_same_params, params_of

from lscnb.models import linear_rnn as L


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_power_vectors_by_hand():
    """[b, A b, A^2 b] for a 4 x 4 A, multiplied out here; T smaller than n included."""
    A = torch.tensor([[0.5, 1.0, 0, 0], [0, 0.5, 0, 0], [0, 0, -1.0, 0], [1.0, 0, 0, 2.0]], dtype=torch.float64)
    b = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    Ab = torch.tensor([2.5, 1.0, -3.0, 9.0], dtype=torch.float64)
    AAb = torch.tensor([2.25, 0.5, 3.0, 20.5], dtype=torch.float64)
    torch.testing.assert_close(L.power_vectors(A, b, 2), torch.stack([b, Ab]))
    torch.testing.assert_close(L.power_vectors(A, b, 3), torch.stack([b, Ab, AAb]))


def test_remap_eigenvalues_of_a_rotation():
    """Eq. 15 on the quarter turn R (eigenvalues +-i): tanh(1) R at theta0 = pi; at theta0 = pi/2 the angle halves
    to pi/4 and the modulus is nu0 + (1 - nu0) tanh(1)."""
    R = np.array([[0.0, -1.0], [1.0, 0.0]])
    np.testing.assert_allclose(L.remap_eigenvalues(R, 0.0), math.tanh(1) * R, atol=1e-12)
    m, c = 0.3 + 0.7 * math.tanh(1), math.cos(math.pi / 4)
    np.testing.assert_allclose(L.remap_eigenvalues(R, 0.3, math.pi / 2), m * np.array([[c, -c], [c, c]]), atol=1e-12)


@pytest.mark.parametrize("shape", [(7,), (2, 3, 7)])
def test_causal_conv_along_the_last_axis(shape):
    """y_t = sum_{k<=t} K_k x_{t-k} along the last axis, for 1-D and 3-D x, summed here."""
    x = torch.randn(*shape, generator=_gen(1), dtype=torch.float64)
    K = torch.randn(7, generator=_gen(2), dtype=torch.float64)
    want = torch.stack([sum(K[k] * x[..., t - k] for k in range(t + 1)) for t in range(7)], dim=-1)
    torch.testing.assert_close(L.causal_conv(x, K), want)


def test_dense_student_defaults_and_dtype():
    """Defaults n = 64, seed 0; every parameter (D included) in the asked dtype."""
    default = L.DenseLinearRNN()
    assert_same_params(
        params_of(default), params_of(L.DenseLinearRNN(64, heads=1, seed=0, theta0=math.pi, dtype=torch.float32))
    )
    assert default.A.shape == (1, 64, 64)
    assert all(p.dtype == torch.float32 for p in default.parameters())
    assert all(p.dtype == torch.float64 for p in L.DenseLinearRNN(4, dtype=torch.float64).parameters())


def test_dense_from_system_keeps_values_exactly():
    """from_system copies B, C, D given as Python numbers in A's dtype without a float32 round trip; a float32 A
    gives a float32 student."""
    A = torch.tensor([[0.5, 0.1], [0.0, 0.3]], dtype=torch.float64)
    model = L.DenseLinearRNN.from_system(A, [0.1, 0.7], [0.3, 0.9], 0.1)
    assert model.B.dtype == torch.float64
    assert model.B.tolist() == [0.1, 0.7] and model.C.tolist() == [0.3, 0.9] and model.D.item() == 0.1
    small = L.DenseLinearRNN.from_system(A.float(), [0.1, 0.7], [0.3, 0.9], 0.1)
    assert all(p.dtype == torch.float32 for p in small.parameters())


@pytest.mark.parametrize("param", ["exp", "default"])
def test_lru_draws_written_out(param):
    """The authors' LRU initialisation drawn here in float64: ring and phase uniforms, then B ~ CN(0, 2/n),
    C ~ CN(0, 2), D ~ N(0, 1), in that order from the seed."""
    n, nu0, theta0 = 20, 0.3, 2.0
    model = L.DiagonalLRU(n, nu0=nu0, theta0=theta0, param=param, seed=7, dtype=torch.float64)
    g = _gen(7)
    u = torch.rand(n, generator=g, dtype=torch.float64)
    theta = (2 * torch.rand(n, generator=g, dtype=torch.float64) - 1) * theta0
    lam = model.eigenvalues().detach()
    torch.testing.assert_close(lam.abs(), torch.sqrt(nu0**2 + u * (1 - nu0**2)), rtol=1e-12, atol=0)
    torch.testing.assert_close(lam.angle(), theta, rtol=0, atol=1e-12)
    want = {
        "B_re": torch.randn(n, generator=g, dtype=torch.float64) / math.sqrt(n),
        "B_im": torch.randn(n, generator=g, dtype=torch.float64) / math.sqrt(n),
        "C_re": torch.randn(n, generator=g, dtype=torch.float64),
        "C_im": torch.randn(n, generator=g, dtype=torch.float64),
        "D": torch.randn((), generator=g, dtype=torch.float64),
    }
    for name, value in want.items():
        torch.testing.assert_close(getattr(model, name).detach(), value, rtol=0, atol=0, msg=name)


@pytest.mark.parametrize("param", ["exp", "default"])
def test_diagonal_students_are_float32_by_default(param):
    """Every parameter of the default students is float32 (B, C, D, gamma included)."""
    for model in (L.DiagonalLRU(4, param=param), L.DiagonalS4(4)):
        assert all(p.dtype == torch.float32 for p in model.parameters())


def test_forward_recurrent_of_a_float32_student_on_float64_inputs():
    """The recurrence agrees with the FFT path when a float32 student reads float64 inputs."""
    model = L.DiagonalLRU(6, nu0=0.5, seed=1)
    x = torch.randn(2, 9, generator=_gen(3), dtype=torch.float64)
    torch.testing.assert_close(model.forward_recurrent(x).double(), model(x).double(), rtol=1e-4, atol=1e-5)


def test_ring_stays_inside_the_unit_circle():
    """With nu0 a hair below 1 the moduli are clamped below 1, so float32 eigenvalues stay inside |lam| < 1."""
    lam = L.DiagonalLRU(16, nu0=1 - 1e-10).eigenvalues().detach()
    assert lam.abs().max().item() < 1
    lam64 = L.DiagonalLRU(16, nu0=1 - 1e-10, dtype=torch.float64).eigenvalues().detach()
    torch.testing.assert_close(lam64.abs(), torch.full((16,), 1 - 1e-7, dtype=torch.float64), rtol=1e-12, atol=0)


def test_lru_from_system_exp_gamma_and_dtypes():
    """param="exp": gamma = sqrt(1 - |lam|^2) (0.8 at |lam| = 0.6, 0.6 at 0.8); D = 0.1 kept exactly in float64;
    dtype=float32 gives a float32 student."""
    lam = [0.6, 0.8j]
    model = L.DiagonalLRU.from_system(lam, [1.0, 1.0], [1.0, 1.0], 0.1, param="exp")
    torch.testing.assert_close(torch.exp(model.w_gamma.detach()), torch.tensor([0.8, 0.6], dtype=torch.float64))
    assert model.D.item() == 0.1
    small = L.DiagonalLRU.from_system(lam, [1.0, 1.0], [1.0, 1.0], 0.1, torch.float32)
    assert all(p.dtype == torch.float32 for p in small.parameters())


def test_s4_defaults_and_from_system_precision():
    """DiagonalS4 seed 0 by default; from_system's default step 0.01; Python complex inputs are read in complex128:
    w_A = log(lam) / delta to 1e-12."""
    assert_same_params(params_of(L.DiagonalS4(8)), params_of(L.DiagonalS4(8, seed=0)))
    lam = [0.9 * complex(math.cos(0.3), math.sin(0.3)), 0.7 + 0j]
    model = L.DiagonalS4.from_system(lam, [0.1, 0.2], [0.3, 0.4], 0.1)
    torch.testing.assert_close(model.delta().detach(), torch.full((2,), 0.01, dtype=torch.float64))
    want_re = torch.tensor([math.log(0.9), math.log(0.7)], dtype=torch.float64) / 0.01
    torch.testing.assert_close(model.w_A_re.detach(), want_re, rtol=1e-12, atol=0)
    torch.testing.assert_close(
        model.w_A_im.detach(), torch.tensor([30.0, 0.0], dtype=torch.float64), rtol=1e-12, atol=1e-12
    )
    torch.testing.assert_close(model.B_re.detach(), torch.tensor([10.0, 20.0], dtype=torch.float64), rtol=1e-12, atol=0)
    assert model.D.item() == 0.1


@pytest.mark.parametrize("seed", [0, 3])
def test_conjugate_pair_system_drawn_here(seed):
    """App. C.3 drawn here from numpy's default_rng: moduli nu + spread U and angles 2 pi U (two pairs), complex
    Gaussian eigenvectors of scale 1 / (2 sqrt 2), then B, C / 2, D; the default seed is 0."""
    got = L.conjugate_pair_system(seed)
    rng = np.random.default_rng(seed)
    half = (0.99 + 0.003 * rng.random(2)) * np.exp(2j * np.pi * rng.random(2))
    lam = np.array([half[0], np.conj(half[0]), half[1], np.conj(half[1])])
    v = (rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))) / (2 * math.sqrt(2))
    P = np.stack([v[:, 0], np.conj(v[:, 0]), v[:, 1], np.conj(v[:, 1])], axis=1)
    B, C, D = rng.standard_normal(4), rng.standard_normal(4) / 2, rng.standard_normal()
    np.testing.assert_allclose(got["lam"].numpy(), lam, rtol=1e-12)
    np.testing.assert_allclose(got["A"].numpy(), np.real(P @ np.diag(lam) @ np.linalg.inv(P)), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got["b"].numpy(), np.linalg.solve(P, B), rtol=1e-9)
    np.testing.assert_allclose(got["c"].numpy(), C @ P, rtol=1e-12)
    assert got["B"].tolist() == B.tolist() and got["C"].tolist() == C.tolist()
    assert got["D"].dtype == torch.float64 and float(got["D"]) == D
    if seed == 0:
        np.testing.assert_array_equal(L.conjugate_pair_system()["A"].numpy(), got["A"].numpy())


def test_teacher_drawn_here():
    """Sec. 4.2 teacher from numpy's default_rng (default seed 0): eq. 15 moduli of the eigenvalues of M / sqrt(n),
    then B ~ N(0, 1), C ~ N(0, 1/n), D ~ N(0, 1); nu0 = 0 is allowed."""
    n = 10
    teacher = L.Teacher(nu0=0.0)
    rng = np.random.default_rng(0)
    M = rng.standard_normal((n, n)) / math.sqrt(n)
    want = np.sort(np.tanh(np.abs(np.linalg.eigvals(M))))
    np.testing.assert_allclose(np.sort(np.abs(np.linalg.eigvals(teacher.A.numpy()))), want, rtol=1e-9)
    assert teacher.B.tolist() == rng.standard_normal(n).tolist()
    assert teacher.C.tolist() == (rng.standard_normal(n) / math.sqrt(n)).tolist()
    assert teacher.D.dtype == torch.float64 and teacher.D.item() == rng.standard_normal()


def test_teacher_output_variance_default_horizon():
    """Var(y*) = sum_{k < 10 000} K_k^2 + D^2 by default, the kernel summed here by a plain loop; with moduli near
    1 the 10 001st term would still show."""
    teacher = L.Teacher(nu0=0.9998, seed=1)
    A, B, C = teacher.A.numpy(), teacher.B.numpy(), teacher.C.numpy()
    v, total = B.copy(), 0.0
    for _ in range(10_000):
        total += float(C @ v) ** 2
        v = A @ v
    assert float(C @ v) ** 2 > 1e-8 * total  # the next term is well above round-off
    assert teacher.output_variance() == pytest.approx(total + teacher.D.item() ** 2, rel=1e-9)


def test_teacher_samples_are_seeded_and_float32():
    """sample(generator): the same draws under different global RNG states; x and y float32 by default."""
    teacher = L.Teacher(n=4)
    torch.manual_seed(1)
    x1, y1 = teacher.sample(2, 6, _gen(5))
    torch.manual_seed(2)
    x2, y2 = teacher.sample(2, 6, _gen(5))
    assert torch.equal(x1, x2) and torch.equal(y1, y2)
    assert x1.dtype == torch.float32 and y1.dtype == torch.float32
    K = teacher.kernel(6)
    x64 = torch.randn(2, 6, generator=_gen(5), dtype=torch.float64)
    want = torch.stack([sum(K[k] * x64[:, t - k] for k in range(t + 1)) for t in range(6)], 1) + teacher.D * x64
    torch.testing.assert_close(y1, want.float())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU (meta tensors mix with CPU ones)")
def test_diagonal_kernel_on_the_gpu():
    """On a GPU the step numbers are made on the parameters' device: the kernel comes back there, equal to the CPU's."""
    model = L.DiagonalLRU(4, seed=2, dtype=torch.float64)
    want = model.kernel(6)
    got = model.cuda().kernel(6)
    assert got.device.type == "cuda"
    torch.testing.assert_close(got.cpu(), want)
