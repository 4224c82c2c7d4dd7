"""The Local Stability Condition (Herranz-Celotti & Rouat 2024): path counting, Lemma 1, the PascalRNN.

On the time-depth grid of a deep RNN, a gradient from ``h[t, L]`` to ``h[t', l]`` is a sum over monotone paths of
products of transition derivatives ``M_k``; there are ``C(dl + dt, dt)`` such paths (Lemma 2). With radii
``rho(M_k) = 1`` the sum grows like the path count (Thm 1: a binomial), with ``rho = 1/2`` it stays bounded.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from .. import checks


def path_count(dl: int, dt: int) -> int:
    """Monotone shortest paths across a ``dl`` x ``dt`` grid: ``C(dl + dt, dt)`` (Lemma 2)."""
    dl, dt = checks.positive_int(dl, "dl", allow_zero=True), checks.positive_int(dt, "dt", allow_zero=True)
    return math.comb(dl + dt, dt)


def summed_path_count(T: int, dl: int) -> int:
    """``sum_{t<=T} sum_{dt<=t} C(dl + dt, dt) = C(T + dl + 2, T)`` (parallel summation, Lemma 2)."""
    T, dl = checks.positive_int(T, "T", allow_zero=True), checks.positive_int(dl, "dl", allow_zero=True)
    return math.comb(T + dl + 2, T)


def log_binomial(n, k):
    """``log C(n, k)`` for large arguments (vectorised)."""
    n, k = np.asarray(n, dtype=float), np.asarray(k, dtype=float)
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def chi_mean(k):
    """Lemma 1: ``E|lambda_k| = sqrt(2) Gamma((k+1)/2) / Gamma(k/2)``, the mean of a chi_k variable (~ sqrt(k -
    1/2))."""
    k = np.asarray(k, dtype=float)
    if np.any(k <= 0):
        raise ValueError(f"k must be positive, got {k}")
    return np.sqrt(2.0) * np.exp(gammaln((k + 1) / 2) - gammaln(k / 2))


def chi_variance(k):
    """``Var chi_k = k - E[chi_k]^2``: it tends to 1/2, not to 0 as the paper's Lemma 1 states."""
    return np.asarray(k, dtype=float) - chi_mean(k) ** 2


def pascal_gradient(T: int, L: int, rho: float) -> np.ndarray:
    """``d (sum_t y_t) / d x_t'`` for every t' of the PascalRNN ``h[t,l] = rho h[t,l-1] + rho h[t-1,l]`` (scalar
    units, L layers, the stacked convention of the official code): ``rho^L sum_{n<=N} C(n+L-1, n) rho^n`` with
    ``N = T - 1 - t'``; for rho = 1 this is ``C(N + L, L)``."""
    T, L = checks.positive_int(T, "T"), checks.positive_int(L, "L")
    checks.positive_float(rho, "rho")
    n = np.arange(T)
    terms = np.exp(log_binomial(n + L - 1, n) + n * math.log(rho) + L * math.log(rho))
    return np.cumsum(terms)[::-1]


def pascal_gradient_recursion(T: int, L: int, rho: float) -> np.ndarray:
    """The same derivative by backward recursion over the grid (float64): the check of ``pascal_gradient``."""
    T, L = checks.positive_int(T, "T"), checks.positive_int(L, "L")
    # g[t, l] = d (sum_t y_t) / d h[t, l]; y_t = h[t, L]
    g = np.zeros((T + 1, L + 2))
    for t in range(T - 1, -1, -1):
        for l in range(L, 0, -1):
            g[t, l] = (1.0 if l == L else 0.0) + rho * g[t + 1, l] + rho * g[t, l + 1] * (l < L)
    return rho * g[:T, 1]
