"""Mean-field theory of gated RNNs (lscnb.theory.meanfield) against answers it did not compute: Monte Carlo of the
Jacobian moments from the Gaussian gate laws, the chaotic phase's time scale from the correlation map's slope, the
LSTM population dynamics as a plain loop, and chi against its finite difference away from R = 1 (issue 27)."""

import math

import numpy as np
import pytest

from lscnb.models.unified import uniform_theta
from lscnb.theory import meanfield as mf


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _dsig(x):
    return _sig(x) * (1 - _sig(x))


def _dtanh(x):
    return 1 - np.tanh(x) ** 2


def _gates(theta, Q, R, rng, n, Er2=None):
    """Fresh pre-activations of eq. (4): u_k ~ N(mu_k, sigma2_k Q + nu2_k R) (the GRU's r2 reads sig(u_r) h)."""
    out = {}
    for k in theta.gates:
        q = Q * (Er2 if k == "r2" else 1.0)
        out[k] = theta.m(k) + math.sqrt(theta.s2(k) * q + theta.n2(k) * R) * rng.standard_normal(n)
    return out


def test_peephole_jacobian_moments_by_monte_carlo():
    """a = sig(u_f)^2 + s_i dsig(u_i)^2 tanh(u_r)^2 + s_f dsig(u_f)^2 c^2 + s_r sig(u_i)^2 dtanh(u_r)^2 with c from
    the stationary perpetuity c = sig(u_f) c + sig(u_i) tanh(u_r) and fresh gates (eqs. 16-18, App. A.3)."""
    theta = uniform_theta("peephole", 1.5, 0.7, {"f": 1.0, "i": -0.5, "r": 0.3})
    R = 1.3
    got = mf.jacobian_moments(theta, R)
    Q = got["Q"]
    rng = np.random.default_rng(0)
    n = 200_000
    c = np.zeros(n)
    for _ in range(120):  # the forget gate averages sig(1) = 0.73: stationary within a few dozen steps
        u = _gates(theta, Q, R, rng, n)
        c = _sig(u["f"]) * c + _sig(u["i"]) * np.tanh(u["r"])
    u = _gates(theta, Q, R, rng, n)
    s2 = theta.s2
    a0 = _sig(u["f"]) ** 2
    a = (
        a0
        + s2("i") * _dsig(u["i"]) ** 2 * np.tanh(u["r"]) ** 2
        + s2("f") * _dsig(u["f"]) ** 2 * c**2
        + s2("r") * _sig(u["i"]) ** 2 * _dtanh(u["r"]) ** 2
    )
    assert got["m1"] == pytest.approx(a.mean(), rel=0.01)
    assert got["var"] == pytest.approx((a**2).mean() - a0.mean() ** 2, rel=0.02)
    assert got["var_paper"] == pytest.approx(2 * (a**2).mean() - (a0**2).mean() - a.mean() ** 2, rel=0.05)
    assert pytest.approx(mf.fixed_point(theta, R, 1.0).Q) == Q


def test_gru_jacobian_m1_by_monte_carlo():
    """m1 = E[f^2] + s_r s_r2 Q E[(1-f)^2] E[dtanh(u_r2)^2] E[dsig(u_r)^2] + s_r2 E[(1-f)^2] E[dtanh^2] E[sig(u_r)^2]
    + s_f E[dsig(u_f)^2] E[(h - tanh u_r2)^2], with h of mean mu and second moment Q independent of the gates."""
    theta = uniform_theta("gru", 1.2, 0.8, {"f": 0.5, "r": -0.3, "r2": 0.8})
    R = 1.5
    got = mf.jacobian_moments(theta, R)
    st = mf.fixed_point(theta, R, 1.0)
    assert got["Q"] == pytest.approx(st.Q)
    rng = np.random.default_rng(1)
    n = 1_000_000
    ur = theta.m("r") + math.sqrt(theta.s2("r") * st.Q + theta.n2("r") * R) * rng.standard_normal(n)
    Er2 = float(np.mean(_sig(ur) ** 2))
    u = _gates(theta, st.Q, R, rng, n, Er2=Er2)
    h = st.mu + math.sqrt(st.Q - st.mu**2) * rng.standard_normal(n)
    f, omf2 = _sig(u["f"]), (1 - _sig(u["f"])) ** 2
    dt2 = _dtanh(u["r2"]) ** 2
    common = (
        np.mean(f**2)
        + theta.s2("r") * theta.s2("r2") * st.Q * omf2.mean() * dt2.mean() * np.mean(_dsig(u["r"]) ** 2)
        + theta.s2("r2") * omf2.mean() * dt2.mean() * np.mean(_sig(u["r"]) ** 2)
    )
    fgate = theta.s2("f") * np.mean(_dsig(u["f"]) ** 2)
    assert got["m1"] == pytest.approx(common + fgate * np.mean((h - np.tanh(u["r2"])) ** 2), rel=0.01)
    assert got["m1_paper"] == pytest.approx(common + fgate * (np.mean(np.tanh(u["r2"]) ** 2) + st.Q), rel=0.01)
    assert abs(got["m1"] - got["m1_paper"]) > 0.01  # the correction matters at these biases
    with pytest.raises(ValueError, match="jacobian_moments covers the peephole LSTM and the GRU, got 'vanilla'"):
        mf.jacobian_moments(uniform_theta("vanilla"))


