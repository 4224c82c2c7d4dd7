"""Figs. 8, 10, Table 3: which eigenvalues couple in the Hessian (closed forms) and training as the eigenvalues' angles
concentrate (theta0)."""

from __future__ import annotations

import math

import numpy as np

from ... import plot
from ...sweep import Run
from ...theory import memory as theory
from .common import CHAPTER, SIZES
from .teacher import best_losses, teacher_run

# --------------------------------------------------------------------------------------------- Figs. 8, 10A-C
SIMILARITY_LAM0 = 0.99 * np.exp(1j * math.pi / 4)
SIMILARITY_RHOS = [0.0, 0.9, 0.99, 0.999, 1.0]


def show_similarity(rhos=SIMILARITY_RHOS, lam0: complex = SIMILARITY_LAM0) -> None:
    """Fig. 8: ``|S_rho(lam, lam0)|`` over the disc |lam| <= 0.99 (closed form, the corrected eq. 134)."""
    from matplotlib.colors import LogNorm

    nu, th = np.meshgrid(np.linspace(0, 0.99, 150), np.linspace(-math.pi, math.pi, 301))
    lam = nu * np.exp(1j * th)
    fig, ax = plot.figure(len(rhos), 1, width=3.2 * len(rhos), height=3.4)
    for a, rho in zip(ax[0], rhos):
        im = a.pcolormesh(
            lam.real,
            lam.imag,
            np.abs(theory.similarity(lam, lam0, rho)),
            norm=LogNorm(1e-2, 1e5),
            shading="gouraud",
            cmap="viridis",
        )
        a.plot([lam0.real], [lam0.imag], "r+", [lam0.real], [-lam0.imag], "rx", markersize=8)
        a.set(aspect="equal", title=f"ρ = {rho:g}", xlabel="Re λ", ylabel="Im λ" if rho == rhos[0] else "")
        a.grid(False)
    fig.colorbar(im, ax=ax[0, -1], label="|S(λ, λ₀)|")
    plot.show(
        fig,
        note="Closed form (no simulation). + marks λ₀ = 0.99 e^(iπ/4), × its conjugate. The paper's Fig. 8 "
        "was drawn with the printed eq. 134, too low by about 1 + ρ at the conjugate (table below).",
    )


def similarity_table(rhos=SIMILARITY_RHOS, lam0: complex = SIMILARITY_LAM0) -> list[dict]:
    """|S| at the conjugate and at lam0 itself, corrected and as printed (eq. 134)."""
    return [
        {
            "ρ": rho,
            "|S(λ̄₀, λ₀)|": float(abs(theory.similarity(np.conj(lam0), lam0, rho))),
            "printed eq. 134": float(abs(theory.similarity_printed(np.conj(lam0), lam0, rho))),
            "|S(λ₀, λ₀)|": float(abs(theory.similarity(lam0, lam0, rho))),
            "|S(1 − 0.01, λ₀)|": float(abs(theory.similarity(0.99, lam0, rho))),
        }
        for rho in rhos
    ]


CONCENTRATION_THETA0 = [math.pi / 100, math.pi / 10, math.pi]


def concentrated_hessian(theta0: float, rho: float = 0.0, seed: int = 0, n: int = 10) -> np.ndarray:
    """Fig. 10A-C: eq. 143 for ``n`` eigenvalues with moduli area-uniform in [0.99, 0.995] and angles uniform in
    (-theta0, theta0), b and c complex standard normal."""
    rng = np.random.default_rng(seed)
    nu = np.sqrt(rng.uniform(0.99**2, 0.995**2, n))
    lam = nu * np.exp(1j * rng.uniform(-theta0, theta0, n))
    b, c = (rng.standard_normal(n) + 1j * rng.standard_normal(n) for _ in range(2))
    return theory.hessian_diagonal_theory(lam, b, c, rho)


