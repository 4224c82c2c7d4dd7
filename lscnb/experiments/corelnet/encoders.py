"""Figs. 5.4 (right), 5.6 and C.3: models behind a random frozen or a learned image encoder (figure ``encoder``),
on objects with spurious background colours (figure ``spurious``, per model in Fig. C.3)."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...data.relational import TASKS, coloured, colours
from ...models.relational import Encoded
from ...runs import twin
from ...sweep import Run, RunContext
from .common import CHAPTER, CURVE_MODELS, EXTREME_M, Job, job_args, make_model, model_tasks, objects, run_jobs, shared

# --------------------------------------------------------------------------------------------- Fig. 5.6
ENCODERS = {
    "random": "random encoder (frozen)",
    "linear": "frozen encoder + learned linear layer",
    "learned": "learned encoder",
    "learned_l1": "learned encoder + L1 linear layer",
}
LEARNED = ("learned", "learned_l1")
"""The encoders trained with the model: their runs train one by one (:func:`~.common.batchable`)."""
L1 = {"rmts": 5.0}
"""Fig. 5.6's L1 weights on the extra linear layer's sum of |w|: 5 for RMTS, 1 otherwise (thesis; the authors' code
defaults to 1e-3)."""


def _encoded_job(cfg: dict, ctx, palette=None) -> Job:
    """One model on a basic task behind the encoder ``cfg["encoder"]`` (a key of :data:`ENCODERS`), objects coloured by
    ``palette`` (or grey)."""
    torch.manual_seed(ctx.seed)
    objs = objects(ctx)
    enc = cfg["encoder"]
    net = Encoded(
        make_model(cfg["model"], cfg["task"]),
        objs.images,
        palette=palette,
        seed=ctx.seed,
        learn=enc in LEARNED,
        linear=enc in ("linear", "learned_l1"),
    )
    gen = TASKS[cfg["task"]][0] if palette is None else coloured(TASKS[cfg["task"]][0], len(palette))
    args = job_args(cfg, ctx, net, gen_fn=gen, l1=L1.get(cfg["task"], 1.0) if enc == "learned_l1" else 0.0)
    return Job(args, lambda out: {**out, "objects": objs.source})


def encoder_key(cfg: dict) -> dict:
    """The batched twins' key of a run behind an encoder: :func:`~.common.shared`, or, for a learned encoder, the whole
    config. Such a run trains alone anyway (:func:`~.common.batchable`, which reads the same rule off the built model),
    so a group would only hold its result back until the group's last run."""
    return dict(cfg) if cfg["encoder"] in LEARNED else shared(cfg)


def _spurious_job(cfg: dict, ctx) -> Job:
    return _encoded_job(cfg, ctx, colours())  # the authors' code fixes the colours (RandomState(0)) for every run


def spurious_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on a basic task whose objects carry a random background colour (a spurious feature), behind an
    encoder that is frozen and random, frozen with a learned linear layer on top, or learned (with or without the
    L1-penalised linear layer)."""
    return run_jobs(_spurious_job, [cfg], [ctx])[0]


def encoder_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on a basic task (grey objects) behind a random frozen or a learned conv encoder (Fig. 5.4 right)."""
    return run_jobs(_encoded_job, [cfg], [ctx])[0]


@twin(spurious_run, key=encoder_key)
def spurious_group(cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`spurious_run` of runs that differ only in seed and m, trained together (``--executor batched``; a learned
    encoder's run alone, :func:`encoder_key`)."""
    return run_jobs(_spurious_job, cfgs, ctxs)


@twin(encoder_run, key=encoder_key)
def encoder_group(cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`encoder_run` of runs that differ only in seed and m, trained together (``--executor batched``; a learned
    encoder's run alone, :func:`encoder_key`)."""
    return run_jobs(_encoded_job, cfgs, ctxs)


ENCODER_SIZES = {
    "quick": dict(tasks=["same_different"], models=["corelnet"], iters=100, seeds=[0], test=1000),
    "full": dict(
        tasks=list(TASKS),
        models=["corelnet", "corelnet_t", "esbn"],
        only={"esbn": ["same_different"]},
        iters=5000,
        seeds=[0, 1, 2],
        test=20000,
    ),
}
"""Quick: same/different only (two images a sample, 100 steps). Full: the
four tasks at the extreme split, a declared subset on ESBN's side: ESBN runs on same/different only (``only``; its
other 18 runs, with either encoder, take ~830 s each of one CPU core, ~4 h in all), as in figure ``mcurve_cat``."""


def encoder_runs(scale: str) -> list[Run]:
    s = ENCODER_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "encoder",
            f"{task}-{model}-{enc}-s{seed}",
            encoder_run,
            dict(task=task, model=model, encoder=enc, m=EXTREME_M[task], iters=s["iters"], test=s["test"], seed=seed),
        )
        for task in s["tasks"]
        for model in s["models"]
        if task in model_tasks(s, model)
        for enc in ("random", "learned")
        for seed in s["seeds"]
    ]


def encoder_table(col) -> list[dict]:
    """One row per (task, model): OOD accuracy with the random and with the learned encoder (means over seeds)."""
    out = {}
    for r in col:
        out.setdefault((r.config["task"], r.config["model"]), {}).setdefault(r.config["encoder"], []).append(r["ood"])
    return [
        {
            "task": t,
            "model": CURVE_MODELS[m],
            **{f"{e} encoder": float(np.mean(v[e])) for e in ("random", "learned") if e in v},
        }
        for (t, m), v in out.items()
    ]


SPURIOUS_SIZES = {
    "quick": dict(
        tasks=["dist3"], models=["corelnet"], encoders=["random", "linear"], iters=500, lr=2e-3, seeds=[0], test=1000
    ),
    "full": dict(
        tasks=list(TASKS),
        models=["corelnet", "esbn"],
        encoders=["random", "learned", "learned_l1"],
        iters=5000,
        lr=5e-4,
        seeds=[0, 1, 2],
        test=20000,
    ),
}
"""Quick: distribution-of-3 only, CoRelNet, the frozen random encoder against the cheapest learned encoder (a linear
layer on the frozen conv features; training the conv encoder itself costs ~0.08 s a step on this CPU, where coloured
objects seldom repeat in a batch)."""


def spurious_runs(scale: str) -> list[Run]:
    s = SPURIOUS_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "spurious",
            f"{task}-{model}-{enc}-s{seed}",
            spurious_run,
            dict(
                task=task,
                model=model,
                encoder=enc,
                m=EXTREME_M[task],
                iters=s["iters"],
                lr=s["lr"],
                test=s["test"],
                seed=seed,
            ),
        )
        for task in s["tasks"]
        for model in s["models"]
        for enc in s["encoders"]
        for seed in s["seeds"]
    ]


