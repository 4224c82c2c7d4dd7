"""modReLU recurrent cells that serve as the nnRNN's baselines (thesis §3.6): a free recurrent matrix (the RNN and
the orthogonally initialised RNN-orth) and the EURNN's product of Givens rotations (Jing et al. 2017).

Every cell computes ``h_t = modReLU(W h_{t-1} + U x_t)`` (the bias lives in modReLU, as in the nnRNN) and builds
``W`` once per sequence in :meth:`sequence`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import checks
from .orthogonal import ModReLU, skew, skew_init
from .rnn import recurrent_matrix


class _ModReLUCell(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size = checks.positive_int(input_size, "input_size")
        self.hidden_size = checks.positive_int(hidden_size, "hidden_size")
        self.U = nn.Parameter(torch.empty(hidden_size, input_size))
        nn.init.kaiming_normal_(self.U, nonlinearity="relu")
        self.phi = ModReLU(hidden_size)

    @property
    def state_size(self) -> int:
        return self.hidden_size

    def weight(self) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, state: torch.Tensor, x: torch.Tensor, W: torch.Tensor | None = None) -> torch.Tensor:
        W = self.weight() if W is None else W
        return self.phi(state @ W.T + x @ self.U.T)

    def sequence(self, x: torch.Tensor, state: torch.Tensor | None = None) -> torch.Tensor:
        """States (B, T, N) for inputs (B, T, D) from ``state`` (zeros if None), building W once."""
        W = self.weight()
        h = self.initial_state(x.shape[0], x.device, x.dtype) if state is None else state
        out = []
        for t in range(x.shape[1]):
            h = self.forward(h, x[:, t], W)
            out.append(h)
        return torch.stack(out, 1)

    def output(self, state: torch.Tensor) -> torch.Tensor:
        return state

    def initial_state(self, batch: int, device=None, dtype=None) -> torch.Tensor:
        return torch.zeros(batch, self.hidden_size, device=device, dtype=dtype or self.U.dtype)


class FreeRNNCell(_ModReLUCell):
    """modReLU RNN with an unconstrained ``W``: ``init="glorot"`` (the thesis's RNN), ``"orth"`` (Haar-random
    orthogonal: RNN-orth, Henaff et al. 2016), or ``"cayley"``/``"henaff"`` (the exp map of that skew init)."""

    def __init__(self, input_size: int, hidden_size: int, *, init: str = "glorot", seed: int = 0):
        super().__init__(input_size, hidden_size)
        checks.one_of(init, ("glorot", "orth", "cayley", "henaff"), "init")
        g = torch.Generator().manual_seed(seed)
        if init == "glorot":
            w = torch.randn(hidden_size, hidden_size, generator=g) / math.sqrt(hidden_size)  # xavier normal, n x n
        elif init == "orth":
            w = recurrent_matrix(hidden_size, init="orthogonal", generator=g)
        else:
            w = torch.matrix_exp(skew(skew_init(hidden_size, init, generator=g)))
        self.W = nn.Parameter(w)

    def weight(self) -> torch.Tensor:
        return self.W

    def effective_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


class EURNNCell(_ModReLUCell):
    """Real EURNN with tunable capacity (Jing et al. 2017): ``W = R_L ... R_1``, layer ``l`` rotating the pairs
    ``(i, i+1)`` for even ``i`` (odd ``l``: odd ``i``) by learned angles, so W is orthogonal with about
    ``L N / 2`` parameters. ``capacity=2`` is the default of the authors' ``EURNNCell``."""

    def __init__(self, input_size: int, hidden_size: int, *, capacity: int = 2, seed: int = 0):
        super().__init__(input_size, hidden_size)
        if hidden_size < 2:
            raise ValueError(f"hidden_size must be at least 2, got {hidden_size}")
        self.capacity = checks.positive_int(capacity, "capacity")
        g = torch.Generator().manual_seed(seed)
        n = hidden_size
        self.angles_even = nn.Parameter((2 * torch.rand((capacity + 1) // 2, n // 2, generator=g) - 1) * math.pi)
        self.angles_odd = nn.Parameter((2 * torch.rand(capacity // 2, (n - 1) // 2, generator=g) - 1) * math.pi)

    def weight(self) -> torch.Tensor:
        n = self.hidden_size
        W = torch.eye(n, dtype=self.angles_even.dtype, device=self.angles_even.device)
        for layer in range(self.capacity):
            angles = (self.angles_even if layer % 2 == 0 else self.angles_odd)[layer // 2]
            i = torch.arange(layer % 2, n - 1, 2, device=W.device)
            c, s = torch.cos(angles)[:, None], torch.sin(angles)[:, None]
            wi, wj = W[i], W[i + 1]
            W = W.index_copy(0, i, c * wi - s * wj).index_copy(0, i + 1, s * wi + c * wj)
        return W

    def effective_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
