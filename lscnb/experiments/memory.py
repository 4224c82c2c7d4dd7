"""Chapter "The curse of memory" (Zucchet & Orvieto 2024): sweeps and figures.

Figures: ``sensitivity`` (Fig. 1A: E h^2 and E (dh/dlam)^2 against lam for several input correlations, closed
forms with the corrected eq. 59 against Monte Carlo), ``normalisation`` (Fig. 2: the effect of input
normalisation and the exponential reparametrisation, closed form against forward-mode autodiff) and
``teacher`` (Fig. 3A / Table 1 and Fig. 3B / Table 2: linear teacher-student training, dense linear RNN vs
LRU against nu0, and the ablation from dense to block-diagonal to LRU at nu0 = 0.99).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from .. import plot
from ..config import Profile
from ..models.linear_rnn import DenseLinearRNN, DiagonalLRU, Teacher
from ..sweep import Run, gather
from ..theory import memory as theory
from ..train import fit

CHAPTER = "memory"
NOTEBOOK = "book/memory.ipynb"

SIZES = {
    "quick": dict(lams=[0.9, 0.99, 0.999], rhos=[0.0, 0.9, 1.0], chains=8192,
                  nu0s=[0.68, 0.92, 0.99], steps=400, batch=64, length=300, seeds=[0], student=64,
                  lrs={"dense": [1e-3, 3.2e-3], "lru": [1e-2, 3.2e-2], "block": [1e-3, 3.2e-3],
                       "block128": [1e-3, 3.2e-3], "complex": [1e-3, 3.2e-3], "complex+γ": [1e-3, 3.2e-3]}),
    "full": dict(lams=[0.9, 0.99, 0.999, 0.9999], rhos=[0.0, 0.9, 0.99, 1.0], chains=65536,
                 nu0s=[0.36, 0.68, 0.84, 0.92, 0.96, 0.98, 0.99], steps=10_000, batch=128, length=300,
                 seeds=[0, 1, 2], student=64,
                 lrs={"dense": [3.2e-5, 1e-4, 3.2e-4, 1e-3, 3.2e-3], "lru": [3.2e-3, 1e-2, 3.2e-2, 0.1, 0.32],
                      "block": [3.2e-4, 1e-3, 3.2e-3, 1e-2], "block128": [3.2e-4, 1e-3, 3.2e-3, 1e-2],
                      "complex": [1e-4, 3.2e-4, 1e-3, 3.2e-3, 1e-2], "complex+γ": [1e-4, 3.2e-4, 1e-3, 3.2e-3, 1e-2]}),
}
ABLATION = ["dense", "block", "block128", "complex", "complex+γ", "lru"]
ABLATION_LABELS = {"dense": "RNN (64)", "block": "block diagonal\n(32 × 2×2)", "block128": "more neurons\n(64 × 2×2)",
                   "complex": "complex\ndiagonal", "complex+γ": "+ γ norm", "lru": "LRU\n(+ exp param.)"}
PAPER_TEACHER = {"nu0 = 0.99": {"RNN": "≈ 1e1-1e2 (Fig. 3A, read off the log axis)", "LRU": "≈ 1e-3 (Fig. 3A)"}}


# --------------------------------------------------------------------------------------------- Fig. 1A
def sensitivity_run(cfg: dict, ctx) -> dict:
    """Monte Carlo E h^2 and E s^2 at stationarity for every lam of the config, one input correlation rho."""
    hs, ss = [], []
    for lam in cfg["lams"]:
        h, s = theory.monte_carlo(lam, cfg["rho"], cfg["chains"], seed=cfg["seed"], device=ctx.device)
        hs.append(h)
        ss.append(s)
    return {"mc_h": np.array(hs), "mc_s": np.array(ss)}


def sensitivity_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [Run(CHAPTER, "sensitivity", f"rho{rho}", sensitivity_run,
                dict(rho=rho, lams=s["lams"], chains=s["chains"], seed=0)) for rho in s["rhos"]]


def fig_sensitivity(profile: Profile):
    return gather(sensitivity_runs, profile)


def sensitivity_errors(col) -> dict:
    """Worst relative errors of Monte Carlo against the closed forms, and of the printed eq. 59."""
    out = {"h": 0.0, "s": 0.0, "s_printed": 0.0}
    for r in col:
        lams, rho = np.array(r.config["lams"]), r.config["rho"]
        out["h"] = max(out["h"], float(np.max(np.abs(r["mc_h"] / theory.hidden_variance(lams, rho) - 1))))
        out["s"] = max(out["s"], float(np.max(np.abs(r["mc_s"] / theory.sensitivity_variance(lams, rho) - 1))))
        out["s_printed"] = max(out["s_printed"], float(np.max(np.abs(
            r["mc_s"] / theory.sensitivity_variance_printed(lams, rho) - 1))))
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
    plot.show(fig, col, note="Lines: closed forms (eq. 48 and the corrected eq. 59); dots: Monte Carlo.",
              data="AR(1) inputs with correlation ρ, generated")


# --------------------------------------------------------------------------------------------- Fig. 2
def normalisation_run(cfg: dict, ctx) -> dict:
    """Forward-mode autodiff estimate of E[(dh/domega)^2] for the normalised, exp-reparametrised recurrence."""
    return {"mc": np.array([theory.monte_carlo_reparametrised(lam, cfg["rho"], cfg["chains"], seed=cfg["seed"])
                            for lam in cfg["lams"]])}


def normalisation_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [Run(CHAPTER, "normalisation", f"rho{rho}", normalisation_run,
                dict(rho=rho, lams=[lam for lam in s["lams"] if lam <= 0.999], chains=s["chains"], seed=1))
            for rho in s["rhos"]]


def fig_normalisation(profile: Profile):
    return gather(normalisation_runs, profile)


def normalisation_errors(col) -> float:
    return max(float(np.max(np.abs(r["mc"] / theory.normalised_sensitivity(np.array(r.config["lams"]), r.config["rho"]) - 1)))
               for r in col)


def show_normalisation(col) -> None:
    fig, ax = plot.figure(2, 1, width=11, height=4)
    lam = _lam_axis()
    x = -np.log10(1 - lam)
    rhos = sorted({r.config["rho"] for r in col} | {0.99})
    for i, rho in enumerate(rhos):
        color = f"C{i}"
        ax[0, 0].plot(x, (1 - lam ** 2) * theory.hidden_variance(lam, rho), color=color, label=f"ρ = {rho:g}")
        ax[0, 1].plot(x, theory.normalised_sensitivity(lam, rho), color=color, label=f"ρ = {rho:g}")
        found = col.where(rho=rho)
        if found:
            xl = -np.log10(1 - np.array(found[0].config["lams"]))
            ax[0, 1].plot(xl, found[0]["mc"], "o", color=color, markersize=5)
    ax[0, 0].plot(x, theory.hidden_variance(lam, 1.0), color="0.6", linewidth=0.8, label="ρ = 1, no γ")
    ax[0, 1].plot(x, theory.sensitivity_variance(lam, 1.0), color="0.6", linewidth=0.8, label="ρ = 1, no γ, no reparam.")
    ax[0, 0].set(yscale="log", xlabel=r"$-\log_{10}(1-\lambda)$", ylabel=r"$\gamma^2\,\mathbb{E}[h^2]$",
                 title="(A) input normalisation γ = √(1−λ²)")
    ax[0, 1].set(yscale="log", xlabel=r"$-\log_{10}(1-\lambda)$", ylabel=r"$\mathbb{E}[(\mathrm{d}h/\mathrm{d}\omega)^2]$",
                 title="(B) + λ = exp(−exp(ω))")
    for a in ax[0]:
        a.legend(fontsize=8)
    plot.show(fig, col, note="Lines: closed forms; dots: forward-mode autodiff through 10/(1−λ) steps.",
              data="AR(1) inputs with correlation ρ, generated")


# --------------------------------------------------------------------------------------------- Figs. 3A, 3B
def make_student(model: str, n: int, nu0: float, seed: int):
    """The students of Sec. 4.2 and the ablation of Table 2."""
    if model == "dense":
        return DenseLinearRNN(n, seed=seed)
    if model == "block":
        return DenseLinearRNN(n, heads=n // 2, seed=seed)
    if model == "block128":
        return DenseLinearRNN(2 * n, heads=n, seed=seed)
    if model == "complex":
        return DiagonalLRU(n, nu0=nu0, param="default", gamma=False, seed=seed)
    if model == "complex+γ":
        return DiagonalLRU(n, nu0=nu0, param="default", gamma=True, seed=seed)
    if model == "lru":
        return DiagonalLRU(n, nu0=nu0, param="exp", gamma=True, seed=seed)
    raise ValueError(f"model must be one of {ABLATION}, got {model!r}")


def teacher_run(cfg: dict, ctx) -> dict:
    """Train one student on fresh teacher sequences with Adam and a cosine schedule (peak ``lr`` to 1e-7);
    the final loss is the mean training loss of the last 10% of steps (raw and normalised by 1/2 Var y*)."""
    torch.manual_seed(cfg["seed"])
    teacher = Teacher(10, nu0=cfg["nu0"], seed=1000 + cfg["seed"])
    student = make_student(cfg["model"], cfg["student"], cfg["nu0"], cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    steps, lr = cfg["steps"], cfg["lr"]
    holder = {}

    def optimizer(params):
        holder["opt"] = torch.optim.Adam(params, lr=lr)
        return holder["opt"]

    def cosine(model, step):
        for g in holder["opt"].param_groups:
            g["lr"] = 1e-7 + 0.5 * (lr - 1e-7) * (1 + math.cos(math.pi * min(step + 1, steps) / steps))

    hist = fit(student, lambda step: teacher.sample(cfg["batch"], cfg["length"], gen),
               lambda m, x, y: 0.5 * (m(x) - y).pow(2).mean(), steps=steps, lr=lr, optimizer=optimizer,
               after_step=cosine, checkpoint=ctx.checkpoint, progress=False)
    tail = hist.loss[-max(1, steps // 10):]
    final = float("inf") if hist.diverged or not tail else float(np.mean(tail))
    scale = 0.5 * teacher.output_variance()
    return {"final_loss": final, "normalised_loss": final / scale, "teacher_half_var": scale,
            "diverged": hist.diverged, "params": sum(p.numel() for p in student.parameters())}


def teacher_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    runs = []
    for seed in s["seeds"]:
        for nu0 in s["nu0s"]:
            models = ABLATION if nu0 == 0.99 else ["dense", "lru"]
            for model in models:
                for lr in s["lrs"][model]:
                    runs.append(Run(CHAPTER, "teacher", f"{model}-nu{nu0}-lr{lr:g}-s{seed}", teacher_run,
                                    dict(model=model, nu0=nu0, lr=lr, seed=seed, steps=s["steps"], batch=s["batch"],
                                         length=s["length"], student=s["student"])))
    return runs


def fig_teacher(profile: Profile):
    return gather(teacher_runs, profile, subset="3 of the paper's 10 seeds")


def best_losses(col) -> dict:
    """``{(model, nu0): (mean over seeds of the best-LR final loss, normalised, best lr, params)}``; the best LR
    is picked on the mean final loss, NaN/inf counting as worst (as in the paper's code)."""
    out = {}
    keys = {(r.config["model"], r.config["nu0"]) for r in col}
    for model, nu0 in keys:
        by_lr = {}
        for r in col.where(model=model, nu0=nu0):
            by_lr.setdefault(r.config["lr"], []).append(r)
        def score(rs):
            v = np.mean([x["final_loss"] for x in rs])
            return v if np.isfinite(v) else np.inf
        lr, rs = min(by_lr.items(), key=lambda kv: score(kv[1]))
        out[(model, nu0)] = {"loss": float(np.mean([x["final_loss"] for x in rs])),
                             "normalised": float(np.mean([x["normalised_loss"] for x in rs])),
                             "lr": lr, "params": rs[0]["params"], "edge": lr in (min(by_lr), max(by_lr))}
    return out


def show_teacher(col) -> None:
    best = best_losses(col)
    fig, ax = plot.figure(2, 1, width=11, height=4)
    for model, color, label in (("dense", "C0", "linear RNN (dense, 64)"), ("lru", "C1", "LRU (64)")):
        nus = sorted(nu for (m, nu) in best if m == model)
        ax[0, 0].plot([6 - math.log2(100 * (1 - nu)) for nu in nus], [best[(model, nu)]["normalised"] for nu in nus],
                      "o-", color=color, label=label)
    nus = sorted({nu for (_, nu) in best})
    ax[0, 0].set_xticks([6 - math.log2(100 * (1 - nu)) for nu in nus], [f"{nu:g}" for nu in nus])
    ax[0, 0].set(yscale="log", xlabel="teacher's ν₀", ylabel="final loss / ½ Var(y*)", title="(A) dense RNN vs LRU")
    ax[0, 0].legend(fontsize=8)
    models = [m for m in ABLATION if (m, 0.99) in best]
    ax[0, 1].bar(range(len(models)), [best[(m, 0.99)]["normalised"] for m in models], color="C2")
    ax[0, 1].set_xticks(range(len(models)), [ABLATION_LABELS[m] for m in models], fontsize=7)
    ax[0, 1].set(yscale="log", ylabel="final loss / ½ Var(y*)", title="(B) ablation at ν₀ = 0.99")
    plot.show(fig, col, data="linear teacher (n = 10) driven by white noise, generated")


def teacher_table(col) -> list[dict]:
    best = best_losses(col)
    return [{"model": m, "ν₀": nu, "params": v["params"], "best lr": v["lr"], "final loss": v["loss"],
             "normalised": v["normalised"], "best lr on grid edge": v["edge"]}
            for (m, nu), v in sorted(best.items(), key=lambda kv: (kv[0][1], ABLATION.index(kv[0][0])))]


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
    ax[0, 0].set(yscale="log", xlabel=r"$-\log_{10}(1-\lambda)$",
                 title=f"λ = {lam:g}, ρ = {rho:g}: E h² = {float(theory.hidden_variance(lam, rho)):.3g}, "
                       f"E s² = {float(theory.sensitivity_variance(lam, rho)):.3g}")
    ax[0, 0].legend(fontsize=8)
    return fig


# --------------------------------------------------------------------------------------------- bookkeeping
FIGURES = {"sensitivity": sensitivity_runs, "normalisation": normalisation_runs, "teacher": teacher_runs}


def gap_sensitivity(col) -> str:
    e = sensitivity_errors(col)
    return f"closed forms (paper's own numbers): Monte Carlo within {e['s']:.1%}; printed eq. 59 off by up to {e['s_printed']:.0%}"


def gap_teacher(col) -> str:
    b = best_losses(col)
    if ("dense", 0.99) in b and ("lru", 0.99) in b:
        return (f"ν₀ = 0.99: RNN {b[('dense', 0.99)]['loss']:.3g} vs LRU {b[('lru', 0.99)]['loss']:.3g} (raw); "
                "paper (Fig. 3A, read off the axis): RNN ≈ 1e1–1e2, LRU ≈ 1e-3")
    return "not computed"


REPRODUCES = [
    {"source": "Fig. 1A", "what": "sensitivity E(dh/dλ)² vs λ for input correlations ρ (eq. 59)",
     "figure": "sensitivity", "data": "generated AR(1) inputs", "note": "printed eq. 59 corrected", "gap": gap_sensitivity},
    {"source": "Fig. 1B, C", "what": "1-D teacher-student loss landscapes (λ and angle)", "figure": None,
     "data": "closed form", "note": "drawn from the closed forms in the chapter text (no sweep)"},
    {"source": "Fig. 2", "what": "effect of input normalisation and the exp reparametrisation",
     "figure": "normalisation", "data": "generated AR(1) inputs", "note": ""},
    {"source": "Fig. 3A, Table 1", "what": "final loss vs ν₀: linear RNN vs LRU", "figure": "teacher",
     "data": "generated linear teacher", "note": "3 of 10 seeds; the code's LR grids", "gap": gap_teacher},
    {"source": "Fig. 3B, Table 2", "what": "ablation from dense to block-diagonal to LRU at ν₀ = 0.99",
     "figure": "teacher", "data": "generated linear teacher", "note": "3 of 10 seeds"},
    {"source": "Fig. 4", "what": "Hessian at the optimum; Adam effective learning rates", "figure": None,
     "data": "generated linear teacher", "note": "not reproduced yet"},
    {"source": "Fig. 5", "what": "deep networks at initialisation (cRNN, LRU, Chrono GRU) vs ν₀", "figure": None,
     "data": "BERT embeddings of Wikipedia (not offline)", "note": "not reproduced yet"},
    {"source": "Figs. 6-11, 13-15", "what": "appendix figures (complex angle, Adam, GRU theory, heads)",
     "figure": None, "data": "generated", "note": "not reproduced yet"},
]
