"""Attention after training on copy and denoise: Fig. 4.1, and Figs. B.8 and B.9 (figure ``buffer``: attention
over the short-term buffer only)."""

from __future__ import annotations

import numpy as np

from ... import plot
from ...sweep import Run
from .common import CHAPTER, TASK_SIZES
from .tasks import train_run


def heatmap_model(col) -> str:
    """MemRNN (the thesis's Fig. 4.1) where it was trained, else RelRNN (the quick profile)."""
    return "MemRNN" if col.where(model="MemRNN") else "RelRNN"


def heatmap_of(col, model: str | None = None, task: str | None = None) -> tuple:
    rs = col.where(model=model or heatmap_model(col), **({"task": task} if task else {}))
    r = min(rs, key=lambda r: r.config["T"])
    return r["attention"], r["tokens"]


def symbol_attention_ratio(A, tokens, symbols: int, L: int) -> float:
    """Attention mass on the symbol positions during the last ``L`` (recall) steps, divided by their uniform share
    (number of symbol positions / number of states i <= t), averaged over those steps."""
    A, tokens = np.asarray(A), np.asarray(tokens)
    sym = (tokens > 0) & (tokens <= symbols)
    T = len(tokens)
    ratios = [A[t, : t + 1][sym[: t + 1]].sum() / (sym[: t + 1].sum() / (t + 1)) for t in range(T - L, T)]
    return float(np.mean(ratios))


def show_heatmaps(copy_col, denoise_col, *, label: str = "") -> None:
    """Fig. 4.1 (and, for runs that attend over the short-term buffer only, Figs. B.8/B.9, ``label`` naming them):
    the attention matrix of one sequence per task, symbol positions marked."""
    fig, ax = plot.figure(2, 1, width=9, height=3.8)
    for a, (name, col) in zip(ax[0], (("copy", copy_col), ("denoise", denoise_col))):
        model = heatmap_model(col)
        A, tokens = heatmap_of(col, model, name)
        plot.heatmap(a, A, xlabel="attended state i", ylabel="querying step t", cbar_label="α_{i,t}", vmin=0)
        marks = np.flatnonzero((tokens > 0) & (tokens <= col[0].config["symbols"]))
        a.plot(marks, np.full(len(marks), -0.5), "v", color="w", markersize=5, clip_on=False)
        a.set_title(f"{model}{label} on {name} (▼ symbol positions)", fontsize=9)
    cols = [copy_col] if copy_col is denoise_col else [copy_col, denoise_col]
    plot.show(fig, *cols, data="one generated sequence per task at the training length")


# ------------------------------------------------------------------ Figs. B.8, B.9: attention over the buffer only
BUFFER_STEPS = {"quick": 500, "full": 5000}


def buffer_runs(scale: str) -> list[Run]:
    """RelRNN with no long-term set (rho = 0: attention over the last nu states only) on copy and denoise, at the
    shortest training length of Tables B.2/4.2 (Figs. B.8/B.9, the contrast to Fig. 4.1)."""
    s = TASK_SIZES[scale]
    keys = ("L", "symbols", "width", "batch", "lr", "nu", "eval_batch", "grad_batch")
    return [
        Run(
            CHAPTER,
            "buffer",
            f"{task}-RelRNN-rho0-T{s[f'{task}_T'][0]}",
            train_run,
            dict(
                task=task,
                model="RelRNN",
                T=s[f"{task}_T"][0],
                seed=0,
                grad_T=None,
                rho=0,
                transfer=[1],
                steps=BUFFER_STEPS[scale],
                **{k: s[k] for k in keys},
            ),
        )
        for task in ("copy", "denoise")
    ]


def outside_buffer_mass(A, nu: int) -> float:
    """Largest attention weight on a state ``nu`` or more steps back, outside the buffer ``h_{t-nu+1}..h_t``
    (0 when only the buffer is attended)."""
    A = np.asarray(A)
    return float(max((A[t, : t - nu + 1].max() for t in range(nu, len(A))), default=0.0))
