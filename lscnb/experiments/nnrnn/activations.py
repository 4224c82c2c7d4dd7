"""Fig. 2.1: the common activation functions and the nnRNN's modReLU, in closed form."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...models.orthogonal import ModReLU


def activation_curves(z: np.ndarray, leak: float = 0.1, modrelu_bias: float = -0.5) -> dict:
    """The activations of thesis Fig. 2.1 (sigmoid, tanh, ReLU, leaky ReLU) and the nnRNN's modReLU
    ``sign(z) relu(|z| + b)`` for b = 0 (the identity) and ``modrelu_bias`` < 0 (a dead zone |z| < -b)."""
    x = torch.as_tensor(np.asarray(z, dtype=float))
    mod = ModReLU(x.numel())
    out = {
        "sigmoid": torch.sigmoid(x),
        "tanh": torch.tanh(x),
        "ReLU": torch.relu(x),
        f"leaky ReLU ({leak:g})": torch.nn.functional.leaky_relu(x, leak),
    }
    with torch.no_grad():
        for b in (0.0, modrelu_bias):
            mod.bias.fill_(b)
            out[f"modReLU (b = {b:g})"] = mod(x.float()).double()
    return {k: v.numpy() for k, v in out.items()}


def show_activations() -> dict:
    z = np.linspace(-3, 3, 601)
    curves = activation_curves(z)
    fig, ax = plot.figure(2, 1, width=10, height=3.3)
    for name, y in curves.items():
        ax[0, 0 if "modReLU" not in name else 1].plot(z, y, label=name)
    ax[0, 0].set(xlabel="z", ylabel="φ(z)", title="Fig. 2.1: common activation functions")
    ax[0, 1].set(xlabel="z", ylabel="φ(z)", title="modReLU (the nnRNN's non-linearity)")
    for a in ax[0]:
        a.legend(fontsize=7)
    plot.show(fig, note="Closed forms; no training.")
    return {"z": z, **curves}
