"""Adaptive leaky integrate-and-fire (ALIF) cells with a surrogate spike gradient (LSC paper, App. H, eq. 49).

    y[t]  = alpha_y y[t-1] + W_rec x[t-1] + W_in u[t] + b_y - theta[t-1] x[t-1]      (soft reset)
    theta[t] = alpha_th theta[t-1] + b_th + beta x[t-1]                              (adaptive threshold)
    x[t]  = H(y[t] - theta[t]),        alpha_j = exp(-1 / tau_j)

The state is ``[y, theta]`` concatenated (what the LSC differentiates); the cell's own previous spike
``x[t-1] = H(y[t-1] - theta[t-1])`` is recomputed from that state, and ``output(state)`` is the spike the next
layer and the readout see. As for every cell of :mod:`lscnb.models`, the input ``u[t]`` is the layer below at the
same step (the paper's causal ``x[t-1, l-1]`` shifted by one index; the transition derivatives are the same).

The Heaviside step has no useful derivative, so the backward pass uses the surrogate ``dH/dv = gamma f(omega v)``
with ``f`` the derivative of the fast sigmoid, ``1 / (1 + |v|)^2`` (gamma = 0.5 dampening, omega = 1 sharpness).
It is written as a straight-through expression,

    spike(v) = H(v).detach() + (F(v) - F(v).detach()),    F(v) = gamma v / (1 + omega |v|),   F' = gamma f(omega v),

so its value is exactly ``H(v)`` and every derivative (first, second, ``vmap``, ``jacrev``, ``jvp``) is that of
``F``: no custom autograd.Function, hence nothing for ``torch.func`` to trip on.

Initialisation (Tab. S1): ``W_in``, ``W_rec`` Glorot-uniform; ``b_y = 0`` and not trained; ``tau_y``,
``tau_th``, ``b_th``, ``beta`` trainable per neuron, each from a Gaussian of mean ``mu`` and std ``3 mu / 7``
truncated to ``[0, 2 mu]`` (the paper says only "guarantees positive values"; symmetric bounds keep the mean at
``mu``). ALIF+- draws ``beta`` from N(0, (mu / n_in)^2) instead.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import checks

ALIF_DEFAULTS = {"tau_y": 0.1, "tau_th": 100.0, "b_th": 0.01, "beta": 1.8}
"""Tab. S1 means for sl-MNIST and PTB (SHD: ``tau_th = 250``)."""


def fast_sigmoid_surrogate(v: torch.Tensor, dampening: float = 0.5, sharpness: float = 1.0) -> torch.Tensor:
    """``H(v)`` forward; derivative ``dampening / (1 + |sharpness v|)^2`` backward (straight-through form)."""
    soft = dampening * v / (1 + sharpness * v.abs())
    return (v > 0).to(v.dtype).detach() + (soft - soft.detach())


def glorot_uniform_(weight: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """Keras' Glorot-uniform: U(-a, a), ``a = sqrt(6 / (fan_in + fan_out))``; for a vector ``a = sqrt(3 / n)``."""
    fan_out, fan_in = (weight.shape[0], weight.shape[1]) if weight.ndim == 2 else (weight.numel(), weight.numel())
    a = math.sqrt(6.0 / (fan_in + fan_out))
    with torch.no_grad():
        weight.copy_(torch.rand(weight.shape, generator=generator, dtype=weight.dtype) * 2 * a - a)
    return weight


def truncated_normal(n: int, mean: float, std: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """``n`` draws of N(mean, std^2) truncated to ``[0, 2 mean]`` (by inverse CDF, so no rejection loop)."""
    lo, hi = (0.0 - mean) / std, (2 * mean - mean) / std
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    u = cdf(lo) + torch.rand(n, generator=generator, dtype=torch.float64) * (cdf(hi) - cdf(lo))
    return (mean + std * math.sqrt(2) * torch.erfinv(2 * u - 1)).float()


class ALIFCell(nn.Module):
    """ALIF neuron layer (eq. 49); ``beta_init`` is ``"positive"`` (ALIF+) or ``"symmetric"`` (ALIF+-)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        beta_init: str = "positive",
        tau_y: float = 0.1,
        tau_th: float = 100.0,
        b_th: float = 0.01,
        beta: float = 1.8,
        dampening: float = 0.5,
        sharpness: float = 1.0,
        seed: int | None = None,
    ):
        super().__init__()
        self.input_size = checks.positive_int(input_size, "input_size")
        self.hidden_size = n = checks.positive_int(hidden_size, "hidden_size")
        self.beta_init = checks.one_of(beta_init, ("positive", "symmetric"), "beta_init")
        for name, value in (("tau_y", tau_y), ("tau_th", tau_th), ("b_th", b_th), ("beta", beta)):
            checks.positive_float(value, name)
        self.dampening = checks.positive_float(dampening, "dampening")
        self.sharpness = checks.positive_float(sharpness, "sharpness")
        g = torch.Generator().manual_seed(seed) if seed is not None else None
        self.weight_ih = nn.Parameter(glorot_uniform_(torch.empty(n, input_size), g))
        self.weight_hh = nn.Parameter(glorot_uniform_(torch.empty(n, n), g))
        self.tau_y = nn.Parameter(truncated_normal(n, tau_y, 3 * tau_y / 7, g))
        self.tau_th = nn.Parameter(truncated_normal(n, tau_th, 3 * tau_th / 7, g))
        self.b_th = nn.Parameter(truncated_normal(n, b_th, 3 * b_th / 7, g))
        b = (
            truncated_normal(n, beta, 3 * beta / 7, g)
            if beta_init == "positive"
            else torch.randn(n, generator=g) * (beta / input_size)
        )
        self.beta = nn.Parameter(b)
        self.register_buffer("b_y", torch.zeros(n))

    @property
    def state_size(self) -> int:
        return 2 * self.hidden_size

    def initial_state(self, batch: int, device=None, dtype=None) -> torch.Tensor:
        return torch.zeros(batch, self.state_size, device=device, dtype=dtype or self.weight_hh.dtype)

    def spike(self, v: torch.Tensor) -> torch.Tensor:
        return fast_sigmoid_surrogate(v, self.dampening, self.sharpness)

    @staticmethod
    def decay(tau: torch.Tensor) -> torch.Tensor:
        """``alpha = exp(-1 / tau)``, with tau kept >= 0.01 (an optimiser step must not flip its sign)."""
        return torch.exp(-1 / tau.clamp_min(0.01))

    def output(self, state: torch.Tensor) -> torch.Tensor:
        """The spikes ``x = H(y - theta)`` of a state ``[y, theta]``."""
        n = self.hidden_size
        return self.spike(state[..., :n] - state[..., n:])

    def forward(self, state: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        n = self.hidden_size
        y, th = state[..., :n], state[..., n:]
        x = self.spike(y - th)  # the previous spike, recomputed from the state
        y = self.decay(self.tau_y) * y + x @ self.weight_hh.T + u @ self.weight_ih.T + self.b_y - th * x
        th = self.decay(self.tau_th) * th + self.b_th + self.beta * x
        return torch.cat([y, th], dim=-1)

    def lsc_scale_groups(self) -> dict:
        """Which parameters the LSC pre-training's kappa scales (App. H): time -> the recurrent matrix and the
        time constants; depth -> the input matrix, the threshold bias and the adaptation."""
        return {"time": [self.weight_hh, self.tau_y, self.tau_th], "depth": [self.weight_ih, self.b_th, self.beta]}
