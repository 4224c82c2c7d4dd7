"""Small helpers for the chapters' exercises (their figures use :mod:`lscnb.experiments`)."""

from __future__ import annotations

import torch

from . import checks
from .models.relevancy import RelRNN


def first_state_gradient(
    length: int,
    *,
    nu: int = 5,
    rho: int = 5,
    keep_first: bool = True,
    attention: bool = True,
    width: int = 32,
    seed: int = 0,
) -> float:
    """``||dL/dh_0||`` with ``L`` the sum of the last macro-state ``s_{T-1}``, for one untrained RelRNN (float64,
    4 Gaussian inputs per step) whose screening keeps ``h_0`` as relevant when ``keep_first`` (an oracle, as in the
    chapter's ``reach`` figure). ``rho=0`` removes the long-term set (a buffer of the last ``nu`` states only);
    ``attention=False`` is the plain tanh RNN with the same weights."""
    length = checks.positive_int(length, "length")
    torch.manual_seed(seed)
    model = RelRNN(4, checks.positive_int(width, "width"), nu=nu, rho=rho).double()
    x = torch.randn(1, length, 4, generator=torch.Generator().manual_seed(100 + seed), dtype=torch.float64)
    hidden: list = []
    out = model(x, pin=(0,) if keep_first else (), attention=attention, hidden=hidden, macro=True)
    out[:, -1].sum().backward()
    grad = hidden[0].grad
    return 0.0 if grad is None else float(grad.norm())
