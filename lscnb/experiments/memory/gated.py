"""App. D.2, D.3 (Figs. 14, 15): Chrono-initialised GRUs, their recurrent Jacobian, and the diagonal theory of
gated units."""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import plot
from ...sweep import Run, RunContext
from ...theory import memory as theory
from .common import CHAPTER
from .deep import DEEP_DATA

# --------------------------------------------------------------------------------------------- App. D.3, Fig. 15
GATED_SIZES = {
    "quick": dict(networks=48, d=64, d_in=96, length=512),
    "full": dict(networks=100, d=256, d_in=768, length=512),
}
GATE_LABELS = {"constant": "constant gates", "input": "input-dependent gates", "hidden": "input- and hidden-dependent"}
GATED_BINS = [(1, 32), (32, 128), (128, 256)]


def gated_run(cfg: dict, ctx: RunContext) -> dict:
    """Fig. 15: ``networks`` simplified GRUs (eqs. 157-158, Chrono T in [1, 256]), each fed its own sequence of
    BERT-like inputs: ``h_{T,i}^2`` and ``(dh_{T,i}/db_{f,i})^2`` of every unit, with its time constant T."""
    from ...data.embeddings import bert_like
    from ...models.deep_recurrent import SimplifiedGRU

    gen = torch.Generator().manual_seed(ctx.seed)
    x = bert_like(cfg["networks"], cfg["length"], cfg["d_in"], generator=gen)
    net = SimplifiedGRU(
        cfg["d_in"],
        cfg["d"],
        networks=cfg["networks"],
        gates=cfg["gates"],
        t_min=cfg["t_min"],
        t_max=cfg["t_max"],
        generator=gen,
    ).to(ctx.device)
    h, s = net.bias_sensitivity(x.to(ctx.device))
    return {
        "T": net.b_f.detach().exp().reshape(-1).double().cpu().numpy(),
        "h2": h.reshape(-1).double().cpu().numpy() ** 2,
        "db2": s.reshape(-1).double().cpu().numpy() ** 2,
    }


def gated_runs(scale: str) -> list[Run]:
    return [
        Run(CHAPTER, "gated", gates, gated_run, dict(gates=gates, t_min=1.0, t_max=256.0, seed=0, **GATED_SIZES[scale]))
        for gates in GATE_LABELS
    ]


def gated_theory(T, length: int | None = None) -> dict:
    """App. D.3's prediction at time constants ``T`` (lam = T / (1 + T)) for the paper's two-component input
    autocorrelation; ``length``: exactly after that many steps, else stationary (eqs. 159-161)."""
    T = np.asarray(T, dtype=float)
    return theory.gated_moments(T / (1 + T), theory.BERT_COMPONENTS, steps=length)


def kernel_regression(x, y, grid, bandwidth: float = 10.0) -> np.ndarray:
    """Nadaraya-Watson mean of ``y`` at ``grid`` with the paper's kernel ``exp(-(a - b)^2 / bandwidth^2)``."""
    w = np.exp(-(((np.asarray(grid)[:, None] - np.asarray(x)[None, :]) / bandwidth) ** 2))
    return w @ np.asarray(y) / w.sum(1)


def gated_agreement(col) -> dict:
    """``{(gates, quantity): [sample mean / theory mean per bin of GATED_BINS]}`` against the exact finite-length
    theory, and under ``"pooled"`` the same over all units."""
    out = {}
    for r in col:
        T, length = r["T"], r.config["length"]
        th = gated_theory(T, length)
        for q in ("h2", "db2"):
            bins = [(lo <= T) & (hi > T) for lo, hi in GATED_BINS]
            out[(r.config["gates"], q)] = [float(r[q][k].mean() / th[q][k].mean()) for k in bins]
            out[(r.config["gates"], q, "pooled")] = float(r[q].mean() / th[q].mean())
    return out


def show_gated(col) -> None:
    """Fig. 15: samples, their kernel-regression mean and App. D.3's theory, against the time constant T."""
    fig, ax = plot.figure(3, 2, width=13, height=6.5)
    grid = np.linspace(1, 256, 200)
    exact = gated_theory(grid, col[0].config["length"])
    stationary = gated_theory(grid)
    rng = np.random.default_rng(0)  # which units are drawn as dots (display only): fixed
    for j, gates in enumerate(GATE_LABELS):
        found = col.where(gates=gates)
        if not found:
            continue
        r = found[0]
        show = rng.choice(r["T"].size, size=min(1500, r["T"].size), replace=False)
        for i, (q, label) in enumerate((("h2", "h²_T"), ("db2", "(∂h_T/∂b_f)²"))):
            a = ax[i, j]
            a.plot(r["T"][show], r[q][show], ".", color="0.75", markersize=2, label="units (sample)")
            a.plot(grid, kernel_regression(r["T"], r[q], grid), color="C0", label="kernel-regression mean")
            a.plot(grid, exact[q], **plot.THEORY, label=f"theory, after {r.config['length']} steps")
            a.plot(
                grid, stationary[q], color="k", linestyle="--", linewidth=0.8, label="theory, stationary (eqs. 159–161)"
            )
            a.set(
                yscale="log",
                xlabel="time constant T (λ = T/(1+T))",
                ylabel=label,
                ylim=(max(1e-6, np.percentile(r[q], 1) / 3), np.percentile(r[q], 99.5) * 3),
            )
            if i == 0:
                a.set_title(f"(15) {GATE_LABELS[gates]}")
            if j == 0:
                a.legend(fontsize=7)
    plot.show(
        fig,
        col,
        data=DEEP_DATA["bert_like"],
        note="Theory: the gate replaced by its value at x = h = 0, λ = σ(b_f), and the paper's two-component "
        "autocorrelation R(Δ) = 0.332 δ + 0.044 · 0.997^Δ.",
    )


