"""Figs. 1A and 2: the sensitivity of a linear recurrence to its eigenvalue against lam and the input correlation,
without and with input normalisation and the exponential reparametrisation (closed forms against Monte Carlo); the
chapter's explorer."""

from __future__ import annotations

import math

import numpy as np

from ... import plot
from ...sweep import Run, RunContext
from ...theory import memory as theory
from .common import CHAPTER, SIZES


# --------------------------------------------------------------------------------------------- Fig. 1A
def sensitivity_run(cfg: dict, ctx: RunContext) -> dict:
    """Monte Carlo E h^2 and E s^2 at stationarity for every lam of the config, one input correlation rho."""
    hs, ss = [], []
    for lam in cfg["lams"]:
        h, s = theory.monte_carlo(lam, cfg["rho"], cfg["chains"], seed=ctx.seed, device=ctx.device)
        hs.append(h)
        ss.append(s)
    return {"mc_h": np.array(hs), "mc_s": np.array(ss)}


def sensitivity_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "sensitivity",
            f"rho{rho}",
            sensitivity_run,
            dict(rho=rho, lams=s["lams"], chains=s["chains"], seed=0),
        )
        for rho in s["rhos"]
    ]


def sensitivity_errors(col) -> dict:
    """Worst relative errors of Monte Carlo against the closed forms, and of the printed eq. 59."""
    out = {"h": 0.0, "s": 0.0, "s_printed": 0.0}
    for r in col:
        lams, rho = np.array(r.config["lams"]), r.config["rho"]
        out["h"] = max(out["h"], float(np.max(np.abs(r["mc_h"] / theory.hidden_variance(lams, rho) - 1))))
        out["s"] = max(out["s"], float(np.max(np.abs(r["mc_s"] / theory.sensitivity_variance(lams, rho) - 1))))
        out["s_printed"] = max(
            out["s_printed"], float(np.max(np.abs(r["mc_s"] / theory.sensitivity_variance_printed(lams, rho) - 1)))
        )
    return out


def _lam_axis():
    return 1 - np.logspace(-4, 0, 200)[:-1]


def show_sensitivity(col) -> None:
    fig, ax = plot.figure(2, 1, width=11, height=4)
    lam = _lam_axis()
    x = -np.log10(1 - lam)
    rhos = sorted({r.config["rho"] for r in col} | {0.99, 0.999})
    for i, rho in enumerate(rhos):
        color = f"C{i}"
        ax[0, 0].plot(x, theory.sensitivity_variance(lam, rho), color=color, label=f"ρ = {rho:g}")
        if 0 < rho < 1:
            ax[0, 0].plot(x, theory.sensitivity_variance_printed(lam, rho), color=color, linestyle="--", linewidth=0.9)
        ax[0, 1].plot(x, theory.hidden_variance(lam, rho), color=color, label=f"ρ = {rho:g}")
        found = col.where(rho=rho)
        if found:
            r = found[0]
            xl = -np.log10(1 - np.array(r.config["lams"]))
            ax[0, 0].plot(xl, r["mc_s"], "o", color=color, markersize=5)
            ax[0, 1].plot(xl, r["mc_h"], "o", color=color, markersize=5)
    for a, what in zip(ax[0], (r"$\mathbb{E}[(\mathrm{d}h/\mathrm{d}\lambda)^2]$", r"$\mathbb{E}[h^2]$")):
        a.set(yscale="log", xlabel=r"$-\log_{10}(1-\lambda)$", ylabel=what)
        a.legend(fontsize=8)
    ax[0, 0].set_title("sensitivity (dashed: eq. 59 as printed)")
    ax[0, 1].set_title("hidden state")
    plot.show(
        fig,
        col,
        note="Lines: closed forms (eq. 48 and the corrected eq. 59); dots: Monte Carlo.",
        data="AR(1) inputs with correlation ρ, generated",
    )


def gap_sensitivity(col) -> str:
    e = sensitivity_errors(col)
    return (
        f"closed forms (paper's own numbers): Monte Carlo within {e['s']:.1%}; printed eq. 59 off by up to "
        f"{e['s_printed']:.0%}"
    )


