"""Figs. 4A, B, 9A, 9B: the Hessian at the optimum of dense, complex diagonal, LRU and S4 students of 4-unit
teachers."""

from __future__ import annotations

import numpy as np
import torch

from ... import hessian as curvature
from ... import plot
from ...models.linear_rnn import DenseLinearRNN, DiagonalLRU, DiagonalS4, conjugate_pair_system
from ...sweep import Run, RunContext
from .common import CHAPTER, SIZES

# --------------------------------------------------------------------------------------------- Fig. 4A, B
RECURRENT = {
    "dense": ("A",),
    "diag": ("lam_re", "lam_im"),
    "lru": ("w_nu", "w_theta"),
    "s4": ("w_A_re", "w_A_im", "w_delta"),
    "s4_1": ("w_A_re", "w_A_im", "w_delta"),
}
S4_DELTAS = {"s4": 0.01, "s4_1": 1.0}  # Fig. 9B sets Delta = 0.01; its caption describes Delta = 1 (not plotted)


def hessian_run(cfg: dict, ctx: RunContext) -> dict:
    """Hessian of the loss at the optimum (float64) for the students ``cfg["students"]`` (dense and complex diagonal
    by default, Fig. 4A, B; ``lru`` Fig. 9A; ``s4`` / ``s4_1`` the S4 with Delta = 0.01 / 1, Fig. 9B) of one 4-unit,
    two-conjugate-pair teacher, with its spectrum and eigenvector localisation."""
    system = conjugate_pair_system(ctx.seed, nu=cfg["nu"])
    students = {
        "dense": DenseLinearRNN.from_system(system["A"], system["B"], system["C"], system["D"]),
        "diag": DiagonalLRU.from_system(system["lam"], system["b"], system["c"], system["D"]),
        "lru": DiagonalLRU.from_system(system["lam"], system["b"], system["c"], system["D"], param="exp"),
    }
    students.update(
        {
            name: DiagonalS4.from_system(system["lam"], system["b"], system["c"], system["D"], delta=delta)
            for name, delta in S4_DELTAS.items()
        }
    )

    gen = torch.Generator().manual_seed(ctx.seed)
    x = torch.randn(cfg["batch"], cfg["length"], generator=gen, dtype=torch.float64)
    with torch.no_grad():
        y = students["dense"](x)
    out = {}
    for name in cfg.get("students", ("dense", "diag")):
        model = students[name]
        H = curvature.loss_hessian(model, x, lambda o: 0.5 * (o - y).pow(2).mean())
        vals, vecs = curvature.spectrum(H)
        groups = curvature.parameter_groups(model)
        mass = curvature.group_mass(vecs[:, :3], groups)
        with torch.no_grad():
            loss = float(0.5 * (model(x) - y).pow(2).mean())
        out.update(
            {
                f"H_{name}": H.numpy(),
                f"eig_{name}": vals.numpy(),
                f"vecs_{name}": vecs[:, :10].numpy(),
                f"participation_{name}": float(curvature.participation(vecs[:, :4]).mean()),
                f"recurrent_mass_{name}": float(sum(mass[g] for g in RECURRENT[name]).min()),
                f"optimum_loss_{name}": loss,
                f"groups_{name}": [[g, s.start, s.stop] for g, s in groups.items()],
            }
        )
        if name == "lru":  # the sharp directions: eigenvalues within 1% of the largest
            sharp = int((vals >= 0.01 * vals[0]).sum())
            top = curvature.group_mass(vecs[:, :sharp], groups)
            out.update(
                {
                    "sharp_lru": sharp,
                    "theta_mass_lru": float(top["w_theta"].min()),
                    "nu_mass_lru": float(top["w_nu"].max()),
                    "gap_lru": float(vals[0] / vals[sharp]),
                }
            )
        if name in S4_DELTAS:  # where the curvature sits: largest |H| per recurrent block, top eigenvector's mass
            top = curvature.group_mass(vecs[:, :1], groups)
            out.update(
                {
                    f"block_max_{name}": {g: float(H[groups[g], groups[g]].abs().max()) for g in RECURRENT[name]},
                    f"top_mass_{name}": {g: float(top[g][0]) for g in RECURRENT[name]},
                }
            )
    return out