def concentration_table(seeds: int = 20, first: int = 0) -> list[dict]:
    """Median (and range) over draws ``first, ..., first + seeds - 1`` of the off-diagonal share of eq. 143, per
    theta0 and rho."""
    rows = []
    for rho in (0.0, 0.99):
        for theta0 in CONCENTRATION_THETA0:
            f = [theory.offdiagonal_fraction(concentrated_hessian(theta0, rho, s)) for s in range(first, first + seeds)]
            rows.append(
                {
                    "ρ": rho,
                    "θ₀ / π": theta0 / math.pi,
                    "median off-diagonal share": float(np.median(f)),
                    "min": float(np.min(f)),
                    "max": float(np.max(f)),
                }
            )
    return rows


def show_concentrated_hessian(rho: float = 0.0, seed: int = 0) -> None:
    fig, ax = plot.figure(3, 1, width=13, height=4)
    n = 10
    for a, theta0 in zip(ax[0], CONCENTRATION_THETA0):
        H = concentrated_hessian(theta0, rho, seed, n)
        im = a.imshow(np.log10(np.abs(H) + 1e-12), cmap="viridis", vmin=np.log10(np.abs(H).max()) - 6)
        a.axhline(n - 0.5, color="w", linewidth=0.8)
        a.axvline(n - 0.5, color="w", linewidth=0.8)
        a.set_xticks([n / 2 - 0.5, 1.5 * n - 0.5], ["Re λ", "Im λ"])
        a.set_yticks([n / 2 - 0.5, 1.5 * n - 0.5], ["Re λ", "Im λ"])
        a.set_title(
            f"(10) θ₀ = π/{round(math.pi / theta0)}: off-diagonal {theory.offdiagonal_fraction(H):.0%}"
            if theta0 < math.pi
            else f"(10) θ₀ = π: off-diagonal {theory.offdiagonal_fraction(H):.1%}"
        )
        a.grid(False)
        fig.colorbar(im, ax=a, label="log10 |H|")
    plot.show(
        fig,
        note=f"Eq. 143 with the corrected S, ρ = {rho:g}, 10 eigenvalues with |λ| in [0.99, 0.995], "
        f"seed {seed} (closed form, no simulation).",
    )


# --------------------------------------------------------------------------------------------- Fig. 10D, Table 3
THETA0_MODELS = ["dense", "complex", "lru"]
THETA0_LABELS = {"dense": "linear RNN (dense, 64)", "complex": "complex diagonal RNN", "lru": "LRU"}
THETA0 = {
    "quick": dict(
        logs=[-2.0, 0.0], lrs={"dense": [1e-3], "complex": [3.2e-3], "lru": [1e-2]}, seeds=[0], steps=250, batch=32
    ),
    "full": dict(
        logs=[-2.0, -1.5, -1.0, -0.5, 0.0],
        lrs={
            "dense": [3.2e-5, 1e-4, 3.2e-4, 1e-3],
            "complex": [3.2e-4, 1e-3, 3.2e-3, 1e-2],
            "lru": [3.2e-4, 1e-3, 3.2e-3, 1e-2, 3.2e-2, 0.1, 0.32, 1.0],
        },
        seeds=[0, 1, 2],  # 3 of the paper's 10 (declared on the figure)
        steps=10_000,
        batch=128,
    ),
}
TABLE3_GRIDS = {
    "dense": "[-4.5, -4, -3.5, -3]",
    "complex": "[-3.5, -3, ..., -0.5, 0]",
    "lru": "[-3.5, -3, ..., -0.5, 0]",
}
PAPER_THETA0 = (
    "Fig. 10D (no values printed): the gap between the LRU and the complex diagonal RNN widens as "
    "θ₀ → 0; both stay far below the RNN"
)


