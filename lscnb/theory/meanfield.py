"""Mean-field signal propagation in gated RNNs (Gilboa et al. 2019): recursions, fixed points, time scales,
Jacobian moments and the LSTM's population dynamics.

Two copies of a wide network with shared random weights read inputs with second moment ``R`` and
cross-moment ``R * Sz``. The order parameters of the state are its mean ``mu``, second moment ``Q`` and the
cross-moment ``q`` of the copies; ``C = (q - mu^2) / (Q - mu^2)`` is their correlation. Pre-activations are
Gaussian with (eq. 4, with the state at ``t - 1``)

    Sigma_k^2 = sigma_k^2 Q + nu_k^2 R,     C_k = (sigma_k^2 q + nu_k^2 R Sz) / Sigma_k^2,

and the maps below push ``(mu, Q, q)`` one step. Gaussian expectations (eq. 19) use the trapezoid rule of
:mod:`lscnb.theory.gaussian`, accurate at any variance.
Where the paper's printed formulas are wrong, the corrected form is implemented and the printed one is kept
under ``paper=True`` so the chapter can compare them (the spec's fixes 1-6).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from .. import checks
from ..models.unified import Theta, update
from .gaussian import expect, normal_nodes


def sig(x):
    return expit(x)


def dsig(x):
    s = expit(x)
    return s * (1 - s)


def tanh(x):
    return np.tanh(x)


def dtanh(x):
    return 1 - np.tanh(x) ** 2


def one_minus_sig(x):
    return 1 - expit(x)


def e1(g, mean: float, var: float) -> float:
    """``E[g(u)]``, ``u ~ N(mean, var)`` (a variance rounded below 0 counts as 0)."""
    return float(expect(g, max(var, 0.0), mean))


def e2(g1, g2, mean: float, var: float, corr: float) -> float:
    """``E[g1(u_a) g2(u_b)]`` for a pair with common mean and variance and correlation ``corr`` (eq. 19)."""
    c = min(max(corr, -1.0), 1.0)
    s = math.sqrt(max(var, 0.0))
    z, w = normal_nodes(s)
    rows = max(1, 2**21 // len(z))  # at most ~2M points at a time: a huge variance needs a fine grid
    total = 0.0
    for i in range(0, len(z), rows):
        za, wa = z[i : i + rows, None], w[i : i + rows, None]
        ub = mean + s * (c * za + math.sqrt(1 - c * c) * z[None, :])
        total += float(np.sum(wa * g1(mean + s * za) * (w[None, :] * g2(ub))))
    return total


@dataclass(frozen=True)
class State:
    """Order parameters of the state: mean, second moment, cross-moment of the two copies."""

    mu: float
    Q: float
    q: float

    @property
    def vector(self) -> np.ndarray:
        """``(mu, Q, q)`` as an array."""
        return np.array([self.mu, self.Q, self.q])

    @property
    def C(self) -> float:
        var = self.Q - self.mu**2
        return (self.q - self.mu**2) / var if var > 1e-300 else 1.0


def _gate(theta: Theta, k: str, Q: float, q: float, R: float, Sz: float) -> tuple[float, float, float]:
    """Mean, variance and correlation of the pre-activation of gate ``k`` (eq. 4)."""
    var = theta.s2(k) * Q + theta.n2(k) * R
    num = theta.s2(k) * q + theta.n2(k) * R * Sz
    return theta.m(k), var, (num / var if var > 1e-300 else 1.0)


def step(theta: Theta, st: State, R: float = 1.0, Sz: float = 1.0) -> State:
    """One application of the mean-field map (Sec. 4.2, App. A.1) for vanilla, GRU and peephole cells."""
    arch = theta.arch
    if arch == "vanilla":
        m, v, c = _gate(theta, "f", st.Q, st.q, R, Sz)
        return State(e1(tanh, m, v), e1(lambda x: tanh(x) ** 2, m, v), e2(tanh, tanh, m, v, c))
    if arch == "peephole":
        g = {k: _gate(theta, k, st.Q, st.q, R, Sz) for k in "ifr"}
        mf, mi, mr = e1(sig, *g["f"][:2]), e1(sig, *g["i"][:2]), e1(tanh, *g["r"][:2])
        mff, mii, mrr = (
            e1(lambda x: sig(x) ** 2, *g["f"][:2]),
            e1(lambda x: sig(x) ** 2, *g["i"][:2]),
            e1(lambda x: tanh(x) ** 2, *g["r"][:2]),
        )
        Af, Ai, Tr = e2(sig, sig, *g["f"]), e2(sig, sig, *g["i"]), e2(tanh, tanh, *g["r"])
        drive = 2 * mf * st.mu * mi * mr
        return State(mf * st.mu + mi * mr, mff * st.Q + drive + mii * mrr, Af * st.q + drive + Ai * Tr)
    if arch == "gru":
        gf, gr = _gate(theta, "f", st.Q, st.q, R, Sz), _gate(theta, "r", st.Q, st.q, R, Sz)
        Err, Ers = e1(lambda x: sig(x) ** 2, *gr[:2]), e2(sig, sig, *gr)
        v2 = theta.s2("r2") * Err * st.Q + theta.n2("r2") * R
        c2 = (theta.s2("r2") * Ers * st.q + theta.n2("r2") * R * Sz) / v2 if v2 > 1e-300 else 1.0
        m2 = theta.m("r2")
        t1, t2, T2 = e1(tanh, m2, v2), e1(lambda x: tanh(x) ** 2, m2, v2), e2(tanh, tanh, m2, v2, c2)
        mf = e1(sig, *gf[:2])
        Af, B, D = e2(sig, sig, *gf), e2(sig, one_minus_sig, *gf), e2(one_minus_sig, one_minus_sig, *gf)
        mff = e1(lambda x: sig(x) ** 2, *gf[:2])
        Bq, Dq = e1(lambda x: sig(x) * (1 - sig(x)), *gf[:2]), e1(lambda x: (1 - sig(x)) ** 2, *gf[:2])
        return State(
            mf * st.mu + (1 - mf) * t1,
            mff * st.Q + 2 * Bq * st.mu * t1 + Dq * t2,
            Af * st.q + 2 * B * st.mu * t1 + D * T2,
        )
    raise ValueError(f"the closed map covers vanilla, gru and peephole; for the LSTM use population(), got {arch!r}")


def trajectory(theta: Theta, steps: int, start: State, R: float = 1.0, Sz=1.0) -> list[State]:
    """The map iterated ``steps`` times; ``Sz`` may be a sequence (one value per step, as in Fig. 5)."""
    steps = checks.positive_int(steps, "steps")
    Szs = np.broadcast_to(np.asarray(Sz, dtype=float), (steps,))
    out = [start]
    for t in range(steps):
        out.append(step(theta, out[-1], R, float(Szs[t])))
    return out


def fixed_point(
    theta: Theta,
    R: float = 1.0,
    Sz: float = 1.0,
    *,
    start: State | None = None,
    tol: float = 1e-13,
    max_steps: int = 200_000,
    accelerate: bool = True,
) -> State:
    """Iterate the map until ``(mu, Q, q)`` move less than ``tol`` (spec pitfall 19: not a fixed count).

    ``accelerate`` replaces every third iterate by its Aitken extrapolation (:func:`_aitken`): near a slowly
    contracting fixed point (``mu_f = 5``: over a thousand plain steps) it needs some 30 times fewer steps and lands
    within ~1e-11 of the plain iterate. The point it finds is kept only if it is stable (:func:`map_radius` below 1),
    which is where plain iteration from ``start`` ends too; otherwise plain iteration runs from ``start``, as with
    ``accelerate=False``. (On the invariant line ``q = Q`` of ``Sz = 1`` plain iteration ends at ``C* = 1`` even where
    that point is unstable; :func:`time_scale` relies on it.)"""
    first = start or State(0.0, 1.0, Sz)
    if accelerate:
        st = _iterate(theta, first, R, Sz, tol, max_steps, True)
        if map_radius(theta, st, R, Sz) < 1:
            return st
    return _iterate(theta, first, R, Sz, tol, max_steps, False)


def _iterate(theta: Theta, st: State, R: float, Sz: float, tol: float, max_steps: int, accelerate: bool) -> State:
    """The map from ``st`` until a step moves every order parameter less than ``tol``, with Aitken jumps if
    ``accelerate``."""
    last = [st]
    for _ in range(max_steps):
        new = step(theta, st, R, Sz)
        if max(abs(new.mu - st.mu), abs(new.Q - st.Q), abs(new.q - st.q)) < tol:
            return new
        st = new
        last.append(st)
        if accelerate and len(last) == 3:
            st = _aitken(*last)
            last = [st]
    return st


def _valid(v) -> bool:
    """Whether ``(mu, Q, q)`` are the moments of a state: finite, positive variance, correlation in [-1, 1]."""
    mu, Q, q = v
    var = Q - mu * mu
    return bool(np.all(np.isfinite(v))) and var > 0 and abs(q - mu * mu) <= var


def _aitken(a: State, b: State, c: State) -> State:
    """Aitken's delta-squared extrapolation of three successive iterates, ``c - d_2^2 / (d_2 - d_1)``, for each order
    parameter whose steps shrink geometrically (ratio in (0, 1)); ``c`` itself if the result is not a state."""
    x = np.array([s.vector for s in (a, b, c)])
    d1, d2 = x[1] - x[0], x[2] - x[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(d1 != 0, d2 / d1, 0.0)
        jump = np.where((ratio > 0) & (ratio < 1), x[2] - d2 * d2 / (d2 - d1), x[2])
    return State(*map(float, jump)) if _valid(jump) else c


def map_radius(theta: Theta, st: State, R: float = 1.0, Sz: float = 1.0, h: float = 1e-6) -> float:
    """Spectral radius of the map's Jacobian in ``(mu, Q, q)`` at ``st``: below 1 at a stable fixed point. Central
    differences of step ``h`` (scaled by the entry), one-sided where a side is not a state (``q`` above ``Q``)."""
    x = st.vector
    J = np.empty((3, 3))
    for i in range(3):
        e = np.zeros(3)
        e[i] = h * max(1.0, abs(x[i]))
        hi, lo = (v if _valid(v) else x for v in (x + e, x - e))
        if hi[i] == lo[i]:
            return math.inf  # no state on either side: call it unstable
        up, down = (step(theta, State(*map(float, v)), R, Sz).vector for v in (hi, lo))
        J[:, i] = (up - down) / (hi[i] - lo[i])
    return float(np.abs(np.linalg.eigvals(J)).max())


def chi(theta: Theta, R: float = 1.0, Sz: float = 1.0, *, at: State | None = None, paper: bool = False) -> float:
    """``chi_{C*} = dM_C/dC`` at the fixed point (eq. 6), from Gaussian integration by parts (eq. 20).

    Peephole: A.3.2 (with its missing "+"). GRU: A.3.1 corrected by the cross term ``-2 mu* E[tanh u_r2]``
    from ``df/du_f = sig'(u_f)(h - tanh u_r2)``; ``paper=True`` drops it as printed.
    """
    st = at or fixed_point(theta, R, Sz)
    Q, q, mu = st.Q, st.q, st.mu
    if theta.arch == "vanilla":
        m, v, c = _gate(theta, "f", Q, q, R, Sz)
        return theta.s2("f") * e2(dtanh, dtanh, m, v, c)
    if theta.arch == "peephole":
        g = {k: _gate(theta, k, Q, q, R, Sz) for k in "ifr"}
        return (
            e2(sig, sig, *g["f"])
            + theta.s2("i") * e2(dsig, dsig, *g["i"]) * e2(tanh, tanh, *g["r"])
            + theta.s2("f") * e2(dsig, dsig, *g["f"]) * q
            + theta.s2("r") * e2(sig, sig, *g["i"]) * e2(dtanh, dtanh, *g["r"])
        )
    if theta.arch == "gru":
        gf, gr = _gate(theta, "f", Q, q, R, Sz), _gate(theta, "r", Q, q, R, Sz)
        Err, Ers = e1(lambda x: sig(x) ** 2, *gr[:2]), e2(sig, sig, *gr)
        v2 = theta.s2("r2") * Err * Q + theta.n2("r2") * R
        c2 = (theta.s2("r2") * Ers * q + theta.n2("r2") * R * Sz) / v2 if v2 > 1e-300 else 1.0
        m2 = theta.m("r2")
        t1, T2 = e1(tanh, m2, v2), e2(tanh, tanh, m2, v2, c2)
        D = e2(one_minus_sig, one_minus_sig, *gf)
        cross = 0.0 if paper else -2 * mu * t1
        return (
            e2(sig, sig, *gf)
            + theta.s2("f") * e2(dsig, dsig, *gf) * (q + cross + T2)
            + theta.s2("r2") * D * e2(dtanh, dtanh, m2, v2, c2) * (Ers + theta.s2("r") * q * e2(dsig, dsig, *gr))
        )
    raise ValueError(f"chi covers vanilla, gru and peephole; for the LSTM use population(), got {theta.arch!r}")


def chi_numeric(theta: Theta, R: float = 1.0, Sz: float = 1.0, *, h: float = 1e-6) -> float:
    """``dM_q/dq`` by a central difference at the fixed point, (mu, Q) held there: the check of ``chi``."""
    st = fixed_point(theta, R, Sz)
    lo = step(theta, State(st.mu, st.Q, st.q - h), R, Sz).q
    hi_q = min(st.q + h, st.Q)
    hi = step(theta, State(st.mu, st.Q, hi_q), R, Sz).q
    return (hi - lo) / (hi_q - st.q + h)


def xi(chi_value: float) -> float:
    """Correlation time scale ``xi = -1 / log chi`` (eq. 8): infinite at chi = 1, undefined (NaN) above."""
    if chi_value >= 1:
        return math.inf if chi_value == 1 else math.nan
    return -1.0 / math.log(chi_value)


def time_scale(theta: Theta, R: float = 1.0, Sz: float = 0.0) -> float:
    """``xi`` at the stable fixed point; for ``Sz = 1`` in the chaotic phase (chi_{C=1} > 1) the stable
    ``C* < 1`` is found by iterating from ``C = 0.5``."""
    st = fixed_point(theta, R, Sz)
    c = chi(theta, R, Sz, at=st)
    if Sz == 1.0 and c > 1:
        st = fixed_point(theta, R, Sz, start=State(st.mu, st.Q, st.mu**2 + 0.5 * (st.Q - st.mu**2)))
        c = chi(theta, R, Sz, at=st)
    return xi(c)


# ----------------------------------------------------------------------------------------------- Jacobians
def _perpetuity_moments(EY: list, EZ: list, n: int) -> list:
    """Stationary moments ``E[c^j]``, j <= n, of ``c = Y c + Z`` with Y, Z independent (App. D)."""
    m = [1.0]
    for k in range(1, n + 1):
        rest = sum(math.comb(k, j) * EY[j] * EZ[k - j] * m[j] for j in range(k))
        m.append(rest / (1 - EY[k]))
    return m


def jacobian_moments(theta: Theta, R: float = 1.0) -> dict:
    """Mean ``m1`` and variance of the squared singular values of the state-to-state Jacobian (eqs. 16-18).

    Peephole: a-vector of A.3 and the variance both corrected (``var``: ``E[(sum a)^2] - (E a_0)^2``) and as
    printed in (18) (``var_paper``). GRU: ``m1`` with the corrected second entry ``(h - tanh u_r2)^2`` and as
    printed, ``(tanh^2 u_r2 + Q_h)``; no variance (the W D W product term is not covered, spec 1.3).
    """
    st = fixed_point(theta, R, 1.0)
    if theta.arch == "peephole":
        g = {k: _gate(theta, k, st.Q, st.Q, R, 1.0)[:2] for k in "ifr"}
        s2 = theta.s2

        def E(k, f):
            return e1(f, *g[k])

        EY = [E("f", lambda x, j=j: sig(x) ** j) for j in range(5)]
        EZ = [E("i", lambda x, j=j: sig(x) ** j) * E("r", lambda x, j=j: tanh(x) ** j) for j in range(5)]
        c = _perpetuity_moments(EY, EZ, 4)
        # the four a_k as products of independent factors: (gate f part, gate i part, gate r part, c power)
        terms = [
            (lambda x: sig(x) ** 2, None, None, 0, 1.0),
            (None, lambda x: dsig(x) ** 2, lambda x: tanh(x) ** 2, 0, s2("i")),
            (lambda x: dsig(x) ** 2, None, None, 2, s2("f")),
            (None, lambda x: sig(x) ** 2, lambda x: dtanh(x) ** 2, 0, s2("r")),
        ]

        def moment(ta, tb=None):
            out = ta[4] * (tb[4] if tb else 1.0)
            for slot, gate in ((0, "f"), (1, "i"), (2, "r")):
                fa, fb = ta[slot], tb[slot] if tb else None
                if fa is None and fb is None:
                    continue
                out *= E(gate, lambda x, fa=fa, fb=fb: (fa(x) if fa else 1.0) * (fb(x) if fb else 1.0))
            return out * c[ta[3] + (tb[3] if tb else 0)]

        Ea = [moment(t) for t in terms]
        Eaa = sum(moment(a, b) for a in terms for b in terms)
        m1 = sum(Ea)
        var = Eaa - Ea[0] ** 2
        var_paper = 2 * Eaa - moment(terms[0], terms[0]) - m1**2
        return {"m1": m1, "var": var, "var_paper": var_paper, "Q": st.Q}
    if theta.arch == "gru":
        gf, gr = _gate(theta, "f", st.Q, st.Q, R, 1.0)[:2], _gate(theta, "r", st.Q, st.Q, R, 1.0)[:2]
        Err = e1(lambda x: sig(x) ** 2, *gr)
        g2 = (theta.m("r2"), theta.s2("r2") * Err * st.Q + theta.n2("r2") * R)
        t1, t2 = e1(tanh, *g2), e1(lambda x: tanh(x) ** 2, *g2)
        omf2, dt2 = e1(lambda x: (1 - sig(x)) ** 2, *gf), e1(lambda x: dtanh(x) ** 2, *g2)
        common = (
            e1(lambda x: sig(x) ** 2, *gf)
            + theta.s2("r") * theta.s2("r2") * st.Q * omf2 * dt2 * e1(lambda x: dsig(x) ** 2, *gr)
            + theta.s2("r2") * omf2 * dt2 * Err
        )
        fgate = theta.s2("f") * e1(lambda x: dsig(x) ** 2, *gf)
        return {
            "m1": common + fgate * (st.Q - 2 * st.mu * t1 + t2),
            "m1_paper": common + fgate * (t2 + st.Q),
            "Q": st.Q,
        }
    raise ValueError(f"jacobian_moments covers the peephole LSTM and the GRU, got {theta.arch!r}")


# ----------------------------------------------------------------------------------------------- LSTM
def population(
    theta: Theta, steps: int, *, samples: int = 100_000, R: float = 1.0, Q0: float = 1.0, seed: int = 0
) -> dict:
    """Population dynamics of the LSTM (App. D, Algorithm 1 run forward in time): ``samples`` cell states,
    each updated with fresh Gaussian pre-activations whose variance follows the population's ``Q_h``.

    Returns the final cell-state samples ``c``, output samples ``h`` and the trajectory of ``Q_h``.
    ``Q0`` is the second moment of the initial ``h`` (cell states start at 0)."""
    if theta.arch != "lstm":
        raise ValueError(f"theta must be an LSTM Theta, got arch {theta.arch!r}")
    steps, samples = checks.positive_int(steps, "steps"), checks.positive_int(samples, "samples")
    rng = np.random.default_rng(seed)
    c = np.zeros(samples)
    Qh, traj = Q0, []
    for _ in range(steps):
        u = {
            k: theta.m(k) + math.sqrt(theta.s2(k) * Qh + theta.n2(k) * R) * rng.standard_normal(samples) for k in "ifro"
        }
        c = sig(u["f"]) * c + sig(u["i"]) * tanh(u["r"])
        h = sig(u["o"]) * tanh(c)
        Qh = float(np.mean(h**2))
        traj.append(Qh)
    return {"c": c, "h": h, "Q": np.array(traj)}


# ----------------------------------------------------------------------------------------------- Table 1 erratum
def lstm_unrolling_gaps(T: int = 12, n: int = 8, seed: int = 0) -> dict:
    """Table 1's unrolled LSTM cell state ``c^T = prod_l sig(u_f^l) c^0 + sum_j prod_{l > j} sig(u_f^l) sig(u_i^j)
    tanh(u_r^j)``, and the printed form (no factor on ``c^0``, the product from ``l = j``), against ``T`` steps of the
    cell (:func:`lscnb.models.unified.update`) on random pre-activations: the largest difference of each."""
    import torch

    T, n = checks.positive_int(T, "T"), checks.positive_int(n, "n")
    gen = torch.Generator().manual_seed(seed)
    u = {k: torch.randn(T + 1, n, generator=gen, dtype=torch.float64) for k in "ifro"}  # u[k][t] for t = 1..T
    s = torch.randn(2 * n, generator=gen, dtype=torch.float64)  # (h^0, c^0)
    c0, f = s[n:], torch.sigmoid(u["f"])
    for t in range(1, T + 1):
        s = update("lstm", s, lambda k, x, t=t: u[k][t])

    def unrolled(first, after):
        terms = (f[j + after :].prod(0) * torch.sigmoid(u["i"][j]) * torch.tanh(u["r"][j]) for j in range(1, T + 1))
        return first * c0 + sum(terms)

    return {
        "corrected": float((unrolled(f[1:].prod(0), 1) - s[n:]).abs().max()),
        "as printed": float((unrolled(1.0, 0) - s[n:]).abs().max()),
    }
