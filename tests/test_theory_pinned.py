"""lscnb.theory.{gaussian, lsc, relevancy, vanilla} pinned against answers they did not compute: Gaussian moments and
Gamma-function values by hand, float16 inputs promoted to float64, the attention models' derivatives by a plain
forward simulation, a hand-traced screening tie, (MF1)/(MF2) by adaptive quadrature and the stopping rule of the
fixed-point iteration on maps whose iterates are known (issue 27)."""

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq

from lscnb.theory import gaussian, lsc, relevancy, vanilla


def _sech4(x):
    return (1 - np.tanh(x) ** 2) ** 2


# ----------------------------------------------------------------------------------------------- gaussian.expect
@pytest.mark.parametrize("scale", [0.0, 0.1, 0.5, 1.0, 3.0, 40.0])
def test_normal_nodes_spacing_follows_the_scale(scale):
    """The documented rule: symmetric nodes on [-8.5, 8.5], z = 0 among them, spacing at most min(0.5, 0.25 / scale),
    and no more than 8 steps a side finer than that (the count is rounded up to a multiple of 8)."""
    z, w = gaussian.normal_nodes(scale)
    h = z[1] - z[0]
    bound = min(0.5, 0.25 / scale) if scale else 0.5
    assert z[0] == -8.5 and z[-1] == 8.5 and len(z) % 2 == 1 and z[len(z) // 2] == 0.0
    np.testing.assert_allclose(np.diff(z), h, rtol=1e-9)
    assert h <= bound * (1 + 1e-12)
    assert (len(z) - 1) // 2 < 8.5 / bound + 8
    np.testing.assert_allclose(w, w[::-1], rtol=1e-12)


def test_expect_moments_in_float64_and_zero_variance():
    """E x^2 = var + mean^2 (exact for a polynomial) at float16 var and mean; var = 0 gives f(mean)."""
    v16, m16 = np.float16(0.3), np.float16(0.7)
    v, m = float(v16), float(m16)
    assert gaussian.expect(lambda x: x**2, v16, m16) == pytest.approx(v + m * m, rel=1e-14)
    assert gaussian.expect(np.cos, 0.0, 0.5) == pytest.approx(math.cos(0.5), rel=1e-15)


# ----------------------------------------------------------------------------------------------- lsc
def test_log_binomial_and_chi_mean_of_float16_arguments():
    """log Gamma by math.lgamma at the float16 arguments' values: log C(n, k) and E chi_k = sqrt(2) G((k+1)/2) / G(k/2)
    in float64 (n + 1, k + 1 and (k + 1)/2 would round in float16)."""
    n16, k16 = np.float16(1.3), np.float16(0.3)
    n, k = float(n16), float(k16)
    want = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
    assert lsc.log_binomial(n16, k) == pytest.approx(want, rel=1e-13)
    assert lsc.log_binomial(n, k16) == pytest.approx(want, rel=1e-13)
    assert lsc.log_binomial(10, 3) == pytest.approx(math.log(120), rel=1e-14)
    c16 = np.float16(1.3)
    c = float(c16)
    want = math.sqrt(2) * math.exp(math.lgamma((c + 1) / 2) - math.lgamma(c / 2))
    assert lsc.chi_mean(c16) == pytest.approx(want, rel=1e-13)
    assert lsc.chi_mean(3) == pytest.approx(2 * math.sqrt(2 / math.pi), rel=1e-14)


# ----------------------------------------------------------------------------------------------- relevancy
def _simulate(pattern, lam, steps, kappa, combine, t=1):
    """|ds_{t+k}/dh_t| of h_{u+1} = lam s_u, s_u = w (h_u + c_u) (s = h for "none"), perturbing h_t, by a plain
    forward pass over the derivatives of every state (the t - 1 states before the perturbed one have derivative 0)."""
    w = 0.5 if combine == "mean" else 1.0
    H = [0.0] * (t - 1) + [1.0]  # dh_i/dh_t for i = 1..u
    out = []
    for _ in range(steps):
        u = len(H)
        if pattern == "none":
            s = H[-1]
        else:
            if pattern == "uniform":
                A = H
            elif pattern == "window":
                A = H[max(0, u - kappa) :]
            else:  # sparse: the stored state t plus the last kappa - 1 states
                A = [H[t - 1]] + (H[max(0, u - (kappa - 1)) :] if kappa > 1 else [])
            s = w * (H[-1] + sum(A) / len(A))
        out.append(abs(s))
        H.append(lam * s)
    return np.array(out)


@pytest.mark.parametrize(
    "pattern, kappa, combine",
    [
        ("none", 5, "mean"),
        ("uniform", 5, "mean"),
        ("uniform", 5, "sum"),
        ("window", 3, "mean"),
        ("sparse", 1, "mean"),
        ("sparse", 2, "mean"),
        ("sparse", 4, "sum"),
    ],
)
def test_propagation_is_the_forward_derivative(pattern, kappa, combine):
    """g(k) by a plain forward pass of the linearised attention model from the perturbed first state."""
    got = relevancy.propagation(pattern, 0.8, 12, kappa=kappa, combine=combine)
    np.testing.assert_allclose(got, _simulate(pattern, 0.8, 12, kappa, combine), rtol=1e-13)
    if pattern == "uniform":  # t = 1 by default
        np.testing.assert_array_equal(got, relevancy.propagation(pattern, 0.8, 12, kappa=kappa, t=1, combine=combine))


@pytest.mark.parametrize("pattern", ["uniform", "window", "sparse"])
@pytest.mark.parametrize("t", [2, 4, 9])
def test_propagation_from_a_later_state(pattern, t):
    """A perturbation of h_t (t > 1): the earlier states (derivative 0) count in every average, by the plain forward
    pass; at k = 0 a window that holds all t states is the uniform average, (1 + 1/t)/2."""
    got = relevancy.propagation(pattern, 0.8, 12, kappa=4, t=t)
    np.testing.assert_allclose(got, _simulate(pattern, 0.8, 12, 4, "mean", t=t), rtol=1e-13)
    if pattern == "window" and t <= 4:
        assert got[0] == pytest.approx((1 + 1 / t) / 2, rel=1e-15)


def test_uniform_exponent_default_is_the_mean():
    """combine="mean" by default: -2 (1 - lam)/(2 - lam) = -2/3 at lam = 1/2."""
    assert relevancy.uniform_exponent(0.5) == pytest.approx(-2 / 3, rel=1e-15)


def test_screened_gradients_default_lam_and_event_range():
    """lam = 0.9 by default; an event at T is outside 0..T-1 and refused with both numbers."""
    got = relevancy.screened_gradients(6, [1], nu=2, rho=1)
    np.testing.assert_array_equal(got["grad"], relevancy.screened_gradients(6, [1], nu=2, rho=1, lam=0.9)["grad"])
    # no attention beyond the plain chain would give lam^(T-1-t) / 2: the last state is 1/2 of L = s_{T-1}
    assert got["grad"][-1] > 0.5
    with pytest.raises(ValueError, match=r"^events must lie in 0\.\.5, got 6$"):
        relevancy.screened_gradients(6, [6], nu=2, rho=1)


def test_screened_gradients_tie_keeps_the_stored_state():
    """Traced by hand (boost = ln 2, nu = 1, rho = 2, event 2): states 0 and 1 fill the slots with relevance 1 and
    1/2; state 2 leaves the buffer with relevance 2/(2+1+1) = 1/2, a tie, so state 1 stays (replace only if larger)."""
    got = relevancy.screened_gradients(4, [2], nu=1, rho=2, boost=math.log(2))
    assert got["stored"] == [0, 1]
    assert got["attended"].tolist() == [1, 2, 3, 3]


def test_screened_gradients_with_a_huge_boost_is_finite():
    """boost = 800 (softmax of a one-hot score): the max-shifted softmax stays finite, all weight on the event."""
    got = relevancy.screened_gradients(5, [0], nu=1, rho=1, boost=800.0, lam=0.5)
    assert np.all(np.isfinite(got["grad"]))
    # the event 0 takes every weight at every step: dL/dh_0 collects 1/2 from each s_u, u = 0..4, through the chain
    # gs_{u-1} = lam gh_u, gh_u = gs_u / 2 for u >= 1: gs_4 = 1, gs_3 = 1/4, gs_2 = 1/16, gs_1 = 1/64, gs_0 = 1/256
    gs = [1 / 256, 1 / 64, 1 / 16, 1 / 4, 1.0]
    assert got["grad"][0] == pytest.approx(0.5 * gs[0] + 0.5 * sum(gs), rel=1e-12)


# ----------------------------------------------------------------------------------------------- vanilla (MF1/MF2)
def _E(f, q):
    s = math.sqrt(q)
    return quad(lambda z: f(s * z) * math.exp(-z * z / 2) / math.sqrt(2 * math.pi), -12, 12, epsabs=1e-14)[0]


def test_dphi_is_float64():
    """phi'(x) = 1 - tanh(x)^2 in float64 even for a Python float input."""
    d = vanilla._dphi("tanh")(0.5)
    assert d.dtype == np.float64 and float(d) == pytest.approx(1 - math.tanh(0.5) ** 2, rel=1e-15)


def test_variance_map_default_input_is_zero():
    """No input and no bias by default: from q = 0 the tanh map stays at 0."""
    assert vanilla.variance_map(0.0, g=1.0) == 0.0


def test_fixed_point_start_bias_and_iteration_limit():
    """Linear maps q' = g^2 q + bias: g = 1 fixes every q (the start q0 = 1 comes back), q* = bias/(1 - g^2), and
    g^2 = 1.0001 never settles: 10,000 iterations give 1.0001^10000."""
    assert vanilla.fixed_point(g=1.0, activation="linear") == pytest.approx(1.0, rel=1e-14)
    assert vanilla.fixed_point(g=0.5, activation="linear", bias_var=0.3) == pytest.approx(0.4, rel=1e-10)
    g = math.sqrt(1.0001)
    assert vanilla.fixed_point(g=g, activation="linear") == pytest.approx(1.0001**10_000, rel=1e-9)


def test_fixed_point_stopping_rule():
    """|new - q| <= tol max(1, q): a step of exactly tol stops; steps of 0.25 with tol 0.22 stop only at q = 1.25."""
    assert vanilla.fixed_point(g=1.0, activation="linear", bias_var=0.25, q0=0.0, tol=0.25) == 0.25
    assert vanilla.fixed_point(g=1.0, activation="linear", bias_var=0.25, q0=0.0, tol=0.22) == pytest.approx(1.5)
    g = math.sqrt(1 + 1e-13)  # the first step moves 1e-13 < tol: stop there, not 10,000 steps later
    assert vanilla.fixed_point(g=g, activation="linear") == pytest.approx(1.0, abs=1e-12)
    g = math.sqrt(1 + 5e-15)  # from q0 = 100 the step 5e-13 is below tol * q = 1e-10
    assert vanilla.fixed_point(g=g, activation="linear", q0=100.0) == pytest.approx(100.0, rel=1e-12)


def test_relu_variance_diverges_only_with_input_from_sqrt2():
    """ReLU: E relu^2 = q/2, so g >= sqrt(2) with input or bias grows without bound; without either, q stays."""
    assert vanilla.fixed_point(g=math.sqrt(2), activation="relu", input_var=0.5) == math.inf
    assert vanilla.fixed_point(g=1.5, activation="relu", bias_var=0.5) == math.inf
    assert vanilla.fixed_point(g=math.sqrt(2), activation="relu") == pytest.approx(1.0, rel=1e-12)


def test_chi_with_a_bias_by_adaptive_quadrature():
    """(MF1) solved with brentq and (MF2) by scipy quad: q* = E tanh^2(sqrt(q*) z) + 0.5, chi = E sech^4."""
    q = brentq(lambda q: _E(lambda x: math.tanh(x) ** 2, q) + 0.5 - q, 0.5, 2.0, xtol=1e-15)
    chi = _E(lambda x: (1 - math.tanh(x) ** 2) ** 2, q)
    assert vanilla.chi(g=1.0, bias_var=0.5) == pytest.approx(chi, rel=1e-9)
    assert vanilla.gradient_rate(g=1.0, bias_var=0.5) == pytest.approx(math.sqrt(chi), rel=1e-9)
    assert vanilla.chi(g=0.0, activation="linear") == 0.0  # chi = g^2 for a linear RNN, even at g = 0