# --------------------------------------------------------------------------------------------- App. D.2, Fig. 14
JACOBIAN_SIZES = {
    "quick": dict(d=64, d_in=96, length=256, offdiag=256),
    "full": dict(d=256, d_in=768, length=512, offdiag=512),
}
# (row, panel) -> (t_min, t_max, scale_x, scale_h): A constant gates, B gated, C hidden-to-gate strength sigma_h
JACOBIAN_PANELS = {
    ("A", 0): (1, 1, 0.0, 0.0),
    ("A", 1): (1, 16, 0.0, 0.0),
    ("A", 2): (1, 256, 0.0, 0.0),
    ("B", 0): (1, 1, 1.0, 1.0),
    ("B", 1): (1, 16, 1.0, 1.0),
    ("B", 2): (1, 256, 1.0, 1.0),
    ("C", 0): (1, 16, 1.0, 0.0),
    ("C", 1): (1, 16, 1.0, 1.0),
    ("C", 2): (1, 16, 1.0, 3.0),
}


def gru_jacobian_run(cfg: dict, ctx: RunContext) -> dict:
    """Fig. 14: the recurrent Jacobian ``dh_D/dh_0`` of one Chrono-initialised GRU on one BERT-like sequence, at
    lags ``D = floor(2^linspace(0, log2 length, 20))``: all diagonal entries and a fixed random set of
    off-diagonal ones."""
    from ...data.embeddings import bert_like
    from ...jacobian import time_jacobians
    from ...models.deep_recurrent import ChronoGRU

    gen = torch.Generator().manual_seed(ctx.seed)
    x = bert_like(1, cfg["length"], cfg["d_in"], generator=gen, dtype=torch.float64)
    gru = ChronoGRU(
        cfg["d_in"],
        cfg["d"],
        t_min=cfg["t_min"],
        t_max=cfg["t_max"],
        scale_x=cfg["scale_x"],
        scale_h=cfg["scale_h"],
        generator=gen,
    ).double()
    J, _ = time_jacobians(gru.cell, x)
    lags = np.unique(np.floor(2 ** np.linspace(0, math.log2(cfg["length"]), 20)).astype(int))
    d = cfg["d"]
    flat = torch.randperm(d * d, generator=gen)
    off = flat[(flat // d) != (flat % d)][: cfg["offdiag"]]
    prod, diag, offd = torch.eye(d, dtype=torch.float64), [], []
    for t in range(cfg["length"]):
        prod = J[0, t] @ prod
        if t + 1 in lags:
            diag.append(torch.diagonal(prod).abs())
            offd.append(prod.reshape(-1)[off].abs())
    return {"lags": lags, "diag": torch.stack(diag).numpy(), "offdiag": torch.stack(offd).numpy()}


def gru_jacobian_runs(scale: str) -> list[Run]:
    return [
        Run(
            CHAPTER,
            "gru_jacobian",
            f"{row}{col}",
            gru_jacobian_run,
            dict(t_min=t0, t_max=t1, scale_x=sx, scale_h=sh, seed=42, **JACOBIAN_SIZES[scale]),
        )
        for (row, col), (t0, t1, sx, sh) in JACOBIAN_PANELS.items()
    ]


def _panel_result(col, row, panel):
    t0, t1, sx, sh = JACOBIAN_PANELS[(row, panel)]
    return col.where(t_min=t0, t_max=t1, scale_x=sx, scale_h=sh)[0]  # B1 and C1 are the same panel


def show_gru_jacobian(col) -> None:
    """Fig. 14: |entries| of dh_D/dh_0 against D (blue: every diagonal entry; grey: random off-diagonal ones)."""
    fig, ax = plot.figure(3, 3, width=13, height=10)
    titles = {"A": "constant gates", "B": "gates on x and h", "C": "T ∈ [1, 16]"}
    for (row, panel), (t0, t1, _sx, sh) in JACOBIAN_PANELS.items():
        r, a = _panel_result(col, row, panel), ax["ABC".index(row), panel]
        a.plot(r["lags"], np.clip(r["offdiag"], 1e-30, None), color="0.6", linewidth=0.4, alpha=0.4)
        a.plot(r["lags"], np.clip(r["diag"], 1e-30, None), color="C0", linewidth=0.6, alpha=0.6)
        what = f"σ_h = {sh:g}" if row == "C" else f"T ∈ [{t0}, {t1}]"
        a.set(
            xscale="log",
            yscale="log",
            ylim=(1e-12, 3),
            xlabel="Δ",
            ylabel="|dh_Δ/dh_0| entries",
            title=f"(14{row}) {titles[row]}, {what}",
        )
    plot.show(
        fig,
        col,
        data=DEEP_DATA["bert_like"],
        note="Blue: all diagonal entries; grey: random off-diagonal entries (values below 1e-12 are clipped).",
    )


def jacobian_offdiag_ratio(col, row: str, panel: int, lag: int) -> float:
    """Median |off-diagonal| / median |diagonal| entry of dh_lag/dh_0 for one panel."""
    r = _panel_result(col, row, panel)
    i = int(np.searchsorted(r["lags"], lag))
    return float(np.median(r["offdiag"][i]) / np.median(r["diag"][i]))
