"""Deep feed-forward networks of the LSC paper's Fig. 2 (30 layers, width 128, ReLU / sin / cos).

``h_l = phi(W_l h_{l-1} + b_l)`` with a linear read-out; ``init`` is ``glorot`` (uniform, Var = 2/(fan_in+fan_out)),
``he`` (normal, Var = 2/fan_in) or ``orthogonal``. Corollary 1 of the paper: Glorot (linear) and He (ReLU) give
transition derivatives ``diag(phi'(z_l)) W_l`` of expected spectral radius about 1.
"""

from __future__ import annotations

import torch
from torch import nn

from .. import checks
from .activations import activation_derivative, get_activation

INITS = ("glorot", "he", "orthogonal")


class DeepFFN(nn.Module):
    def __init__(
        self,
        d_in: int,
        width: int,
        depth: int,
        d_out: int,
        *,
        activation: str = "relu",
        init: str = "glorot",
        seed: int = 0,
    ):
        super().__init__()
        checks.positive_int(depth, "depth")
        checks.one_of(init, INITS, "init")
        self.phi = get_activation(activation)
        self.activation = activation
        g = torch.Generator().manual_seed(seed)
        sizes = [checks.positive_int(d_in, "d_in")] + [checks.positive_int(width, "width")] * depth
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        for layer in self.layers:
            fan_out, fan_in = layer.weight.shape
            with torch.no_grad():
                if init == "glorot":
                    bound = (6 / (fan_in + fan_out)) ** 0.5
                    layer.weight.copy_(torch.rand(fan_out, fan_in, generator=g) * 2 * bound - bound)
                elif init == "he":
                    layer.weight.copy_(torch.randn(fan_out, fan_in, generator=g) * (2 / fan_in) ** 0.5)
                else:
                    q, _ = torch.linalg.qr(torch.randn(max(fan_in, fan_out), min(fan_in, fan_out), generator=g))
                    layer.weight.copy_(q if fan_out >= fan_in else q.T)
                layer.bias.zero_()
        self.readout = nn.Linear(width, checks.positive_int(d_out, "d_out"))

    def pre_activations(self, x: torch.Tensor) -> list[torch.Tensor]:
        """``z_l = W_l h_{l-1} + b_l`` of every layer."""
        zs, h = [], x
        for layer in self.layers:
            z = layer(h)
            zs.append(z)
            h = self.phi(z)
        return zs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        checks.tensor(x, "x", ndim=2)
        h = x
        for layer in self.layers:
            h = self.phi(layer(h))
        return self.readout(h)

    def transition_derivatives(self, x: torch.Tensor) -> list[torch.Tensor]:
        """``M_l = diag(phi'(z_l)) W_l`` for every layer after the first (square), per sample: (B, n, n) each.
        Differentiable with respect to the weights (for pre-training)."""
        zs = self.pre_activations(x)
        return [
            activation_derivative(self.activation, z).unsqueeze(-1) * layer.weight
            for layer, z in zip(self.layers[1:], zs[1:])
        ]
