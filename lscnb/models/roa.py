"""Random orthogonal additive filters (Ceni 2022): roaFNN (eq. 12) and roaRNN (eqs. 19-20).

Every layer (or step) mixes a trained nonlinear map with a fixed random (semi-)orthogonal filter,

    x_{l+1} = alpha * phi(W_l x_l + b_l) + (1 - alpha) * O_l x_l,        alpha = rho / (number of maps),

so the layer Jacobian ``alpha diag(phi') W_l + (1 - alpha) O_l`` (eq. 14) stays close to an isometry however deep
the network. ``alpha = 1`` is the plain MLP / Elman RNN. The filters are buffers, never trained.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import checks
from .activations import get_activation

METHODS = ("paper", "haar", "perm", "identity")


def semi_orthogonal(n: int, m: int, *, method: str = "paper", generator=None, dtype=torch.float32) -> torch.Tensor:
    """An n x m matrix with orthonormal columns (n >= m) or rows (n < m) (Def. 2.2).

    ``paper``: QR of uniform U(-1, 1) entries, as in the paper (not Haar-distributed); ``haar``: QR of Gaussian
    entries with the sign fix (Mezzadri); ``perm``: a random semi-permutation (App. C); ``identity``: the
    (semi-)identity, which gives eyeRNN / a weighted ResNet without skip connections."""
    n, m = checks.positive_int(n, "n"), checks.positive_int(m, "m")
    checks.one_of(method, METHODS, "method")
    tall = n >= m
    rows, cols = (n, m) if tall else (m, n)
    if method == "identity":
        q = torch.eye(rows, cols, dtype=torch.float64)
    elif method == "perm":
        q = torch.eye(rows, dtype=torch.float64)[torch.randperm(rows, generator=generator)][:, :cols]
    else:
        raw = (
            2 * torch.rand(rows, cols, generator=generator, dtype=torch.float64) - 1
            if method == "paper"
            else torch.randn(rows, cols, generator=generator, dtype=torch.float64)
        )
        q, r = torch.linalg.qr(raw)
        if method == "haar":
            q = q * torch.sign(torch.diagonal(r)).unsqueeze(0)
    return (q if tall else q.T).to(dtype)


class RoaFNN(nn.Module):
    """A deep roaFNN (or, with ``rho=None``, the plain MLP) with input width ``d_in``, ``depth - 1`` hidden layers
    of width ``width`` and a scalar-or-vector output: ``depth`` counts neuron layers as the paper does (L), so
    there are ``depth - 1`` weight maps and ``alpha = rho / (depth - 1)``. Hidden weights are stacked so very
    deep networks stay cheap; ``init_std`` is the std of every weight and bias (the paper: 1)."""

    def __init__(
        self,
        d_in: int,
        width: int,
        d_out: int,
        depth: int,
        *,
        rho: float | None = 5.0,
        activation: str = "tanh",
        method: str = "paper",
        init_std: float | None = 1.0,
        seed: int = 0,
    ):
        super().__init__()
        self.depth = checks.positive_int(depth, "depth")
        if depth < 3:
            raise ValueError(f"depth must be at least 3 (input, hidden, output layers), got {depth}")
        maps = depth - 1
        self.alpha = 1.0 if rho is None else checks.positive_float(rho, "rho") / maps
        if self.alpha > 1:
            raise ValueError(f"rho must be at most depth - 1 = {maps} (alpha <= 1), got {rho}")
        self.phi = get_activation(activation)
        g = torch.Generator().manual_seed(seed)

        def w(shape, fan_in):
            std = init_std if init_std is not None else 1 / math.sqrt(fan_in)
            return torch.randn(*shape, generator=g) * std

        self.W_in, self.b_in = nn.Parameter(w((width, d_in), d_in)), nn.Parameter(w((width,), d_in))
        self.W_h = nn.Parameter(
            torch.stack([w((width, width), width) for _ in range(maps - 2)])
            if maps > 2
            else torch.zeros(0, width, width)
        )
        self.b_h = nn.Parameter(
            torch.stack([w((width,), width) for _ in range(maps - 2)]) if maps > 2 else torch.zeros(0, width)
        )
        self.W_out, self.b_out = nn.Parameter(w((d_out, width), width)), nn.Parameter(w((d_out,), width))
        self.register_buffer("O_in", semi_orthogonal(width, d_in, method=method, generator=g))
        self.register_buffer(
            "O_h",
            torch.stack([semi_orthogonal(width, width, method=method, generator=g) for _ in range(maps - 2)])
            if maps > 2
            else torch.zeros(0, width, width),
        )
        self.register_buffer("O_out", semi_orthogonal(d_out, width, method=method, generator=g))

    def layer(self, x: torch.Tensor, W, b, O, last: bool = False) -> torch.Tensor:
        """Eq. 12 for one map (the last map's nonlinearity is the identity: a linear read-out)."""
        y = x @ W.T + b
        out = y if last else self.phi(y)
        return self.alpha * out + (1 - self.alpha) * (x @ O.T) if self.alpha < 1 else out

    def hidden(self, x: torch.Tensor) -> torch.Tensor:
        """x_{L-1}: the state before the read-out map."""
        x = self.layer(x, self.W_in, self.b_in, self.O_in)
        for l in range(self.W_h.shape[0]):
            x = self.layer(x, self.W_h[l], self.b_h[l], self.O_h[l])
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        checks.tensor(x, "x", ndim=2)
        return self.layer(self.hidden(x), self.W_out, self.b_out, self.O_out, last=True)

    def hidden_jacobians(self, x: torch.Tensor) -> torch.Tensor:
        """The layer Jacobians ``alpha diag(phi'(y_l)) W_l + (1 - alpha) O_l`` (eq. 14) of the square hidden maps
        at one input ``x`` (d_in,), stacked (maps - 2, width, width): their product is the IOJ of eq. 11."""
        x = self.layer(x.unsqueeze(0), self.W_in, self.b_in, self.O_in)[0]
        out = []
        for l in range(self.W_h.shape[0]):
            y = self.W_h[l] @ x + self.b_h[l]
            d = torch.func.grad(lambda v: self.phi(v).sum())(y)
            out.append(self.alpha * d.unsqueeze(1) * self.W_h[l] + (1 - self.alpha) * self.O_h[l])
            x = self.alpha * self.phi(y) + (1 - self.alpha) * (self.O_h[l] @ x)
        return torch.stack(out)


class RoaRNNCell(nn.Module):
    """roaRNN step (eq. 19), ``x' = alpha relu(W_h x + b_h + W_i u) + (1 - alpha) O x`` with one fixed orthogonal
    O; ``alpha = 1`` is the Elman RNN, ``method="identity"`` gives eyeRNN. Follows the ``state = cell(state, u)``
    convention of ``lscnb.models`` (so ``lscnb.jacobian`` applies). Weights start N(0, init_std^2) (paper: 1)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        alpha: float,
        activation: str = "relu",
        method: str = "paper",
        init_std: float | None = 1.0,
        seed: int = 0,
    ):
        super().__init__()
        self.input_size, self.hidden_size = (
            checks.positive_int(input_size, "input_size"),
            checks.positive_int(hidden_size, "hidden_size"),
        )
        self.alpha = checks.positive_float(alpha, "alpha")
        if self.alpha > 1:
            raise ValueError(f"alpha must lie in (0, 1], got {alpha}")
        self.phi = get_activation(activation)
        g = torch.Generator().manual_seed(seed)
        std_h = init_std if init_std is not None else 1 / math.sqrt(hidden_size)
        std_i = init_std if init_std is not None else 1 / math.sqrt(input_size)
        self.weight_hh = nn.Parameter(torch.randn(hidden_size, hidden_size, generator=g) * std_h)
        self.bias = nn.Parameter(torch.randn(hidden_size, generator=g) * (init_std if init_std is not None else 0.0))
        self.weight_ih = nn.Parameter(torch.randn(hidden_size, input_size, generator=g) * std_i)
        self.register_buffer("O", semi_orthogonal(hidden_size, hidden_size, method=method, generator=g))

    @property
    def state_size(self) -> int:
        return self.hidden_size

    def initial_state(self, batch: int, device=None, dtype=None) -> torch.Tensor:
        return torch.zeros(batch, self.hidden_size, device=device, dtype=dtype or self.weight_hh.dtype)

    def output(self, state: torch.Tensor) -> torch.Tensor:
        return state

    def forward(self, state: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        y = state @ self.weight_hh.T + self.bias + u @ self.weight_ih.T
        return self.alpha * self.phi(y) + (1 - self.alpha) * (state @ self.O.T)


class RoaRNN(nn.Module):
    """A roaRNN (eq. 19) with the linear read-out of eq. 20, ``z_k = W_o x_k + b_o``, at every step
    (``readout="all"``, the copy task) or at the last (``"last"``). The read-out starts N(0, init_std^2) as the
    paper's does. The loop projects the inputs once and reads them with ``unbind`` (indexing a precomputed
    (T, B, N) tensor inside the loop makes the backward O(T^2)), and does one matmul per step against [W_h; O]."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        output_size: int,
        *,
        alpha: float,
        activation: str = "relu",
        method: str = "paper",
        init_std: float | None = 1.0,
        readout: str = "all",
        seed: int = 0,
    ):
        super().__init__()
        self.cell = RoaRNNCell(
            input_size, hidden_size, alpha=alpha, activation=activation, method=method, init_std=init_std, seed=seed
        )
        self.readout_at = checks.one_of(readout, ("last", "all"), "readout")
        out = checks.positive_int(output_size, "output_size")
        g = torch.Generator().manual_seed(seed + 1)
        std = init_std if init_std is not None else 1 / math.sqrt(hidden_size)
        self.readout = nn.Linear(hidden_size, out)
        with torch.no_grad():
            self.readout.weight.copy_(torch.randn(out, hidden_size, generator=g) * std)
            self.readout.bias.copy_(torch.randn(out, generator=g) * std)

    def states(self, x: torch.Tensor) -> torch.Tensor:
        """Hidden states after every step, (B, T, N), for inputs ``x`` (B, T, D)."""
        checks.tensor(x, "x", ndim=3)
        c, n = self.cell, self.cell.hidden_size
        inputs = (x @ c.weight_ih.T + c.bias).unbind(1)
        both = torch.cat([c.weight_hh, c.O]).T
        h, out = c.initial_state(x.shape[0], device=x.device, dtype=x.dtype), []
        for u in inputs:
            y, o = (h @ both).split(n, dim=-1)
            h = c.alpha * c.phi(y + u) + (1 - c.alpha) * o
            out.append(h)
        return torch.stack(out, 1)

    def last_state(self, x: torch.Tensor) -> torch.Tensor:
        """The final hidden state (B, N), without keeping the others (what a read-out at the last step needs)."""
        checks.tensor(x, "x", ndim=3)
        c, n = self.cell, self.cell.hidden_size
        both = torch.cat([c.weight_hh, c.O]).T
        h = c.initial_state(x.shape[0], device=x.device, dtype=x.dtype)
        for u in (x @ c.weight_ih.T + c.bias).unbind(1):
            y, o = (h @ both).split(n, dim=-1)
            h = c.alpha * c.phi(y + u) + (1 - c.alpha) * o
        return h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.readout_at == "last":
            return self.readout(self.last_state(x))
        return self.readout(self.states(x))


class PaperBaseline(nn.Module):
    """The paper's baselines (Sec. IV): PyTorch's ``nn.RNN`` with ReLU or ``nn.LSTM``, every hidden-to-hidden block
    initialised orthogonal, everything else PyTorch's default, with a linear read-out (all steps or the last)."""

    def __init__(self, kind: str, input_size: int, hidden_size: int, output_size: int, *, readout: str = "all"):
        super().__init__()
        checks.one_of(kind, ("rnn", "lstm"), "kind")
        self.readout_at = checks.one_of(readout, ("last", "all"), "readout")
        n = checks.positive_int(hidden_size, "hidden_size")
        self.core = (
            nn.RNN(checks.positive_int(input_size, "input_size"), n, nonlinearity="relu", batch_first=True)
            if kind == "rnn"
            else nn.LSTM(checks.positive_int(input_size, "input_size"), n, batch_first=True)
        )
        with torch.no_grad():
            for block in self.core.weight_hh_l0.split(n):
                nn.init.orthogonal_(block)
        self.readout = nn.Linear(n, checks.positive_int(output_size, "output_size"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.core(checks.tensor(x, "x", ndim=3))[0]
        return self.readout(h[:, -1] if self.readout_at == "last" else h)