def hessian_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "hessian",
            f"seed{seed}",
            hessian_run,
            dict(seed=seed, nu=0.99, batch=s["hessian_batch"], length=300),
        )
        for seed in s["hessian_seeds"]
    ]


def _group_ticks(ax, groups, axis="both"):
    pos = [(a + b) / 2 - 0.5 for _, a, b in groups]
    labels = [g.replace("lam_", "λ").replace("_re", "ʳᵉ").replace("_im", "ⁱᵐ") for g, _, _ in groups]
    for _, a, _ in groups[1:]:
        if axis in ("both", "x"):
            ax.axvline(a - 0.5, color="w", linewidth=0.8)
        if axis in ("both", "y"):
            ax.axhline(a - 0.5, color="w", linewidth=0.8)
    if axis in ("both", "x"):
        ax.set_xticks(pos, labels, fontsize=7)
    if axis in ("both", "y"):
        ax.set_yticks(pos, labels, fontsize=7)


def show_hessian(col, seed: int = 0) -> None:
    """Fig. 4A, B for one teacher: log10 |H| with the parameter groups marked, |top-10 eigenvectors|, and the
    spectrum; one row per student."""
    r = col.one(seed=seed) if col.where(seed=seed) else col[0]
    fig, ax = plot.figure(3, 2, width=13, height=7.5)
    for row, (name, title) in enumerate((("dense", "(4A) dense"), ("diag", "(4B) complex diagonal"))):
        H, vecs, eig, groups = r[f"H_{name}"], r[f"vecs_{name}"], r[f"eig_{name}"], r.metrics[f"groups_{name}"]
        im = ax[row, 0].imshow(np.log10(np.abs(H) + 1e-8), cmap="viridis", vmin=-4)
        fig.colorbar(im, ax=ax[row, 0], label="log10 |H|")
        _group_ticks(ax[row, 0], groups)
        ax[row, 0].set_title(f"{title}: Hessian at the optimum")
        im = ax[row, 1].imshow(np.abs(vecs).T, cmap="magma", aspect="auto", vmin=0, vmax=1)
        fig.colorbar(im, ax=ax[row, 1], label="|eigenvector entry|")
        _group_ticks(ax[row, 1], groups, axis="x")
        ax[row, 1].set(
            ylabel="eigenvector (by eigenvalue)",
            title=f"top 10: {r.metrics[f'participation_{name}']:.1f} coordinates (top 4)",
        )
        ax[row, 2].plot(np.arange(1, len(eig) + 1), np.clip(eig, 1e-8, None), "o", markersize=4)
        ax[row, 2].set(yscale="log", ylim=(1e-8, 10 * eig.max()), xlabel="rank", ylabel="eigenvalue", title="spectrum")
    plot.show(
        fig,
        col,
        note=f"Teacher seed {r.config['seed']}; both students equal the teacher, so the loss is "
        f"{max(r['optimum_loss_dense'], r['optimum_loss_diag']):.0e} and H = JᵀJ/N (eq. 11).",
        data="4-unit linear teacher with two conjugate eigenvalue pairs near 0.99, white-noise inputs, generated",
    )


def hessian_table(col) -> list[dict]:
    return [
        {
            "seed": r.config["seed"],
            "top eig dense": float(r["eig_dense"][0]),
            "top eig diag": float(r["eig_diag"][0]),
            "dense ÷ diag": float(r["eig_dense"][0] / r["eig_diag"][0]),
            "coords dense": r["participation_dense"],
            "coords diag": r["participation_diag"],
            "recurrent mass (min top 3) dense": r["recurrent_mass_dense"],
            "recurrent mass (min top 3) diag": r["recurrent_mass_diag"],
        }
        for r in sorted(col, key=lambda r: r.config["seed"])
    ]


