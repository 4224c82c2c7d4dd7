"""The vanilla recurrent cell, and the loops that run any cell over a sequence or a stack of layers.

Every cell in :mod:`lscnb.models` has the same shape of call, ``state_t = cell(state_{t-1}, x_t)``, on one
flat state tensor of size ``cell.state_size`` (an LSTM's ``[h, c]`` are concatenated), plus
``cell.output(state)`` for what the next layer or the readout sees. That single convention is what lets
:mod:`lscnb.jacobian` differentiate any of them with ``torch.func``.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import checks
from .activations import get_activation


def recurrent_matrix(
    n: int, scale: float = 1.0, init: str = "gaussian", generator=None, dtype: torch.dtype | None = None
) -> torch.Tensor:
    """An ``n x n`` recurrent matrix: Gaussian with entries N(0, scale^2/n) (spectral radius ~ scale, by the
    circular law) or ``scale`` times a Haar-random orthogonal matrix (every singular value equal to ``scale``)."""
    n = checks.positive_int(n, "n")
    scale = checks.positive_float(scale, "scale", allow_zero=True)
    checks.one_of(init, ("gaussian", "orthogonal", "identity"), "init")
    if init == "identity":
        return scale * torch.eye(n, dtype=dtype)
    g = torch.randn(n, n, generator=generator, dtype=dtype)
    if init == "gaussian":
        return g * (scale / math.sqrt(n))
    q, r = torch.linalg.qr(g)
    return scale * q * torch.sign(torch.diagonal(r)).unsqueeze(0)  # sign fix makes q Haar-distributed


class RNNCell(nn.Module):
    """Vanilla RNN, ``h_t = phi(W h_{t-1} + U x_t + b)``.

    ``W`` is ``recurrent_matrix(hidden_size, weight_scale, recurrent_init)``; ``U`` has entries
    N(0, input_scale^2 / input_size); ``b`` starts at zero.
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        activation: str = "tanh",
        weight_scale: float = 1.0,
        recurrent_init: str = "gaussian",
        input_scale: float = 1.0,
        bias: bool = True,
    ):
        super().__init__()
        self.input_size = checks.positive_int(input_size, "input_size")
        self.hidden_size = checks.positive_int(hidden_size, "hidden_size")
        self.activation = activation
        self.phi = get_activation(activation)
        self.weight_hh = nn.Parameter(recurrent_matrix(hidden_size, weight_scale, recurrent_init))
        input_scale = checks.positive_float(input_scale, "input_scale", allow_zero=True)
        self.weight_ih = nn.Parameter(torch.randn(hidden_size, input_size) * (input_scale / math.sqrt(input_size)))
        self.bias = nn.Parameter(torch.zeros(hidden_size)) if bias else None

    @property
    def state_size(self) -> int:
        return self.hidden_size

    def forward(self, state: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        a = state @ self.weight_hh.T + x @ self.weight_ih.T
        if self.bias is not None:
            a = a + self.bias
        return self.phi(a)

    def output(self, state: torch.Tensor) -> torch.Tensor:
        return state

    def initial_state(self, batch: int, device=None, dtype=None) -> torch.Tensor:
        return torch.zeros(batch, self.state_size, device=device, dtype=dtype or self.weight_hh.dtype)


def run_cell(cell: nn.Module, x: torch.Tensor, state: torch.Tensor | None = None, *, step=None) -> torch.Tensor:
    """Run ``cell`` over ``x`` of shape (B, T, D); return the states after every step, shape (B, T, S).

    ``step`` replaces ``cell`` as the function of one step (e.g. :func:`lscnb.kernels.compiled_step` of it)."""
    checks.tensor(x, "x", ndim=3)
    if step is not None and not callable(step):
        raise TypeError("step must be callable as step(state, x_t)")
    step = cell if step is None else step
    if state is None:
        state = cell.initial_state(x.shape[0], device=x.device, dtype=x.dtype)
    states = []
    for t in range(x.shape[1]):
        state = step(state, x[:, t])
        states.append(state)
    return torch.stack(states, dim=1)


class Stack(nn.Module):
    """Layers of cells; layer ``l`` reads ``cells[l-1].output`` of the same time step (layer 0 reads x).

    The LSC paper writes the depth link one step behind (``h[t,l] = g(h[t-1,l], h[t-1,l-1])``); that is the
    same computation with the depth index shifted, so the transition derivatives are the same matrices.
    """

    def __init__(self, cells):
        super().__init__()
        self.cells = nn.ModuleList(cells)
        if len(self.cells) == 0:
            raise ValueError("cells must hold at least one cell")

    def __len__(self):
        return len(self.cells)

    def forward(self, x: torch.Tensor, states=None) -> list[torch.Tensor]:
        """Per-layer states after every step: a list of (B, T, S_l) tensors."""
        out, inp = [], x
        for l, cell in enumerate(self.cells):
            seq = run_cell(cell, inp, None if states is None else states[l])
            out.append(seq)
            inp = cell.output(seq)
        return out


class SequenceModel(nn.Module):
    """A stack of cells with a linear readout, at every step (``readout="all"``) or the last (``"last"``)."""

    def __init__(self, cells, output_size: int, *, readout: str = "last"):
        super().__init__()
        self.stack = cells if isinstance(cells, Stack) else Stack(cells)
        self.readout_at = checks.one_of(readout, ("last", "all"), "readout")
        top = self.stack.cells[-1]
        width = top.output(torch.zeros(1, top.state_size)).shape[-1]
        self.readout = nn.Linear(width, checks.positive_int(output_size, "output_size"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        top = self.stack(x)[-1]
        h = self.stack.cells[-1].output(top)
        return self.readout(h[:, -1] if self.readout_at == "last" else h)
