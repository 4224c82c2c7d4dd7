"""Theory formulas against answers the code under test did not compute: numerical integration (scipy.integrate.quad),
small cases worked by hand, plain loops written here, eigenvalues of explicit matrices (issue 27)."""

import math

import numpy as np
import pytest
import torch
from scipy import integrate, optimize

from lscnb.theory import gaussian, lsc, vanilla
from lscnb.theory import roa as bounds

_PDF = lambda z: math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)  # noqa: E731


def _gauss_quad(f, q, mean=0.0):
    """E[f(mean + sqrt(q) z)], z ~ N(0, 1), by adaptive quadrature (independent of Gauss-Hermite)."""
    return integrate.quad(lambda z: f(mean + math.sqrt(q) * z) * _PDF(z), -np.inf, np.inf, epsabs=1e-13)[0]


# ----------------------------------------------------------------------------------------------- gaussian.expect
@pytest.mark.parametrize("scale", [0.0, 1.0, 7.0])
def test_normal_nodes_integrate_the_normal_moments(scale):
    z, w = gaussian.normal_nodes(scale)
    assert w.sum() == pytest.approx(1.0, abs=1e-13)
    for k, double_factorial in ((1, 0.0), (2, 1.0), (4, 3.0), (6, 15.0), (8, 105.0)):
        assert float(np.sum(w * z**k)) == pytest.approx(double_factorial, rel=1e-11, abs=1e-13)


@pytest.mark.parametrize("var", [5.0, 12.5, 100.0, 2000.0])
@pytest.mark.parametrize("mean", [0.0, 2.0])
def test_expect_holds_at_large_variance(var, mean):
    """tanh(x)^2 and sech^4(x) = tanh'(x)^2 turn from smooth to a step as var grows; 48 or 101 Gauss-Hermite
    nodes missed E[sech^4] by 2.7% (var 5) to 33% (var 30). quad is told where the step is."""
    s = math.sqrt(var)
    for f in (lambda x: math.tanh(x) ** 2, lambda x: (1 - math.tanh(x) ** 2) ** 2):
        ref = integrate.quad(
            lambda z: f(mean + s * z) * _PDF(z), -12, 12, points=[-mean / s, 0.0], limit=2000, epsabs=1e-14
        )[0]
        assert float(gaussian.expect(np.vectorize(f), var, mean)) == pytest.approx(ref, abs=1e-10)


@pytest.mark.parametrize("var,mean", [(0.3, 0.0), (2.5, 0.4), (1.0, -1.2)])
def test_expect_matches_quadrature(var, mean):
    got = float(gaussian.expect(np.tanh, var, mean))
    assert got == pytest.approx(_gauss_quad(math.tanh, var, mean), abs=1e-7)
    got2 = float(gaussian.expect(lambda x: np.tanh(x) ** 2, var, mean))
    assert got2 == pytest.approx(_gauss_quad(lambda x: math.tanh(x) ** 2, var, mean), abs=1e-7)
    # vectorised over var: each entry its own expectation
    many = gaussian.expect(lambda x: x**2, np.array([var, 2 * var]), mean)
    np.testing.assert_allclose(many, [var + mean**2, 2 * var + mean**2], atol=1e-12)


# ----------------------------------------------------------------------------------------- theory.vanilla (MF1/MF2)
@pytest.mark.parametrize("act,phi", [("tanh", math.tanh), ("sin", math.sin), ("relu", lambda x: max(x, 0.0))])
def test_variance_map_is_mf1_by_quadrature(act, phi):
    """Poole et al. (2016) eq. 3 / MF1: q' = g^2 E[phi(sqrt(q) z)^2] + s_u^2 + s_b^2."""
    q, g, su, sb = 0.7, 1.3, 0.2, 0.05
    expected = g**2 * _gauss_quad(lambda x: phi(x) ** 2, q) + su + sb
    assert float(vanilla.variance_map(q, g=g, activation=act, input_var=su, bias_var=sb)) == pytest.approx(
        expected, abs=1e-9
    )


@pytest.mark.parametrize("g,su", [(1.5, 0.3), (1.1, 0.0), (2.0, 0.1), (0.9, 0.5), (4.0, 0.0), (6.0, 0.1)])
def test_fixed_point_and_chi_against_an_independent_root(g, su):
    """q* solves MF1 (root found here with brentq on a quad-evaluated map), chi = g^2 E[phi'(sqrt(q*) z)^2] (MF2)."""
    mf1 = lambda q: g**2 * _gauss_quad(lambda x: math.tanh(x) ** 2, q) + su - q  # noqa: E731
    if mf1(1e-9) <= 0:  # no positive root: the map contracts to zero (only when su = 0 and g <= 1)
        q_star = 0.0
    else:
        q_star = optimize.brentq(mf1, 1e-9, 80.0, xtol=1e-13)
    # the trapezoid rule of lscnb.theory.gaussian is good to ~1e-12 at any q (g = 6: q* ~ 30);
    # a wrong exponent or factor is off by > 1e-2
    assert vanilla.fixed_point(g=g, input_var=su) == pytest.approx(q_star, rel=1e-6, abs=1e-9)
    chi = g**2 * _gauss_quad(lambda x: (1 - math.tanh(x) ** 2) ** 2, q_star) if q_star > 0 else g**2
    assert vanilla.chi(g=g, input_var=su) == pytest.approx(chi, rel=2e-5)
    assert vanilla.gradient_rate(g=g, input_var=su) == pytest.approx(math.sqrt(chi), rel=1e-5)


