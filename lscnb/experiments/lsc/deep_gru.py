"""Fig. 1: the PascalRNN gradient in closed form (and the chapter's explorer of it), and a deep GRU
pre-trained to rho = 1 and rho = 1/2 with its input gradient through time (Fig. 1c, bottom)."""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import plot
from ...models import GRUCell, Stack
from ...pretrain import final_radii, pretrain_stack
from ...sweep import Run, RunContext
from ...theory import lsc as theory
from .common import CHAPTER, SIZES, input_gradient


def _spikes(batch, length, channels, generator):
    return (torch.rand(batch, length, channels, generator=generator) < 0.05).float()


def deep_gru_run(cfg: dict, ctx: RunContext) -> dict:
    """Pre-train a deep GRU to ``target`` on synthetic spike trains, then measure g(t') (Fig. 1c, bottom)."""
    torch.manual_seed(ctx.seed)
    D, n, L, T = 64, cfg["width"], cfg["depth"], cfg["length"]
    stack = Stack([GRUCell(D if l == 0 else n, n) for l in range(L)])
    readout = torch.nn.Linear(n, 20)
    gen = torch.Generator().manual_seed(ctx.seed)
    before = input_gradient(stack, readout, _spikes(8, T, D, gen))
    hist = pretrain_stack(
        stack,
        lambda step: _spikes(8, 30, D, gen),
        target=cfg["target"],
        steps=cfg["steps"],
        lr=cfg["lr"],
        eps=0.05,
        seed=ctx.seed,
        progress=False,
    )
    after = input_gradient(stack, readout, _spikes(8, T, D, gen))
    radii = final_radii(hist, last=20)
    return {
        "g_before": before,
        "g": after,
        "converged": hist.converged,
        "steps": hist.steps,
        "time_radius": float(np.mean([v for k, v in radii.items() if k.startswith("time")])),
        "depth_radius": float(np.mean([v for k, v in radii.items() if k.startswith("depth")])),
        "loss": np.array(hist.loss),
    }


def deep_gru_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "deep_gru",
            f"rho{target}-s{seed}",
            deep_gru_run,
            dict(
                target=target,
                depth=s["gru_depth"],
                width=s["gru_width"],
                length=s["gru_length"],
                steps=s["gru_steps"],
                lr=1e-2,
                seed=seed,
            ),
        )
        for target in (1.0, 0.5)
        for seed in s["gru_seeds"]
    ]


def gru_claims(col) -> dict:
    out = {}
    for target in (1.0, 0.5):
        rs = col.where(target=target)
        g = np.mean([r["g"] for r in rs], axis=0)
        L = rs[0].config["depth"]
        out[target] = {
            "log10 g(0)/g(T-1)": float(np.log10(g[0] / g[-1])),
            "max/min g over [0, T-3L]": float(g[: len(g) - 3 * L].max() / g[: len(g) - 3 * L].min()),
            "time radius": float(np.mean([r["time_radius"] for r in rs])),
            "depth radius": float(np.mean([r["depth_radius"] for r in rs])),
        }
    return out


def show_pascal_and_gru(col, T: int = 100, L: int = 10) -> None:
    fig, ax = plot.figure(2, 1, width=11, height=3.8)
    tp = np.arange(T)
    for rho, color in ((1.0, "C3"), (0.7, "C1"), (0.5, "C0"), (0.3, "C2")):
        ax[0, 0].plot(tp, theory.pascal_gradient(T, L, rho), color=color, label=f"ρ = {rho:g}")
    ax[0, 0].set(
        yscale="log", xlabel="input time t′", ylabel="|d Σ_t y_t / d x_t′|", title=f"PascalRNN, L = {L} (closed form)"
    )
    ax[0, 0].legend(fontsize=8)
    for target, color in ((1.0, "C3"), (0.5, "C0")):
        for r in col.where(target=target):
            ax[0, 1].plot(
                r["g"], color=color, label=f"pre-trained to ρ = {target:g}" if r.config["seed"] == 0 else None
            )
            ax[0, 1].plot(
                r["g_before"],
                color=color,
                linestyle=":",
                linewidth=0.8,
                label="same net before pre-training" if r.config["seed"] == 0 and target == 1.0 else None,
            )
    ax[0, 1].set(
        yscale="log",
        xlabel="input time t′",
        ylabel="‖d Σ o / d x_t′‖",
        title=f"{col[0].config['depth']}-layer GRU, width {col[0].config['width']}",
    )
    ax[0, 1].legend(fontsize=8)
    plot.show(
        fig, col, data="left: closed form; right: synthetic Bernoulli spike trains (64 channels, p = 0.05), generated"
    )


def explore_figure(L: int = 10, T: int = 100, rho: float = 1.0):
    """Path counts and the PascalRNN gradient for depth L, length T, radius rho."""
    fig, ax = plot.figure(2, 1, width=10, height=3.4)
    tp = np.arange(T)
    ax[0, 0].plot(tp, theory.log_binomial(T - 1 - tp + L, L) / math.log(10), color="C3")
    ax[0, 0].set(xlabel="input time t′", ylabel="log10 #paths", title=f"paths to the top layer, L = {L}")
    ax[0, 1].plot(tp, theory.pascal_gradient(T, L, rho), color="C0")
    ax[0, 1].set(yscale="log", xlabel="input time t′", ylabel="|d Σ y / d x_t′|", title=f"PascalRNN, ρ = {rho:g}")
    return fig
