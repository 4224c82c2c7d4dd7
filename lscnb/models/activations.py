"""Named nonlinearities, so that configs can say ``activation="tanh"``."""

from __future__ import annotations

import torch

from .. import checks


def _linear(x):
    return x


ACTIVATIONS = {
    "linear": _linear,
    "tanh": torch.tanh,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "sin": torch.sin,
    "cos": torch.cos,
    "softplus": torch.nn.functional.softplus,
    "gelu": torch.nn.functional.gelu,
}


def get_activation(activation: str):
    """The activation called ``activation`` (one of :data:`ACTIVATIONS`)."""
    return ACTIVATIONS[checks.one_of(activation, ACTIVATIONS, "activation")]


def activation_derivative(activation: str, z: torch.Tensor) -> torch.Tensor:
    """``phi'(z)`` for the activation called ``activation``, differentiable in ``z`` (by autograd for those without
    a short closed form)."""
    name = checks.one_of(activation, ACTIVATIONS, "activation")
    closed = {
        "linear": lambda v: torch.ones_like(v),
        "tanh": lambda v: 1 - torch.tanh(v) ** 2,
        "relu": lambda v: (v > 0).to(v.dtype),
        "sin": torch.cos,
        "cos": lambda v: -torch.sin(v),
        "sigmoid": lambda v: torch.sigmoid(v) * (1 - torch.sigmoid(v)),
    }
    if name in closed:
        return closed[name](z)
    return torch.func.vmap(torch.func.grad(lambda v: ACTIVATIONS[name](v)))(z.reshape(-1)).reshape(z.shape)
