"""lscnb.theory.meanfield pinned against answers it did not compute: the fixed-point iteration on maps written here,
the GRU Jacobian's m1 by adaptive quadrature (scipy.integrate.quad), a perpetuity worked by hand, chi of a gate with
no variance, the chaotic time scale from the map's slope, documented defaults and error messages (issue 27). Kept
cheap: small, contracting maps only."""

import functools
import math

import numpy as np
import pytest
import torch
from scipy.integrate import quad

from lscnb.models.unified import Theta, uniform_theta
from lscnb.theory import meanfield as mf

VAN = uniform_theta("vanilla", 0.5, 0.5, {"f": 0.3})


def _E(g, mean, var):
    """``E[g(u)]``, ``u ~ N(mean, var)``, by adaptive quadrature against the Gaussian density."""
    s = math.sqrt(var)
    return quad(lambda z: g(mean + s * z) * math.exp(-z * z / 2) / math.sqrt(2 * math.pi), -12, 12, epsabs=1e-13)[0]


def _sig(x):
    return 1 / (1 + math.exp(-x))


def test_trajectory_default_sz_is_one():
    """Sz = 1 by default (identical inputs to the two copies): the same states as Sz=1.0 given explicitly."""
    start = mf.State(0.1, 0.8, 0.2)
    assert mf.trajectory(VAN, 2, start) == mf.trajectory(VAN, 2, start, 1.0, 1.0)
    assert mf.trajectory(VAN, 2, start)[1] != mf.trajectory(VAN, 2, start, 1.0, 2.0)[1]


def test_fixed_point_of_the_identity_map_is_its_start(monkeypatch):
    """Every state is fixed by the identity: the iteration returns its start (mu=0, Q=1, q=Sz) after one step."""
    calls = []

    def identity(theta, st, R, Sz):
        calls.append(st)
        return st

    monkeypatch.setattr(mf, "step", identity)
    assert mf.fixed_point(VAN, accelerate=False) == mf.State(0.0, 1.0, 1.0) and len(calls) == 1
    calls.clear()
    start = mf.State(0.5, 2.0, 1.5)  # nonzero entries: each difference, not a sum, must be small
    assert mf.fixed_point(VAN, start=start, max_steps=3, accelerate=False) == start and len(calls) == 1


def test_fixed_point_waits_for_the_mean_and_stops_at_max_steps(monkeypatch):
    """A map halving mu only: it stops once mu moves less than tol; a map that never settles runs 200,000 steps."""
    monkeypatch.setattr(mf, "step", lambda theta, st, R, Sz: mf.State(st.mu / 2, st.Q, st.q))
    out = mf.fixed_point(VAN, start=mf.State(1.0, 1.0, 1.0), tol=1e-6, accelerate=False)
    assert 0 < out.mu < 2e-6
    calls = []

    def drifting(theta, st, R, Sz):
        calls.append(1)
        return mf.State(st.mu + 1.0, st.Q, st.q)

    monkeypatch.setattr(mf, "step", drifting)
    out = mf.fixed_point(VAN, accelerate=False)
    assert len(calls) == 200_000 and out.mu == 200_000.0


def test_aitken_jumps_to_a_geometric_sequences_limit(monkeypatch):
    """mu halves and Q, q close 10% of their distance to 1 and 0.5 each step: three iterates extrapolate to the fixed
    point, where plain iteration needs some 260 steps for 1e-12; the map's radius there is 0.9 (stable: kept)."""
    calls = []

    def halve(theta, st, R, Sz):
        calls.append(st)
        return mf.State(st.mu / 2, st.Q * 0.9 + 0.1, st.q * 0.9 + 0.05)  # Q -> 1, q -> 0.5: radius 0.9

    monkeypatch.setattr(mf, "step", halve)
    out = mf.fixed_point(VAN, start=mf.State(1.0, 2.0, 0.2), tol=1e-12)
    assert out.mu == 0.0 and abs(out.Q - 1.0) < 1e-12 and abs(out.q - 0.5) < 1e-12
    assert len(calls) < 20  # plain iteration: about 260 steps for 1e-12 at rate 0.9
    assert mf.map_radius(VAN, out) == pytest.approx(0.9, rel=1e-6)


def test_an_unstable_accelerated_point_falls_back_to_plain_iteration(monkeypatch):
    """Where the map's Jacobian at the accelerated point has radius 1 or more, the result is plain iteration's."""
    radii = []
    monkeypatch.setattr(mf, "map_radius", lambda *a, **k: radii.append(1) or 1.5)
    out = mf.fixed_point(GRU5, 1.0, 0.0)
    assert radii == [1] and out == mf.fixed_point(GRU5, 1.0, 0.0, accelerate=False)


