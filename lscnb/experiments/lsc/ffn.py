"""Fig. 2 at proxy scale: 30-layer FFNs on the digits, Glorot vs He vs LSC, accuracy against learning rate."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...models.ffn import DeepFFN
from ...pretrain import final_radii, pretrain_ffn
from ...sweep import Run, RunContext
from ...train import fit_classifier
from .common import CHAPTER, SIZES

CHANCE = 0.1  # ten classes


def _digits():
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.data / 16.0, dtype=torch.float32)
    x = (x - x.mean(0)) / x.std(0).clamp_min(1e-6)
    y = torch.tensor(d.target)
    return x[:1400], y[:1400], x[1400:], y[1400:]


def activation_gradient_ratio(net, x, y) -> float:
    """``||dL/dh_1|| / ||dL/dh_{L-1}||`` at initialisation (the backpropagated activation gradients)."""
    hs, h = [], x
    for layer in net.layers:
        h = net.phi(layer(h))
        h.retain_grad()
        hs.append(h)
    torch.nn.functional.cross_entropy(net.readout(h), y).backward()
    return float(hs[0].grad.norm() / hs[-2].grad.norm())


def ffn_run(cfg: dict, ctx: RunContext) -> dict:
    """A 30-layer FFN on the digits: initialise (Glorot, He, or Glorot then LSC pre-training to 1), record the
    activation-gradient ratio, then train a copy with Adam (batch 32) at every learning rate of ``lrs``; test
    accuracy per learning rate and epoch (chance, 0.1, after a run diverged, and ``diverged`` says which did)."""
    import copy

    xtr, ytr, xte, yte = _digits()
    net = DeepFFN(
        64,
        cfg["width"],
        cfg["depth"],
        10,
        activation=cfg["activation"],
        init="he" if cfg["init"] == "he" else "glorot",
        seed=ctx.seed,
    )
    gen = torch.Generator().manual_seed(ctx.seed)
    pre = float("nan")
    if cfg["init"] == "lsc":
        hist = pretrain_ffn(
            net,
            lambda s: xtr[torch.randint(len(xtr), (2,), generator=gen)],
            target=1.0,
            steps=cfg["pre_steps"],
            lr=1e-3,
            eps=0.02,
            seed=ctx.seed,
            progress=False,
        )
        pre = float(np.mean(list(final_radii(hist, last=20).values())))
    ratio = activation_gradient_ratio(net, xtr[:256], ytr[:256])
    net.zero_grad()
    acc, diverged = [], []
    for lr in cfg["lrs"]:
        curve, hist = fit_classifier(
            copy.deepcopy(net),
            (xtr, ytr),
            (xte, yte),
            epochs=cfg["epochs"],
            batch_size=32,
            lr=lr,
            seed=ctx.seed,
            chance=CHANCE,  # a diverged run scores chance from then on
        )
        acc.append(curve)
        diverged.append(hist.diverged)
    return {"accuracy": np.array(acc), "diverged": np.array(diverged), "grad_ratio": ratio, "pretrained_radius": pre}


def ffn_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "ffn",
            f"{act}-{init}-s{seed}",
            ffn_run,
            dict(
                activation=act,
                init=init,
                lrs=s["ffn_lrs"],
                width=s["ffn_width"],
                depth=s["ffn_depth"],
                epochs=s["ffn_epochs"],
                pre_steps=s["ffn_pre_steps"],
                seed=seed,
            ),
        )
        for act in s["ffn_acts"]
        for init in ("glorot", "he", "lsc")
        for seed in s["ffn_seeds"]
    ]


def ffn_summary(col) -> dict:
    """``{(activation, init): {"acc": mean final accuracy over lrs and seeds, "ratio": gradient ratio}}``."""
    out = {}
    for act in sorted({r.config["activation"] for r in col}):
        for init in ("glorot", "he", "lsc"):
            rs = col.where(activation=act, init=init)
            out[(act, init)] = {
                "acc": float(np.mean([r["accuracy"][:, -1] for r in rs])),
                "ratio": float(np.median([r["grad_ratio"] for r in rs])),
            }
    return out


def show_ffn(col) -> None:
    acts = sorted({r.config["activation"] for r in col})
    fig, ax = plot.figure(len(acts), 1, width=5 * len(acts), height=3.5)
    for a, act in zip(ax[0], acts):
        for init, color in (("glorot", "C0"), ("he", "C1"), ("lsc", "C3")):
            rs = col.where(activation=act, init=init)
            lrs = rs[0].config["lrs"]
            a.plot(lrs, np.mean([r["accuracy"][:, -1] for r in rs], axis=0), "o-", color=color, label=init)
        a.set(xscale="log", xlabel="learning rate", ylabel="test accuracy", title=f"30 layers, {act}", ylim=(0, 1))
        a.legend(fontsize=8)
    plot.show(fig, col, data="scikit-learn's 8x8 digits (1,400 train / 397 test), a proxy for MNIST/CIFAR")
