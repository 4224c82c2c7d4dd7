"""Figs. 6, 7: the 1-D loss and its curvature under the polar, exp and optimal parametrisations, and Adam on it."""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import plot
from ...sweep import Run, RunContext
from ...theory import memory as theory
from .common import CHAPTER

# --------------------------------------------------------------------------------------------- Figs. 6, 7
LANDSCAPE_GAPS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64]  # |lam*| = 1 - gap, angle pi/100 (Fig. 6)
MAGNITUDE_PARAMS = {
    "polar": ("ν = ω", lambda nu: nu, lambda w: w),
    "exp": ("ν = exp(−exp(ω))", lambda nu: np.log(-np.log(nu)), lambda w: torch.exp(-torch.exp(w))),
    "opt": ("ν = tanh(ω)", np.arctanh, torch.tanh),
}


def _angle_maps(angle: str, nu: float):
    """(theta -> omega, omega -> theta) of the angle parametrisations at fixed modulus ``nu``."""
    k = float(theory.angle_scale(nu))
    return {
        "polar": (lambda th: th, lambda w: w),
        "exp": (np.log, torch.exp),
        "opt": (lambda th: th / k, lambda w: w * k),
    }[angle]


def parametrised_landscape(param: str, which: str, gap: float, points: int = 300) -> dict:
    """Fig. 6: the normalised 1-D loss (eq. 93) against the magnitude parameter (``which="magnitude"``, angle at
    the teacher's) or the angle parameter (``"angle"``, modulus at the teacher's), and its second derivative by
    ``torch.func`` (the other variable held fixed), for teacher ``(1 - gap) e^{i pi/100}``."""
    from torch.func import grad, vmap

    if param not in MAGNITUDE_PARAMS or which not in ("magnitude", "angle"):
        raise ValueError(
            f"param must be one of {list(MAGNITUDE_PARAMS)} and which 'magnitude' or 'angle', got {param!r}, {which!r}"
        )
    checks_param = MAGNITUDE_PARAMS[param]
    nu_star, th_star = 1 - gap, math.pi / 100
    star = nu_star * np.exp(1j * th_star)
    if which == "magnitude":
        to_w, from_w = checks_param[1], checks_param[2]
        span = {"polar": (1e-3, 1 - 1e-4), "exp": (-9.0, 2.0), "opt": (1e-3, float(np.arctanh(1 - 1e-4)))}[param]
        optimum = float(to_w(nu_star))
        loss = lambda w: theory.landscape_complex(  # noqa: E731
            torch.polar(from_w(w), torch.tensor(th_star, dtype=torch.float64)), star, normalised=True
        )
    else:
        to_w, from_w = _angle_maps(param, nu_star)
        span = (math.log(1e-3), math.log(2 * math.pi - 1e-3)) if param == "exp" else (to_w(-math.pi), to_w(math.pi))
        optimum = float(to_w(th_star))
        loss = lambda w: theory.landscape_complex(  # noqa: E731
            torch.polar(torch.tensor(nu_star, dtype=torch.float64), from_w(w)), star, normalised=True
        )
    grid = np.linspace(*span, points)
    if which == "angle" and param == "opt":  # spans +-220 at |lam*| = 0.99: log-spaced away from 0 (symlog axis)
        u = np.linspace(-math.log1p(span[1]), math.log1p(span[1]), points)
        grid = np.sign(u) * np.expm1(np.abs(u))
    w = torch.tensor(grid, dtype=torch.float64)
    at = torch.tensor([optimum], dtype=torch.float64)
    curvature = vmap(grad(grad(loss)))
    return {
        "w": w.numpy(),
        "loss": vmap(loss)(w).numpy(),
        "hessian": curvature(w).numpy(),
        "optimum": optimum,
        "hessian_at_optimum": float(curvature(at)[0]),
    }


def show_parametrised_landscapes(gaps=LANDSCAPE_GAPS) -> None:
    """Fig. 6: rows polar / exp / opt; columns loss and Hessian against the magnitude, then against the angle."""
    fig, ax = plot.figure(4, 3, width=15, height=10)
    for row, param in enumerate(MAGNITUDE_PARAMS):
        for col, which in ((0, "magnitude"), (2, "angle")):
            for i, gap in enumerate(gaps):
                d = parametrised_landscape(param, which, gap)
                color = plot.mpl.cm.viridis(i / max(1, len(gaps) - 1))
                ax[row, col].plot(d["w"], np.clip(d["loss"], 1e-8, None), color=color, label=f"|λ*| = {1 - gap:g}")
                ax[row, col + 1].plot(d["w"], np.abs(d["hessian"]), color=color)
            angle_label = {"polar": "θ = ω", "exp": "θ = exp(ω)", "opt": "θ = ω (1−ν²)/(ν√(1+ν²))"}[param]
            label = MAGNITUDE_PARAMS[param][0] if which == "magnitude" else angle_label
            ax[row, col].set(
                yscale="log", ylim=(1e-4, 3), xlabel=f"ω ({label})", ylabel="loss", title=f"({param}) loss vs {which}"
            )
            ax[row, col + 1].set(
                yscale="log",
                ylim=(1e-3, 1e6),
                xlabel=f"ω ({label})",
                ylabel="|d²L/dω²|",
                title=f"({param}) Hessian vs {which}",
            )
            if param == "opt" and which == "angle":
                for a in (ax[row, col], ax[row, col + 1]):
                    a.set_xscale("symlog", linthresh=1.0)
    ax[0, 0].legend(fontsize=7)
    plot.show(
        fig,
        note="Closed form (eq. 93: input normalisation γ = √(1−|λ|²) in student and teacher, white noise), "
        "second derivatives by torch.func; teacher λ* = |λ*| e^(iπ/100).",
    )


