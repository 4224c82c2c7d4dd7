"""Fig. 6 on the copy and adding tasks: roaRNN vs eyeRNN (O = I) from the same initial weights."""

from __future__ import annotations

import math

import numpy as np

from ... import plot
from ...data.synthetic import ADDING_BASELINE
from ...sweep import Run
from .common import CHAPTER, SIZES
from .tasks import COLORS, LRS, NAMES, adding_run, copy_run


def ablation_runs(scale: str) -> list[Run]:
    """Fig. 6 on the copy and adding tasks: roaRNN vs eyeRNN (O = I), same seeds and so the same initial weights
    (footnote 5), rho = 1; ReLU on copy, tanh on adding (as the paper). The lag, length and iterations of Fig. 6 are
    lost with its legend: ours are chosen."""
    s = SIZES[scale]
    L, T = s["ablation_lag"], s["ablation_length"]
    out = []
    for m in ("roa", "eye"):
        for seed in s["ablation_seeds"]:
            out.append(
                Run(
                    CHAPTER,
                    "ablation",
                    f"copy-{m}-s{seed}",
                    copy_run,
                    dict(
                        model=m,
                        lag=L,
                        symbols=10,
                        width=s["ablation_width"],
                        batch=s["copy_batch"],
                        steps=s["ablation_copy_steps"],
                        eval_every=max(s["ablation_copy_steps"] // 10, 1),
                        lr=LRS[m],
                        rho=1.0,
                        alpha=1.0 / (L + 10),
                        seed=seed,
                    ),
                )
            )
            if T is None:  # quick: the copy task only (the adding task's late convergence costs too much here)
                continue
            out.append(
                Run(
                    CHAPTER,
                    "ablation",
                    f"adding-{m}-s{seed}",
                    adding_run,
                    dict(
                        model=m,
                        length=T,
                        width=s["ablation_width"],
                        batch=50,
                        steps=s["ablation_adding_steps"],
                        eval_every=s["adding_eval"],
                        lr=LRS[m],
                        rho=1.0,
                        alpha=1.0 / T,
                        activation="tanh",
                        seed=seed,
                    ),
                )
            )
    return out


def show_ablation(col) -> None:
    tasks = [t for t in ("lag", "length") if any(t in r.config for r in col)]
    fig, ax = plot.figure(len(tasks), 1, width=5 * len(tasks), height=3.4)
    for a, task in zip(ax[0], tasks):
        runs = [r for r in col if task in r.config]
        for m in ("roa", "eye"):
            for r in (r for r in runs if r.config["model"] == m):
                x = np.arange(1, len(r["loss"]) + 1) if task == "lag" else r["eval_step"]
                a.plot(
                    x,
                    r["loss"] if task == "lag" else r["mse"],
                    color=COLORS[m],
                    label=f"{NAMES[m]}, lr {r.config['lr']:g}" if r.config["seed"] == 0 else None,
                )
        if task == "lag":
            a.axhline(runs[0]["baseline"], **plot.PAPER, label="memoryless baseline")
            a.set(ylabel="training cross-entropy", title=f"copy, L = {runs[0].config['lag']:,} (ReLU, ρ = 1)")
        else:
            a.axhline(ADDING_BASELINE, **plot.PAPER, label="baseline 1/6")
            a.set(ylabel="held-out MSE", title=f"adding, T = {runs[0].config['length']:,} (tanh, ρ = 1)")
        a.set(yscale="log", xlabel="iteration")
        a.legend(fontsize=7)
    plot.show(fig, col, data="copy-memory" + (" and adding" if len(tasks) == 2 else "") + " sequences, generated")


def ablation_final(col) -> dict:
    """Per task and model: the final training CE (copy, mean of the last 10 steps) or held-out MSE (adding) per seed."""
    out = {}
    for m in ("roa", "eye"):
        out["copy", m] = [
            float(np.mean(r["loss"][-10:])) if not r["diverged"] else math.inf
            for r in col.where(model=m)
            if "lag" in r.config
        ]
        out["adding", m] = [
            float(r["mse"][-1]) if not r["diverged"] else math.inf for r in col.where(model=m) if "length" in r.config
        ]
    return out


def gap_ablation(col) -> str:
    f = ablation_final(col)
    adding = (
        f"; adding MSE roa {np.median(f['adding', 'roa']):.3g} vs eye {np.median(f['adding', 'eye']):.3g}"
        if f["adding", "roa"]
        else "; adding not run at this scale"
    )
    return (
        f"copy CE roa {np.median(f['copy', 'roa']):.3g} vs eye {np.median(f['copy', 'eye']):.3g}{adding} "
        "(paper: the identity is clearly worse on every task; its numbers are in the lost figure only)"
    )
