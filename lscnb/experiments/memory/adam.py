"""Figs. 4C, D, 9C, D and 11: Adam's effective learning rates after teacher-student training, per parameter group and
against the number of heads."""

from __future__ import annotations

import numpy as np

from ... import plot
from ...sweep import Run
from .common import CHAPTER, SIZES
from .hessian import S4_GROUP_LABELS
from .teacher import best_losses, teacher_run

# --------------------------------------------------------------------------------------------- Fig. 4C, D
ADAM_GROUPS = {
    "dense": ["A", "B", "C", "D"],
    "complex": ["lam_re", "lam_im", "B_re", "B_im", "C_re", "C_im", "D"],
    "lru": ["w_nu", "w_theta", "w_gamma", "B_re", "B_im", "C_re", "C_im", "D"],
    "s4": ["w_A_re", "w_A_im", "w_delta", "B_re", "B_im", "C_re", "C_im", "D"],
}
ADAM_TITLES = {
    "dense": "(4C) dense RNN",
    "complex": "(4D) complex diagonal RNN",
    "lru": "(9C) LRU",
    "s4": "(9D) S4, Δ initialised to 1",
}
PAPER_ADAM = {
    "dense": "1e-10 to 1e-4 (Fig. 4C axis), lowest for A",
    "complex": "mostly 1e-5 to 1e-3 (Fig. 4D axis)",
    "lru": "Fig. 9C: no values printed (caption: the exp parametrisation tames ν, not θ)",
    "s4": "Fig. 9D: no values printed (Δ initialised to 1, the paper's best S4 init)",
}


def adam_runs(scale: str, models=("dense", "complex"), figure: str = "adam_lr") -> list[Run]:
    """Figs. 4C, D (and 9C, D with ``models=("lru", "s4")``): one student per model trained as in Table 2 at
    nu0 = 0.99 with a constant learning rate 1e-3, Adam's preconditioner read out at the end."""
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            figure,
            f"{model}-s0",
            teacher_run,
            dict(
                model=model,
                nu0=0.99,
                teacher="authors",
                lr=1e-3,
                seed=0,
                steps=s["adam_steps"],
                batch=s["adam_batch"],
                length=s["length"],
                student=s["student"],
                schedule="constant",
                readout=True,
            ),
        )
        for model in models
    ]


def adam_ssm_runs(scale: str) -> list[Run]:
    """Figs. 9C, D: the LRU and the S4 (Delta initialised to 1) in the set-up of Fig. 4C, D."""
    return adam_runs(scale, ("lru", "s4"), "adam_lr_ssm")


def adam_medians(col) -> dict:
    """``{(model, group): median effective learning rate}``."""
    return {(r.config["model"], g): float(np.median(r[f"lr_{g}"])) for r in col for g in ADAM_GROUPS[r.config["model"]]}


def _group_label(g: str) -> str:
    g = S4_GROUP_LABELS.get(g, g)
    for a, b in (("lam_", "λ"), ("w_nu", "ω_ν"), ("w_theta", "ω_θ"), ("w_gamma", "ω_γ"), ("_re", "ʳᵉ"), ("_im", "ⁱᵐ")):
        g = g.replace(a, b)
    return g


def show_adam_lr(col, models=("dense", "complex")) -> None:
    """Figs. 4C, D (or 9C, D): Adam's effective learning rate of every coordinate at the end of training, per group."""
    fig, ax = plot.figure(2, 1, width=11, height=4)
    for i, model in enumerate(models):
        title = ADAM_TITLES[model]
        found = col.where(model=model)
        if not found:
            continue
        r, a = found[0], ax[0, i]
        rng = np.random.default_rng(0)  # horizontal jitter of the dots only: fixed, so the picture does not move
        for j, g in enumerate(ADAM_GROUPS[model]):
            v = r[f"lr_{g}"]
            a.plot(j + 0.15 * rng.standard_normal(v.size), v, ".", markersize=3, alpha=0.6, color=f"C{j}")
        a.axhline(r.config["lr"], color="0.5", linewidth=1)
        a.set_xticks(range(len(ADAM_GROUPS[model])), [_group_label(g) for g in ADAM_GROUPS[model]], fontsize=8)
        a.set(yscale="log", ylabel="lr / (√v̂ + ε)", title=f"{title}: final loss {r['final_loss']:.2g}")
    plot.show(
        fig,
        col,
        note="Adam's preconditioner read from exp_avg_sq after training at a constant learning rate "
        "(grey line); the paper feeds a vector of ones to Optax instead, which also mixes in m.",
        data="linear teacher (n = 10, ν₀ = 0.99) driven by white noise, generated",
    )


def adam_table(col) -> list[dict]:
    rows = []
    for r in col:
        model = r.config["model"]
        for g in ADAM_GROUPS[model]:
            v = np.log10(r[f"lr_{g}"])
            rows.append(
                {
                    "model": model,
                    "group": g,
                    "median log10 η": float(np.median(v)),
                    "10th pct": float(np.percentile(v, 10)),
                    "90th pct": float(np.percentile(v, 90)),
                    "paper (axis range)": PAPER_ADAM[model],
                }
            )
    return rows