def parametrised_table(gaps=(0.01, 0.04, 0.16, 0.64)) -> list[dict]:
    """Second derivative of the normalised loss at the optimum per parametrisation (theory: polar 1/(1-nu^2)^2 and
    nu^2(1+nu^2)/(1-nu^2)^2, eqs. 98 and 105; opt 1 by construction)."""
    rows = []
    for gap in gaps:
        row = {"|λ*|": 1 - gap}
        for param in MAGNITUDE_PARAMS:
            for which in ("magnitude", "angle"):
                row[f"{param} {which}"] = parametrised_landscape(param, which, gap, points=3)["hessian_at_optimum"]
        rows.append(row)
    return rows


ADAM_ANGLE_STEPS = {"quick": 20_000, "full": 50_000}
ADAM_ANGLE_START, ADAM_ANGLE_TARGET = 0.99 * np.exp(1j * math.pi / 4), 0.99 * np.exp(1j * math.pi / 100)
ANGLE_LABELS = {"polar": "(7A) θ = ω_θ", "exp": "(7B) θ = exp(ω_θ)", "opt": "(7C) θ = ω_θ (1−ν²)/(ν√(1+ν²))"}


def adam_angle_run(cfg: dict, ctx: RunContext) -> dict:
    """Fig. 7: Adam (lr 1e-3) on the 1-D loss (eq. 91) from 0.99 e^{i pi/4} to 0.99 e^{i pi/100}."""
    out = theory.adam_angle(cfg["angle"], ADAM_ANGLE_START, ADAM_ANGLE_TARGET, steps=cfg["steps"], lr=cfg["lr"])
    nu, theta = theory.polar_from(out["w"][-1, 0], out["w"][-1, 1], cfg["angle"])
    return {**out, "final_nu": float(nu), "final_theta": float(theta)}


def adam_angle_runs(scale: str) -> list[Run]:
    return [
        Run(CHAPTER, "adam_angle", angle, adam_angle_run, dict(angle=angle, steps=ADAM_ANGLE_STEPS[scale], lr=1e-3))
        for angle in theory.ANGLE_PARAMS
    ]


def adam_angle_late_loss(col) -> dict:
    """``{angle: median loss over the last quarter of the steps}`` (Adam jitters; no single step is asserted)."""
    return {r.config["angle"]: float(np.median(r["loss"][r["steps"] > 0.75 * r.config["steps"]])) for r in col}


def show_adam_angle(col) -> None:
    """Fig. 7: the loss over (w_nu, w_theta) with Adam's trajectory (top) and the loss against steps (bottom)."""
    fig, ax = plot.figure(3, 2, width=14, height=8)
    for j, angle in enumerate(theory.ANGLE_PARAMS):
        found = col.where(angle=angle)
        if not found:
            continue
        r = found[0]
        w = r["w"]
        star_nu, star_th = abs(ADAM_ANGLE_TARGET), math.pi / 100
        target = (
            math.atanh(star_nu),
            {"polar": star_th, "exp": math.log(star_th), "opt": star_th / theory.angle_scale(star_nu)}[angle],
        )
        lo, hi = np.minimum(w.min(0), target), np.maximum(w.max(0), target)
        pad = 0.15 * (hi - lo) + 0.05
        wn, wt = np.meshgrid(
            np.linspace(lo[0] - pad[0], min(hi[0] + pad[0], 4.5), 200), np.linspace(lo[1] - pad[1], hi[1] + pad[1], 200)
        )
        nu, theta = theory.polar_from(wn, wt, angle)
        L = theory.landscape_complex(nu * np.exp(1j * theta), ADAM_ANGLE_TARGET)
        cs = ax[0, j].contourf(wn, wt, np.log10(np.clip(L, 1e-6, None)), levels=30, cmap="viridis")
        fig.colorbar(cs, ax=ax[0, j], label="log10 loss")
        ax[0, j].plot(w[:, 0], w[:, 1], "k-", linewidth=1)
        ax[0, j].plot(*target, "*", color="gold", markersize=14, markeredgecolor="k")
        ax[0, j].set(xlabel="ω_ν (ν = tanh ω_ν)", ylabel="ω_θ", title=ANGLE_LABELS[angle])
        ax[0, j].grid(False)
        ax[1, j].plot(r["steps"], np.clip(r["loss"], 1e-16, None))
        ax[1, j].set(
            yscale="log",
            xlabel="Adam step",
            ylabel="loss (eq. 91)",
            title=f"final ν = {r['final_nu']:.3f}, θ = {r['final_theta']:.3f}",
        )
    plot.show(
        fig,
        col,
        note="Analytic loss and gradients (no sampling); losses below 1e-16 are clipped.",
        data="closed-form white-noise loss",
    )
