"""Non-normal dynamics (Kerg et al. 2019; thesis ch. 2-3): Schur form, departure from normality, transient
amplification and the Fisher memory curve of linear networks (Ganguli, Huh & Sompolinsky 2008).

For ``h_t = W h_{t-1} + v s_t + z_t`` with noise ``z ~ N(0, eps I)``, the Fisher memory matrix is
``J_kl = (W^k v)^T C^{-1} (W^l v)`` with the noise covariance ``C = eps sum_k W^k W^kT`` (the solution of
``C - W C W^T = eps I``); the Fisher memory curve is its diagonal ``J(k)``. A normal W has total memory
``sum_k J(k) = 1/eps`` whatever its eigenvalues; a non-normal one (a delay line) can approach ``N/eps``.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import schur, solve_discrete_lyapunov

from .. import checks


def make_theta(n: int, d: float, alpha: float, beta: float) -> np.ndarray:
    """Eq. 3.4.2: ``d`` on the diagonal, ``alpha`` on the first sub-diagonal, ``beta`` on the rest of the lower
    triangle (a chain of Schur modes with feed-forward coupling)."""
    n = checks.positive_int(n, "n")
    return d * np.eye(n) + alpha * np.eye(n, k=-1) + beta * np.tril(np.ones((n, n)), -2)


def henrici(A: np.ndarray) -> float:
    """Henrici's departure from normality ``sqrt(||A||_F^2 - sum |lambda_i|^2)`` (0 iff A is normal)."""
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    return float(np.sqrt(max(np.linalg.norm(A) ** 2 - np.sum(np.abs(np.linalg.eigvals(A)) ** 2), 0.0)))


def real_schur_lower(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``A = Q Theta Q^T`` with Q orthogonal and Theta block *lower* triangular (the nnRNN's convention: the
    real Schur form with the basis order reversed)."""
    T, Z = schur(np.asarray(A, dtype=float), output="real")
    J = np.eye(len(T))[::-1]
    return Z @ J, J @ T @ J


def fisher_memory_curve(W: np.ndarray, v: np.ndarray, steps: int, eps: float = 1.0) -> np.ndarray:
    """``J(k) = (W^k v)^T C^{-1} (W^k v)`` for k < ``steps`` (eq. A.2.2), with C from the discrete Lyapunov
    equation; ``v`` is normalised."""
    W = np.asarray(W, dtype=float)
    v = np.asarray(v, dtype=float)
    v = v / np.linalg.norm(v)
    steps = checks.positive_int(steps, "steps")
    C = solve_discrete_lyapunov(W, checks.positive_float(eps, "eps") * np.eye(len(W)))
    out, x = [], v
    for _ in range(steps):
        out.append(float(x @ np.linalg.solve(C, x)))
        x = W @ x
    return np.array(out)


def delay_line(n: int, a: float) -> np.ndarray:
    """``W_ij = a delta_{j, i-1}``: a chain that passes each mode's content to the next, amplified by ``a``."""
    return a * np.eye(checks.positive_int(n, "n"), k=-1)


def fmc_delay_line(k, alpha: float, eps: float = 1.0):
    """Closed form for the delay line with ``sqrt(alpha)`` on the sub-diagonal and ``v = e_1`` (for k < N):
    ``J(k) = alpha^k (alpha - 1) / (alpha^{k+1} - 1) / eps`` (``1/((k+1) eps)`` at alpha = 1)."""
    k = np.asarray(k, dtype=float)
    if alpha == 1:
        return 1 / ((k + 1) * eps)
    return alpha**k * (alpha - 1) / (alpha ** (k + 1) - 1) / eps


def transients(theta: np.ndarray, steps: int, samples: int = 1000, seed: int = 4) -> dict:
    """``h_t = Theta^t h_0`` from ``samples`` initial states uniform on the unit sphere: mean and std over the
    ensemble of ``||h_t||`` and of the standard deviation across units (Fig. 3.1b)."""
    rng = np.random.default_rng(seed)
    h = rng.standard_normal((samples, len(theta)))
    h /= np.linalg.norm(h, axis=1, keepdims=True)
    norms, stds = [], []
    for _ in range(checks.positive_int(steps, "steps")):
        norms.append(np.linalg.norm(h, axis=1))
        stds.append(h.std(axis=1))
        h = h @ theta.T
    norms, stds = np.array(norms), np.array(stds)
    return {
        "norm_mean": norms.mean(1),
        "norm_std": norms.std(1),
        "unit_std_mean": stds.mean(1),
        "unit_std_std": stds.std(1),
    }


def rotation_blocks(theta: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Lambda of eq. 3.5.1: block-diagonal 2x2 blocks ``gamma_i [[cos, -sin], [sin, cos]](theta_i)``."""
    theta, gamma = np.asarray(theta, dtype=float), np.asarray(gamma, dtype=float)
    if theta.ndim != 1 or theta.shape != gamma.shape:
        raise ValueError(f"theta and gamma must be vectors of one length, got {theta.shape} and {gamma.shape}")
    m = len(theta)
    lam = np.zeros((2 * m, 2 * m))
    c, s = gamma * np.cos(theta), gamma * np.sin(theta)
    i = 2 * np.arange(m)
    lam[i, i], lam[i, i + 1], lam[i + 1, i], lam[i + 1, i + 1] = c, -s, s, c
    return lam


def subdiagonal_profile(theta: np.ndarray, kmax: int | None = None) -> np.ndarray:
    """Mean magnitude of the entries on the k-th sub-diagonal of ``theta``, k = 1..kmax (thesis Fig. 3.3c: a
    delay line shows as a peak at k = 1, a dense lower triangle as a slowly decaying tail)."""
    theta = np.asarray(theta, dtype=float)
    if theta.ndim != 2 or theta.shape[0] != theta.shape[1]:
        raise ValueError(f"theta must be a square matrix, got shape {theta.shape}")
    n = theta.shape[0]
    kmax = n - 1 if kmax is None else checks.positive_int(kmax, "kmax")
    if kmax > n - 1:
        raise ValueError(f"kmax must be at most n - 1 = {n - 1}, got {kmax}")
    return np.array([np.abs(np.diagonal(theta, -k)).mean() for k in range(1, kmax + 1)])


def angle_concentration(angles: np.ndarray) -> float:
    """Mean resultant length |mean(exp(i theta))| of the eigenvalue angles: 0 for uniform angles, 1 when all
    are equal (the thesis's "aligned" PTB angles vs "uniform" copy angles, Fig. 3.3 insets)."""
    angles = np.asarray(angles, dtype=float)
    if angles.size == 0:
        raise ValueError("angles must not be empty")
    return float(np.abs(np.exp(1j * angles).mean()))


def unipotent_power(n: int, x: float, t: int) -> np.ndarray:
    """``A^t`` for ``A = I + x S`` (S the strictly upper all-ones matrix) in closed form (thesis Prop. 3.4.2):
    ``(A^t)_ij = sum_{l=1}^{j-i} C(t, l) C(j-i-1, l-1) x^l`` for j > i, 1 on the diagonal. Every eigenvalue is 1,
    yet the entries grow like ``t^{j-i}``: polynomially, not exponentially."""
    from scipy.special import comb

    n, t = checks.positive_int(n, "n"), checks.positive_int(t, "t", allow_zero=True)
    out = np.eye(n)
    for d in range(1, n):
        ls = np.arange(1, d + 1)
        value = float(np.sum(comb(t, ls) * comb(d - 1, ls - 1) * float(x) ** ls))
        out += value * np.eye(n, k=d)
    return out
