"""Fig. 4 and backprop: the peephole LSTM's Jacobian spectrum against the corrected moments, and tied against
untied gradient decay."""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import jacobian, plot
from ...models.unified import (
    critical_theta,
    fresh_product,
    gated_step,
    sample_weights,
    standard_theta,
    uniform_theta,
    update,
)
from ...sweep import Run, RunContext
from ...theory import meanfield as mf
from .common import CHAPTER, SIZES, theta_config, theta_from

# --------------------------------------------------------------------------------------------- Fig. 4
# Fig. 4's two peephole initialisations (one far from dynamical isometry, one close) and E.4
SPECTRUM_THETAS = {
    "σ² = 4, μ_f = 1": uniform_theta("peephole", 4.0, 1.0, {"f": 1.0}),
    "σ² = 1, μ_f = 1": uniform_theta("peephole", 1.0, 1.0, {"f": 1.0}),
    "near DI: σ² = 0.01, μ_f = 4": uniform_theta("peephole", 0.01, 1.0, {"f": 4.0}),
}


def spectrum_run(cfg: dict, ctx: RunContext) -> dict:
    """Squared singular values of ``dc^T/dc^{T-1}`` of an untied peephole LSTM after ``steps`` steps on
    Gaussian inputs (one realisation per seed, App. B), with the theory's moments."""
    theta = theta_from(cfg["theta"])
    n, T = cfg["width"], cfg["steps"]
    device = torch.device(ctx.device)
    values = []
    for seed in range(ctx.seed, ctx.seed + cfg["seeds"]):
        gen = torch.Generator(device=device).manual_seed(seed)
        c = torch.randn(1, n, generator=gen, dtype=torch.float64, device=device)
        for _t in range(T - 1):  # fresh weights every step, sampled in distribution (exact, O(N) per step)
            z = torch.randn(1, n, generator=gen, dtype=torch.float64, device=device)
            c = update(
                "peephole",
                c,
                lambda k, x: fresh_product(x, theta.s2(k), n, gen) + fresh_product(z, theta.n2(k), n, gen) + theta.m(k),
            )
        c = c[0]
        # the last step with explicit matrices, whose Jacobian we take
        W, U, b = sample_weights(theta, n, n, generator=gen, dtype=torch.float64, device=device)
        z = torch.randn(n, generator=gen, dtype=torch.float64, device=device)
        J = torch.func.jacrev(lambda s: gated_step("peephole", s, z, W, U, b))(c)
        values.append(torch.linalg.svdvals(J).pow(2).cpu().numpy())
    mom = mf.jacobian_moments(theta)
    return {"sq_singular_values": np.array(values), "m1": mom["m1"], "var": mom["var"], "var_paper": mom["var_paper"]}


def spectrum_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "spectrum",
            f"theta{i}",
            spectrum_run,
            dict(label=label, theta=theta_config(th), width=s["spec_width"], steps=100, seeds=s["spec_seeds"], seed=0),
        )
        for i, (label, th) in enumerate(SPECTRUM_THETAS.items())
    ]


def spectrum_table(col) -> list[dict]:
    rows = []
    for r in col:
        v = r["sq_singular_values"]
        rows.append(
            {
                "Θ": r.config["label"],
                "empirical mean": float(v.mean()),
                "theory m₁": r["m1"],
                "empirical variance": float(v.var(axis=1).mean()),
                "theory, corrected": r["var"],
                "theory, as printed (18)": r["var_paper"],
            }
        )
    return rows


def show_spectrum(col) -> None:
    fig, ax = plot.figure(len(col), 1, width=4 * len(col), height=3.3)
    for a, r in zip(ax[0], col):
        v = r["sq_singular_values"]
        a.hist(v.ravel(), bins=60, density=True, color="C0", alpha=0.6)
        for x in (v.mean(), v.mean() - v.std(), v.mean() + v.std()):
            a.axvline(x, color="C3", linewidth=1)
        sd = math.sqrt(max(r["var"], 0.0))
        for x in (r["m1"], r["m1"] - sd, r["m1"] + sd):
            a.axvline(x, **plot.THEORY)
        a.set(title=r.config["label"], xlabel="squared singular value of $J$")
    ax[0, 0].set_ylabel("density")
    plot.show(
        fig,
        col,
        note="Red: empirical mean ± std; dotted: theory (corrected second moment).",
        data="Gaussian inputs, generated",
    )


