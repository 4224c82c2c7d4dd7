"""Gaussian expectations by Gauss-Hermite quadrature, the workhorse of every mean-field recursion."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import checks


@lru_cache(maxsize=16)
def hermite_nodes(order: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights with ``sum(w * f(z)) = E[f(z)]`` for ``z ~ N(0, 1)`` (probabilists' Hermite)."""
    order = checks.positive_int(order, "order")
    z, w = np.polynomial.hermite_e.hermegauss(order)
    return z, w / np.sqrt(2 * np.pi)


def expect(f, var: float | np.ndarray, mean: float | np.ndarray = 0.0, *, order: int = 101) -> np.ndarray:
    """``E[f(x)]`` for ``x ~ N(mean, var)``; ``var`` and ``mean`` broadcast, ``f`` must be vectorised."""
    var = np.asarray(var, dtype=float)
    if np.any(var < 0):
        raise ValueError(f"var must be non-negative, got {var}")
    z, w = hermite_nodes(order)
    x = np.asarray(mean, dtype=float)[..., None] + np.sqrt(var)[..., None] * z
    return np.sum(w * f(x), axis=-1)
