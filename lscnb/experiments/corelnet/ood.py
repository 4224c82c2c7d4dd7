"""Figs. 5.3, 5.4 and C.6: out-of-distribution accuracy on the four basic tasks at the extreme split (figures ``ood``
and ``ablation``) and against the number of held-out objects m (figure ``mcurve``)."""

from __future__ import annotations

import numpy as np

from ... import plot
from ...data.relational import TASKS
from ...sweep import Run
from .common import CHAPTER, CURVE_MODELS, EXTREME_M, SIZES, accuracy_table, task_run


def ood_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "ood",
            f"{task}-{model}-s{seed}",
            task_run,
            dict(task=task, model=model, m=EXTREME_M[task], iters=s["iters"], test=s["test"], seed=seed),
        )
        for task in TASKS
        for model in ("corelnet", "transformer")
        for seed in s["seeds"]
    ]


def ablation_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "ablation",
            f"{task}-{model}-s{seed}",
            task_run,
            dict(task=task, model=model, m=EXTREME_M[task], iters=s["iters"], test=s["test"], seed=seed),
        )
        for task in TASKS
        for model in ("cat", "asym")
        for seed in s["seeds"]
    ]


# --------------------------------------------------------------------------------------------- Figs. C.6-style m curves
M_GRID = {t: [0, 50, 85, m] for t, m in EXTREME_M.items()}
CURVE_SIZES = {
    "quick": dict(tasks=["same_different"], iters=60, seeds=[0], test=1000, skip=[50]),
    "full": dict(tasks=list(TASKS), iters=5000, seeds=[0, 1, 2], test=20000, skip=[]),
}


def mcurve_runs(scale: str) -> list[Run]:
    """Every model at every held-out count m of the grid; quick: same/different only, m in {0, 85, 98}, 60
    iterations."""
    s = CURVE_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "mcurve",
            f"{task}-{model}-m{m}-s{seed}",
            task_run,
            dict(task=task, model=model, m=m, iters=s["iters"], test=s["test"], seed=seed),
        )
        for task in s["tasks"]
        for model in CURVE_MODELS
        for m in M_GRID[task]
        if m not in s["skip"]
        for seed in s["seeds"]
    ]


def curve_table(col) -> dict:
    """``{(task, model): {m: mean OOD accuracy over seeds}}``."""
    out = {}
    for r in col:
        out.setdefault((r.config["task"], r.config["model"]), {}).setdefault(r.config["m"], []).append(r["ood"])
    return {k: {m: float(np.mean(v)) for m, v in sorted(d.items())} for k, d in out.items()}


def show_mcurve(col) -> None:
    curves = curve_table(col)
    tasks = [t for t in TASKS if any(k[0] == t for k in curves)]
    fig, ax = plot.figure(len(tasks), 1, width=3.2 * len(tasks) + 1.5, height=3.2)
    for a, t in zip(ax[0], tasks):
        for i, (m, label) in enumerate(CURVE_MODELS.items()):
            if (t, m) in curves:
                c = curves[(t, m)]
                a.plot(list(c), list(c.values()), "o-" if i < 3 else "s--", color=f"C{i}", label=label)
        a.set(xlabel="held-out objects m", title=t, ylim=(0, 1.05))
    ax[0, 0].set_ylabel("test accuracy (held-out objects)")
    ax[0, -1].legend(fontsize=7, loc="lower left")
    plot.show(
        fig,
        col,
        data=f"{col[0]['objects']}, random frozen encoder",
        note="Figs. C.6, C.10 and C.13 of the thesis plot such curves without printed numbers: compare shapes "
        "and rankings (similarity-only models flat, sensory models falling with m).",
    )


def show_ood(ood, abl) -> None:
    acc = accuracy_table(ood, abl)
    fig, ax = plot.figure(1, 1, width=9, height=3.6)
    models = [
        ("corelnet", "CoRelNet"),
        ("transformer", "Transformer"),
        ("cat", "CoRelNet + sensory (cat)"),
        ("asym", "CoRelNet, asymmetric"),
    ]
    tasks, names = list(TASKS), dict(models)
    plot.grouped_bars(ax[0, 0], tasks, list(names), lambda t, m: acc.get((t, m), np.nan), label=names.get)
    ax[0, 0].set_xticks(range(len(tasks)), [f"{t}\n(m = {EXTREME_M[t]})" for t in tasks])
    ax[0, 0].set(ylabel="OOD test accuracy", ylim=(0, 1.05), title="held-out shapes (Figs. 5.3, 5.4)")
    ax[0, 0].legend(fontsize=7, ncol=2)
    plot.show(fig, ood, abl, data=f"{ood[0]['objects']}, random frozen encoder")


def gap_ood(col) -> str:
    acc = accuracy_table(col)
    c = np.mean([v for (t, m), v in acc.items() if m == "corelnet"])
    t = np.mean([v for (t, m), v in acc.items() if m == "transformer"])
    return f"mean OOD accuracy CoRelNet {c:.1%} vs Transformer {t:.1%}; the thesis prints no numbers (bars only)"