def gap_adam_lr(col) -> str:
    m = adam_medians(col)
    if ("dense", "A") in m and ("complex", "lam_re") in m:
        return (
            f"median η(A, dense) {m[('dense', 'A')]:.1e} vs η(λ, complex diagonal) {m[('complex', 'lam_re')]:.1e}; "
            f"paper axes: dense {PAPER_ADAM['dense']}, complex {PAPER_ADAM['complex']}"
        )
    return "not computed"


def gap_adam_ssm(col) -> str:
    m = adam_medians(col)
    if ("lru", "w_theta") in m and ("s4", "w_delta") in m:
        return (
            f"LRU median η(ω_θ) {m[('lru', 'w_theta')]:.1e} vs η(ω_ν) {m[('lru', 'w_nu')]:.1e}; "
            f"S4 η(ω_Aʳᵉ, ω_Aⁱᵐ, ω_Δ) "
            f"{m[('s4', 'w_A_re')]:.1e}, {m[('s4', 'w_A_im')]:.1e}, {m[('s4', 'w_delta')]:.1e}; paper: "
            f"{PAPER_ADAM['lru']}; {PAPER_ADAM['s4']}"
        )
    return "not computed"


# --------------------------------------------------------------------------------------------- Fig. 11
HEADS = {
    "quick": dict(heads=[1, 4, 16, 32], lrs=[3.2e-3], seeds=[0]),
    "full": dict(heads=[1, 2, 4, 8, 16, 32], lrs=[1e-4, 1e-3, 3.2e-3, 1e-2, 3.2e-2], seeds=[0, 1, 2]),
}


def heads_runs(scale: str) -> list[Run]:
    """Fig. 11: dense linear RNNs of 64 units split into ``heads`` independent blocks, trained as in Fig. 3 at
    nu0 = 0.99, with Adam's effective learning rates read out at the end."""
    s, h = SIZES[scale], HEADS[scale]
    return [
        Run(
            CHAPTER,
            "heads",
            f"heads{k}-lr{lr:g}-s{seed}",
            teacher_run,
            dict(
                model=f"heads{k}",
                nu0=0.99,
                teacher="authors",
                lr=lr,
                seed=seed,
                steps=s["steps"],
                batch=s["batch"],
                length=s["length"],
                student=s["student"],
                readout=True,
            ),
        )
        for seed in h["seeds"]
        for k in h["heads"]
        for lr in h["lrs"]
    ]


def heads_summary(col) -> list[dict]:
    """Per number of heads: best-LR mean loss (raw and normalised), parameters, and the median over the best LR's
    seeds of the geometric-mean effective learning rate of A (at the peak learning rate)."""
    best = best_losses(col)
    rows = []
    for (model, _), b in sorted(best.items(), key=lambda kv: int(kv[0][0][5:])):
        rs = col.where(model=model, lr=b["lr"])
        eta = float(np.median([np.exp(np.mean(np.log(r["lr_A"]))) for r in rs]))
        rows.append(
            {
                "heads": int(model[5:]),
                "params": b["params"],
                "best lr": b["lr"],
                "final loss": b["loss"],
                "normalised": b["normalised"],
                "geo-mean η(A)": eta,
                "best lr on grid edge": b["edge"],
            }
        )
    return rows


def gap_heads(col) -> str:
    rows = heads_summary(col)
    return (
        f"loss {rows[0]['normalised']:.2g} (1 head) → {rows[-1]['normalised']:.2g} ({rows[-1]['heads']} heads), "
        "normalised; paper (Fig. 11A, no values printed): the gain appears by 16 heads (4×4 blocks)"
    )


def show_heads(col) -> None:
    rows = heads_summary(col)
    fig, ax = plot.figure(2, 1, width=11, height=3.8)
    k = [r["heads"] for r in rows]
    ax[0, 0].plot(k, [r["normalised"] for r in rows], "o-")
    ax[0, 0].set(
        xscale="log",
        yscale="log",
        xlabel="heads (64 units in all)",
        ylabel="final loss / ½ Var(y*)",
        title="(11A) loss against the number of heads, ν₀ = 0.99",
    )
    ax[0, 1].plot(k, [r["geo-mean η(A)"] for r in rows], "o-", color="C1")
    ax[0, 1].axhline(rows[0]["best lr"], color="0.6", linewidth=0.8)
    ax[0, 1].set(
        xscale="log",
        yscale="log",
        xlabel="heads",
        ylabel="geometric mean of lr_peak / (√v̂ + ε) over A",
        title="(11B) Adam's effective learning rate on A, end of training",
    )
    for a in ax[0]:
        a.set_xticks(k, [str(v) for v in k])
    plot.show(
        fig,
        col,
        data="linear teacher (n = 10, ν₀ = 0.99) driven by white noise, generated",
        note="Best learning rate of the grid per number of heads; the paper's Fig. 11B averages the effective "
        "rate over training, we read it at the end.",
    )