def gap_hessian(col) -> str:
    d = np.mean([r["participation_dense"] for r in col])
    c = np.mean([r["participation_diag"] for r in col])
    return (
        f"top-4 eigenvectors occupy {c:.1f} coordinates (complex diagonal) vs {d:.1f} (dense) of 25; paper "
        "(Fig. 4A, B, no values printed): concentrated vs spread, spectra 'almost the same'"
    )


# --------------------------------------------------------------------------------------------- Fig. 9A
def hessian_lru_runs(scale: str) -> list[Run]:
    """Fig. 9A: the Hessian at the optimum of the LRU (exp parametrisation, gamma) on the teachers of Fig. 4."""
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "hessian_lru",
            f"seed{seed}",
            hessian_run,
            dict(seed=seed, nu=0.99, batch=s["hessian_batch"], length=300, students=["lru"]),
        )
        for seed in s["hessian_seeds"]
    ]


def hessian_lru_table(col) -> list[dict]:
    return [
        {
            "seed": r.config["seed"],
            "top eig": float(r["eig_lru"][0]),
            "sharp directions (≥ 1% of top)": r["sharp_lru"],
            "their min mass on ω_θ": r["theta_mass_lru"],
            "their max mass on ω_ν": r["nu_mass_lru"],
            "top ÷ next eigenvalue": r["gap_lru"],
        }
        for r in sorted(col, key=lambda r: r.config["seed"])
    ]


def _hessian_panels(ax, H, vecs, groups, title: str, vec_title: str) -> None:
    """Figs. 9A/9B's first two panels: log10 |H| and |top eigenvectors|, ticked by parameter group."""
    fig = ax[0].figure
    fig.colorbar(ax[0].imshow(np.log10(np.abs(H) + 1e-8), cmap="viridis", vmin=-4), ax=ax[0], label="log10 |H|")
    _group_ticks(ax[0], groups)
    ax[0].set_title(title)
    fig.colorbar(
        ax[1].imshow(np.abs(vecs).T, cmap="magma", aspect="auto", vmin=0, vmax=1), ax=ax[1], label="|eigenvector entry|"
    )
    _group_ticks(ax[1], groups, axis="x")
    ax[1].set(ylabel="eigenvector (by eigenvalue)", title=vec_title)


def show_hessian_lru(col, seed: int = 0) -> None:
    """Fig. 9A for one teacher: log10 |H|, |top-10 eigenvectors| and the spectrum of the LRU at the optimum."""
    r = col.one(seed=seed) if col.where(seed=seed) else col[0]
    fig, ax = plot.figure(3, 1, width=13, height=3.9)
    H, vecs, eig, groups = r["H_lru"], r["vecs_lru"], r["eig_lru"], r.metrics["groups_lru"]
    groups = [
        [g.replace("w_nu", "ω_ν").replace("w_theta", "ω_θ").replace("w_gamma", "ω_γ"), a, b] for g, a, b in groups
    ]
    _hessian_panels(
        ax[0],
        H,
        vecs,
        groups,
        "(9A) LRU: Hessian at the optimum",
        f"the {r['sharp_lru']} sharp ones: ≥ {r['theta_mass_lru']:.2%} on ω_θ",
    )
    ax[0, 2].plot(np.arange(1, len(eig) + 1), np.clip(eig, 1e-8, None), "o", markersize=4)
    ax[0, 2].set(yscale="log", ylim=(1e-8, 10 * eig.max()), xlabel="rank", ylabel="eigenvalue", title="spectrum")
    plot.show(
        fig,
        col,
        note=f"Teacher seed {r.config['seed']} of Fig. 4; the LRU equals the teacher (loss "
        f"{r['optimum_loss_lru']:.0e}).",
        data="4-unit linear teacher with two conjugate eigenvalue pairs near 0.99, white-noise inputs, generated",
    )


# --------------------------------------------------------------------------------------------- Fig. 9B
S4_GROUP_LABELS = {"w_A_re": "ω_Aʳᵉ", "w_A_im": "ω_Aⁱᵐ", "w_delta": "ω_Δ"}
PAPER_S4_HESSIAN = (
    "Fig. 9B (Δ = 0.01, no values printed): large entries on ω_Δ, not on ω_Aⁱᵐ; caption: at Δ = 1 "
    "large entries on all of ω_Aʳᵉ, ω_Aⁱᵐ, ω_Δ; the paper's S4 'optimum' had loss 1.8e-6"
)