@pytest.mark.parametrize("arch", ["gru", "peephole", "vanilla"])
def test_chi_is_the_finite_difference_away_from_unit_inputs(arch):
    theta = uniform_theta(arch, 1.4, 0.6, {"f": 0.4})
    assert mf.chi(theta, 2.0, 0.5) == pytest.approx(mf.chi_numeric(theta, 2.0, 0.5), abs=2e-5)


def test_time_scale_in_the_chaotic_phase():
    """sigma2 = 4 (vanilla): the C = 1 fixed point is unstable (chi > 1); the stable C* < 1 is found here by
    iterating the correlation map from C = 0.5, and xi = -1 / log of the map's slope there."""
    theta = uniform_theta("vanilla", 4.0, 0.5)
    R, Sz = 1.0, 1.0
    st = mf.fixed_point(theta, R, Sz)
    assert mf.chi(theta, R, Sz, at=st) > 1
    q = 0.5 * st.Q
    for _ in range(5000):
        q = mf.step(theta, mf.State(st.mu, st.Q, q), R, Sz).q
    assert q < 0.99 * st.Q
    h = 1e-6
    slope = (
        mf.step(theta, mf.State(st.mu, st.Q, q + h), R, Sz).q - mf.step(theta, mf.State(st.mu, st.Q, q - h), R, Sz).q
    ) / (2 * h)
    assert 0 < slope < 1
    assert mf.time_scale(theta, R, Sz) == pytest.approx(-1 / math.log(slope), rel=5e-3)  # quadrature vs difference
    assert math.isnan(mf.xi(1.5)) and mf.xi(1.0) == math.inf and mf.xi(math.exp(-0.5)) == pytest.approx(2.0)


def test_lstm_population_is_algorithm_1():
    theta = uniform_theta("lstm", 1.3, 0.9, {"f": 1.0, "o": -0.5})
    out = mf.population(theta, 7, samples=5000, R=1.7, Q0=0.6, seed=3)
    rng = np.random.default_rng(3)
    c, Qh, traj = np.zeros(5000), 0.6, []
    for _ in range(7):
        u = {
            k: theta.m(k) + math.sqrt(theta.s2(k) * Qh + theta.n2(k) * 1.7) * rng.standard_normal(5000) for k in "ifro"
        }
        c = _sig(u["f"]) * c + _sig(u["i"]) * np.tanh(u["r"])
        h = _sig(u["o"]) * np.tanh(c)
        Qh = float(np.mean(h**2))
        traj.append(Qh)
    np.testing.assert_allclose(out["c"], c, rtol=1e-12)
    np.testing.assert_allclose(out["h"], h, rtol=1e-12)
    np.testing.assert_allclose(out["Q"], traj, rtol=1e-12)
    with pytest.raises(ValueError, match="theta must be an LSTM Theta, got arch 'gru'"):
        mf.population(uniform_theta("gru"), 2)


def test_table_1_lstm_unrolling_corrected_and_printed():
    for seed in (0, 1):
        gaps = mf.lstm_unrolling_gaps(T=6, n=4, seed=seed)
        assert gaps["corrected"] < 1e-12 and gaps["as printed"] > 0.01


def test_fig_1_gap_reports_the_longest_length_inside_the_trainable_band():
    """T < 6 xi_critical: the full runs' lengths 4-1024 at xi = 74.5 put T = 256 (3.4 xi) last inside, 1024 past it."""
    from lscnb.experiments import meanfield as ex
    from lscnb.results import Result

    acc = {4: (0.97, 0.97), 64: (0.88, 0.75), 256: (0.19, 0.39), 1024: (0.1, 0.11)}
    col = [
        Result(
            f"T{T}",
            {"length": T},
            {"accuracy": {"standard": s, "critical": c}, "xi": {"standard": 2.0, "critical": 74.5}},
        )
        for T, (s, c) in acc.items()
    ]
    rows = ex.length_table(col)
    assert ex.longest_trainable(rows)["T"] == 256 and ex.longest_trainable(rows[:2])["T"] == 64
    assert ex.longest_trainable(rows[3:])["T"] == 1024  # none inside: the shortest
    assert ex.gap_length(col) == (
        "paper: no numbers (the standard init becomes untrainable as T grows, the critical one does not); ours at "
        "T = 256 (3.4 ξ critical): standard 0.19, critical 0.39; at T = 1024 (13.7 ξ critical): standard 0.10, "
        "critical 0.11"
    )
    assert ex.gap_length(col[:3]).endswith("T = 256 (3.4 ξ critical): standard 0.19, critical 0.39")
