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


def get_activation(name: str):
    """The activation called ``name`` (one of :data:`ACTIVATIONS`)."""
    return ACTIVATIONS[checks.one_of(name, ACTIVATIONS, "activation")]
