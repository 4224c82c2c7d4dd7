"""LSTM and GRU cells written with plain tensor ops, so ``torch.func`` can differentiate them.

Weights use PyTorch's layout and default initialisation (``nn.LSTMCell``/``nn.GRUCell``: gates stacked as
i, f, g, o and r, z, n; two bias vectors), so a unit test can copy weights and compare outputs exactly.
The LSTM's state is ``[h, c]`` concatenated; ``output`` returns ``h``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import checks


class _GatedCell(nn.Module):
    gates = 1

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.input_size = checks.positive_int(input_size, "input_size")
        self.hidden_size = checks.positive_int(hidden_size, "hidden_size")
        g = self.gates * hidden_size
        self.weight_ih = nn.Parameter(torch.empty(g, input_size))
        self.weight_hh = nn.Parameter(torch.empty(g, hidden_size))
        self.bias_ih = nn.Parameter(torch.empty(g))
        self.bias_hh = nn.Parameter(torch.empty(g))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default: every weight and bias uniform in +-1/sqrt(hidden_size)."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def initial_state(self, batch: int, device=None, dtype=None) -> torch.Tensor:
        return torch.zeros(batch, self.state_size, device=device, dtype=dtype or self.weight_hh.dtype)


class LSTMCell(_GatedCell):
    """``i,f,o = sigma(.)``, ``g = tanh(.)``, ``c' = f c + i g``, ``h' = o tanh(c')``; state ``[h, c]``."""

    gates = 4

    def __init__(self, input_size: int, hidden_size: int, *, forget_bias: float | None = None):
        super().__init__(input_size, hidden_size)
        if forget_bias is not None:
            with torch.no_grad():
                n = hidden_size
                self.bias_ih[n : 2 * n].fill_(float(forget_bias))
                self.bias_hh[n : 2 * n].zero_()

    @property
    def state_size(self) -> int:
        return 2 * self.hidden_size

    def forward(self, state: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        n = self.hidden_size
        h, c = state[..., :n], state[..., n:]
        z = x @ self.weight_ih.T + self.bias_ih + h @ self.weight_hh.T + self.bias_hh
        i, f, g, o = z.split(n, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return torch.cat([h, c], dim=-1)

    def output(self, state: torch.Tensor) -> torch.Tensor:
        return state[..., : self.hidden_size]


class GRUCell(_GatedCell):
    """``r,z = sigma(.)``, ``n = tanh(W_in x + b_in + r (W_hn h + b_hn))``, ``h' = (1-z) n + z h``."""

    gates = 3

    @property
    def state_size(self) -> int:
        return self.hidden_size

    def forward(self, state: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        gi = x @ self.weight_ih.T + self.bias_ih
        gh = state @ self.weight_hh.T + self.bias_hh
        ir, iz, in_ = gi.chunk(3, dim=-1)
        hr, hz, hn = gh.chunk(3, dim=-1)
        r = torch.sigmoid(ir + hr)
        z = torch.sigmoid(iz + hz)
        n = torch.tanh(in_ + r * hn)
        return (1 - z) * n + z * state

    def output(self, state: torch.Tensor) -> torch.Tensor:
        return state
