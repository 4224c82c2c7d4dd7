"""lscnb.theory.memory pinned against answers it did not compute: closed forms at rho = 0 for the documented
defaults, float64 finite differences of the generating function F_rho, small cases worked by hand, low-precision
inputs promoted to float64, the reparametrised recurrence written plainly with the same draws, and exact error
messages (issue 27)."""

import cmath
import math

import numpy as np
import pytest
import torch

from lscnb.theory import memory as M


def _F(a, b, rho):
    """The generating function ``F_rho(a, b) = (1 - rho^2 a b) / ((1 - a b)(1 - rho a)(1 - rho b))``."""
    return (1 - rho**2 * a * b) / ((1 - a * b) * (1 - rho * a) * (1 - rho * b))


def _mixed_difference(a, b, rho, h=1e-4):
    """``d_a d_b F_rho`` by a central float64 finite difference."""
    return (_F(a + h, b + h, rho) - _F(a + h, b - h, rho) - _F(a - h, b + h, rho) + _F(a - h, b - h, rho)) / (4 * h * h)


def _printed(a, b, rho):
    """Eq. 134 as printed in the paper, written here in plain Python."""
    p = a * b
    num = (1 - rho) * (1 + p) + rho**2 * (1 - p) ** 3 + rho * (1 - rho) * p * (rho * p * (1 + p) - 2 * a - 2 * b)
    return num / ((1 - p) ** 3 * (1 - rho * a) ** 2 * (1 - rho * b) ** 2)


def test_rho_defaults_are_white_noise():
    """rho = 0 by default: E h^2 = 1/(1-p), E s^2 = S_0(a, b) = (1 + ab)/(1 - ab)^3 (worked by hand)."""
    p = 0.25
    assert M.hidden_variance(0.5) == pytest.approx(4 / 3, rel=1e-15)
    assert M.sensitivity_variance(0.5) == pytest.approx((1 + p) / (1 - p) ** 3, rel=1e-14)
    assert M.sensitivity_variance_printed(0.5) == pytest.approx((1 + p) / (1 - p) ** 3, rel=1e-14)
    nu = 0.5
    want = (1 - nu**2) * (nu * math.log(nu)) ** 2 * (1 + p) / (1 - p) ** 3
    assert M.normalised_sensitivity(0.5) == pytest.approx(want, rel=1e-14)
    ab = 0.5 * 0.3
    assert complex(M.similarity(0.5, 0.3)) == pytest.approx((1 + ab) / (1 - ab) ** 3, rel=1e-14)
    assert complex(M.similarity_printed(0.5, 0.3)) == pytest.approx((1 + ab) / (1 - ab) ** 3, rel=1e-14)
    H = M.hessian_diagonal_theory(0.5, 1.0, 1.0)  # one real eigenvalue: [[S(lam, lam), 0], [0, 0]]
    np.testing.assert_allclose(H, [[(1 + p) / (1 - p) ** 3, 0.0], [0.0, 0.0]], rtol=1e-14, atol=1e-14)


def test_low_precision_lam_and_rho_are_promoted_to_float64():
    """Eq. 48 by hand at the float16 values of lam and rho: the result has float64 precision."""
    lam16, rho16 = np.float16(0.3), np.float16(0.3)
    lam, rho = float(lam16), float(rho16)
    assert M.hidden_variance(lam16) == pytest.approx(1 / (1 - lam * lam), rel=1e-14)
    want = (1 - rho**2 * 0.25) / ((1 - rho * 0.5) ** 2 * (1 - 0.25))
    assert M.hidden_variance(0.5, rho16) == pytest.approx(want, rel=1e-14)


def test_lam_on_the_unit_circle_is_refused():
    """|lam| = 1 is outside the open disc: the message names lam."""
    with pytest.raises(ValueError, match=r"^lam must lie inside the unit disc \(\|lam\| < 1\), got \(1\+0j\)$"):
        M.hidden_variance(1.0)


def test_printed_eq59_and_eq134_by_hand():
    """lam = 0.5, rho = 0.5 in the printed formula by hand: num = 0.625 + 0.10546875 - 0.115234375."""
    want = 0.615234375 / (0.421875 * 0.75**4)
    assert M.sensitivity_variance_printed(0.5, 0.5) == pytest.approx(want, rel=1e-14)
    assert complex(M.similarity_printed(0.5, 0.5, 0.5)) == pytest.approx(want, rel=1e-14)