GRU5 = uniform_theta("gru", 1.0, 1.0, {"f": 5.0})


@pytest.mark.parametrize(
    "theta", [GRU5, uniform_theta("peephole", 1.0, 1.0, {"f": 2.0}), VAN, uniform_theta("vanilla", 3.0, 0.5)]
)
@pytest.mark.parametrize("Sz", [0.0, 0.5, 1.0])
def test_accelerated_fixed_point_is_plain_iterations(theta, Sz, monkeypatch):
    """The accelerated iteration ends within 1e-10 of the plain one (GRU at mu_f = 5: 1,201 plain steps; a chaotic
    vanilla net, whose C* = 1 point at Sz = 1 is unstable, where plain iteration's point is kept)."""
    a, b = mf.fixed_point(theta, 1.0, Sz, accelerate=False), mf.fixed_point(theta, 1.0, Sz)
    assert max(abs(a.mu - b.mu), abs(a.Q - b.Q), abs(a.q - b.q)) < 1e-10
    fast = mf.time_scale(theta, 1.0, Sz)
    monkeypatch.setattr(mf, "fixed_point", functools.partial(mf.fixed_point, accelerate=False))
    assert fast == pytest.approx(mf.time_scale(theta, 1.0, Sz), rel=1e-8, nan_ok=True)


def test_chi_default_sz_and_a_gru_without_gate_variance():
    """chi's Sz defaults to 1; a GRU with zero variances has chi = sig(mu_f)^2 (r2 variance 0 handled)."""
    at = mf.State(0.1, 0.8, 0.3)
    assert mf.chi(VAN, at=at) == mf.chi(VAN, 1.0, 1.0, at=at)
    assert mf.chi(VAN, at=at) != mf.chi(VAN, 1.0, 2.0, at=at)
    flat = Theta("gru", {"f": 0.0, "r": 0.0, "r2": 0.0}, {"f": 0.0, "r": 0.0, "r2": 0.0}, {"f": 0.4, "r2": 0.2})
    assert mf.chi(flat, at=at) == pytest.approx(_sig(0.4) ** 2, rel=1e-14)
    with pytest.raises(
        ValueError, match=r"^chi covers vanilla, gru and peephole; for the LSTM use population\(\), got 'lstm'$"
    ):
        mf.chi(uniform_theta("lstm"), at=at)


def test_time_scale_in_the_chaotic_phase_away_from_unit_inputs():
    """sigma2 = 4, R = 0.5, a bias: xi = -1/log of the C-map's slope at the stable C* < 1 (finite difference), and
    exactly the documented recipe (restart at C = 0.5, then chi there)."""
    theta, R = uniform_theta("vanilla", 4.0, 0.5, {"f": 0.3}), 0.5
    st = mf.fixed_point(theta, R, 1.0)
    assert mf.chi(theta, R, 1.0, at=st) > 1 and abs(st.mu) > 0.05
    got = mf.time_scale(theta, R, 1.0)
    start = mf.State(st.mu, st.Q, st.mu**2 + 0.5 * (st.Q - st.mu**2))
    stable = mf.fixed_point(theta, R, 1.0, start=start)
    assert got == -1.0 / math.log(mf.chi(theta, R, 1.0, at=stable))
    q, h = stable.q, 1e-6
    slope = (
        mf.step(theta, mf.State(stable.mu, stable.Q, q + h), R, 1.0).q
        - mf.step(theta, mf.State(stable.mu, stable.Q, q - h), R, 1.0).q
    ) / (2 * h)
    assert 0 < slope < 1 and got == pytest.approx(-1 / math.log(slope), rel=1e-3)


def test_time_scale_in_the_ordered_phase_keeps_the_first_fixed_point():
    """chi < 1 at C = 1 (Sz = 1): xi = -1/log chi at that fixed point, with no restart."""
    st = mf.fixed_point(VAN, 1.3, 1.0)
    c = mf.chi(VAN, 1.3, 1.0, at=st)
    assert 0 < c < 1
    assert mf.time_scale(VAN, 1.3, 1.0) == -1.0 / math.log(c)


def test_perpetuity_moments_by_hand():
    """Y = 1/2 and Z = 1 constant: c = c/2 + 1 is the constant 2, so E c^k = 2^k."""
    EY = [0.5**j for j in range(5)]
    EZ = [1.0] * 5
    np.testing.assert_allclose(mf._perpetuity_moments(EY, EZ, 4), [1.0, 2.0, 4.0, 8.0, 16.0], rtol=1e-14)