def gap_spectrum(col) -> str:
    rs = spectrum_table(col)
    worst = max(abs(r["empirical mean"] / r["theory m₁"] - 1) for r in rs)
    return f"paper gives no numbers; ours: mean within {worst:.1%} of m₁"


# --------------------------------------------------------------------------------------------- backprop
def backprop_run(cfg: dict, ctx: RunContext) -> dict:
    """``||dL/dc_t||`` through a peephole LSTM with tied or untied weights, L reading ``c_T``; its fitted
    per-step factor against the untied theory's ``sqrt(m1)``."""
    theta = theta_from(cfg["theta"])
    n, T = cfg["width"], cfg["length"]
    rates, profiles = [], []
    for seed in range(ctx.seed, ctx.seed + cfg["seeds"]):
        gen = torch.Generator().manual_seed(seed)
        weights = sample_weights(theta, n, 1, generator=gen)
        c = torch.randn(n, generator=gen, dtype=torch.float64).requires_grad_(True)
        states = []
        for t in range(T):
            if not cfg["tied"] and t > 0:
                weights = sample_weights(theta, n, 1, generator=gen)
            c = gated_step("peephole", c, torch.randn(1, generator=gen, dtype=torch.float64), *weights)
            c.retain_grad()
            states.append(c)
        readout = torch.randn(n, generator=gen, dtype=torch.float64) / math.sqrt(n)
        (states[-1] @ readout).backward()
        norms = torch.stack([jacobian.stable_norm(s.grad) for s in states])
        profiles.append(norms.numpy())
        rates.append(float(jacobian.decay_rate(norms, start=5)))
    return {
        "profiles": np.array(profiles),
        "rates": np.array(rates),
        "theory_rate": math.sqrt(mf.jacobian_moments(theta)["m1"]),
        "final_Q": float(states[-1].detach().pow(2).mean()),
    }


def backprop_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    inits = {"standard": standard_theta("peephole", 1, 600), "critical": critical_theta("peephole")}
    return [
        Run(
            CHAPTER,
            "backprop",
            f"{name}-{'tied' if tied else 'untied'}",
            backprop_run,
            dict(
                init=name,
                theta=theta_config(th),
                tied=tied,
                width=s["bp_width"],
                length=s["bp_length"],
                seeds=3,
                seed=0,
            ),
        )
        for name, th in inits.items()
        for tied in (False, True)
    ]


def backprop_table(col) -> list[dict]:
    return [
        {
            "init": r.config["init"],
            "weights": "tied" if r.config["tied"] else "untied",
            "measured factor per step": float(np.mean(r["rates"])),
            "theory √m₁ (untied)": r["theory_rate"],
            "final Q of c": r["final_Q"],
        }
        for r in col
    ]


def show_backprop(col) -> None:
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    for r, color in zip(col, ("C0", "C1", "C2", "C3")):
        prof = r["profiles"].mean(0)
        k = np.arange(len(prof))[::-1]
        ax[0, 0].plot(k, prof, color=color, label=f"{r.config['init']}, {'tied' if r.config['tied'] else 'untied'}")
        ax[0, 0].plot(k, prof[-1] * r["theory_rate"] ** k, **{**plot.THEORY, "color": color})
    ax[0, 0].set(yscale="log", xlabel="steps back from the loss, T − t", ylabel=r"$\|\partial L/\partial c_t\|$")
    ax[0, 0].legend(fontsize=8)
    plot.show(
        fig, col, note="Dotted: the untied mean-field prediction √m₁ per step.", data="Gaussian inputs, generated"
    )