# --------------------------------------------------------------------------------------------- Fig. 2
def normalisation_run(cfg: dict, ctx: RunContext) -> dict:
    """Forward-mode autodiff estimate of E[(dh/domega)^2] for the normalised, exp-reparametrised recurrence."""
    return {
        "mc": np.array(
            [theory.monte_carlo_reparametrised(lam, cfg["rho"], cfg["chains"], seed=ctx.seed) for lam in cfg["lams"]]
        )
    }


def normalisation_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "normalisation",
            f"rho{rho}",
            normalisation_run,
            dict(rho=rho, lams=[lam for lam in s["lams"] if lam <= 0.999], chains=s["chains"], seed=1),
        )
        for rho in s["rhos"]
    ]


def normalisation_errors(col) -> float:
    return max(
        float(np.max(np.abs(r["mc"] / theory.normalised_sensitivity(np.array(r.config["lams"]), r.config["rho"]) - 1)))
        for r in col
    )


def show_normalisation(col) -> None:
    fig, ax = plot.figure(2, 1, width=11, height=4)
    lam = _lam_axis()
    x = -np.log10(1 - lam)
    rhos = sorted({r.config["rho"] for r in col} | {0.99})
    for i, rho in enumerate(rhos):
        color = f"C{i}"
        ax[0, 0].plot(x, (1 - lam**2) * theory.hidden_variance(lam, rho), color=color, label=f"ρ = {rho:g}")
        ax[0, 1].plot(x, theory.normalised_sensitivity(lam, rho), color=color, label=f"ρ = {rho:g}")
        found = col.where(rho=rho)
        if found:
            xl = -np.log10(1 - np.array(found[0].config["lams"]))
            ax[0, 1].plot(xl, found[0]["mc"], "o", color=color, markersize=5)
    ax[0, 0].plot(x, theory.hidden_variance(lam, 1.0), color="0.6", linewidth=0.8, label="ρ = 1, no γ")
    ax[0, 1].plot(
        x, theory.sensitivity_variance(lam, 1.0), color="0.6", linewidth=0.8, label="ρ = 1, no γ, no reparam."
    )
    ax[0, 0].set(
        yscale="log",
        xlabel=r"$-\log_{10}(1-\lambda)$",
        ylabel=r"$\gamma^2\,\mathbb{E}[h^2]$",
        title="(A) input normalisation γ = √(1−λ²)",
    )
    ax[0, 1].set(
        yscale="log",
        xlabel=r"$-\log_{10}(1-\lambda)$",
        ylabel=r"$\mathbb{E}[(\mathrm{d}h/\mathrm{d}\omega)^2]$",
        title="(B) + λ = exp(−exp(ω))",
    )
    for a in ax[0]:
        a.legend(fontsize=8)
    plot.show(
        fig,
        col,
        note="Lines: closed forms; dots: forward-mode autodiff through 10/(1−λ) steps.",
        data="AR(1) inputs with correlation ρ, generated",
    )


# --------------------------------------------------------------------------------------------- explorer
def explore_figure(lam: float = 0.99, rho: float = 0.9):
    """E h^2 and E s^2 against lam for one rho, with the chosen lam marked and the values in the title."""
    fig, ax = plot.figure(1, 1, width=6.5, height=3.8)
    grid = _lam_axis()
    x = -np.log10(1 - grid)
    ax[0, 0].plot(x, theory.hidden_variance(grid, rho), label=r"$\mathbb{E}[h^2]$")
    ax[0, 0].plot(x, theory.sensitivity_variance(grid, rho), label=r"$\mathbb{E}[(\mathrm{d}h/\mathrm{d}\lambda)^2]$")
    ax[0, 0].plot(x, theory.normalised_sensitivity(grid, rho), label="normalised + exp param.")
    ax[0, 0].axvline(-math.log10(1 - lam), color="0.5", linewidth=0.8)
    ax[0, 0].set(
        yscale="log",
        xlabel=r"$-\log_{10}(1-\lambda)$",
        title=f"λ = {lam:g}, ρ = {rho:g}: E h² = {float(theory.hidden_variance(lam, rho)):.3g}, "
        f"E s² = {float(theory.sensitivity_variance(lam, rho)):.3g}",
    )
    ax[0, 0].legend(fontsize=8)
    return fig
