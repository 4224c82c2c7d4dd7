"""Bounds on the input-output Jacobian of roaFNN / roaRNN (Ceni 2022, Theorems 2.1 and 3.1), corrected.

With ``phi' in [0, r]``, ``sigma = max ||W_l||`` and ``alpha = rho / (L - 1)``, every layer Jacobian
``alpha D W + (1 - alpha) O`` has norm at most ``1 + alpha (r sigma - 1)`` and, when ``alpha (1 + r sigma) < 1``,
smallest singular value at least ``1 - alpha (1 + r sigma)``. Over ``L - 1`` factors:

    upper:  ||IOJ|| <= (1 + alpha (r sigma - 1))^(L-1) <= exp(rho (r sigma - 1))                       (eq. 15)
    lower:  sigma(IOJ) >= (1 - rho (1 + r sigma) / (L - 1))^(L-1)                           (finite, correct)

The paper states the lower bound as ``exp(-rho (1 + r sigma))`` (eq. 16 and Thm 3.1), using
``(1 + A/x)^(x+1) > e^A``, which fails for A < 0: ``(1 - a/n)^n < e^{-a}``, so the printed bound is *above* the
true one at every finite L. ``scalar_counterexample`` is an exact network that violates it.
"""

from __future__ import annotations

import math

from .. import checks


def _args(rho, sigma, maps, r):
    checks.positive_float(rho, "rho")
    checks.positive_float(sigma, "sigma", allow_zero=True)
    checks.positive_float(r, "r")
    return checks.positive_int(maps, "maps")


def upper_bound(rho: float, sigma: float, maps: int, r: float = 1.0) -> float:
    """``(1 + alpha (r sigma - 1))^maps`` with ``alpha = rho / maps``: the finite form of eq. 15."""
    maps = _args(rho, sigma, maps, r)
    return (1 + rho / maps * (r * sigma - 1)) ** maps


def lower_bound(rho: float, sigma: float, maps: int, r: float = 1.0) -> float:
    """The correct finite-L lower bound ``(1 - rho (1 + r sigma) / maps)^maps``; requires
    ``alpha (1 + r sigma) < 1``."""
    maps = _args(rho, sigma, maps, r)
    step = 1 - rho * (1 + r * sigma) / maps
    if step <= 0:
        raise ValueError(f"the lower bound needs rho (1 + r sigma) < maps = {maps}, got rho={rho}, sigma={sigma}")
    return step**maps


def lower_bound_paper(rho: float, sigma: float, r: float = 1.0) -> float:
    """``exp(-rho (1 + r sigma))`` as printed (eq. 16, Thm 3.1): not a valid bound at finite L."""
    return math.exp(-rho * (1 + r * sigma))


def scalar_counterexample(maps: int, rho: float, sigma: float) -> float:
    """The IOJ of a width-1 tanh roaFNN with x = b = 0 (so phi' = 1 = r), W = -sigma and O = 1: every layer
    Jacobian is ``1 - alpha (1 + sigma)``, so the IOJ equals the finite lower bound exactly, below eq. 16."""
    maps = _args(rho, sigma, maps, 1.0)
    alpha = rho / maps
    return (alpha * 1.0 * (-sigma) + (1 - alpha) * 1.0) ** maps


def annulus(alpha: float, sigma: float, r: float = 1.0) -> tuple[float, float]:
    """Bauer-Fike: eigenvalues of ``alpha D W + (1 - alpha) O`` (O orthogonal) have modulus in
    ``[1 - alpha (1 + r sigma), 1 + alpha (r sigma - 1)]``."""
    return 1 - alpha * (1 + r * sigma), 1 + alpha * (r * sigma - 1)


def eye_disc(alpha: float, sigma: float, r: float = 1.0) -> tuple[complex, float]:
    """With O = I the eigenvalues lie in the disc of centre ``1 - alpha`` and radius ``alpha r sigma``."""
    return complex(1 - alpha, 0.0), alpha * r * sigma