def test_chi_for_relu_and_linear_by_hand_and_relu_variance_blows_up():
    assert vanilla.chi(g=1.2, activation="relu") == pytest.approx(0.72, abs=1e-15)  # g^2 / 2
    assert vanilla.chi(g=1.2, activation="linear") == pytest.approx(1.44, abs=1e-15)
    assert vanilla.fixed_point(g=1.5, activation="relu", input_var=0.1) == float("inf")
    # below sqrt(2) the ReLU map is linear in q: q* = s^2 / (1 - g^2 / 2)
    assert vanilla.fixed_point(g=1.0, activation="relu", input_var=0.1) == pytest.approx(0.2, rel=1e-9)
    # sigmoid (no closed-form branch): MF2 by quadrature at the fixed point
    g, su = 1.7, 0.2
    sig = lambda x: 0.5 * (1 + math.tanh(x / 2))  # noqa: E731
    q = optimize.brentq(lambda q: g**2 * _gauss_quad(lambda x: sig(x) ** 2, q) + su - q, 1e-6, 50.0, xtol=1e-13)
    expected = g**2 * _gauss_quad(lambda x: (sig(x) * (1 - sig(x))) ** 2, q)
    assert vanilla.chi(g=g, activation="sigmoid", input_var=su) == pytest.approx(expected, rel=1e-6)


def test_vanilla_gradient_rate_matches_a_wide_linear_rnn():
    """For a linear RNN the rate is g: the norm of a gradient pushed back 30 steps through a wide Gaussian W."""
    n, g, T = 600, 0.8, 30
    gen = torch.Generator().manual_seed(0)
    W = torch.randn(n, n, generator=gen, dtype=torch.float64) * (g / math.sqrt(n))
    v = torch.randn(n, generator=gen, dtype=torch.float64)
    norms = []
    for _ in range(T):
        v = W.T @ v
        norms.append(float(v.norm()))
    rate = (norms[-1] / norms[9]) ** (1 / (T - 10))
    assert rate == pytest.approx(vanilla.gradient_rate(g=g, activation="linear"), rel=0.03)


# --------------------------------------------------------------------------------------------------- theory.roa
def test_roa_bounds_by_hand():
    # rho = 2, sigma = 1.5, r = 1, 4 maps: alpha = 0.5; upper (1 + 0.5 * 0.5)^4, lower (1 - 0.5 * 2.5)^4 < 0 -> error
    assert bounds.upper_bound(2.0, 1.5, 4) == pytest.approx(1.25**4, rel=1e-15)
    with pytest.raises(ValueError, match="lower bound"):
        bounds.lower_bound(2.0, 1.5, 4)
    # rho = 1, sigma = 0.5, r = 2, 5 maps: alpha = 0.2, r sigma = 1: upper 1, lower (1 - 0.2 * 2)^5 = 0.6^5
    assert bounds.upper_bound(1.0, 0.5, 5, r=2.0) == pytest.approx(1.0, rel=1e-15)
    assert bounds.lower_bound(1.0, 0.5, 5, r=2.0) == pytest.approx(0.6**5, rel=1e-14)
    assert bounds.lower_bound(1.0, 0.5, 5) == pytest.approx((1 - 0.2 * 1.5) ** 5, rel=1e-14)
    assert bounds.lower_bound_paper(1.0, 0.5, r=2.0) == pytest.approx(math.exp(-2.0), rel=1e-15)
    assert bounds.lower_bound_paper(0.5, 3.0) == pytest.approx(math.exp(-2.0), rel=1e-15)
    # the step at exactly zero is refused too (alpha (1 + r sigma) = 1)
    with pytest.raises(ValueError):
        bounds.lower_bound(1.0, 1.0, 2)
    assert bounds.scalar_counterexample(4, 2.0, 0.5) == pytest.approx((1 - 0.5 * 1.5) ** 4, rel=1e-14)
    lo, hi = bounds.annulus(0.1, 2.0, r=0.5)
    assert (lo, hi) == (pytest.approx(0.8), pytest.approx(1.0))
    centre, radius = bounds.eye_disc(0.25, 2.0, r=0.5)
    assert centre == pytest.approx(complex(0.75, 0)) and radius == pytest.approx(0.25)


