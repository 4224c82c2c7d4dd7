"""Fig. S1: the learning-rate grid search of LSTM and ALIF+ behind Tab. S1's rates."""

from __future__ import annotations

import numpy as np

from ... import plot
from ...sweep import Run
from .common import CHAPTER, DRNN_TASKS, DRNN_WIDTHS, KIND_ORDER, SIZES
from .drnn import drnn_run

LR_PAPER = {
    ("sl-MNIST", "lstm"): 1e-2,
    ("SHD", "lstm"): 1e-3,
    ("PTB", "lstm"): 3.16e-4,  # Tab. S1, copied
    ("sl-MNIST", "alif+"): 1e-3,
    ("SHD", "alif+"): 1e-3,
    ("PTB", "alif+"): 1e-3,
}
LR_PAPER_TASK = {"sl-digits": "sl-MNIST", "sl-mnist": "sl-MNIST", "spike-patterns": "SHD"}  # ours -> the paper's
LR_SUBSET = (
    "sl-MNIST and a synthetic stand-in for SHD (PTB not run); 1 seed; Adam for a fixed number of steps "
    "instead of AdaBelief + Lookahead with early stopping; perplexity at the last step"
)


def lr_grid_runs(scale: str) -> list[Run]:
    """Fig. S1: depth-2 LSTM and ALIF+ without pre-training, trained as in Fig. 3 at each rate of the grid."""
    s = SIZES[scale]
    runs = []
    for task in s["lr_tasks"]:
        for kind in s["lr_kinds"]:
            width = max(8, int(round(DRNN_WIDTHS[task][kind] * s["lr_width_scale"])))
            width = min(width, s["lr_max_width"] or width)
            for lr in s["lr_lrs"]:
                for seed in s["lr_seeds"]:
                    runs.append(
                        Run(
                            CHAPTER,
                            "lr_grid",
                            f"{task}-{kind}-lr{lr:g}-s{seed}",
                            drnn_run,
                            dict(
                                task=task,
                                kind=kind,
                                depth=2,
                                width=width,
                                target=None,
                                pre_steps=0,
                                pre_lr=0.0,
                                steps=s["lr_steps"],
                                batch=s["lr_batch"],
                                lr=lr,
                                seed=seed,
                                gradient=False,
                            ),
                        )
                    )
    return runs


def lr_grid_table(col) -> list[dict]:
    """Per (task, cell, learning rate): seed-mean final training and test perplexity (exp of the cross-entropy)."""
    rows = []
    for task, kind, lr in sorted(
        {(r.config["task"], r.config["kind"], r.config["lr"]) for r in col},
        key=lambda k: (k[0], KIND_ORDER.index(k[1]), -k[2]),
    ):
        rs = col.where(task=task, kind=kind, lr=lr)
        rows.append(
            {
                "task": task,
                "cell": kind,
                "learning rate": lr,
                "width": rs[0].config["width"],
                "train perplexity": float(np.exp(np.mean([r["train_ce"] for r in rs]))),
                "test perplexity": float(np.exp(np.mean([r["test_ce"] for r in rs]))),
                "test mode accuracy": float(np.mean([r["accuracy"] for r in rs])),
                "diverged": f"{sum(bool(r['diverged']) for r in rs)}/{len(rs)}",
            }
        )
    return rows


def lr_optima(col) -> list[dict]:
    """Per (task, cell): the grid's rate of lowest test perplexity (diverged runs count as worst) beside Tab. S1's."""
    rows, table = [], lr_grid_table(col)
    for task, kind in sorted({(r["task"], r["cell"]) for r in table}, key=lambda k: (k[0], KIND_ORDER.index(k[1]))):
        curve = [r for r in table if (r["task"], r["cell"]) == (task, kind)]
        best = min(curve, key=lambda r: np.nan_to_num(r["test perplexity"], nan=np.inf))
        ppl = [r["test perplexity"] for r in curve]
        rows.append(
            {
                "task": task,
                "cell": kind,
                "paper's task": LR_PAPER_TASK[task],
                "paper's optimum (Tab. S1)": LR_PAPER[(LR_PAPER_TASK[task], kind)],
                "our optimum": best["learning rate"],
                "best test perplexity": best["test perplexity"],
                "perplexity range": float(np.nanmax(ppl) - np.nanmin(ppl)),
            }
        )
    return rows


def show_lr_grid(col) -> None:
    table = lr_grid_table(col)
    tasks = sorted({r["task"] for r in table})
    fig, ax = plot.figure(len(tasks), 1, width=5.0 * len(tasks), height=3.4)
    for a, task in zip(ax[0], tasks):
        for j, kind in enumerate(k for k in KIND_ORDER if any(r["cell"] == k and r["task"] == task for r in table)):
            curve = [r for r in table if (r["task"], r["cell"]) == (task, kind)]
            lrs = [r["learning rate"] for r in curve]
            a.plot(lrs, [r["test perplexity"] for r in curve], "o-", color=f"C{j}", label=f"{kind}, test")
            a.plot(lrs, [r["train perplexity"] for r in curve], "x--", color=f"C{j}", alpha=0.6, label=f"{kind}, train")
            a.axvline(LR_PAPER[(LR_PAPER_TASK[task], kind)], color=f"C{j}", linestyle=":", linewidth=1)
        a.set(
            xscale="log",
            xlabel="learning rate",
            ylabel="perplexity = exp(cross-entropy)",
            title=f"{task}, depth 2 (dotted: Tab. S1's rate)",
        )
        a.legend(fontsize=8)
    plot.show(fig, col, data="; ".join(DRNN_TASKS[t] for t in tasks))
