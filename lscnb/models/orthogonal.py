"""Orthogonal recurrent matrices: the exponential (expRNN) and Cayley maps, their initialisations, modReLU.

A parametrisation keeps ``W = map(A - A^T)`` orthogonal while the optimiser updates the unconstrained ``A``
additively in the Lie algebra (Lezcano-Casado & Martinez-Rubio 2019), so round-off does not accumulate. Gradients
go through ``torch.matrix_exp`` by autograd; no hand-written Frechet derivative (the thesis prints its sign wrong).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn.utils import parametrize

from .. import checks


def skew(a: torch.Tensor) -> torch.Tensor:
    """The skew-symmetric part ``A - A^T`` of the strictly upper triangle of ``a``."""
    upper = a.triu(1)
    return upper - upper.transpose(-1, -2)


def cayley(a: torch.Tensor) -> torch.Tensor:
    """``Cay(A) = (I + A)^{-1} (I - A)`` for skew ``A``: orthogonal, no eigenvalue -1."""
    eye = torch.eye(a.shape[-1], dtype=a.dtype, device=a.device)
    return torch.linalg.solve(eye + a, eye - a)


class Orthogonal(nn.Module):
    """Parametrisation ``A -> map(skew(A))`` with ``map`` the matrix exponential (``exp``) or ``cayley``."""

    def __init__(self, map: str = "exp"):
        super().__init__()
        self.map = checks.one_of(map, ("exp", "cayley"), "map")

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        s = skew(a)
        return torch.matrix_exp(s) if self.map == "exp" else cayley(s)


def skew_init(n: int, kind: str = "henaff", generator=None, dtype=None) -> torch.Tensor:
    """An initial upper-triangular parameter whose exp map gives block 2x2 rotations (expRNN/nnRNN code).

    ``henaff``: angles ``s ~ U(-pi, 0)`` on every other super-diagonal entry, so ``exp`` gives rotations with
    angles uniform in ``[0, pi]``. ``cayley``: ``s = -tan(t/2)``, ``t ~ U[0, pi/2]`` there (the code then applies
    ``exp``, so the rotation angles are ``tan(t/2)`` radians, not ``t``). ``random``: a Haar-random orthogonal
    matrix's logarithm is not needed; this gives ``A`` with N(0, 1/n) entries.
    """
    n = checks.positive_int(n, "n")
    checks.one_of(kind, ("henaff", "cayley", "random", "zero"), "kind")
    a = torch.zeros(n, n, dtype=dtype)
    if kind == "zero":
        return a
    if kind == "random":
        return torch.randn(n, n, generator=generator, dtype=dtype) / math.sqrt(n)
    m = n // 2
    if kind == "henaff":
        s = -math.pi * torch.rand(m, generator=generator, dtype=dtype)
    else:
        s = -torch.tan(0.5 * (math.pi / 2) * torch.rand(m, generator=generator, dtype=dtype))
    idx = torch.arange(m) * 2
    a[idx, idx + 1] = s
    return a


class ModReLU(nn.Module):
    """``modReLU(z) = sign(z) relu(|z| + b)`` with a learned bias per unit (Arjovsky et al. 2016)."""

    def __init__(self, size: int, bias_init: float = 0.01):
        super().__init__()
        self.bias = nn.Parameter(torch.empty(checks.positive_int(size, "size")).uniform_(-bias_init, bias_init))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.sign(z) * torch.relu(z.abs() + self.bias)


class OrthogonalRNNCell(nn.Module):
    """``h_t = modReLU(W h_{t-1} + U x_t + b)`` with ``W`` kept orthogonal (expRNN when ``map="exp"``).

    ``input_init``: ``"kaiming"`` (normal, std ``sqrt(2 / input_size)``) or ``"xavier"`` (normal, std
    ``sqrt(2 / (input_size + hidden_size))``); ``input_bias=False`` drops ``b`` (the bias then lives in modReLU
    only). The expRNN of the nnRNN authors' code (``expRNN/exprnn.py``) is ``input_init="xavier"`` (copy task,
    psMNIST) or ``"kaiming"`` (their PTB script), with ``input_bias=False``.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        map: str = "exp",
        init: str = "henaff",
        activation: str = "modrelu",
        input_init: str = "kaiming",
        input_bias: bool = True,
    ):
        super().__init__()
        self.input_size = checks.positive_int(input_size, "input_size")
        self.hidden_size = checks.positive_int(hidden_size, "hidden_size")
        checks.one_of(activation, ("modrelu", "tanh", "relu", "linear"), "activation")
        checks.one_of(input_init, ("kaiming", "xavier"), "input_init")
        self.recurrent = nn.Linear(hidden_size, hidden_size, bias=False)
        with torch.no_grad():
            self.recurrent.weight.copy_(skew_init(hidden_size, init))
        parametrize.register_parametrization(self.recurrent, "weight", Orthogonal(map))
        self.input = nn.Linear(input_size, hidden_size, bias=bool(input_bias))
        if input_init == "kaiming":
            nn.init.kaiming_normal_(self.input.weight, nonlinearity="relu")
        else:
            nn.init.xavier_normal_(self.input.weight)
        if self.input.bias is not None:
            nn.init.zeros_(self.input.bias)
        self.phi = (
            ModReLU(hidden_size)
            if activation == "modrelu"
            else {"tanh": torch.tanh, "relu": torch.relu, "linear": lambda z: z}[activation]
        )

    @property
    def state_size(self) -> int:
        return self.hidden_size

    @property
    def weight_hh(self) -> torch.Tensor:
        return self.recurrent.weight

    def forward(self, state: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.phi(self.recurrent(state) + self.input(x))

    def output(self, state: torch.Tensor) -> torch.Tensor:
        return state

    def initial_state(self, batch: int, device=None, dtype=None) -> torch.Tensor:
        return torch.zeros(batch, self.hidden_size, device=device, dtype=dtype or self.input.weight.dtype)
