"""Figs. 3.3 and A.2: the learned Theta = Lambda + T of the nnRNN (copy, psMNIST and PTB)."""

from __future__ import annotations

import numpy as np

from ... import plot
from ...sweep import Run
from ...theory import fisher
from .common import CHAPTER, SIZES
from .copy_task import copy_run


def theta_runs(scale: str) -> list[Run]:
    """One nnRNN per task, trained as in Fig. 3.2 (copy) and Fig. 3.2 right (psMNIST), keeping its learned
    Theta = Lambda + T, angles and scales, and ||T||_F and P's orthogonality along training. The psMNIST panel
    (Fig. A.2) is the nnRNN of the psMNIST figure, which keeps the same (``theta_results``)."""
    s = SIZES[scale]
    copy_cfg = dict(
        model="nnRNN",
        T=s["copy_T"],
        width=s["copy_width"],
        iters=s["theta_iters"],
        seed=0,
        track=max(1, s["theta_iters"] // 25),
    )
    return [Run(CHAPTER, "theta", "copy", copy_run, copy_cfg)]


def theta_results(theta_col, psmnist_col) -> list:
    """The learned-Theta results: the copy run, then the equal-width psMNIST nnRNN (seed 0)."""
    ps = [r for r in psmnist_col.where(model="nnRNN", budget="width") if r.config["seed"] == 0]
    return list(theta_col) + ps


def _task(r) -> str:
    return "copy" if "iters" in r.config else "psMNIST"


def _theta_row(task: str, width: int, T: np.ndarray, t_entries: np.ndarray, lam: np.ndarray, r) -> dict:
    """One row of the learned-Theta table: ``t_entries`` are the entries of T the RMS is taken over."""
    return {
        "task": task,
        "N": width,
        "‖T‖_F": float(np.linalg.norm(T)),
        "RMS(T) / RMS(Λ blocks)": float(
            np.sqrt((t_entries**2).mean() if t_entries.size else 0.0) / np.sqrt((lam[lam != 0] ** 2).mean())
        ),
        "mean γ": float(r["gamma_mean"]),
        "angle concentration": fisher.angle_concentration(r["theta"]),
        "max |PᵀP − I|": float(r["P_orthogonality"]),
    }


def theta_stats(results) -> list[dict]:
    """Per task: RMS of T's entries against RMS of Lambda's block entries, ||T||_F, mean gamma, angle
    concentration (0 uniform, 1 aligned), P's orthogonality."""
    return [
        _theta_row(
            f"copy (T = {r.config['T']})" if _task(r) == "copy" else f"psMNIST ({r['steps']} steps)",
            r.config["width"],
            r["T"],
            r["T"][r["T"] != 0],
            r["Lambda"],
            r,
        )
        for r in results
    ]


def _theta_panel(ax, th: np.ndarray, angles: np.ndarray, title: str) -> None:
    """Heatmap of a learned Theta (row 1 on top) with the histogram of its rotation angles as an inset."""
    lim = float(np.abs(th).max())
    plot.heatmap(
        ax, th[::-1], cmap="RdBu_r", vmin=-lim, vmax=lim, xlabel="column", ylabel="row (top = 1)", cbar_label="Θ entry"
    )
    ax.set_yticks([])
    ax.set_title(title)
    ins = ax.inset_axes([0.55, 0.62, 0.4, 0.33])
    ins.hist(angles, bins=16, range=(0, 2 * np.pi), color="k")
    ins.set(xticks=[0, np.pi, 2 * np.pi], xticklabels=["0", "π", "2π"], yticks=[])
    ins.tick_params(labelsize=6)


def show_theta(theta_col, psmnist_col) -> None:
    fig, ax = plot.figure(4, 1, width=15, height=3.5)
    for j, r in enumerate(theta_results(theta_col, psmnist_col)):
        th = r["Theta"]
        name = _task(r)
        _theta_panel(
            ax[0, j], th, r["theta"], f"({'a' if j == 0 else 'A.2'}) learned Θ, {name}, N = {r.config['width']}"
        )
        k = min(30, th.shape[0] - 1)
        ax[0, 2].plot(np.arange(1, k + 1), fisher.subdiagonal_profile(r["T"], k), "o-", ms=3, label=name)
    ax[0, 2].set(xlabel="sub-diagonal k", ylabel="mean |T_{i+k,i}|", title="(c) feed-forward coupling by distance")
    ax[0, 2].legend(fontsize=7)
    c = theta_col[0]
    it = np.arange(len(c["T_norm"])) * c.config["track"]
    ax[0, 3].plot(it, c["T_norm"], color="C0", label="‖T‖_F")
    ax[0, 3].set(xlabel="iteration (copy)", ylabel="‖T‖_F", title="T grows from 0 during training")
    tw = ax[0, 3].twinx()
    tw.semilogy(it, np.maximum(c["P_orth_history"], 1e-9), color="C1", label="max |PᵀP − I|")
    tw.set_ylabel("max |PᵀP − I|")
    tw.grid(False)
    ax[0, 3].legend(loc="upper left", fontsize=7)
    tw.legend(loc="lower right", fontsize=7)
    plot.show(
        fig,
        theta_col,
        psmnist_col,
        data="copy task (generated) and permuted MNIST (real digits); Θ read from the parameters, "
        "not from a Schur decomposition of V",
    )


def ptb_theta_results(ptb_col) -> list:
    """The nnRNN runs of Table 3.1 that kept their learned Theta (one per T_PTB, the first seed)."""
    out = {}
    for r in ptb_col.where(model="nnRNN"):
        if "Theta" in r and not r["diverged"] and r.config["seed"] == ptb_col[0].config["seed"]:
            out.setdefault(r.config["length"], r)
    return [out[k] for k in sorted(out)]


def ptb_coupling(r) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Theta, Lambda(theta, gamma), T = Theta - Lambda) of a PTB nnRNN run, which keeps Theta in float16 only."""
    th = np.asarray(r["Theta"], dtype=float)
    lam = fisher.rotation_blocks(r["theta"], r["gamma"])
    return th, lam, th - lam


def ptb_theta_stats(ptb_col) -> list[dict]:
    """``theta_stats``'s columns for the PTB nnRNNs, T's RMS over the strictly lower triangle (Theta is float16, so
    T = Theta - Lambda is rounding noise elsewhere)."""
    rows = []
    for r in ptb_theta_results(ptb_col):
        _, lam, T = ptb_coupling(r)
        T = np.tril(T, -1)
        rows.append(
            _theta_row(
                f"PTB (T_PTB = {r.config['length']})", r.config["width"], T, T[np.tril_indices(len(T), -1)], lam, r
            )
        )
    return rows


def show_theta_ptb(ptb_col) -> list[np.ndarray]:
    """Fig. 3.3 (b, c) on PTB: the learned Theta per T_PTB, its angle histogram, and the feed-forward coupling
    ``T = Theta - Lambda(theta, gamma)`` by sub-diagonal; returns the T matrices."""
    runs = ptb_theta_results(ptb_col)
    fig, ax = plot.figure(len(runs) + 1, 1, width=5 * (len(runs) + 1), height=3.5)
    Ts = []
    for j, r in enumerate(runs):
        th, _, T = ptb_coupling(r)
        Ts.append(T)
        _theta_panel(
            ax[0, j], th, r["theta"], f"(b) learned Θ, PTB, T_PTB = {r.config['length']}, N = {r.config['width']}"
        )
        k = min(30, th.shape[0] - 1)
        ax[0, -1].plot(
            np.arange(1, k + 1), fisher.subdiagonal_profile(T, k), "o-", ms=3, label=f"T_PTB = {r.config['length']}"
        )
    ax[0, -1].set(
        xlabel="sub-diagonal k", ylabel="mean |T_{i+k,i}|", title="(c) feed-forward coupling by distance, PTB"
    )
    ax[0, -1].legend(fontsize=7)
    plot.show(fig, ptb_col, data=f"{ptb_col[0]['source']}; Θ kept in float16, T = Θ − Λ(θ, γ)")
    return Ts


def gap_theta(col) -> str:
    rows = theta_stats(col)  # the copy panel (the psMNIST panel's numbers are in the psMNIST runs)
    return (
        "; ".join(
            f"{r['task']}: RMS(T)/RMS(Λ) {r['RMS(T) / RMS(Λ blocks)']:.3f}, mean γ {r['mean γ']:.3f}" for r in rows
        )
        + "; thesis: copy Θ ≈ Λ (T ≈ 0), psMNIST weak lower triangle, PTB mean γ 0.958"
    )
