"""Figs. S2 and S3: the Decaying Covariance of the time-transition norms, default and LSC-pre-trained."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...models.drnn import DRNN
from ...pretrain import pretrain_stack
from ...sweep import Run, RunContext
from .common import CHAPTER, DRNN_TASKS, DRNN_WIDTHS, SIZES, _spike_task


def decaying_covariance(a: np.ndarray) -> dict:
    """Statistics of App. I for ``a_k(t)`` of shape (samples, T): from the first step ``t0`` at which ``a`` varies
    across samples, the covariance and Pearson correlation of ``a(t)`` with ``a(t0)`` over samples (per-time
    means removed) and the correlation's p-value, for ``t >= t0``."""
    from scipy import stats

    a = np.asarray(a, dtype=float)
    if a.ndim != 2 or a.shape[0] < 3:
        raise ValueError(f"a must have shape (samples >= 3, T), got {a.shape}")
    varies = np.flatnonzero(a.std(0) > 1e-6 * max(1.0, float(np.abs(a).max())))
    if not len(varies):
        raise ValueError("a does not vary across samples at any step")
    t0 = int(varies[0])
    c = a - a.mean(0)
    cov = (c[:, t0:] * c[:, [t0]]).mean(0)
    corr, pval = [], []
    for t in range(t0, a.shape[1]):
        if a[:, t].std() > 0:
            r = stats.pearsonr(a[:, t0], a[:, t])
            corr.append(float(r.statistic)), pval.append(float(r.pvalue))
        else:
            corr.append(np.nan), pval.append(np.nan)
    return {"t0": t0, "cov": cov, "corr": np.array(corr), "pvalue": np.array(pval), "mean": a.mean(0)}


def covariance_run(cfg: dict, ctx: RunContext) -> dict:
    """Figs S2 (default initialisation) and S3 (pre-trained to ``E a_k = 1`` with the 2-norm): ``a_k(t)`` =
    ``||d h[t,l] / d h[t-1,l]||_2`` per sample, step and layer of a 2-layer d-RNN on a batch of task inputs, and
    the statistics of :func:`decaying_covariance` per layer."""
    from ...jacobian import grid_jacobians

    torch.manual_seed(ctx.seed)
    xtr, ytr, xte, yte, encode = _spike_task(cfg["task"], ctx.seed, cfg.get("limit"))
    model = DRNN(
        cfg["kind"], xtr.shape[-1], [cfg["width"]] * cfg["depth"], output_size=int(ytr.max()) + 1, seed=ctx.seed
    )
    gen = torch.Generator().manual_seed(ctx.seed)
    out = {"pre_steps": 0}
    if cfg["pretrained"]:
        hist = pretrain_stack(
            model.stack,
            lambda s: encode(xtr[torch.randint(len(xtr), (8,), generator=gen)]),
            target=1.0,
            steps=cfg["pre_steps"],
            lr=1e-2,
            eps=0.02,
            seed=ctx.seed,
            measure="norm",
            progress=False,
        )
        out["pre_steps"] = hist.steps
        if hist.diverged:  # nothing stable to analyse: recorded, and left out of the figure and table
            out["diverged"] = True
            return out
    x = encode(xtr[torch.randperm(len(xtr), generator=gen)[: cfg["batch"]]])
    with torch.no_grad():  # 8 samples at a time: every step's Jacobians of 128 ALIF samples would need ~30 GB
        norms = [
            [torch.linalg.matrix_norm(J, ord=2) for J in grid_jacobians(model.stack, xb)["time"]] for xb in x.split(8)
        ]
    for l in range(cfg["depth"]):
        a = torch.cat([n[l] for n in norms]).numpy()  # (B, T)
        for key, value in decaying_covariance(a).items():
            out[f"{key}_{l}"] = value
    return out


def covariance_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "covariance",
            f"{task}-{kind}-{'lsc' if pre else 'default'}-s{seed}",
            covariance_run,
            dict(
                task=task,
                kind=kind,
                depth=2,
                width=DRNN_WIDTHS[task][kind] if scale == "full" else s["cov_width"],
                pretrained=pre,
                pre_steps=s["cov_pre_steps"],
                batch=s["cov_batch"],
                seed=seed,
            ),
        )
        for task in s["cov_tasks"]
        for kind in s["cov_kinds"]
        for pre in (False, True)
        for seed in s["cov_seeds"]
    ]


def covariance_summary(col) -> list[dict]:
    """Per run and layer: the median |correlation| and the share of p-values above 0.05, from 10 steps after t0."""
    rows = []
    for r in col:
        run = {
            "task": r.config["task"],
            "cell": r.config["kind"],
            "init": "LSC (E a_k = 1)" if r.config["pretrained"] else "default",
            "pre-training": _pretraining_outcome(r),
        }
        if r.get("diverged", False):
            rows.append({**run, "layer": "all"})
            continue
        for l in range(r.config["depth"]):
            corr, p = r[f"corr_{l}"][10:], r[f"pvalue_{l}"][10:]
            rows.append(
                {
                    **run,
                    "layer": l + 1,
                    "mean a_k": float(np.mean(r[f"mean_{l}"][int(r[f"t0_{l}"]) :])),
                    "max |cov|": float(np.nanmax(np.abs(r[f"cov_{l}"][1:]))),
                    "median |corr|, t ≥ t0+10": float(np.nanmedian(np.abs(corr))),
                    "share p > 0.05, t ≥ t0+10": float(np.mean(p[np.isfinite(p)] > 0.05)),
                }
            )
    return rows


def _pretraining_outcome(r) -> str:
    """How a Figs S2-S3 run's pre-training ended: converged (stopped early), ran out of steps, or diverged."""
    if not r.config["pretrained"]:
        return "none"
    steps = int(r["pre_steps"])
    if r.get("diverged", False):
        return f"diverged after {steps} steps"
    return f"converged in {steps} steps" if steps < r.config["pre_steps"] else f"not converged in {steps} steps"


def show_covariance(col) -> None:
    runs = sorted(
        (r for r in col if not r.get("diverged", False)),
        key=lambda r: (r.config["task"], r.config["kind"], r.config["pretrained"]),
    )
    depth = runs[0].config["depth"]
    fig, ax = plot.figure(depth * len(runs), 3, width=3.2 * depth * len(runs), height=7)
    for j, r in enumerate(runs):
        for l in range(depth):
            c, t0 = j * depth + l, int(r[f"t0_{l}"])
            t = np.arange(t0, t0 + len(r[f"corr_{l}"]))
            ax[0, c].plot(t, r[f"cov_{l}"], color="C0")
            ax[1, c].plot(t, r[f"corr_{l}"], color="C1")
            ax[2, c].plot(t, r[f"pvalue_{l}"], color="C2")
            ax[2, c].axhline(0.05, color="k", linestyle="--", linewidth=0.8)
            ax[0, c].set_title(
                f"{r.config['kind']}, {'LSC' if r.config['pretrained'] else 'default'}, layer {l + 1}", fontsize=9
            )
            ax[2, c].set(xlabel="time step t", yscale="log")
    for row, label in enumerate(("cov(a(t0), a(t))", "correlation", "p-value")):
        ax[row, 0].set_ylabel(label)
    plot.show(fig, col, data="; ".join(DRNN_TASKS[t] for t in sorted({r.config["task"] for r in col})))