def test_jacobian_moments_sit_at_the_unit_correlation_fixed_point():
    """Eqs. 16-18 are taken at the fixed point of identical inputs (Sz = 1), the same one fixed_point finds."""
    theta = uniform_theta("peephole", 1.2, 0.7, {"f": 1.0})
    assert mf.jacobian_moments(theta, 1.3)["Q"] == mf.fixed_point(theta, 1.3, 1.0).Q


def test_gru_m1_by_adaptive_quadrature():
    """m1 = E f^2 + s_r s_r2 Q E(1-f)^2 E dtanh(u_r2)^2 E dsig(u_r)^2 + s_r2 E(1-f)^2 E dtanh^2 E sig(u_r)^2
    + s_f E dsig(u_f)^2 (Q - 2 mu E tanh u_r2 + E tanh^2 u_r2), u_r2 ~ N(m, s_r2 Q E sig(u_r)^2 + n_r2 R)."""
    # small variances (< 0.6): the order-48 rule and quad then agree to ~1e-11
    theta = Theta(
        "gru", {"f": 0.4, "r": 0.7, "r2": 0.3}, {"f": 0.2, "r": 0.1, "r2": 0.2}, {"f": 0.5, "r": -0.3, "r2": 0.8}
    )
    R = 1.2
    st = mf.fixed_point(theta, R, 1.0)
    Q, mu = st.Q, st.mu
    f = (0.5, 0.4 * Q + 0.2 * R)
    r = (-0.3, 0.7 * Q + 0.1 * R)
    Er2 = _E(lambda x: _sig(x) ** 2, *r)
    r2 = (0.8, 0.3 * Q * Er2 + 0.2 * R)

    def dsig(x):
        return _sig(x) * (1 - _sig(x))

    def dtanh(x):
        return 1 - math.tanh(x) ** 2

    omf2 = _E(lambda x: (1 - _sig(x)) ** 2, *f)
    dt2 = _E(lambda x: dtanh(x) ** 2, *r2)
    common = _E(lambda x: _sig(x) ** 2, *f) + 0.7 * 0.3 * Q * omf2 * dt2 * _E(lambda x: dsig(x) ** 2, *r)
    common += 0.3 * omf2 * dt2 * Er2
    fgate = 0.4 * _E(lambda x: dsig(x) ** 2, *f)
    t1, t2 = _E(math.tanh, *r2), _E(lambda x: math.tanh(x) ** 2, *r2)
    got = mf.jacobian_moments(theta, R)
    assert got["m1"] == pytest.approx(common + fgate * (Q - 2 * mu * t1 + t2), rel=1e-9)
    assert got["m1_paper"] == pytest.approx(common + fgate * (t2 + Q), rel=1e-9)


def test_population_defaults():
    """The signature's defaults (100,000 samples, R = 1, Q0 = 1, seed 0) pinned against the explicit call."""
    theta = uniform_theta("lstm", 1.3, 0.9, {"f": 1.0})
    got = mf.population(theta, 1)
    want = mf.population(theta, 1, samples=100_000, R=1.0, Q0=1.0, seed=0)
    assert got["c"].shape == (100_000,)
    for key in ("c", "h", "Q"):
        np.testing.assert_array_equal(got[key], want[key])


def _E2(g1, g2, mean, var, c):
    """``E[g1(u_a) g2(u_b)]`` for a pair with common mean and variance and correlation ``c``, by nested adaptive
    quadrature over ``u_a = mean + s z`` and ``u_b = mean + s (c z + sqrt(1 - c^2) w)``."""
    s, r = math.sqrt(var), math.sqrt(1 - c * c)

    def phi(z):
        return math.exp(-z * z / 2) / math.sqrt(2 * math.pi)

    def inner(z):
        return quad(lambda w: g2(mean + s * (c * z + r * w)) * phi(w), -10, 10, epsabs=1e-12)[0]

    return quad(lambda z: g1(mean + s * z) * phi(z) * inner(z), -10, 10, epsabs=1e-12)[0]


def _law(theta, k, st, R, Sz):
    """Eq. 4 written here: mean, variance and correlation of gate ``k``'s pre-activation."""
    s2, n2 = theta.sigma2[k], theta.nu2[k]
    var = s2 * st.Q + n2 * R
    return theta.mu[k], var, (s2 * st.q + n2 * R * Sz) / var


def _tanh2(x):
    return math.tanh(x) ** 2


def _sig2(x):
    return _sig(x) ** 2


def _omsig(x):
    return 1 - _sig(x)


