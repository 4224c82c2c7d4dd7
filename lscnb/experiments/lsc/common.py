"""The LSC chapter's shared pieces: the chapter's name, the sizes of every figure at each scale, the input
gradient of a stack through time (Fig. 1c's profile), the d-RNN widths of Tab. S1 and the spike tasks
that Figs. 3, S1, S2 and S3 train on."""

from __future__ import annotations

import numpy as np
import torch

CHAPTER = "lsc"

SIZES = {
    "quick": dict(
        lemma_sizes=[8, 16, 32, 64, 128, 256],
        lemma_samples=200,
        cor_width=128,
        cor_depth=30,
        gru_depth=7,
        gru_width=32,
        gru_length=100,
        gru_steps=150,
        gru_seeds=[0],
        ffn_width=64,
        ffn_depth=30,
        ffn_acts=["relu", "cos"],
        ffn_lrs=[1e-3, 3.16e-4],
        ffn_epochs=5,
        ffn_seeds=[0],
        ffn_pre_steps=200,
        drnn_kinds=["gru"],
        drnn_tasks=["sl-digits"],
        drnn_depths=[2, 5],
        drnn_seeds=[0],
        drnn_pre_steps=60,
        drnn_steps=120,
        drnn_batch=32,
        drnn_width_scale=0.25,
        lru_level="char",
        lru_limit=200_000,
        lru_depths=[3],
        lru_targets=[None, 1.0, 0.5, "bar"],
        lru_seeds=[0],
        lru_width=32,
        lru_length=64,
        lru_batch=16,
        lru_lr=1e-2,
        lru_steps=120,
        lru_pre_steps=40,
        lru_eval_every=20,
        lru_eval_windows=64,
        cov_tasks=["sl-digits-1ms"],
        cov_kinds=["lstm"],
        cov_width=16,
        cov_pre_steps=60,
        cov_batch=128,
        cov_seeds=[0],
        lr_tasks=["sl-digits"],
        lr_kinds=["lstm", "alif+"],
        lr_lrs=[1e-2, 1e-3, 1e-4],
        lr_seeds=[0],
        lr_steps=50,
        lr_batch=32,
        lr_width_scale=0.25,
        lr_max_width=16,
    ),
    "full": dict(
        lemma_sizes=[8, 16, 32, 64, 128, 256, 512],
        lemma_samples=1000,
        cor_width=128,
        cor_depth=30,
        gru_depth=7,
        gru_width=117,
        gru_length=100,
        gru_steps=1000,
        gru_seeds=[0, 1, 2],
        ffn_width=128,
        ffn_depth=30,
        ffn_acts=["relu", "sin", "cos"],
        ffn_lrs=[1e-2, 3.16e-3, 1e-3, 3.16e-4, 1e-4],
        ffn_epochs=30,
        ffn_seeds=[0, 1, 2, 3],
        ffn_pre_steps=1000,
        drnn_kinds=["sigma", "relu", "gru", "lstm", "alif+", "alif-pm"],
        drnn_tasks=["sl-mnist", "spike-patterns"],
        drnn_depths=[2, 5],
        drnn_seeds=[0, 1],
        drnn_pre_steps=300,
        drnn_steps=3000,
        drnn_batch=256,
        drnn_width_scale=1.0,
        lru_level="word",
        lru_limit=None,
        lru_depths=[3, 6],
        lru_targets=[None, 1.0, 0.5, "bar"],
        lru_seeds=[0, 1, 2, 3],
        lru_width=128,
        lru_length=100,
        lru_batch=32,
        lru_lr=1e-2,
        lru_steps=10_000,
        lru_pre_steps=500,
        lru_eval_every=500,
        lru_eval_windows=1024,
        cov_tasks=["sl-mnist", "spike-patterns"],
        cov_kinds=["lstm", "alif+"],
        cov_pre_steps=300,
        cov_batch=128,
        cov_seeds=[0],
        lr_tasks=["sl-mnist", "spike-patterns"],
        lr_kinds=["lstm", "alif+"],
        lr_seeds=[0],
        lr_lrs=[1e-2, 3.16e-3, 1e-3, 3.16e-4, 1e-4, 3.16e-5, 1e-5],
        lr_steps=3000,
        lr_batch=256,
        lr_width_scale=1.0,
        lr_max_width=None,
    ),
}


def input_gradient(stack, readout, x) -> np.ndarray:
    """``g(t') = || d sum_{t,k} o_{t,k} / d x_{t'} ||`` for the outputs ``o = readout(h_top)`` at every step."""
    x = x.clone().requires_grad_(True)
    top = stack(x)[-1]
    (grad,) = torch.autograd.grad(readout(stack.cells[-1].output(top)).sum(), x)
    return grad.norm(dim=-1).mean(0).numpy()


DRNN_WIDTHS = {  # Tab. S1, depth-2 widths kept at every depth; sl-MNIST's for sl-digits, SHD's for its stand-in
    "sl-mnist": {"sigma": 128, "relu": 128, "gru": 53, "lstm": 42, "alif+": 128, "alif-pm": 128},
    "spike-patterns": {"sigma": 256, "relu": 256, "gru": 117, "lstm": 94, "alif+": 256, "alif-pm": 256},
}
DRNN_WIDTHS["sl-digits"] = DRNN_WIDTHS["sl-digits-1ms"] = DRNN_WIDTHS["sl-mnist"]

DRNN_TASKS = {
    "sl-digits": "scikit-learn 8x8 digits (1,400 train / 397 test), spike-latency coded (64 channels, "
    "25 steps of 2 ms)",
    "sl-digits-1ms": "scikit-learn 8x8 digits, spike-latency coded (64 channels, 50 steps of 1 ms)",
    "sl-mnist": "MNIST (shared files, 60k/10k), spike-latency coded (784 channels, 50 steps of 1 ms, each shown twice)",
    "spike-patterns": "synthetic spike patterns standing in for SHD (20 classes, 128 channels, 100 steps)",
}

KIND_ORDER = ["sigma", "relu", "gru", "lstm", "alif+", "alif-pm"]


def _spike_task(task: str, seed: int, limit: int | None = None):
    """``(x_train, y_train, x_test, y_test, encode)``: ``encode`` turns a batch of stored rows into float spike
    trains (B, T, C), so sl-MNIST is latency-coded batch by batch instead of all at once (18 GB)."""
    from functools import partial

    from ...data.spikes import latency_encode, spike_patterns

    if task == "spike-patterns":
        n = limit or 8000
        xtr, ytr = spike_patterns(n, classes=20, channels=128, steps=100, seed=seed)
        xte, yte = spike_patterns(n // 4, classes=20, channels=128, steps=100, seed=seed + 10_000)
        return xtr.bool(), ytr, xte.bool(), yte, lambda x: x.float()
    if task in ("sl-digits", "sl-digits-1ms"):
        from sklearn.datasets import load_digits

        d = load_digits()
        x, y = torch.tensor(d.data / 16.0, dtype=torch.float32), torch.tensor(d.target)
        return x[:1400], y[:1400], x[1400:], y[1400:], partial(latency_encode, dt=1.0 if task.endswith("1ms") else 2.0)
    from ...data import load_mnist

    tr, te = load_mnist("train", download=False), load_mnist("test", download=False)
    xtr, xte = tr.images.reshape(len(tr), -1).float() / 255, te.images.reshape(len(te), -1).float() / 255
    ytr, yte = tr.labels, te.labels
    if limit:
        xtr, ytr, xte, yte = xtr[:limit], ytr[:limit], xte[:limit], yte[:limit]
    return xtr, ytr, xte, yte, partial(latency_encode, repeat=2)
