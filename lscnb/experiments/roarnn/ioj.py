"""Thms 2.1 and 3.1: singular values of the input-output Jacobian of a roaFNN against depth and of a roaRNN
through time, against the (corrected) bounds and a vanilla network with the same weights; the chapter's
explorer of one roaRNN step's eigenvalues."""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import jacobian, plot
from ...models.roa import RoaFNN, RoaRNNCell
from ...sweep import Run, RunContext
from ...theory import roa as bounds
from .common import CHAPTER, SIZES


def ioj_run(cfg: dict, ctx: RunContext) -> dict:
    """Log singular values of the hidden-to-hidden IOJ of a roaFNN (rho = 1, W ~ N(0, 1/N)) and the largest one of
    the vanilla MLP with the same weights, at random inputs, over seeds; sigma_max of the drawn weights."""
    n, depth = cfg["width"], cfg["depth"]
    roa_lo, roa_hi, van_hi, sig = [], [], [], []
    for seed in range(ctx.seed, ctx.seed + cfg["seeds"]):
        x = torch.randn(n, generator=torch.Generator().manual_seed(100 + seed))
        out = {}
        for name, rho in (("roa", cfg["rho"]), ("vanilla", None)):
            net = RoaFNN(n, n, 1, depth, rho=rho, init_std=None, seed=seed).double()
            with torch.no_grad():
                J = net.hidden_jacobians(x.double())
            out[name] = jacobian.product_log_singular_values(J)
            if name == "roa":
                sig.append(float(torch.linalg.matrix_norm(net.W_h.detach(), ord=2).max()))
        roa_lo.append(float(out["roa"].min()))
        roa_hi.append(float(out["roa"].max()))
        van_hi.append(float(out["vanilla"].max()))
    return {
        "roa_min": np.array(roa_lo),
        "roa_max": np.array(roa_hi),
        "vanilla_max": np.array(van_hi),
        "sigma_max": np.array(sig),
    }


def ioj_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER, "ioj", f"L{L}", ioj_run, dict(depth=L, width=s["ioj_width"], rho=1.0, seeds=s["ioj_seeds"], seed=0)
        )
        for L in s["depths"]
    ]


def ioj_table(col) -> list[dict]:
    rows = []
    for r in sorted(col, key=lambda r: r.config["depth"]):
        maps, sig = (
            r.config["depth"] - 1,
            float(r["sigma_max"].max()),
        )  # alpha = rho / (L - 1); the L - 3 hidden factors obey the same bounds
        rows.append(
            {
                "L": r.config["depth"],
                "roa log σ_min": float(r["roa_min"].min()),
                "roa log σ_max": float(r["roa_max"].max()),
                "corrected lower bound (log)": math.log(bounds.lower_bound(1.0, sig, maps)),
                "paper's lower bound (log)": math.log(bounds.lower_bound_paper(1.0, sig)),
                "upper bound (log)": math.log(bounds.upper_bound(1.0, sig, maps)),
                "vanilla log σ_max": float(r["vanilla_max"].max()),
            }
        )
    return rows


def show_ioj(col) -> None:
    rows = ioj_table(col)
    L = [r["L"] for r in rows]
    fig, ax = plot.figure(2, 1, width=11, height=3.8)
    ax[0, 0].fill_between(
        L,
        [r["roa log σ_min"] for r in rows],
        [r["roa log σ_max"] for r in rows],
        color="C3",
        alpha=0.4,
        label="roaFNN (ρ = 1): all singular values",
    )
    ax[0, 0].plot(L, [r["corrected lower bound (log)"] for r in rows], **plot.THEORY, label="bounds (corrected lower)")
    ax[0, 0].plot(L, [r["upper bound (log)"] for r in rows], **plot.THEORY)
    ax[0, 0].plot(
        L,
        [r["paper's lower bound (log)"] for r in rows],
        **{**plot.PAPER, "color": "0.5"},
        label="lower bound as printed",
    )
    ax[0, 0].set(xscale="log", xlabel="depth L", ylabel="log σ(IOJ)", title="roaFNN")
    ax[0, 0].legend(fontsize=8)
    ax[0, 1].plot(L, [r["vanilla log σ_max"] for r in rows], "o-", color="C0", label="vanilla MLP, largest")
    ax[0, 1].plot(L, [r["roa log σ_max"] for r in rows], "o-", color="C3", label="roaFNN, largest")
    ax[0, 1].set(xscale="log", xlabel="depth L", ylabel="log σ_max(IOJ)", title="vanilla vs roa (same weights)")
    ax[0, 1].legend(fontsize=8)
    plot.show(fig, col, data="random Gaussian inputs, generated")


