"""Figs. 3A, 3B, Tables 1, 2: linear teacher-student training; the students (dense RNN to LRU), the training run
that the other teacher-student figures reuse, and the best-learning-rate losses they are read by."""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import hessian as curvature
from ... import plot
from ...batched import fit_batched, twin
from ...models.linear_rnn import DenseLinearRNN, DiagonalLRU, DiagonalS4, Teacher
from ...models.zucchet_teacher import MAX_PHASE
from ...sweep import Run, RunContext
from ...train import fit, make_optimizer
from .common import CHAPTER, SIZES

ABLATION = ["dense", "block", "block128", "complex", "complex+γ", "lru"]
ABLATION_LABELS = {
    "dense": "RNN (64)",
    "block": "block diagonal\n(32 × 2×2)",
    "block128": "more neurons\n(64 × 2×2)",
    "complex": "complex\ndiagonal",
    "complex+γ": "+ γ norm",
    "lru": "LRU\n(+ exp param.)",
}


# --------------------------------------------------------------------------------------------- Figs. 3A, 3B
def make_student(model: str, n: int, nu0: float, seed: int, theta0: float = math.pi):
    """The students of Sec. 4.2, the ablation of Table 2 and the S4 of App. A.3 (eigenvalue angles in
    ``(-theta0, theta0)``, Table 3)."""
    if model == "dense":
        return DenseLinearRNN(n, seed=seed, theta0=theta0)
    if model == "block":
        return DenseLinearRNN(n, heads=n // 2, seed=seed)
    if model == "block128":
        return DenseLinearRNN(2 * n, heads=n, seed=seed)
    if model == "complex":
        return DiagonalLRU(n, nu0=nu0, theta0=theta0, param="default", gamma=False, seed=seed)
    if model == "complex+γ":
        return DiagonalLRU(n, nu0=nu0, theta0=theta0, param="default", gamma=True, seed=seed)
    if model == "lru":
        return DiagonalLRU(n, nu0=nu0, theta0=theta0, param="exp", gamma=True, seed=seed)
    if model == "s4":
        return DiagonalS4(n, nu0=nu0, theta0=theta0, seed=seed)
    if model.startswith("heads") and model[5:].isdigit():
        return DenseLinearRNN(n, heads=int(model[5:]), seed=seed)
    raise ValueError(f"model must be one of {ABLATION}, 's4' or 'heads<k>', got {model!r}")


def _cosine(peak: float, step: int, steps: int) -> float:
    """The rate of step ``step``: cosine from ``peak`` at step 0 to 1e-7 at the last."""
    return 1e-7 + 0.5 * (peak - 1e-7) * (1 + math.cos(math.pi * min(step, steps) / steps))


def _student(cfg: dict, ctx: RunContext):
    return make_student(cfg["model"], cfg["student"], cfg["nu0"], ctx.seed, cfg.get("theta0", MAX_PHASE))


def _setup(cfg: dict, ctx: RunContext):
    """The teacher, the seed's student, and the seed's stream of batches. The teacher is the one every run of the
    paper's code learns (:meth:`Teacher.from_authors`: one teacher, the same for every seed; the runs' configs say
    ``teacher="authors"``), with the code's ``max_phase`` 3.14 unless the run sets ``theta0``."""
    torch.manual_seed(ctx.seed)
    teacher = Teacher.from_authors(cfg["nu0"], cfg.get("theta0", MAX_PHASE))
    student = _student(cfg, ctx)
    gen = torch.Generator().manual_seed(ctx.seed)
    return teacher, student, gen, lambda step: teacher.sample(cfg["batch"], cfg["length"], gen)


def _half_mse(m, x, y):
    return 0.5 * (m(x) - y).pow(2).mean()


def _outputs(hist, teacher, student, steps: int) -> dict:
    """The final loss (mean training loss of the last 10% of steps), raw and normalised by 1/2 Var y*."""
    tail = hist.loss[-max(1, steps // 10) :]
    final = float("inf") if hist.diverged or not tail else float(np.mean(tail))
    scale = 0.5 * teacher.output_variance()
    return {
        "final_loss": final,
        "normalised_loss": final / scale,
        "teacher_half_var": scale,
        "diverged": hist.diverged,
        "params": sum(p.numel() for p in student.parameters()),
    }


def teacher_run(cfg: dict, ctx: RunContext) -> dict:
    """Train one student on fresh teacher sequences with Adam and a cosine schedule (peak ``lr`` to 1e-7);
    the final loss is the mean training loss of the last 10% of steps (raw and normalised by 1/2 Var y*)."""
    teacher, student, gen, draw = _setup(cfg, ctx)
    steps, lr = cfg["steps"], cfg["lr"]
    holder = {}

    def optimizer(params):
        holder["opt"] = make_optimizer(params, "adam", lr)
        return holder["opt"]

    def cosine(model, step):
        if cfg.get("schedule", "cosine") == "constant":
            return
        for g in holder["opt"].param_groups:
            g["lr"] = _cosine(lr, step + 1, steps)

    hist = fit(
        student,
        draw,
        _half_mse,
        steps=steps,
        lr=lr,
        optimizer=optimizer,
        after_step=cosine,
        checkpoint=ctx.checkpoint,
        progress=False,
        device=ctx.device,
        generators=(gen,),
    )
    out = _outputs(hist, teacher, student, steps)
    if cfg.get("readout"):  # at the peak learning rate (the cosine schedule ends at 1e-7)
        scale = lr / holder["opt"].param_groups[0]["lr"]
        for name, eta in curvature.adam_effective_lr(holder["opt"], student).items():
            out[f"lr_{name}"] = scale * eta.reshape(-1).double().cpu().numpy()
    return out


@twin(teacher_run, key=lambda cfg: {k: v for k, v in cfg.items() if k != "lr"})
def teacher_group(cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`teacher_run` of runs that differ only in their peak learning rate: one teacher, one initial student and
    one stream of batches (the seed's), the students trained together, each on its own cosine schedule
    (:func:`lscnb.batched.fit_batched`: the same runs up to floating-point rounding; ``--executor batched``). Runs
    that read out Adam's rates are trained one by one."""
    cfg, ctx = cfgs[0], ctxs[0]
    if cfg.get("readout"):
        return [teacher_run(c, x) for c, x in zip(cfgs, ctxs)]
    teacher, student, gen, draw = _setup(cfg, ctx)
    students = [student] + [_student(cfg, ctx) for _ in cfgs[1:]]
    steps, peaks = cfg["steps"], [c["lr"] for c in cfgs]
    constant = cfg.get("schedule", "cosine") == "constant"
    hists = fit_batched(
        students,
        draw,
        _half_mse,
        steps=steps,
        lr=peaks,
        schedule=None if constant else lambda k: [_cosine(p, k, steps) for p in peaks],
        in_dims=None,
        progress=ctx.progress,
        desc=f"{cfg['model']} nu0={cfg['nu0']} x{len(cfgs)} (batched)",
        device=ctx.device,
        checkpoint=ctx.checkpoint,
        generators=(gen,),
    )
    return [_outputs(h, teacher, m, steps) for h, m in zip(hists, students)]


def teacher_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    runs = []
    for seed in s["seeds"]:
        for nu0 in s["nu0s"]:
            models = ABLATION if nu0 == 0.99 else ["dense", "lru"]
            for model in models:
                for lr in s["lrs"][model]:
                    runs.append(
                        Run(
                            CHAPTER,
                            "teacher",
                            f"{model}-nu{nu0}-lr{lr:g}-s{seed}",
                            teacher_run,
                            dict(
                                model=model,
                                nu0=nu0,
                                teacher="authors",
                                lr=lr,
                                seed=seed,
                                steps=s["steps"],
                                batch=s["batch"],
                                length=s["length"],
                                student=s["student"],
                            ),
                        )
                    )
    return runs


def best_losses(col, by: str = "nu0") -> dict:
    """``{(model, nu0): (mean over seeds of the best-LR final loss, normalised, best lr, params)}``; the best LR
    is picked on the mean final loss, NaN/inf counting as worst (as in the paper's code). ``by`` names the swept
    config entry (``"theta0"`` for Fig. 10D)."""
    out = {}
    keys = {(r.config["model"], r.config[by]) for r in col}
    for model, value in keys:
        by_lr = {}
        for r in col.where(model=model, **{by: value}):
            by_lr.setdefault(r.config["lr"], []).append(r)

        def score(rs):
            v = np.mean([x["final_loss"] for x in rs])
            return v if np.isfinite(v) else np.inf

        lr, rs = min(by_lr.items(), key=lambda kv: score(kv[1]))
        out[(model, value)] = {
            "loss": float(np.mean([x["final_loss"] for x in rs])),
            "normalised": float(np.mean([x["normalised_loss"] for x in rs])),
            "lr": lr,
            "params": rs[0]["params"],
            "edge": lr in (min(by_lr), max(by_lr)),
        }
    return out


def show_teacher(col) -> None:
    best = best_losses(col)
    fig, ax = plot.figure(1, 1, width=6.5, height=4)
    for model, color, label in (("dense", "C0", "linear RNN (dense, 64)"), ("lru", "C1", "LRU (64)")):
        nus = sorted(nu for (m, nu) in best if m == model)
        ax[0, 0].plot(
            [6 - math.log2(100 * (1 - nu)) for nu in nus],
            [best[(model, nu)]["normalised"] for nu in nus],
            "o-",
            color=color,
            label=label,
        )
    nus = sorted({nu for (_, nu) in best})
    ax[0, 0].set_xticks([6 - math.log2(100 * (1 - nu)) for nu in nus], [f"{nu:g}" for nu in nus])
    ax[0, 0].set(yscale="log", xlabel="teacher's ν₀", ylabel="final loss / ½ Var(y*)", title="(3A) dense RNN vs LRU")
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data="linear teacher (n = 10) driven by white noise, generated")


def teacher_table(col) -> list[dict]:
    best = best_losses(col)
    return [
        {
            "model": m,
            "ν₀": nu,
            "params": v["params"],
            "best lr": v["lr"],
            "final loss": v["loss"],
            "normalised": v["normalised"],
            "best lr on grid edge": v["edge"],
        }
        for (m, nu), v in sorted(best.items(), key=lambda kv: (kv[0][1], ABLATION.index(kv[0][0])))
    ]


def gap_teacher(col) -> str:
    b = best_losses(col)
    if ("dense", 0.99) in b and ("lru", 0.99) in b:
        return (
            f"ν₀ = 0.99: RNN {b[('dense', 0.99)]['loss']:.3g} vs LRU {b[('lru', 0.99)]['loss']:.3g} (raw); "
            "paper (Fig. 3A, read off the axis): RNN ≈ 1e1–1e2, LRU ≈ 1e-3"
        )
    return "not computed"


# --------------------------------------------------------------------------------------------- Fig. 3B, Table 2
# Table 2's learning-rate grids (log10) and the paper code's grids, which we run at full scale
TABLE2_GRIDS = {
    "dense": "[-5, -4.5, ..., -2.5]",
    "block": "[-5, -4.5, ..., -2.5]",
    "block128": "[-5, -4.5, ..., -2.5]",
    "complex": "[-2.5, -2, ..., -0.5]",
    "complex+γ": "[-2.5, -2, ..., -0.5]",
    "lru": "[-2.5, -2, ..., -0.5]",
}
PAPER_ABLATION = (
    "Fig. 3B prints no values (a bar plot on a log axis); its finding: the gap between the RNN and the "
    "LRU closes almost entirely at 'block diagonal'"
)


def show_ablation(col) -> None:
    """Fig. 3B: best-LR final loss of each step from the dense RNN to the LRU at nu0 = 0.99, raw and normalised,
    with every seed of the best LR as a dot."""
    best = best_losses(col)
    models = [m for m in ABLATION if (m, 0.99) in best]
    fig, ax = plot.figure(2, 1, width=11, height=4)
    for a, key, label in (
        (ax[0, 0], "final_loss", "final loss (raw, as the paper)"),
        (ax[0, 1], "normalised_loss", "final loss / ½ Var(y*)"),
    ):
        a.bar(
            range(len(models)),
            [np.mean([r[key] for r in col.where(model=m, nu0=0.99, lr=best[(m, 0.99)]["lr"])]) for m in models],
            color=["C0", "C2", "C2", "C1", "C1", "C1"][: len(models)],
        )
        for i, m in enumerate(models):
            a.plot(
                [i] * len(col.where(model=m, nu0=0.99, lr=best[(m, 0.99)]["lr"])),
                [r[key] for r in col.where(model=m, nu0=0.99, lr=best[(m, 0.99)]["lr"])],
                "k.",
                markersize=4,
            )
        a.set_xticks(range(len(models)), [ABLATION_LABELS[m] for m in models], fontsize=7)
        a.set(yscale="log", ylabel=label)
    ax[0, 0].set_title("(3B) from the dense RNN to the LRU, ν₀ = 0.99")
    plot.show(
        fig,
        col,
        note="Bars: mean over seeds at each model's best learning rate; dots: the seeds.",
        data="linear teacher (n = 10) driven by white noise, generated",
    )


def ablation_table(col) -> list[dict]:
    """Table 2 beside ours: each step of the ablation, its parameter count, the paper's and our LR grids, our
    best LR and loss, and the loss relative to the dense RNN's."""
    best = best_losses(col)
    grids = {m: sorted({r.config["lr"] for r in col.where(model=m, nu0=0.99)}) for m in ABLATION}
    dense = best.get(("dense", 0.99), {}).get("loss", float("nan"))
    return [
        {
            "step": ABLATION_LABELS[m].replace("\n", " "),
            "params": best[(m, 0.99)]["params"],
            "Table 2 log10 lr grid": TABLE2_GRIDS[m],
            "our lr grid": ", ".join(f"{v:g}" for v in grids[m]),
            "best lr": best[(m, 0.99)]["lr"],
            "final loss": best[(m, 0.99)]["loss"],
            "normalised": best[(m, 0.99)]["normalised"],
            "÷ RNN loss": best[(m, 0.99)]["loss"] / dense,
            "best lr on grid edge": best[(m, 0.99)]["edge"],
        }
        for m in ABLATION
        if (m, 0.99) in best
    ]


def gap_ablation(col) -> str:
    b = best_losses(col)
    if ("dense", 0.99) in b and ("block", 0.99) in b and ("lru", 0.99) in b:
        d = b[("dense", 0.99)]["loss"]
        return (
            f"block diagonal {b[('block', 0.99)]['loss'] / d:.1e} and LRU {b[('lru', 0.99)]['loss'] / d:.1e} of the "
            f"RNN's loss; paper: {PAPER_ABLATION}"
        )
    return "not computed"
