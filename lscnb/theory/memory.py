"""The curse of memory (Zucchet & Orvieto 2024): closed forms for a linear diagonal recurrence.

For ``h_{t+1} = lam h_t + x_{t+1}`` driven by a stationary input with autocorrelation ``R_x(D) = rho^|D|`` (AR(1)
with unit variance; rho = 0 is white noise, rho = 1 a constant input), the hidden state and its sensitivity
``s = dh/dlam`` (with ``s_{t+1} = lam s_t + h_t``) have stationary second moments

    E|h|^2 = (1 - rho^2 |lam|^2) / (|1 - rho lam|^2 (1 - |lam|^2))                              (eq. 48)
    E|s|^2 = S_rho(lam, conj(lam))                                                     (eq. 59, corrected)

with ``S_rho = d_a d_b F_rho`` and ``F_rho(a, b) = (1 - rho^2 a b) / ((1 - a b)(1 - rho a)(1 - rho b))``. The paper's
printed eq. 59 (and eq. 134) is exact only at rho = 0 and rho = 1; ``sensitivity_variance_printed`` keeps it so
the chapter can show the difference.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .. import checks


def _check(lam, rho):
    lam = np.asarray(lam, dtype=complex)
    rho = np.asarray(rho, dtype=float)
    if np.any(np.abs(lam) >= 1):
        raise ValueError(f"lam must lie inside the unit disc (|lam| < 1), got {lam}")
    if np.any((rho < 0) | (rho > 1)):
        raise ValueError(f"rho must lie in [0, 1], got {rho}")
    return lam, rho


def _real_if_possible(x):
    x = np.asarray(x)
    return x.real if np.iscomplexobj(x) else x


def hidden_variance(lam, rho=0.0):
    """``E|h|^2`` of the stationary recurrence (eq. 48)."""
    lam, rho = _check(lam, rho)
    p = np.abs(lam) ** 2
    return (1 - rho**2 * p) / (np.abs(1 - rho * lam) ** 2 * (1 - p))


def sensitivity_variance(lam, rho=0.0):
    """``E|dh/dlam|^2`` (the corrected eq. 59): with ``p = |lam|^2`` and ``sigma = 2 Re lam``,
    ``[1 + p(1 - 4 rho^2) + p^2(4 rho^2 - rho^4) - rho^4 p^3 - 2 rho (1 - rho^2) p sigma]
    / [(1 - p)^3 |1 - rho lam|^4]``."""
    lam, rho = _check(lam, rho)
    p, sigma, r2 = np.abs(lam) ** 2, 2 * lam.real, rho**2
    num = 1 + p * (1 - 4 * r2) + p**2 * (4 * r2 - r2**2) - r2**2 * p**3 - 2 * rho * (1 - r2) * p * sigma
    return _real_if_possible(num / ((1 - p) ** 3 * np.abs(1 - rho * lam) ** 4))


def final_sensitivity(lam: float, x) -> float:
    """``s_T`` after ``s_{t+1} = lam s_t + h_t``, ``h_{t+1} = lam h_t + x_{t+1}`` from zero over the inputs ``x``: the
    sensitivity ``dh_T/dlam`` they leave. A unit input ``k`` steps before the end leaves ``k lam^(k-1)``, the weight of
    ``x_{-n}`` with ``n = k`` (eq. 53 as corrected; the paper prints ``(k-1) lam^(k-2)``)."""
    h = s = 0.0
    for xt in np.asarray(x, dtype=float):
        s, h = lam * s + h, lam * h + xt
    return float(s)


def eq57_sum(lam, rho: float, first_denominator: float, lags: int = 20_000) -> float:
    """Eq. 57 summed over the lags ``Delta = 1..lags`` for the autocorrelation ``R(Delta) = rho^Delta``, with its first
    denominator given: ``(1 - |lam|^2)^3`` gives :func:`sensitivity_variance`; ``(1 - |lam|)^3``, as printed, is
    ``(1 + |lam|)^3`` (~8 near ``|lam| = 1``) times too large in its first term."""
    lags = checks.positive_int(lags, "lags")
    d = np.arange(1, lags + 1)
    lam_d = lam**d + np.conj(lam) ** d
    p = abs(lam) ** 2
    first = (1 + p) / first_denominator * (1 + np.sum(lam_d * rho**d))
    return float((first + np.sum(d * lam_d * rho**d) / (1 - p) ** 2).real)


def local_slope(gap: float, rho: float, factor: float = 1.1) -> float:
    """The log-log slope of ``E s^2`` (:func:`sensitivity_variance`) against the memory ``1 / (1 - lam)`` at ``1 - lam =
    gap``, from the values at ``gap * factor`` and ``gap / factor``: 3 for white inputs near ``lam = 1``, 4 for
    ``rho = 1`` (and for ``rho < 1`` until the memory passes the inputs' own correlation time)."""
    lams = 1 - gap * np.array([factor, 1 / factor])
    s = sensitivity_variance(lams, rho)
    return float(np.log(s[1] / s[0]) / np.log(factor**2))


def sensitivity_variance_printed(lam, rho=0.0):
    """Eq. 59 exactly as printed in the paper (wrong for 0 < rho < 1; kept to show the erratum)."""
    lam, rho = _check(lam, rho)
    p = np.abs(lam) ** 2
    num = (
        (1 - rho) * (1 + p)
        + rho**2 * (1 - p) ** 3
        + rho * (1 - rho) * p * (rho * p * (1 + p) - 2 * lam - 2 * np.conj(lam))
    )
    return _real_if_possible(num / ((1 - p) ** 3 * np.abs(1 - rho * lam) ** 4))


def series_moments(lam: complex, rho: float, terms: int | None = None) -> tuple[float, float]:
    """``E|h|^2`` and ``E|s|^2`` from the truncated double series ``sum_{n,m} c_n conj(c_m) rho^|n-m|`` with
    ``c_n = lam^n`` and ``n lam^(n-1)``: the brute-force check of the closed forms (``terms`` >= 40 / (1 - |lam|))."""
    lam, rho = _check(lam, rho)
    lam, rho = complex(lam), float(rho)
    terms = checks.positive_int(terms or int(40 / (1 - abs(lam))) + 1, "terms")
    n = np.arange(terms)
    out = []
    for c in (lam**n, n * lam ** np.maximum(n - 1, 0)):
        # sum_{n,m} c_n conj(c_m) rho^|n-m| = sum_n |c_n|^2 + 2 Re sum_{D>=1} rho^D sum_n c_{n+D} conj(c_n)
        total = np.sum(np.abs(c) ** 2)
        if rho > 0:
            lags = np.arange(1, terms)
            weights = rho**lags
            keep = weights > 1e-18
            for D, w in zip(lags[keep], weights[keep]):
                total += 2 * w * np.real(np.sum(c[D:] * np.conj(c[:-D])))
        out.append(float(total))
    return out[0], out[1]


def burn_in(lam, rho: float) -> int:
    """Steps for the recurrence and its sensitivity to reach stationarity: 10/(1-|lam|) + 5/(1-rho)."""
    extra = 0 if rho >= 1 else 5 / (1 - rho)
    return int(math.ceil(10 / (1 - abs(complex(lam))) + extra))


def monte_carlo(
    lam: complex, rho: float, chains: int = 8192, steps: int | None = None, *, seed: int = 0, device="cpu"
) -> tuple[float, float]:
    """Monte Carlo ``E|h|^2`` and ``E|s|^2`` after ``steps`` (default ``burn_in``) steps from h = s = 0, with the
    AR(1) input started in its stationary law (complex inputs for complex ``lam``, ``E|x|^2 = 1``)."""
    lam, rho = _check(lam, rho)
    lam, rho = complex(lam), float(rho)
    chains = checks.positive_int(chains, "chains")
    steps = checks.positive_int(steps or burn_in(lam, rho), "steps")
    gen = torch.Generator(device=device).manual_seed(seed)
    cplx = lam.imag != 0

    def noise():
        if cplx:
            return torch.complex(
                *(torch.randn(2, chains, generator=gen, dtype=torch.float64, device=device) / math.sqrt(2))
            )
        return torch.randn(chains, generator=gen, dtype=torch.float64, device=device)

    lam_t = lam if cplx else lam.real
    x = noise()
    h = torch.zeros_like(x)
    s = torch.zeros_like(x)
    for _ in range(steps):
        x = rho * x + math.sqrt(1 - rho**2) * noise()
        s = lam_t * s + h
        h = lam_t * h + x
    return float(h.abs().pow(2).mean()), float(s.abs().pow(2).mean())


def monte_carlo_reparametrised(
    lam: float, rho: float, chains: int = 8192, steps: int | None = None, *, seed: int = 0
) -> float:
    """Monte Carlo ``E[(dh/domega)^2]`` for the normalised recurrence ``h_{t+1} = lam h_t + gamma x_{t+1}`` with
    ``lam = exp(-exp(omega))`` and ``gamma = sqrt(1 - lam^2)`` detached, by forward-mode autodiff through the
    whole recurrence (real lam): the independent check of ``normalised_sensitivity``."""
    import torch.autograd.forward_ad as fwAD

    lam, rho = _check(lam, rho)
    lam, rho = float(lam.real), float(rho)
    chains = checks.positive_int(chains, "chains")
    steps = checks.positive_int(steps or burn_in(lam, rho), "steps")
    gen = torch.Generator().manual_seed(seed)
    gamma = math.sqrt(1 - lam**2)
    x = torch.randn(chains, generator=gen, dtype=torch.float64)
    with fwAD.dual_level():
        omega = fwAD.make_dual(
            torch.tensor(math.log(-math.log(lam)), dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64)
        )
        lam_w = torch.exp(-torch.exp(omega))
        h = torch.zeros(chains, dtype=torch.float64)
        for _ in range(steps):
            x = rho * x + math.sqrt(1 - rho**2) * torch.randn(chains, generator=gen, dtype=torch.float64)
            h = lam_w * h + gamma * x
        tangent = fwAD.unpack_dual(h).tangent
    return float(tangent.pow(2).mean())


def normalised_sensitivity(lam, rho=0.0, *, param: str = "exp"):
    """``gamma^2 (dnu/domega)^2 E|s|^2`` with ``gamma = sqrt(1 - |lam|^2)`` (detached) and ``nu = exp(-exp(omega))``
    (``param="exp"``, the LRU's, so ``dnu/domega = nu log nu``) or ``nu = omega`` (``"none"``): Fig. 2B."""
    checks.one_of(param, ("exp", "none"), "param")
    lam_c, _ = _check(lam, rho)
    nu = np.abs(lam_c)
    dnu = nu * np.log(nu) if param == "exp" else np.ones_like(nu)
    return (1 - nu**2) * dnu**2 * sensitivity_variance(lam, rho)


def landscape_real(lam, lam_star):
    """Fig. 1B: the 1-D teacher-student loss ``1/2 E[(h_lam - h_lam*)^2]`` for white-noise input, real lam."""
    lam, _ = _check(lam, 0.0)
    lam_star, _ = _check(lam_star, 0.0)
    lam, lam_star = lam.real, lam_star.real
    return 0.5 * (1 / (1 - lam**2) + 1 / (1 - lam_star**2) - 2 / (1 - lam * lam_star))


def landscape_angle(theta, lam_star):
    """Fig. 1C: the same loss for a complex student ``|lam*| e^{i theta}`` against the real teacher ``lam*``,
    comparing real parts of the outputs for complex white noise of unit variance: ``1/2 E|h - h*|^2``."""
    theta = np.asarray(theta, dtype=float)
    r = float(np.abs(lam_star))
    lam = r * np.exp(1j * theta)
    cross = np.real(1 / (1 - lam * np.conj(complex(lam_star))))
    return 0.5 * (2 / (1 - r**2) - 2 * cross)


# --------------------------------------------------------------------------------------------- App. D.3
BERT_COMPONENTS = ((0.332, 0.0), (0.044, 0.997))
"""The paper's fit of its inputs' autocorrelation as ``((c, rho), ...)``: ``R(D) = 0.332 delta + 0.044 * 0.997^|D|``."""


def _components(components):
    comps = [(float(c), float(r)) for c, r in components]
    if not comps or any(c < 0 or not 0 <= r < 1 for c, r in comps):
        raise ValueError(f"components must be (c >= 0, 0 <= rho < 1) pairs, got {components}")
    return comps


def gated_generating_function(a, b, components=BERT_COMPONENTS):
    """Eq. 159 for ``R_x(D) = sum_k c_k rho_k^|D|`` over an infinite past: ``f(a, b) = (1-a)(1-b) sum_{n,m>=0} a^n
    b^m R_x(n-m) = sum_k c_k (1-a)(1-b)(1-rho_k^2 ab) / ((1-rho_k a)(1-rho_k b)(1-ab))`` (torch, differentiable)."""
    return sum(
        c * (1 - a) * (1 - b) * (1 - rho**2 * a * b) / ((1 - rho * a) * (1 - rho * b) * (1 - a * b))
        for c, rho in _components(components)
    )


def gated_moments(lam, components=BERT_COMPONENTS, steps: int | None = None) -> dict:
    """App. D.3, the GRU-like recurrence with the (1 - lam) input scale kept in the graph, ``h_{t+1} = lam h_t +
    (1 - lam) x_{t+1}``, with ``lam = sigma(b_f)``: ``E h^2 = f(lam, lam)`` (eq. 160), ``E(dh/dlam)^2 = d_a d_b f``
    (eq. 161, by autodiff) and ``E(dh/db_f)^2 = sigma'(b_f)^2 E(dh/dlam)^2`` with ``sigma' = lam (1 - lam)`` (the
    paper prints d^2 h / d b_f^2, a typo). ``steps=None``: stationary (infinite past); ``steps=T``: exactly after T
    steps from ``h_0 = 0``, as ``c^T R c`` with the impulse response ``c_n = (1 - lam) lam^n`` (and its derivative
    ``dc_n/dlam``), n < T. Arrays over ``lam`` in (0, 1)."""
    from torch.func import grad, jacfwd, vmap

    lam_np = np.atleast_1d(np.asarray(lam, dtype=float))
    if np.any((lam_np <= 0) | (lam_np >= 1)):
        raise ValueError(f"lam must lie in (0, 1), got {lam}")
    comps = _components(components)
    lam_t = torch.tensor(lam_np, dtype=torch.float64)
    if steps is None:
        f = lambda a, b: gated_generating_function(a, b, comps)  # noqa: E731
        h2 = f(lam_t, lam_t)
        s2 = vmap(jacfwd(grad(f, argnums=0), argnums=1))(lam_t, lam_t)
    else:
        n = torch.arange(checks.positive_int(steps, "steps"), dtype=torch.float64)
        R = sum(c * torch.tensor(rho, dtype=torch.float64) ** (n[:, None] - n[None, :]).abs() for c, rho in comps)
        lt = lam_t[:, None]
        c = (1 - lt) * lt**n
        dc = (1 - lt) * n * lt ** (n - 1).clamp(min=0) - lt**n
        h2, s2 = ((c @ R) * c).sum(-1), ((dc @ R) * dc).sum(-1)
    h2, s2 = h2.numpy(), s2.numpy()
    return {"h2": h2, "dlam2": s2, "db2": (lam_np * (1 - lam_np)) ** 2 * s2}


# --------------------------------------------------------------------------------------------- App. C.2
def similarity(alpha, beta, rho=0.0):
    """``S_rho(alpha, beta) = d_a d_b F_rho`` at complex ``(alpha, beta)`` (the corrected eq. 134): with ``p = ab``
    and ``sigma = a + b``, ``[1 + p(1 - 4rho^2) + p^2(4rho^2 - rho^4) - rho^4 p^3 - 2rho(1 - rho^2) p sigma] /
    [(1 - p)^3 (1 - rho a)^2 (1 - rho b)^2]``. ``similarity(lam, conj(lam)) = E|dh/dlam|^2``; the Hessian at the
    optimum couples eigenvalues i and j through ``S(lam_i, lam_j)`` and ``S(lam_i, conj(lam_j))`` (eqs. 133, 137)."""
    a, b = np.asarray(alpha, dtype=complex), np.asarray(beta, dtype=complex)
    _check(a, rho)
    _check(b, rho)
    p, sigma, r2 = a * b, a + b, rho**2
    num = 1 + p * (1 - 4 * r2) + p**2 * (4 * r2 - r2**2) - r2**2 * p**3 - 2 * rho * (1 - r2) * p * sigma
    return num / ((1 - p) ** 3 * (1 - rho * a) ** 2 * (1 - rho * b) ** 2)


def similarity_printed(alpha, beta, rho=0.0):
    """Eq. 134 exactly as printed (wrong for 0 < rho < 1; the paper's Fig. 8 was drawn with it)."""
    a, b = np.asarray(alpha, dtype=complex), np.asarray(beta, dtype=complex)
    p = a * b
    num = (1 - rho) * (1 + p) + rho**2 * (1 - p) ** 3 + rho * (1 - rho) * p * (rho * p * (1 + p) - 2 * a - 2 * b)
    return num / ((1 - p) ** 3 * (1 - rho * a) ** 2 * (1 - rho * b) ** 2)


def hessian_diagonal_theory(lam, b, c, rho=0.0) -> np.ndarray:
    """Eq. 143: the Hessian at the optimum of ``1/2 E(y - y*)^2`` over ``(Re lam, Im lam)`` of a complex diagonal RNN
    ``h' = lam h + b x``, ``y = Re(c.h)``, for AR(1) inputs: the real (2n, 2n) matrix ordered ``[Re lam_1..n, Im
    lam_1..n]``, with ``A_ij = b_i b_j c_i c_j S(lam_i, lam_j)``, ``B_ij = b_i conj(b_j c_j) c_i S(lam_i, conj
    lam_j)`` and blocks ``1/2 [[Re(A + B), Im(B - A)], [-Im(A + B), Re(B - A)]]``."""
    lam, b, c = (np.asarray(v, dtype=complex).ravel() for v in (lam, b, c))
    if not lam.shape == b.shape == c.shape:
        raise ValueError(f"lam, b and c must have the same length, got {lam.size}, {b.size}, {c.size}")
    bc = b * c
    A = np.outer(bc, bc) * similarity(lam[:, None], lam[None, :], rho)
    B = np.outer(bc, np.conj(bc)) * similarity(lam[:, None], np.conj(lam)[None, :], rho)
    return 0.5 * np.block([[np.real(A + B), np.imag(B - A)], [-np.imag(A + B), np.real(B - A)]])


def offdiagonal_fraction(H: np.ndarray) -> float:
    """Share of the squared Frobenius norm of a (2n, 2n) Hessian over ``[Re, Im]`` outside the entries that couple
    an eigenvalue with itself: 0 for a Hessian that decouples the eigenvalues, near 1 when the couplings dominate."""
    H = np.asarray(H, dtype=float)
    n = H.shape[0] // 2
    if H.shape != (2 * n, 2 * n):
        raise ValueError(f"H must be a (2n, 2n) matrix, got shape {H.shape}")
    own = np.tile(np.eye(n, dtype=bool), (2, 2))
    return float(np.sum(H[~own] ** 2) / np.sum(H**2))


# --------------------------------------------------------------------------------------------- App. C.1
def landscape_complex(lam, lam_star, *, normalised: bool = False):
    """The 1-D teacher-student loss for complex white noise, stationary: eq. 91, ``1/2 (1/(1-|lam|^2) +
    1/(1-|lam*|^2) - 2 Re[1/(1 - conj(lam) lam*)])``, or with input normalisation ``gamma = sqrt(1 - |lam|^2)`` in
    student and teacher, eq. 93 (with the squares eq. 92 misses), ``1 - Re[gamma gamma* / (1 - conj(lam) lam*)]``.
    Works on numpy arrays and on torch tensors (differentiable)."""
    lib = torch if isinstance(lam, torch.Tensor) else np
    lam_star = complex(lam_star)
    if abs(lam_star) >= 1:
        raise ValueError(f"lam_star must lie inside the unit disc, got {lam_star}")
    r2 = lam.real**2 + lam.imag**2
    cross = 1 / (1 - lib.conj(lam) * lam_star)
    if normalised:
        return 1 - lib.sqrt(1 - r2) * math.sqrt(1 - abs(lam_star) ** 2) * cross.real
    return 0.5 * (1 / (1 - r2) + 1 / (1 - abs(lam_star) ** 2) - 2 * cross.real)


def landscape_gradient(lam, lam_star):
    """``(dL/dRe lam, dL/dIm lam)`` of eq. 91 in closed form (numpy): ``x/(1-|lam|^2)^2 - Re[lam*/(1 - conj(lam)
    lam*)^2]`` and the same with ``y`` and ``Im`` (for vectorised Adam in the plane)."""
    lam = np.asarray(lam, dtype=complex)
    lam_star = complex(lam_star)
    q = lam_star / (1 - np.conj(lam) * lam_star) ** 2
    w = 1 / (1 - np.abs(lam) ** 2) ** 2
    return lam.real * w - q.real, lam.imag * w - q.imag


def angle_scale(nu):
    """Eq. 109's factor ``(1 - nu^2) / (nu sqrt(1 + nu^2))``, the angle parametrisation with unit curvature."""
    return (1 - nu**2) / (nu * np.sqrt(1 + nu**2))


ANGLE_PARAMS = ("polar", "exp", "opt")


def polar_from(w_nu, w_theta, angle: str):
    """``(nu, theta)`` from the parameters of Fig. 7: ``nu = tanh(w_nu)`` and ``theta = w_theta`` (``polar``),
    ``exp(w_theta)`` (``exp``, the LRU's; the paper's eq. 111 prints log) or ``w_theta * angle_scale(nu)``
    (``opt``, eq. 112)."""
    checks.one_of(angle, ANGLE_PARAMS, "angle")
    nu = np.tanh(w_nu)
    theta = {"polar": lambda: w_theta, "exp": lambda: np.exp(w_theta), "opt": lambda: w_theta * angle_scale(nu)}[
        angle
    ]()
    return nu, theta


def adam_angle(
    angle: str,
    lam0: complex,
    lam_star: complex,
    *,
    steps: int = 20_000,
    lr: float = 1e-3,
    betas=(0.9, 0.999),
    eps: float = 1e-8,
    record_every: int = 10,
) -> dict:
    """Fig. 7: Adam (hand-written, closed-form gradients of eq. 91) on ``(w_nu, w_theta)`` from ``lam0`` towards
    ``lam_star``, with the angle parametrisation ``angle`` (:func:`polar_from`); in ``opt`` the scale factor of the
    angle is a constant in the backward pass (a stop-gradient, as App. B.3.2). Returns the parameter trajectory and
    the loss every ``record_every`` steps."""
    steps = checks.positive_int(steps, "steps")
    record_every = checks.positive_int(record_every, "record_every")
    checks.one_of(angle, ANGLE_PARAMS, "angle")
    nu0, th0 = abs(lam0), float(np.angle(lam0)) % (2 * math.pi)
    w1 = th0 if angle == "polar" else math.log(th0) if angle == "exp" else th0 / angle_scale(nu0)
    w = np.array([math.atanh(nu0), w1])
    m, v = np.zeros(2), np.zeros(2)
    traj, losses, recorded = [], [], []
    for t in range(1, steps + 1):
        nu, theta = polar_from(w[0], w[1], angle)
        lam = nu * np.exp(1j * theta)
        gx, gy = landscape_gradient(lam, lam_star)
        g_nu = gx * math.cos(theta) + gy * math.sin(theta)
        g_th = nu * (-gx * math.sin(theta) + gy * math.cos(theta))
        dtheta = {"polar": 1.0, "exp": theta, "opt": angle_scale(nu)}[angle]
        g = np.array([g_nu * (1 - nu**2), g_th * dtheta])
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g**2
        w = w - lr * (m / (1 - betas[0] ** t)) / (np.sqrt(v / (1 - betas[1] ** t)) + eps)
        if t % record_every == 0 or t == 1:
            traj.append(w.copy())
            losses.append(float(landscape_complex(lam, lam_star)))
            recorded.append(t)
    return {"w": np.array(traj), "loss": np.array(losses), "steps": np.array(recorded)}