def rnn_ioj_run(cfg: dict, ctx: RunContext) -> dict:
    """All log singular values of dx_T/dx_1 for a roaRNN (alpha = rho / T) and an Elman RNN with the same weights,
    ReLU, random inputs."""
    T, n = cfg["length"], cfg["width"]
    x = torch.randn(1, T, 1, generator=torch.Generator().manual_seed(ctx.seed), dtype=torch.float64)
    out = {}
    for name, alpha in (("roa", cfg["rho"] / T), ("vanilla", 1.0)):
        cell = RoaRNNCell(1, n, alpha=alpha, init_std=cfg["init_std"], seed=ctx.seed).double()
        J, _ = jacobian.time_jacobians(cell, x)
        out[name] = jacobian.product_log_singular_values(J[0, 1:].detach())
        if name == "roa":
            sigma = float(torch.linalg.matrix_norm(cell.weight_hh.detach(), ord=2))
    return {"roa": out["roa"].numpy(), "vanilla": out["vanilla"].numpy(), "sigma": sigma}


def rnn_ioj_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "rnn_ioj",
            f"T{T}-{name}",
            rnn_ioj_run,
            dict(length=T, width=s["rnn_width"], rho=3.0, init_std=std, init=name, seed=0),
        )
        for T in s["rnn_lengths"]
        for name, std in (("N(0,1/N)", None), ("N(0,1)", 1.0))
    ]


def rnn_ioj_table(col) -> list[dict]:
    rows = []
    for r in sorted(col, key=lambda r: (r.config["init"], r.config["length"])):
        maps = r.config["length"]  # alpha = rho / T
        rows.append(
            {
                "init": r.config["init"],
                "T": r.config["length"],
                "σ = ‖W_h‖": r["sigma"],
                "roa log σ_min": float(r["roa"].min()),
                "roa log σ_max": float(r["roa"].max()),
                "proven interval (log)": f"[{math.log(bounds.lower_bound(3.0, r['sigma'], maps)):.1f}, "
                f"{math.log(bounds.upper_bound(3.0, r['sigma'], maps)):.1f}]",
                "vanilla log σ_max": float(r["vanilla"].max()),
            }
        )
    return rows


def explore_figure(
    alpha: float = 0.05, sigma_scale: float = 1.0, orthogonal: str = "paper", n: int = 128, seed: int = 0
):
    """Eigenvalues of one roaRNN step Jacobian ``alpha D W + (1 - alpha) O`` (random ReLU mask) with the annulus
    of Bauer-Fike (random O) or the disc (O = I)."""
    from ...models.roa import semi_orthogonal

    g = torch.Generator().manual_seed(seed)
    W = torch.randn(n, n, generator=g, dtype=torch.float64) * sigma_scale / math.sqrt(n)
    mask = (torch.rand(n, generator=g) > 0.5).double()
    O = semi_orthogonal(n, n, method=orthogonal, generator=g, dtype=torch.float64)
    J = alpha * mask.unsqueeze(1) * W + (1 - alpha) * O
    eig = torch.linalg.eigvals(J).numpy()
    sigma = float(torch.linalg.matrix_norm(W, ord=2))
    fig, ax = plot.figure(1, 1, width=4.6, height=4.4)
    plot.eigenvalues(ax[0, 0], eig, radius=None, color="C3")
    t = np.linspace(0, 2 * np.pi, 400)
    if orthogonal == "identity":
        c, rad = bounds.eye_disc(alpha, sigma)
        ax[0, 0].plot(c.real + rad * np.cos(t), rad * np.sin(t), **plot.THEORY)
    else:
        for rad in bounds.annulus(alpha, sigma):
            ax[0, 0].plot(rad * np.cos(t), rad * np.sin(t), **plot.THEORY)
    plot.unit_circle(ax[0, 0], color="0.7")
    ax[0, 0].set(title=f"α = {alpha:g}, O = {orthogonal}, ‖W‖ = {sigma:.2f}")
    return fig