def _omsig2(x):
    return (1 - _sig(x)) ** 2


def _sig_omsig(x):
    return _sig(x) * (1 - _sig(x))


STEP_THETAS = {
    "vanilla": Theta("vanilla", {"f": 0.8}, {"f": 0.5}, {"f": 0.2}),
    "peephole": Theta(
        "peephole",
        {"i": 0.6, "f": 0.9, "r": 0.7, "o": 0.3},
        {"i": 0.4, "f": 0.2, "r": 0.5, "o": 0.1},
        {"i": 0.3, "f": 1.0, "r": -0.2, "o": 0.1},
    ),
    "gru": Theta(
        "gru", {"f": 0.4, "r": 0.7, "r2": 0.6}, {"f": 0.3, "r": 0.2, "r2": 0.5}, {"f": 0.5, "r": -0.3, "r2": 0.4}
    ),
}


def _step_by_quadrature(arch, st, R, Sz):
    """The mean-field map (Sec. 4.2, App. A.1) from the gate laws, every expectation by adaptive quadrature."""
    theta, mu, Q, q = STEP_THETAS[arch], st.mu, st.Q, st.q
    if arch == "vanilla":
        m, v, c = _law(theta, "f", st, R, Sz)
        return _E(math.tanh, m, v), _E(_tanh2, m, v), _E2(math.tanh, math.tanh, m, v, c)
    if arch == "peephole":
        f, i, r = (_law(theta, k, st, R, Sz) for k in "fir")
        Ef, Ei, Er = _E(_sig, *f[:2]), _E(_sig, *i[:2]), _E(math.tanh, *r[:2])
        drive = 2 * Ef * mu * Ei * Er  # E[f_a c_a i_b r_b] + E[i_a r_a f_b c_b], the gates independent of c
        return (
            Ef * mu + Ei * Er,
            _E(_sig2, *f[:2]) * Q + drive + _E(_sig2, *i[:2]) * _E(_tanh2, *r[:2]),
            _E2(_sig, _sig, *f) * q + drive + _E2(_sig, _sig, *i) * _E2(math.tanh, math.tanh, *r),
        )
    f, r = _law(theta, "f", st, R, Sz), _law(theta, "r", st, R, Sz)
    # u_r2 reads sig(u_r) h: variance s_r2 Q E sig^2(u_r) + n_r2 R, cross-moment s_r2 q E[sig sig] + n_r2 R Sz
    v2 = theta.sigma2["r2"] * _E(_sig2, *r[:2]) * Q + theta.nu2["r2"] * R
    c2 = (theta.sigma2["r2"] * _E2(_sig, _sig, *r) * q + theta.nu2["r2"] * R * Sz) / v2
    m2 = theta.mu["r2"]
    t1, t2, T2 = _E(math.tanh, m2, v2), _E(_tanh2, m2, v2), _E2(math.tanh, math.tanh, m2, v2, c2)
    Ef = _E(_sig, *f[:2])
    return (
        Ef * mu + (1 - Ef) * t1,
        _E(_sig2, *f[:2]) * Q + 2 * _E(_sig_omsig, *f[:2]) * mu * t1 + _E(_omsig2, *f[:2]) * t2,
        _E2(_sig, _sig, *f) * q + 2 * _E2(_sig, _omsig, *f) * mu * t1 + _E2(_omsig, _omsig, *f) * T2,
    )


@pytest.mark.parametrize("arch", ["vanilla", "gru", "peephole"])
@pytest.mark.parametrize("R, Sz", [(1.7, 0.4), (None, None)])
def test_step_is_the_map_by_adaptive_quadrature(arch, R, Sz):
    """One step of the map against the gate laws of eq. 4 integrated by scipy quad (R = Sz = 1 when not given)."""
    st = mf.State(0.3, 0.9, 0.25)
    got = mf.step(STEP_THETAS[arch], st) if R is None else mf.step(STEP_THETAS[arch], st, R, Sz)
    want = _step_by_quadrature(arch, st, 1.0 if R is None else R, 1.0 if Sz is None else Sz)
    assert (got.mu, got.Q, got.q) == pytest.approx(want, rel=1e-5)  # the order-48 rule is good to ~1e-6 here