def theta0_runs(scale: str) -> list[Run]:
    """Fig. 10D (Table 3): teacher and students with eigenvalue angles in ``(-theta0, theta0)``,
    ``theta0 = pi 10^k``, at nu0 = 0.99, trained as in Fig. 3 (cosine schedule) over the paper code's LR grids."""
    t, s = THETA0[scale], SIZES[scale]
    return [
        Run(
            CHAPTER,
            "theta0",
            f"{model}-th{k:g}-lr{lr:g}-s{seed}",
            teacher_run,
            dict(
                model=model,
                nu0=0.99,
                teacher="authors",
                theta0=math.pi * 10**k,
                lr=lr,
                seed=seed,
                steps=t["steps"],
                batch=t["batch"],
                length=s["length"],
                student=s["student"],
            ),
        )
        for seed in t["seeds"]
        for k in t["logs"]
        for model in THETA0_MODELS
        for lr in t["lrs"][model]
    ]


def theta0_grids() -> list[dict]:
    """Table 3's learning-rate grids beside the paper code's (our full profile) and our quick profile's."""
    return [
        {
            "model": THETA0_LABELS[m],
            "Table 3 log10 lr grid": TABLE3_GRIDS[m],
            "code grid (full)": ", ".join(f"{v:g}" for v in THETA0["full"]["lrs"][m]),
            "quick": ", ".join(f"{v:g}" for v in THETA0["quick"]["lrs"][m]),
        }
        for m in THETA0_MODELS
    ]


def theta0_table(col) -> list[dict]:
    """Per theta0: each model's best-LR normalised loss and the complex diagonal ÷ LRU ratio."""
    best = best_losses(col, by="theta0")
    rows = []
    for th in sorted({th for _, th in best}):
        row = {"θ₀ / π": th / math.pi}
        for m in THETA0_MODELS:
            row[f"{m} (normalised)"] = best[(m, th)]["normalised"]
            row[f"{m} best lr"] = best[(m, th)]["lr"]
        row["complex ÷ LRU"] = best[("complex", th)]["normalised"] / best[("lru", th)]["normalised"]
        row["LRU ÷ RNN"] = best[("lru", th)]["normalised"] / best[("dense", th)]["normalised"]
        rows.append(row)
    return rows


def gap_theta0(col) -> str:
    rows = theta0_table(col)
    lo, hi = rows[0], rows[-1]
    return (
        f"complex ÷ LRU: {lo['complex ÷ LRU']:.2g} at θ₀ = {lo['θ₀ / π']:.3g}π, {hi['complex ÷ LRU']:.2g} at "
        f"θ₀ = {hi['θ₀ / π']:.3g}π; paper: {PAPER_THETA0}"
    )


def show_theta0(col) -> None:
    """Fig. 10D: best-LR final loss (normalised) against theta0 for the three students; dots are the seeds."""
    best = best_losses(col, by="theta0")
    fig, ax = plot.figure(1, 1, width=6.5, height=4)
    for i, m in enumerate(THETA0_MODELS):
        ths = sorted(th for (mm, th) in best if mm == m)
        ax[0, 0].plot(
            [th / math.pi for th in ths],
            [best[(m, th)]["normalised"] for th in ths],
            "o-",
            color=f"C{i}",
            label=THETA0_LABELS[m],
        )
        for th in ths:
            seeds = col.where(model=m, theta0=th, lr=best[(m, th)]["lr"])
            ax[0, 0].plot(
                [th / math.pi] * len(seeds), [r["normalised_loss"] for r in seeds], ".", color=f"C{i}", markersize=3
            )
    ax[0, 0].set(
        xscale="log",
        yscale="log",
        xlabel="θ₀ / π (eigenvalue angles in (−θ₀, θ₀))",
        ylabel="final loss / ½ Var(y*)",
        title="(10D) concentrating the eigenvalues, ν₀ = 0.99",
    )
    ax[0, 0].legend(fontsize=8)
    plot.show(
        fig,
        col,
        note="Best learning rate of the grid per model and θ₀; teacher and students share θ₀.",
        data="linear teacher (n = 10, ν₀ = 0.99, angles in (−θ₀, θ₀)) driven by white noise, generated",
    )
