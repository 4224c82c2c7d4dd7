"""Haykin's double moon (Neural Networks and Learning Machines, ch. 1), the regression task of roaFNN's Fig. 1.

Two half rings of radius ``r`` and width ``w``: the upper one centred at the origin (target +1), the lower one
centred at ``(r, -d)`` and flipped (target -1); ``d`` > 0 separates them vertically. Raw coordinates, as in the
paper's figure (the region [-20, 30] x [-15, 20])."""

from __future__ import annotations

import math

import torch

from .. import checks


def double_moon(n: int = 1000, *, r: float = 10.0, w: float = 6.0, d: float = 1.0, seed: int = 0):
    """``n`` points (half per moon) as (n, 2) float32 and targets (n,) in {-1, +1}."""
    n = checks.positive_int(n, "n")
    checks.positive_float(r, "r")
    checks.positive_float(w, "w")
    if w >= 2 * r:
        raise ValueError(f"w must be smaller than 2 r = {2 * r}, got {w}")
    g = torch.Generator().manual_seed(seed)
    half = n // 2
    radius = r - w / 2 + w * torch.rand(n, generator=g, dtype=torch.float64)
    angle = math.pi * torch.rand(n, generator=g, dtype=torch.float64)
    upper = torch.stack([radius[:half] * torch.cos(angle[:half]), radius[:half] * torch.sin(angle[:half])], 1)
    lower = torch.stack([radius[half:] * torch.cos(angle[half:]) + r, -radius[half:] * torch.sin(angle[half:]) - d], 1)
    x = torch.cat([upper, lower]).float()
    y = torch.cat([torch.ones(half), -torch.ones(n - half)])
    perm = torch.randperm(n, generator=g)
    return x[perm], y[perm]