def test_step_with_deterministic_gates_by_hand():
    """Zero weight and input variances: every gate is its bias through the nonlinearity (no division by 0)."""
    st = mf.State(0.3, 0.9, 0.25)
    van = uniform_theta("vanilla", 0.0, 0.0, {"f": 0.7})
    t = math.tanh(0.7)
    assert tuple(vars(mf.step(van, st, 1.5, 0.5)).values()) == pytest.approx((t, t * t, t * t), rel=1e-13)
    gru = uniform_theta("gru", 0.0, 0.0, {"f": 0.4, "r2": 0.2})
    f, t = _sig(0.4), math.tanh(0.2)
    want = (
        f * 0.3 + (1 - f) * t,
        f * f * 0.9 + 2 * f * (1 - f) * 0.3 * t + (1 - f) ** 2 * t * t,
        f * f * 0.25 + 2 * f * (1 - f) * 0.3 * t + (1 - f) ** 2 * t * t,
    )
    assert tuple(vars(mf.step(gru, st, 1.5, 0.5)).values()) == pytest.approx(want, rel=1e-13)


@pytest.mark.parametrize("corr, want", [(-1.5, -0.8), (1.5, 0.8)])
def test_e2_clips_the_correlation(corr, want):
    """E[u_a u_b] = corr * var for a centred pair; a correlation outside [-1, 1] counts as -1 or 1."""
    assert mf.e2(lambda x: x, lambda x: x, 0.0, 0.8, corr) == pytest.approx(want, rel=1e-13)


def test_fixed_point_needs_a_move_strictly_below_tol(monkeypatch):
    """A map moving mu by exactly tol each step has not settled ("less than tol"): it runs all max_steps."""
    monkeypatch.setattr(mf, "step", lambda theta, st, R, Sz: mf.State(st.mu + 0.5, st.Q, st.q))
    out = mf.fixed_point(VAN, start=mf.State(0.0, 1.0, 1.0), tol=0.5, max_steps=3)
    assert out.mu == 1.5


def test_time_scale_restarts_only_above_chi_one(monkeypatch):
    """The restart is for chi_{C=1} > 1 (chaotic); chi exactly 1 at C = 1 is marginal: xi = inf, no restart."""
    chis = iter([1.0, 0.5])
    monkeypatch.setattr(mf, "chi", lambda theta, R, Sz, at: next(chis))
    assert mf.time_scale(VAN, 1.0, 1.0) == math.inf


def _unrolling_gap(T, n, seed):
    """Table 1 by hand: the same draws (u_i, u_f, u_r, u_o of shape (T+1, n), then (h^0, c^0)), the cell state after
    T plain steps c^t = sig(u_f^t) c^(t-1) + sig(u_i^t) tanh(u_r^t), and the printed unrolled form."""
    gen = torch.Generator().manual_seed(seed)
    u = {k: torch.randn(T + 1, n, generator=gen, dtype=torch.float64).numpy() for k in "ifro"}
    c0 = torch.randn(2 * n, generator=gen, dtype=torch.float64).numpy()[n:]

    def sig(x):
        return 1 / (1 + np.exp(-x))

    c = c0.copy()
    for t in range(1, T + 1):
        c = sig(u["f"][t]) * c + sig(u["i"][t]) * np.tanh(u["r"][t])
    gate = [sig(u["i"][j]) * np.tanh(u["r"][j]) for j in range(T + 1)]
    corrected = np.prod(sig(u["f"][1:]), axis=0) * c0
    printed = c0.copy()
    for j in range(1, T + 1):
        corrected = corrected + np.prod(sig(u["f"][j + 1 :]), axis=0) * gate[j]
        printed = printed + np.prod(sig(u["f"][j:]), axis=0) * gate[j]
    assert np.max(np.abs(corrected - c)) < 1e-13  # the corrected form is the cell
    return float(np.max(np.abs(printed - c)))


def test_lstm_unrolling_gaps_against_the_cell_written_here():
    """The printed form's gap from T plain LSTM steps on the same seeded draws (any global RNG state); defaults
    T = 12, n = 8, seed 0; the messages name T and n."""
    for T, n, seed in [(5, 3, 7), (12, 8, 0)]:
        torch.manual_seed(seed + 100)
        got = mf.lstm_unrolling_gaps(T, n, seed)
        assert got["corrected"] < 1e-13
        assert got["as printed"] == pytest.approx(_unrolling_gap(T, n, seed), rel=1e-12)
    torch.manual_seed(1)
    default = mf.lstm_unrolling_gaps()
    assert default["as printed"] == pytest.approx(_unrolling_gap(12, 8, 0), rel=1e-12)
    with pytest.raises(ValueError, match=r"^T must be positive, got 0$"):
        mf.lstm_unrolling_gaps(T=0)
    with pytest.raises(ValueError, match=r"^n must be positive, got 0$"):
        mf.lstm_unrolling_gaps(n=0)