def _mean_accuracy(col, *keys: str) -> dict:
    """``{config values at keys: (mean OOD accuracy, mean accuracy on the training shapes)}`` over the other runs."""
    out = {}
    for r in col:
        out.setdefault(tuple(r.config[k] for k in keys), []).append((r["ood"], r["iid"]))
    return {k: tuple(float(x) for x in np.mean(v, 0)) for k, v in out.items()}


def spurious_table(col) -> dict:
    """Fig. 5.6: ``{(task, encoder): (mean OOD accuracy, mean accuracy on the training shapes)}`` over models and
    seeds."""
    return _mean_accuracy(col, "task", "encoder")


def spurious_by_model(col) -> dict:
    """Fig. C.3: ``{(task, model, encoder): (mean OOD accuracy, mean accuracy on the training shapes)}`` over seeds."""
    return _mean_accuracy(col, "task", "model", "encoder")


def show_spurious(col) -> None:
    acc = spurious_table(col)
    tasks = [t for t in TASKS if any(k[0] == t for k in acc)]
    encs = [e for e in ENCODERS if any(k[1] == e for k in acc)]
    fig, ax = plot.figure(1, 1, width=2.2 * len(tasks) + 3.5, height=3.4)
    w = 0.8 / (2 * len(encs))
    for i, e in enumerate(encs):
        for j, (what, hatch) in enumerate((("OOD", None), ("training shapes", "//"))):
            x = np.arange(len(tasks)) + (2 * i + j - (2 * len(encs) - 1) / 2) * w
            ax[0, 0].bar(
                x,
                [acc.get((t, e), (np.nan, np.nan))[j] for t in tasks],
                w,
                color=f"C{list(ENCODERS).index(e)}",  # an encoder's colour in Fig. C.3 too
                hatch=hatch,
                alpha=1 if j == 0 else 0.5,
                label=f"{ENCODERS[e]}, {what}",
            )
    ax[0, 0].set_xticks(range(len(tasks)), [f"{t} + colour\n(m = {EXTREME_M[t]})" for t in tasks])
    ax[0, 0].set(ylabel="test accuracy", ylim=(0, 1.05), title="spurious colour features (Fig. 5.6)")
    ax[0, 0].legend(fontsize=7)
    plot.show(
        fig,
        col,
        data=f"{col[0]['objects']} on 100 background colours (RandomState(0)), averaged over models",
        note="The thesis shows bars without numbers: the random encoder is poor, a learned encoder better but "
        "struggling, and it often needs the L1 layer.",
    )


# --------------------------------------------------------------------------------------------- Fig. C.3
def spurious_model_table(col) -> list[dict]:
    """Fig. C.3 as table rows, one per (task, model, encoder) of figure ``spurious`` (:func:`spurious_by_model`)."""
    return [
        {
            "task": f"{t} + colour",
            "model": CURVE_MODELS[m],
            "encoder": ENCODERS[e],
            "OOD accuracy": ood,
            "training shapes": iid,
        }
        for (t, m, e), (ood, iid) in spurious_by_model(col).items()
    ]


def show_spurious_models(col) -> None:
    """Fig. C.3: the bars of Fig. 5.6, one panel per model."""
    rows = spurious_model_table(col)
    models = list(dict.fromkeys(r["model"] for r in rows))
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    encs = [ENCODERS[e] for e in ENCODERS if any(r["encoder"] == ENCODERS[e] for r in rows)]
    fig, ax = plot.figure(len(models), 1, width=(2.2 * len(tasks) + 2) * len(models) + 1.5, height=3.4)
    w = 0.8 / len(encs)
    for a, m in zip(ax[0], models):
        for i, e in enumerate(encs):
            acc = {r["task"]: r["OOD accuracy"] for r in rows if r["model"] == m and r["encoder"] == e}
            a.bar(
                np.arange(len(tasks)) + (i - (len(encs) - 1) / 2) * w,
                [acc.get(t, np.nan) for t in tasks],
                w,
                color=f"C{list(ENCODERS.values()).index(e)}",
                label=e,
            )
        a.set_xticks(range(len(tasks)), tasks, fontsize=8)
        a.set(title=f"{m}, spurious colours (Fig. C.3)", ylim=(0, 1.05))
    ax[0, 0].set_ylabel("OOD test accuracy")
    ax[0, -1].legend(fontsize=7)
    plot.show(
        fig,
        col,
        data=f"{col[0]['objects']} on 100 background colours (RandomState(0))",
        note="Fig. C.3 of the thesis: the same runs as Fig. 5.6 per model, bars without printed numbers "
        "(L1 weight 5 on RMTS, 1 otherwise).",
    )