def hessian_s4_runs(scale: str) -> list[Run]:
    """Fig. 9B: the Hessian at the optimum of the modified S4 (App. A.3) on the teachers of Fig. 4, with the step
    Delta = 0.01 (the figure) and Delta = 1 (its caption): ``w_A = log(lam) / Delta``, ``B = P^-1 B* / Delta``."""
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "hessian_s4",
            f"seed{seed}",
            hessian_run,
            dict(seed=seed, nu=0.99, batch=s["hessian_batch"], length=300, students=list(S4_DELTAS)),
        )
        for seed in s["hessian_seeds"]
    ]


def hessian_s4_table(col) -> list[dict]:
    """Per teacher and Delta: the largest |H| entry of each recurrent block and the top eigenvector's mass on them."""
    rows = []
    for r in sorted(col, key=lambda r: r.config["seed"]):
        for name, delta in S4_DELTAS.items():
            rows.append(
                {
                    "seed": r.config["seed"],
                    "Δ": delta,
                    "top eig": float(r[f"eig_{name}"][0]),
                    **{f"max |H| {S4_GROUP_LABELS[g]}": v for g, v in r[f"block_max_{name}"].items()},
                    **{f"top vector on {S4_GROUP_LABELS[g]}": v for g, v in r[f"top_mass_{name}"].items()},
                    "loss at the optimum": r[f"optimum_loss_{name}"],
                }
            )
    return rows


def gap_hessian_s4(col) -> str:
    rows = [r for r in hessian_s4_table(col) if r["Δ"] == S4_DELTAS["s4"]]
    share = np.median([r["top vector on ω_Δ"] for r in rows])
    ratio = np.median([r["max |H| ω_Δ"] / max(r["max |H| ω_Aʳᵉ"], r["max |H| ω_Aⁱᵐ"]) for r in rows])
    return (
        f"Δ = 0.01: top eigenvector {share:.1%} on ω_Δ, its block's largest entry {ratio:.0f}× ω_A's (medians "
        f"over teachers); paper: {PAPER_S4_HESSIAN}"
    )


def show_hessian_s4(col, seed: int = 0) -> None:
    """Fig. 9B for one teacher (Delta = 0.01): log10 |H|, |top-10 eigenvectors| and the spectrum; the spectrum at
    Delta = 1 beside it."""
    r = col.one(seed=seed) if col.where(seed=seed) else col[0]
    fig, ax = plot.figure(3, 1, width=13, height=3.9)
    H, vecs, groups = r["H_s4"], r["vecs_s4"], r.metrics["groups_s4"]
    groups = [[S4_GROUP_LABELS.get(g, g), a, b] for g, a, b in groups]
    _hessian_panels(
        ax[0],
        H,
        vecs,
        groups,
        "(9B) S4, Δ = 0.01: Hessian at the optimum",
        f"top one: {r['top_mass_s4']['w_delta']:.1%} on ω_Δ",
    )
    for name, style in (("s4", "o"), ("s4_1", "x")):
        e = r[f"eig_{name}"]
        ax[0, 2].plot(
            np.arange(1, len(e) + 1), np.clip(e, 1e-8, None), style, markersize=4, label=f"Δ = {S4_DELTAS[name]:g}"
        )
    ax[0, 2].set(
        yscale="log",
        ylim=(1e-8, 10 * max(r["eig_s4"].max(), r["eig_s4_1"].max())),
        xlabel="rank",
        ylabel="eigenvalue",
        title="spectrum",
    )
    ax[0, 2].legend(fontsize=8)
    plot.show(
        fig,
        col,
        note=f"Teacher seed {r.config['seed']} of Fig. 4; the S4 equals the teacher (loss "
        f"{r['optimum_loss_s4']:.0e}) with ω_A = log(λ)/Δ and B = P⁻¹B*/Δ.",
        data="4-unit linear teacher with two conjugate eigenvalue pairs near 0.99, white-noise inputs, generated",
    )