def test_roa_bounds_tend_to_eq15_and_bound_singular_values_of_real_products():
    """Eq. 15's exponential limit; and both finite bounds hold for an explicit product of
    alpha D W + (1 - alpha) O with diag(D) in [0, r] (random), ||W|| = sigma, O orthogonal."""
    assert bounds.upper_bound(3.0, 0.7, 100_000, r=1.0) == pytest.approx(math.exp(3.0 * (0.7 - 1)), rel=1e-4)
    assert bounds.lower_bound(0.5, 0.7, 100_000) == pytest.approx(math.exp(-0.5 * 1.7), rel=1e-4)
    gen = torch.Generator().manual_seed(1)
    n, maps, rho, r = 6, 12, 1.5, 0.8
    alpha = rho / maps
    prod, sigma = torch.eye(n, dtype=torch.float64), 0.0
    for _ in range(maps):
        W = torch.randn(n, n, generator=gen, dtype=torch.float64)
        sigma = max(sigma, float(torch.linalg.matrix_norm(W, ord=2)))
        O, _ = torch.linalg.qr(torch.randn(n, n, generator=gen, dtype=torch.float64))
        D = torch.diag(r * torch.rand(n, generator=gen, dtype=torch.float64))
        layer = alpha * D @ W + (1 - alpha) * O
        ev = torch.linalg.eigvals(layer).abs()
        lo, hi = bounds.annulus(alpha, float(torch.linalg.matrix_norm(W, ord=2)), r)
        assert float(ev.min()) >= lo - 1e-12 and float(ev.max()) <= hi + 1e-12
        prod = layer @ prod
    s = torch.linalg.svdvals(prod)
    assert float(s.max()) <= bounds.upper_bound(rho, sigma, maps, r=r)
    if rho * (1 + r * sigma) < maps:
        assert float(s.min()) >= bounds.lower_bound(rho, sigma, maps, r=r)


# --------------------------------------------------------------------------------------------------- theory.lsc
@pytest.mark.parametrize("rho", [1.0, 0.6])
def test_pascal_gradient_equals_autograd_of_a_plain_pascal_rnn(rho):
    """The PascalRNN h[t,l] = rho h[t,l-1] + rho h[t-1,l] (LSC paper, Sec. 3), h[t,0] = x_t, h[-1,l] = 0, written here
    with scalars; d(sum_t h[t,L]) / d x_t' by autograd against the closed form."""
    T, L = 9, 4
    x = torch.zeros(T, dtype=torch.float64, requires_grad=True)
    prev = [torch.zeros((), dtype=torch.float64) for _ in range(L + 1)]
    total = torch.zeros((), dtype=torch.float64)
    for t in range(T):
        cur = [x[t]]
        for l in range(1, L + 1):
            cur.append(rho * cur[l - 1] + rho * prev[l])
        total = total + cur[L]
        prev = cur
    (grad,) = torch.autograd.grad(total, x)
    np.testing.assert_allclose(lsc.pascal_gradient(T, L, rho), grad.numpy(), rtol=1e-12)
    if rho == 1.0:  # C(N + L, L), N = T - 1 - t'
        assert lsc.pascal_gradient(T, L, 1.0).tolist() == pytest.approx([math.comb(T - 1 - t + L, L) for t in range(T)])


def test_path_counts_by_enumeration_and_log_binomial():
    def paths(dl, dt):  # monotone lattice paths, counted by recursion
        return 1 if dl == 0 or dt == 0 else paths(dl - 1, dt) + paths(dl, dt - 1)

    for dl, dt in ((0, 3), (2, 2), (3, 5), (4, 1)):
        assert lsc.path_count(dl, dt) == paths(dl, dt)
    assert lsc.summed_path_count(2, 1) == sum(paths(1, dt) for t in range(3) for dt in range(t + 1))
    assert float(lsc.log_binomial(10, 3)) == pytest.approx(math.log(120), rel=1e-13)


def test_chi_mean_and_variance_by_quadrature():
    """Lemma 1: the mean of a chi_k variable, integrating its density r^(k-1) e^(-r^2/2) / (2^(k/2-1) Gamma(k/2))."""
    for k in (1, 3, 7):
        c = 2 ** (k / 2 - 1) * math.gamma(k / 2)
        pdf = lambda r, k=k, c=c: r ** (k - 1) * math.exp(-r * r / 2) / c  # noqa: E731
        mean = integrate.quad(lambda r: r * pdf(r), 0, np.inf)[0]
        second = integrate.quad(lambda r: r * r * pdf(r), 0, np.inf)[0]
        assert float(lsc.chi_mean(k)) == pytest.approx(mean, rel=1e-9)
        assert float(lsc.chi_variance(k)) == pytest.approx(second - mean**2, abs=1e-9)