def test_series_moments_default_terms_is_the_first_integer_above_40_over_gap():
    """terms >= 40 / (1 - |lam|) by default: the smallest such integer, int(40 / (1 - |lam|)) + 1."""
    for lam, rho in [(0.9, 0.0), (0.9, 0.5), (0.99, 0.0), (0.99, 0.9)]:
        assert M.series_moments(lam, rho) == M.series_moments(lam, rho, terms=int(40 / (1 - lam)) + 1)


def test_monte_carlo_reparametrised_is_the_plain_float64_recurrence():
    """h' = lam h + gamma x and dh' = lam dh + (lam log lam) h, with the same draws, in float64 by hand."""
    lam, rho, chains, steps, seed = 0.8, 0.5, 64, 30, 3
    gen = torch.Generator().manual_seed(seed)
    gamma, dlam = math.sqrt(1 - lam**2), lam * math.log(lam)
    x = torch.randn(chains, generator=gen, dtype=torch.float64)
    h = torch.zeros(chains, dtype=torch.float64)
    dh = torch.zeros(chains, dtype=torch.float64)
    for _ in range(steps):
        x = rho * x + math.sqrt(1 - rho**2) * torch.randn(chains, generator=gen, dtype=torch.float64)
        h, dh = lam * h + gamma * x, lam * dh + dlam * h
    got = M.monte_carlo_reparametrised(lam, rho, chains=chains, steps=steps, seed=seed)
    assert got == pytest.approx(float(dh.pow(2).mean()), rel=1e-12)


def test_normalised_sensitivity_without_reparametrisation():
    """param="none": dnu/domega = 1, so gamma^2 E s^2 = (1 - p)(1 + p)/(1 - p)^3 at rho = 0, as float64 arrays."""
    lam = np.array([0.5, 0.3])
    p = lam**2
    got = M.normalised_sensitivity(lam, 0.0, param="none")
    assert got.dtype == np.float64 and got.shape == (2,)
    np.testing.assert_allclose(got, (1 + p) / (1 - p) ** 2, rtol=1e-14)


def test_landscape_angle_by_hand():
    """Student |lam*| e^{i theta} vs teacher lam*: 0 at theta = arg lam*; theta = pi against 0.5 gives 4/3 - 4/5."""
    assert M.landscape_angle(math.pi, 0.5) == pytest.approx(4 / 3 - 0.8, rel=1e-14)
    assert M.landscape_angle(math.pi / 2, 0.5j) == pytest.approx(0.0, abs=1e-14)
    # theta = pi/2 against the real 0.5: student 0.5i, cross = Re 1/(1 - 0.5i * 0.5) = 1/(1 + 1/16)
    assert M.landscape_angle(math.pi / 2, 0.5) == pytest.approx(4 / 3 - 16 / 17, rel=1e-14)
    th16 = np.float16(0.7)  # float16 angle: computed in float64 at its value
    r, th = 0.5, float(th16)
    want = 1 / (1 - r * r) - (1 / (1 - r * r * cmath.exp(1j * th))).real
    assert M.landscape_angle(th16, 0.5) == pytest.approx(want, rel=1e-14)


def test_components_allow_a_zero_weight():
    """c = 0 is allowed (c >= 0): a zero-weight AR(1) part leaves the white-noise (1-a)(1-b)/(1-ab)."""
    a, b = 0.3, 0.6
    got = M.gated_generating_function(a, b, ((0.0, 0.5), (1.0, 0.0)))
    assert got == pytest.approx((1 - a) * (1 - b) / (1 - a * b), rel=1e-15)


def test_gated_moments_white_noise_closed_form_and_lam_zero():
    """White noise: E h^2 = (1-l)/(1+l), d_a d_b f = 2(1-a)(1-b)/(1-ab)^3 -> 2/((1-l)(1+l)^3) by hand (float16 l)."""
    lam16 = np.float16(0.3)
    lam = float(lam16)
    got = M.gated_moments(lam16, ((1.0, 0.0),))
    dlam2 = 2 / ((1 - lam) * (1 + lam) ** 3)
    np.testing.assert_allclose(got["h2"], [(1 - lam) / (1 + lam)], rtol=1e-14)
    np.testing.assert_allclose(got["dlam2"], [dlam2], rtol=1e-12)
    np.testing.assert_allclose(got["db2"], [(lam * (1 - lam)) ** 2 * dlam2], rtol=1e-12)
    with pytest.raises(ValueError, match=r"^lam must lie in \(0, 1\), got 0\.0$"):
        M.gated_moments(0.0)


def test_similarity_is_the_mixed_difference_at_float16_points():
    """S_rho(a, b) = d_a d_b F_rho by float64 finite differences, at the float16 values of a and b."""
    a16, b16 = np.float16(0.3), np.float16(-0.6)
    a, b = float(a16), float(b16)
    got = complex(M.similarity(a16, b16, 0.3))
    assert got.real == pytest.approx(_mixed_difference(a, b, 0.3), rel=1e-7) and got.imag == 0
    assert complex(M.similarity_printed(a16, b16, 0.3)) == pytest.approx(_printed(a, b, 0.3), rel=1e-14)


