"""Fig. 3.2 (left): the copy task, nnRNN vs expRNN vs vanilla RNN vs LSTM at equal width."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...data import copy_memory, copy_memory_baseline
from ...sweep import Run, RunContext
from ...train import fit
from .common import CHAPTER, COPY_HYPER, SIZES, CoreReadout, _theta_snapshot, make_copy_model


def copy_run(cfg: dict, ctx: RunContext) -> dict:
    """Train one model on the copy task (thesis convention: length T + 20, loss averaged over all steps).

    With ``cfg["track"] = k`` an nnRNN run also records ``||T||_F`` and P's orthogonality every k iterations and
    returns the learned Theta, Lambda, T, angles and scales (Fig. 3.3)."""
    core, readout, opts = make_copy_model(cfg["model"], cfg["width"], ctx.seed)
    gen = torch.Generator().manual_seed(ctx.seed)
    track = cfg.get("track", 0) if cfg["model"] == "nnRNN" else 0
    t_norm, p_orth = [], []

    def snapshot(model=None, k=-1):  # before iterations 0, track, 2 track, ...
        if track and (k + 1) % track == 0 and k + 1 < cfg["iters"]:
            snap = core.cell.schur_parts()
            t_norm.append(float(np.linalg.norm(snap["T"])))
            p_orth.append(snap["P_orthogonality"])

    snapshot()
    delta = COPY_HYPER["nnRNN"]["delta"] if cfg["model"] == "nnRNN" else 0.0
    hist = fit(
        CoreReadout(core, readout),
        lambda k: copy_memory(10, cfg["T"] - 1, generator=gen),
        lambda model, x, y: torch.nn.functional.cross_entropy(model(x).reshape(-1, 9), y.reshape(-1)),
        steps=cfg["iters"],
        optimizer=opts,
        penalty=lambda model: model.gamma_penalty(delta),
        after_step=snapshot,
        generators=(gen,),
        progress=ctx.progress,
        desc=cfg["model"],
    )
    losses = hist.loss + [float("nan")] * hist.diverged  # NaN marks the step it diverged at
    out = {"loss": np.array(losses), "baseline": copy_memory_baseline(cfg["T"] - 1), "diverged": hist.diverged}
    if cfg["model"] == "nnRNN":
        snap = _theta_snapshot(core)
        out["P_orthogonality"], out["gamma_mean"] = snap["P_orthogonality"], snap["gamma_mean"]
        if track:
            out.update(
                snap,
                T_norm=np.array(t_norm + [float(np.linalg.norm(snap["T"]))]),
                P_orth_history=np.array(p_orth + [snap["P_orthogonality"]]),
            )
    return out


def copy_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "copy",
            f"{m}-s{seed}",
            copy_run,
            dict(model=m, T=s["copy_T"], width=s["copy_width"], iters=s["copy_iters"], seed=seed),
        )
        for m in COPY_HYPER
        for seed in s["copy_seeds"]
    ]


def copy_final(col) -> dict:
    """Mean loss over the last 100 iterations, averaged over seeds, per model."""
    return {m: float(np.mean([np.nanmean(r["loss"][-100:]) for r in col.where(model=m)])) for m in COPY_HYPER}


def show_copy(col) -> None:
    fig, ax = plot.figure(1, 1, width=6.5, height=3.8)
    for i, m in enumerate(COPY_HYPER):
        for r in col.where(model=m):
            k = 20
            smooth = np.convolve(r["loss"], np.ones(k) / k, mode="valid")
            ax[0, 0].plot(np.arange(len(smooth)) + k, smooth, color=f"C{i}", label=m if r.config["seed"] == 0 else None)
    ax[0, 0].axhline(col[0]["baseline"], **plot.PAPER, label="memoryless baseline")
    ax[0, 0].set(
        yscale="log",
        xlabel="iteration",
        ylabel="cross-entropy (20-step mean)",
        title=f"copy task, T = {col[0].config['T']}, N = {col[0].config['width']}",
    )
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data="copy-memory sequences, generated (8 symbols, length T + 20)")


def gap_copy(col) -> str:
    f = copy_final(col)
    return (
        f"final loss nnRNN {f['nnRNN']:.3f}, expRNN {f['expRNN']:.3f}, RNN {f['RNN']:.3f}, LSTM {f['LSTM']:.3f} "
        f"(baseline {col[0]['baseline']:.3f}); thesis: curves only (nnRNN and expRNN solve it, RNN and LSTM do not)"
    )
