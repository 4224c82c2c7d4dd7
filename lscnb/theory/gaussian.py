"""Gaussian expectations, the workhorse of every mean-field recursion.

``E[f(mean + s z)]``, ``z ~ N(0, 1)``, by the trapezoid rule in ``z`` on ``[-8.5, 8.5]`` (the normal mass beyond is
2e-17) with a spacing that shrinks as ``s`` grows. For an ``f`` analytic in the strip ``|Im x| < d`` the error falls
like ``exp(-2 pi d / (s h))`` (Trefethen & Weideman 2014, SIAM Review 56, 385): with ``h = 0.25 / s`` it is below
1e-15 for tanh and the sigmoid (``d = pi/2`` and ``pi``), at any variance. A fixed Gauss-Hermite order, used here
before, is exact for polynomials but loses accuracy as ``s`` grows: 48 nodes miss ``E[tanh'(x)^2]`` by 2.7% at
variance 5 and 10% at variance 8, 101 nodes by 4% at variance 12.5.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import checks

TAIL = 8.5
"""Half-width of the grid in units of the standard deviation."""
STEP = 0.25
"""Largest spacing in units of the pre-activation, ``s h``; 0.5 bounds ``h`` itself at small ``s``."""


@lru_cache(maxsize=64)
def _trapezoid(half: int) -> tuple[np.ndarray, np.ndarray]:
    z = np.linspace(-TAIL, TAIL, 2 * half + 1)
    w = np.exp(-0.5 * z * z)
    return z, w / w.sum()


def normal_nodes(scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``z`` and weights ``w`` with ``sum(w * f(mean + scale * z)) = E[f(mean + scale * z)]``, ``z ~ N(0, 1)``.

    Spacing ``min(0.5, 0.25 / scale)``, symmetric, with ``z = 0`` a node; the count is rounded up to a multiple of 8
    steps a side so that nearby scales share one cached grid.
    """
    scale = checks.positive_float(scale, "scale", allow_zero=True)
    step = min(0.5, STEP / scale) if scale > 0 else 0.5
    half = 8 * math.ceil(TAIL / step / 8)
    return _trapezoid(half)


def expect(f, var: float | np.ndarray, mean: float | np.ndarray = 0.0) -> np.ndarray:
    """``E[f(x)]`` for ``x ~ N(mean, var)``; ``var`` and ``mean`` broadcast, ``f`` must be vectorised.

    One grid serves every entry: the one the largest variance needs.
    """
    var = np.asarray(var, dtype=float)
    if np.any(var < 0) or np.any(np.isnan(var)):
        raise ValueError(f"var must be non-negative, got {var}")
    z, w = normal_nodes(math.sqrt(float(var.max())) if var.size else 0.0)
    x = np.asarray(mean, dtype=float)[..., None] + np.sqrt(var)[..., None] * z
    return np.sum(w * f(x), axis=-1)