def test_similarity_checks_both_points_then_rho():
    """Each of alpha and beta must lie in the disc; rho is checked with the first point (its message first)."""
    for a, b in [(1.5, 0.5), (0.5, 1.5)]:
        with pytest.raises(ValueError, match=r"^lam must lie inside the unit disc"):
            M.similarity(a, b)
    with pytest.raises(ValueError, match=r"^rho must lie in \[0, 1\], got 2\.0$"):
        M.similarity(0.5, 1.5, 2.0)


def test_hessian_of_one_real_eigenvalue_by_finite_differences():
    """n = 1, real lam: H = [[(bc)^2 S_rho(lam, lam), 0], [0, 0]] with S from finite differences of F_rho."""
    b16, c16 = np.float16(0.3), np.float16(0.7)
    bc = float(b16) * float(c16)
    H = M.hessian_diagonal_theory(0.5, b16, c16, 0.4)
    assert H[0, 0] == pytest.approx(bc**2 * _mixed_difference(0.5, 0.5, 0.4), rel=1e-7)
    np.testing.assert_allclose([H[0, 1], H[1, 0], H[1, 1]], 0.0, atol=1e-12)
    H0 = M.hessian_diagonal_theory(0.5, b16, c16)  # rho = 0: S = (1 + p)/(1 - p)^3 by hand
    assert H0[0, 0] == pytest.approx(bc**2 * 1.25 / 0.75**3, rel=1e-13)


def test_offdiagonal_fraction_by_hand():
    """diag(1, 2, 3, 4) with -1 at (0, 1), (1, 0): the couplings hold 2 of 32 (float32 input, float64 answer)."""
    H = np.diag([1.0, 2.0, 3.0, 4.0])
    H[0, 1] = H[1, 0] = -1.0
    assert M.offdiagonal_fraction(H) == 2 / 32
    H32 = (0.1 * H).astype(np.float32)
    h = H32.astype(np.float64)
    want = 2 * h[0, 1] ** 2 / np.sum(h**2)
    assert M.offdiagonal_fraction(H32) == pytest.approx(want, rel=1e-14)
    with pytest.raises(ValueError, match=r"^H must be a \(2n, 2n\) matrix, got shape \(4,\)$"):
        M.offdiagonal_fraction(np.zeros(4))
    with pytest.raises(ValueError, match=r"^H must be a \(2n, 2n\) matrix, got shape \(3, 3\)$"):
        M.offdiagonal_fraction(np.zeros((3, 3)))


@pytest.mark.parametrize("lam_star, shown", [(1.0, r"\(1\+0j\)"), (1.5, r"\(1\.5\+0j\)")])
def test_landscape_complex_refuses_a_teacher_outside_the_disc(lam_star, shown):
    """|lam*| >= 1 is refused, the message naming lam_star and its value."""
    with pytest.raises(ValueError, match=rf"^lam_star must lie inside the unit disc, got {shown}$"):
        M.landscape_complex(np.array([0.5 + 0j]), lam_star)


def test_landscape_gradient_is_the_finite_difference_of_eq91():
    """Eq. 91 written here, differentiated by central differences in float64, at a float16 real lam."""
    lam16, lam_star = np.float16(0.3), 0.6 + 0.2j

    def loss(x, y):
        lam = complex(x, y)
        return 0.5 * (
            1 / (1 - abs(lam) ** 2) + 1 / (1 - abs(lam_star) ** 2) - 2 * (1 / (1 - lam.conjugate() * lam_star)).real
        )

    x, h = float(lam16), 1e-6
    gx, gy = M.landscape_gradient(lam16, lam_star)
    assert gx == pytest.approx((loss(x + h, 0) - loss(x - h, 0)) / (2 * h), rel=1e-8)
    assert gy == pytest.approx((loss(x, h) - loss(x, -h)) / (2 * h), rel=1e-8)


