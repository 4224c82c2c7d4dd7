"""The mean-field chapter's name, its sizes (quick and full profiles), Theta to and from a run's config, and the
helpers that train several stacked models at once."""

from __future__ import annotations

import numpy as np
import torch

from ...data.padded import padded_sequences
from ...models.unified import (
    Theta,
)

CHAPTER = "meanfield"

SIZES = {
    "quick": dict(
        dyn_width=1000,
        dyn_seeds=3,
        spec_width=1000,
        spec_seeds=3,
        bp_width=256,
        bp_length=60,
        heat_source="sklearn",
        heat_width=32,
        heat_lengths=[1, 2, 4, 8, 16],
        heat_mu_f=[0, 1, 2, 3, 4, 5],
        heat_iters=300,
        heat_lr=3e-4,
        cell_width=200,
        cell_seeds=2,
        cell_samples=50_000,
        len_source="sklearn",
        len_width=32,
        len_lengths=[4, 16, 64],
        len_iters=200,
        len_lr=1e-2,
        len_repeats=3,
        curve_source="sklearn",
        curve_width=32,
        curve_dim=8,
        curve_repeats=[1, 4],
        curve_digits=[1, 3],
        curve_digit_repeat=1,
        curve_iters=120,
        curve_lr=1e-2,
        curve_every=15,
        seq_source="sklearn",
        seq_width=32,
        seq_iters=200,
        seq_lr=1e-2,
    ),
    "full": dict(
        dyn_width=4000,
        dyn_seeds=10,
        spec_width=4000,
        spec_seeds=3,
        bp_width=1000,
        bp_length=200,
        heat_source="mnist",
        heat_width=128,
        heat_lengths=[1, 2, 4, 8, 16, 32, 64, 128],
        heat_mu_f=[-2, -1, 0, 1, 2, 3, 4, 5, 6],
        heat_iters=1000,
        heat_lr=3e-4,
        cell_width=1000,
        cell_seeds=3,
        cell_samples=200_000,
        len_source="mnist",
        len_width=128,
        len_lengths=[4, 16, 64, 256, 1024],
        len_iters=2000,
        len_lr=3e-3,
        len_repeats=1,
        curve_source="mnist",
        curve_width=256,
        curve_dim=None,
        curve_repeats=[1, 2, 5],
        curve_digits=[1, 2, 3],
        curve_digit_repeat=10,
        curve_iters=1000,
        curve_lr=1e-2,
        curve_every=50,
        seq_source="mnist",
        seq_width=600,
        seq_iters=3000,
        seq_lr=1e-3,
    ),
}


def theta_config(theta: Theta) -> dict:
    return {"arch": theta.arch, "sigma2": dict(theta.sigma2), "nu2": dict(theta.nu2), "mu": dict(theta.mu)}


def theta_from(cfg: dict) -> Theta:
    return Theta(cfg["arch"], cfg["sigma2"], cfg["nu2"], cfg["mu"])


def stacked_loss(model, xb, yb):
    """Cross entropy of every model of a stacked :class:`GatedClassifier` (logits: models x batch x classes), summed
    over the models and averaged over the batch: one backward pass trains them all. A model whose loss is not finite
    has diverged: it is marked in ``model.alive`` and drops out of the sum, so the others train on as they would
    alone (Adam and SGD act per parameter)."""
    logits = model(xb)
    flat, labels = logits.flatten(0, 1), yb.repeat(len(logits))
    total = torch.nn.functional.cross_entropy(flat, labels, reduction="sum") / len(yb)
    if bool(model.alive.all()) and torch.isfinite(total):
        return total
    each = torch.nn.functional.cross_entropy(flat, labels, reduction="none").view(len(logits), -1)
    model.alive &= torch.isfinite(each.detach()).all(1)
    return torch.where(model.alive[:, None], each, torch.zeros_like(each)).sum() / len(yb)


def stacked_accuracy(model, x, y, chunk: int, make=None) -> np.ndarray:
    """Accuracy of each stacked model on ``(x, y)``, in chunks; ``make`` turns a chunk of ``x`` into the input."""
    with torch.no_grad():
        correct = 0
        for i in range(0, len(y), chunk):
            xb = x[i : i + chunk] if make is None else make(x[i : i + chunk])
            correct = correct + (model(xb).argmax(-1) == y[i : i + chunk]).float().sum(-1)
    return (correct / len(y)).cpu().numpy()


def _padder(length: int, gen):
    """Digits -> padded sequences of ``length`` steps, the noise drawn from ``gen``."""
    return lambda xb: padded_sequences(xb, length, generator=gen)


def _sampler(x, y, batch: int, gen, make=None):
    """``fit``'s batch function: ``batch`` random examples drawn with ``gen`` (then ``make`` applied to them)."""

    def sample(step):
        idx = torch.randint(len(y), (batch,), generator=gen, device=gen.device)
        return (x[idx] if make is None else make(x[idx])), y[idx]

    return sample