def test_adam_angle_step_count_and_records():
    """steps=19, every 10: records at t = 1 and 10 only; the default runs 20,000 steps (one record past 1 at 20,001)."""
    out = M.adam_angle("polar", 0.5 * cmath.exp(0.5j), 0.8, steps=19, record_every=10)
    assert out["steps"].tolist() == [1, 10] and out["w"].shape == (2, 2) and out["loss"].shape == (2,)
    default = M.adam_angle("polar", 0.5 * cmath.exp(0.5j), 0.8, record_every=20_000)
    assert default["steps"].tolist() == [1, 20_000] and default["w"].shape == (2, 2)
    once = M.adam_angle("polar", 0.5 * cmath.exp(0.5j), 0.8, record_every=20_001)
    assert once["w"].shape == (1, 2)
    every = M.adam_angle("polar", 0.5 * cmath.exp(0.5j), 0.8, steps=5, record_every=1)  # t = 1 is recorded once
    assert every["steps"].tolist() == [1, 2, 3, 4, 5] and every["w"].shape == (5, 2) and every["loss"].shape == (5,)
    with pytest.raises(ValueError, match="record_every"):
        M.adam_angle("polar", 0.5 * cmath.exp(0.5j), 0.8, steps=5, record_every=0)


def test_final_sensitivity_of_float16_inputs_in_float64():
    """s_{t+1} = lam s_t + h_t, h_{t+1} = lam h_t + x_{t+1} by hand, in float64 at the float16 inputs' values."""
    x16 = np.array([0.1, 0.7, -0.3, 0.9, 0.2], dtype=np.float16)
    lam, h, s = 0.9, 0.0, 0.0
    for xt in x16.tolist():
        s, h = lam * s + h, lam * h + xt
    got = M.final_sensitivity(lam, x16)
    assert type(got) is float and got == pytest.approx(s, rel=1e-14)


def _eq57_by_hand(lam, rho, first_denominator, lags):
    """Eq. 57 summed in a plain loop over Delta = 1..lags."""
    p = abs(lam) ** 2
    one, two = 1.0, 0.0
    for d in range(1, lags + 1):
        lam_d = lam**d + lam.conjugate() ** d
        one += lam_d * rho**d
        two += d * lam_d * rho**d
    return ((1 + p) / first_denominator * one + two / (1 - p) ** 2).real


def test_eq57_sum_over_a_few_lags_and_the_default_20000():
    """The sum over Delta = 1..lags in a plain loop: 3 lags, and the default 20,000 (rho = 1 and lam near 1, so
    the lags past 20,000 would still count)."""
    lam = 0.5 + 0.3j
    assert M.eq57_sum(lam, 0.8, 2.0, lags=3) == pytest.approx(_eq57_by_hand(lam, 0.8, 2.0, 3), rel=1e-13)
    lam = complex(0.9999)
    p = abs(lam) ** 2
    want = _eq57_by_hand(lam, 1.0, (1 - p) ** 3, 20_000)
    assert want != pytest.approx(_eq57_by_hand(lam, 1.0, (1 - p) ** 3, 20_001), rel=1e-6)
    assert M.eq57_sum(lam, 1.0, (1 - p) ** 3) == pytest.approx(want, rel=1e-9)


def test_local_slope_default_factor_is_1_1():
    """factor = 1.1 by default: the log-slope of (1 + p)/(1 - p)^3 (white inputs, by hand) at gaps 0.11 and 0.1/1.1."""

    def s(lam):
        return (1 + lam * lam) / (1 - lam * lam) ** 3

    gap = 0.1
    want = math.log(s(1 - gap / 1.1) / s(1 - gap * 1.1)) / math.log(1.1**2)
    assert M.local_slope(gap, 0.0) == pytest.approx(want, rel=1e-12)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("lam", [0.7, 0.6 + 0.3j])
def test_monte_carlo_on_cuda_draws_there_with_its_seed(lam):
    """device="cuda": a cuda generator seeded with seed draws every input on the GPU; the recurrence by hand with
    the same draws gives the same moments, whatever the global RNG state."""
    rho, chains, steps, seed = 0.5, 256, 7, 3
    gen = torch.Generator(device="cuda").manual_seed(seed)
    cplx = isinstance(lam, complex)

    def noise():
        if cplx:
            z = torch.randn(2, chains, generator=gen, dtype=torch.float64, device="cuda") / math.sqrt(2)
            return torch.complex(z[0], z[1])
        return torch.randn(chains, generator=gen, dtype=torch.float64, device="cuda")

    x = noise()
    h, s = torch.zeros_like(x), torch.zeros_like(x)
    for _ in range(steps):
        x = rho * x + math.sqrt(1 - rho**2) * noise()
        h, s = lam * h + x, lam * s + h
    want = (float(h.abs().pow(2).mean()), float(s.abs().pow(2).mean()))
    torch.manual_seed(seed + 1)
    torch.cuda.manual_seed(seed + 1)
    got = M.monte_carlo(lam, rho, chains=chains, steps=steps, seed=seed, device="cuda")
    assert got == pytest.approx(want, rel=1e-12)
