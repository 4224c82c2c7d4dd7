"""Figs. C.4 and C.7-C.11 and the three-model averages of Fig. 5.4: accuracy against the number of held-out
objects m (figures ``mcurve_encoder``, ``mcurve_sym``, ``mcurve_cat``, ``mcurve_unseen``, ``mcurve_unseen_encoder``,
``separated``), with the curve tables and plots every such figure shares."""

from __future__ import annotations

import json

import numpy as np
import torch

from ... import plot
from ...data.relational import SEPARATED, TASKS, UNSEEN, colours, split
from ...models.relational import Encoded, encode_colours, encode_objects
from ...runs import twin
from ...sweep import Run, RunContext, at_scale_of, pool
from .common import (
    CAT_PAIRS,
    CHAPTER,
    CURVE_MODELS,
    EXTREME_M,
    UNSEEN_M,
    Job,
    job_args,
    make_model,
    model_tasks,
    objects,
    run_jobs,
    task_run,
    train_eval,
)
from .comparison import SIZE_MODELS
from .encoders import LEARNED, encoder_key, encoder_run, encoder_runs
from .ood import M_GRID
from .unseen import phases, unseen_run

# --------------------------------------------------------------------------------------------- Figs. C.8-C.11
UNSEEN_GRID = {t: [0, 50, 85, m] for t, m in UNSEEN_M.items()}
ENCODER_MODELS = ["corelnet", "corelnet_t", "esbn"]
"""Fig. 5.4 (right) and Fig. 5.5 (right): ESBN, CoRelNet and CoRelNet-T behind a random frozen or a learned encoder."""
UNSEEN_LEFT_OUT = ("esbn", "lstm")
"""Fig. C.10's models below the extreme split that the full profile leaves out (:data:`APPENDIX_SIZES`)."""
ENCODER_LEFT_OUT = ("esbn",)
"""Figs. C.8 and C.11's model that the full profile leaves out (:data:`APPENDIX_SIZES`): ESBN behind a conv encoder
takes 340-1,330 s a run on one CPU core (CoRelNet 26-120 s, CoRelNet-T 80-240 s), ~30 h for each figure's 90-96 runs.
Fig. C.8 keeps its extreme split on same/different, figure ``encoder``'s."""


def _kept(models: list[str]) -> list[str]:
    return [m for m in models if m not in ENCODER_LEFT_OUT]


APPENDIX_SIZES = {
    "quick": dict(
        encoder=dict(tasks=["same_different"], models=["corelnet"], encoders=["random"], iters=100),
        sym=dict(tasks=["same_different"], models=["asym", "asym_corelnet_t", "sym_transformer"], iters=60),
        cat=dict(tasks=["same_different"], models=["cat", "corelnet_t_cat"], iters=60),
        unseen=dict(tasks=["rmts3"], models={"corelnet": 300, "mlp": 100}, lr=2e-3),
        unseen_encoder=dict(tasks=["rmts3"], models=["corelnet"], encoders=["random"], iters=300, lr=2e-3),
        seeds=[0],
        test=1000,
        skip=[50, 85],
    ),
    "full": dict(
        encoder=dict(tasks=list(TASKS), models=_kept(ENCODER_MODELS), encoders=["random", "learned"], iters=5000),
        sym=dict(tasks=list(TASKS), models=["asym", "asym_corelnet_t", "sym_transformer"], iters=5000),
        cat=dict(tasks=list(TASKS), models=list(CAT_PAIRS.values()), iters=5000, only={"esbn_cat": ["same_different"]}),
        unseen=dict(tasks=list(UNSEEN_M), models={m: 5000 for m in CURVE_MODELS if m not in UNSEEN_LEFT_OUT}, lr=5e-4),
        unseen_encoder=dict(
            tasks=list(UNSEEN_M), models=_kept(ENCODER_MODELS), encoders=["random", "learned"], iters=5000, lr=5e-4
        ),
        seeds=[0, 1, 2],
        test=20000,
        skip=[],
    ),
}
"""The appendix's accuracy-vs-m curves behind Figs. 5.4 and 5.5 (thesis Figs. C.8-C.11), on the m grid of figure
``mcurve``. Full: the paper's 5000 steps, 3 of 10 seeds. Quick (a few seconds in all): the asymmetric CoRelNet and
CoRelNet-T, the symmetric Transformer and the relational + sensory CoRelNet and CoRelNet-T on same/different at m in
{0, 98} (60 steps, as figure ``mcurve``; the ESBN variants, ~4 s a run here, are in the full profile only), CoRelNet
behind the random encoder on same/different at m = 0 with the set-up of figure ``encoder`` (100 steps; its extreme-m
runs complete every curve of Fig. C.8, in both profiles), RMTS 3 at m = 0 with the set-up of figure ``unseen`` (whose
extreme-m runs complete every curve of Fig. C.10, in both profiles) and RMTS 3 behind the random encoder at m in {0,
94}. The learned encoder runs in the full profile only.

The full curves of Figs. C.7 and C.9 are declared subsets on ESBN's side (3 of 10 seeds as elsewhere): an ESBN run takes
590-760 s of one CPU core (figure ``mcurve``'s), so Fig. C.9 leaves the asymmetric ESBN out (48 runs, ~9 h) and
Fig. C.7 runs ESBN + sensory on same/different only (``only``: a model's tasks where they are fewer; its other 36 runs,
~7 h, are left out). Both figures' claims are the CoRelNet and CoRelNet-T ablations', on all four tasks. Fig. C.10 runs
CoRelNet, CoRelNet-T, the Transformer and the MLP below the extreme split (144 runs, 14-125 s each, ~2 h of a core);
ESBN and the LSTM (:data:`UNSEEN_LEFT_OUT`; 72 runs, 155-973 s and 400-870 s each, ~11 h) have their extreme-split
points only, from figure ``unseen``. The four that run carry Fig. 5.5's comparison: the relational CoRelNet and
CoRelNet-T against the sensory Transformer and MLP. Figs. C.8 and C.11 leave ESBN out (:data:`ENCODER_LEFT_OUT`):
CoRelNet and CoRelNet-T carry the thesis's claim that the random and the learned encoder are about equal."""


def unseen_encoder_job(cfg: dict, ctx: RunContext) -> Job:
    """One model on an unseen-relation task behind a random frozen or a learned conv encoder (Fig. 5.5 right)."""
    torch.manual_seed(ctx.seed)
    objs = objects(ctx)
    net = Encoded(make_model(cfg["model"], cfg["task"]), objs.images, seed=ctx.seed, learn=cfg["encoder"] in LEARNED)
    args = job_args(cfg, ctx, net, **phases(UNSEEN[cfg["task"]][0]))
    return Job(args, lambda out: {**out, "objects": objs.source})


def unseen_encoder_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on an unseen-relation task behind a random frozen or a learned conv encoder
    (:func:`unseen_encoder_job`)."""
    return run_jobs(unseen_encoder_job, [cfg], [ctx])[0]


@twin(unseen_encoder_run, key=encoder_key)
def unseen_encoder_group(cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`unseen_encoder_run` of runs that differ only in seed and m, trained together (``--executor batched``)."""
    return run_jobs(unseen_encoder_job, cfgs, ctxs)


def _grid(task: str, s: dict) -> list[int]:
    return [m for m in {**M_GRID, **UNSEEN_GRID}[task] if m not in s["skip"]]


def mcurve_encoder_runs(scale: str) -> list[Run]:
    """Fig. C.8: the four basic tasks against m behind a random frozen or a learned encoder, less the runs figure
    ``encoder`` has (its extreme split, same set-up): plot the two together."""
    s = APPENDIX_SIZES[scale]
    e = s["encoder"]
    runs = [
        Run(
            CHAPTER,
            "mcurve_encoder",
            f"{task}-{model}-{enc}-m{m}-s{seed}",
            encoder_run,
            dict(task=task, model=model, encoder=enc, m=m, iters=e["iters"], test=s["test"], seed=seed),
        )
        for task in e["tasks"]
        for model in e["models"]
        for enc in e["encoders"]
        for m in _grid(task, s)
        for seed in s["seeds"]
    ]
    have = [r.config for r in encoder_runs(scale)]
    return [r for r in runs if r.config not in have]


def _ablation_curve_runs(scale: str, figure: str, part: str) -> list[Run]:
    """Figure ``figure``: the models of ``APPENDIX_SIZES[scale][part]`` on the basic tasks (a model in its ``only`` on
    those it names) against m (with the pre-encoded objects of figure ``mcurve``)."""
    s = APPENDIX_SIZES[scale]
    e = s[part]
    return [
        Run(
            CHAPTER,
            figure,
            f"{task}-{model}-m{m}-s{seed}",
            task_run,
            dict(task=task, model=model, m=m, iters=e["iters"], test=s["test"], seed=seed),
        )
        for task in e["tasks"]
        for model in e["models"]
        if task in model_tasks(e, model)
        for m in _grid(task, s)
        for seed in s["seeds"]
    ]


def mcurve_sym_runs(scale: str) -> list[Run]:
    """Fig. C.9: the asymmetric CoRelNet and CoRelNet-T and the symmetric Transformer against m (their counterparts
    are in figure ``mcurve``; the thesis's asymmetric ESBN is left out, :data:`APPENDIX_SIZES`)."""
    return _ablation_curve_runs(scale, "mcurve_sym", "sym")


def mcurve_cat_runs(scale: str) -> list[Run]:
    """Fig. C.7: the relational + sensory versions (:data:`CAT_PAIRS`, Fig. 5.4 left; ESBN's on same/different only,
    :data:`APPENDIX_SIZES`) against m; the relational-only curves are figure ``mcurve``'s."""
    return _ablation_curve_runs(scale, "mcurve_cat", "cat")


def mcurve_unseen_runs(scale: str) -> list[Run]:
    """Fig. C.10: the unseen-relation tasks against m below the extreme split, whose runs (same set-up) are figure
    ``unseen``'s: plot the two together."""
    s = APPENDIX_SIZES[scale]
    e = s["unseen"]
    return [
        Run(
            CHAPTER,
            "mcurve_unseen",
            f"{task}-{model}-m{m}-s{seed}",
            unseen_run,
            dict(task=task, model=model, m=m, iters=it, lr=e["lr"], test=s["test"], seed=seed),
        )
        for task in e["tasks"]
        for model, it in e["models"].items()
        for m in _grid(task, s)[:-1]
        for seed in s["seeds"]
    ]


def mcurve_unseen_encoder_runs(scale: str) -> list[Run]:
    """Fig. C.11: the unseen-relation tasks against m behind a random frozen or a learned encoder."""
    s = APPENDIX_SIZES[scale]
    e = s["unseen_encoder"]
    return [
        Run(
            CHAPTER,
            "mcurve_unseen_encoder",
            f"{task}-{model}-{enc}-m{m}-s{seed}",
            unseen_encoder_run,
            dict(task=task, model=model, encoder=enc, m=m, iters=e["iters"], lr=e["lr"], test=s["test"], seed=seed),
        )
        for task in e["tasks"]
        for model in e["models"]
        for enc in e["encoders"]
        for m in _grid(task, s)
        for seed in s["seeds"]
    ]


CURVE_LABELS = {
    **CURVE_MODELS,
    **SIZE_MODELS,
    "cat": "CoRelNet + sensory (cat)",
    "corelnet_t_cat": "CoRelNet-T + sensory (cat)",
    "esbn_cat": "ESBN + sensory (cat)",
    "sym_transformer": "symmetric Transformer",
    "asym_corelnet_t": "asymmetric CoRelNet-T",
    "corelnet_nhid": "CoRelNet-nhid",
}


def _series(cols, models=None) -> dict:
    """``{(task, model, encoder or None): {m: mean OOD accuracy over seeds}}`` over the collections ``cols`` (only
    ``models`` if given). A point never pools runs of two scales (:func:`lscnb.sweep.pool`)."""

    def cell(r):
        c = r.config
        if models is None or c["model"] in models:
            return c["task"], c["model"], c.get("encoder"), c["m"]

    out = {}
    for (task, model, encoder, m), rs in pool(cols, cell).items():
        out.setdefault((task, model, encoder), {})[m] = float(np.mean([r["ood"] for r in rs]))
    return {k: dict(sorted(d.items())) for k, d in out.items()}


def series_table(*cols, models=None) -> dict:
    """``{(task, label): {m: mean OOD accuracy over seeds}}`` (:func:`_series`); the label names the model and, for
    runs behind an image encoder, the encoder (``"CoRelNet, learned encoder"``)."""
    return {
        (task, CURVE_LABELS[model] + (f", {encoder} encoder" if encoder is not None else "")): curve
        for (task, model, encoder), curve in _series(cols, models).items()
    }


def gap_unseen_encoder(col) -> str:
    """Fig. 5.5 (right) from Fig. C.11's runs: each encoder's mean OOD accuracy at the extreme split, over tasks, models
    and seeds (the thesis averages its models too)."""
    ends = {}
    for (_, _, encoder), c in _series([col]).items():
        ends.setdefault(encoder, []).append(c[max(c)])
    return (
        "mean OOD accuracy at the extreme split, "
        + ", ".join(f"{e} encoder {np.mean(v):.1%}" for e, v in ends.items())
        + "; the thesis prints bars only (Fig. 5.5 right)"
    )


def _base_model(label: str) -> str:
    """The model a curve label is an ablation of (one colour per base model in :func:`show_curves`):
    ``"asymmetric CoRelNet-T"`` -> ``"CoRelNet-T"``, ``"ESBN + sensory (cat)"`` -> ``"ESBN"``."""
    for prefix in ("asymmetric ", "symmetric "):
        label = label.removeprefix(prefix)
    return label.removesuffix(" + sensory (cat)").split(",")[0]


def show_curves(*cols, title: str, models=None) -> None:
    """Accuracy against m, one panel per task of the first collection, one line per (model, encoder) series of
    :func:`series_table`."""
    curves = series_table(*cols, models=models)
    tasks = [t for t in {**TASKS, **UNSEEN, **SEPARATED} if any(r.config["task"] == t for r in cols[0])]
    labels = list(dict.fromkeys(k[1] for k in curves))
    colour = {b: f"C{i}" for i, b in enumerate(dict.fromkeys(map(_base_model, labels)))}
    ablated = lambda label: any(w in label for w in ("learned", "symmetric", "cat"))  # noqa: E731
    quick = [c for c in cols if getattr(c, "scale", None) == "quick"]
    mixed = 0 < len(quick) < len(cols)  # a replay that sets quick runs beside committed full ones
    fig, ax = plot.figure(len(tasks), 1, width=3.2 * len(tasks) + 1.5, height=3.2)
    for a, t in zip(ax[0], tasks):
        for label in sorted(labels, key=ablated):  # ablations drawn last, over their base model
            if (t, label) in curves:
                c = curves[(t, label)]
                a.plot(
                    list(c),
                    list(c.values()),
                    "s--" if ablated(label) else "o-",
                    color=colour[_base_model(label)],
                    label=label,
                )
        a.axhline(1 / {**TASKS, **UNSEEN, **SEPARATED}[t][2], **plot.PAPER)
        a.set(xlabel="held-out objects m", title=t, ylim=(0, 1.05))
        for (task, label), c in series_table(*quick, models=models).items() if mixed else ():
            if task == t:  # the quick points of a curve that has full ones too: hollow
                marker, edge = "s" if ablated(label) else "o", colour[_base_model(label)]
                a.plot(list(c), list(c.values()), marker, mfc="white", mec=edge, zorder=3)
    ax[0, 0].set_ylabel("test accuracy (held-out objects)")
    handles = {label: h for a in ax[0] for h, label in zip(*a.get_legend_handles_labels())}  # a series in one panel too
    ax[0, -1].legend(handles.values(), handles.keys(), fontsize=7, loc="lower left")
    plot.show(
        fig,
        *cols,
        data=f"{cols[0][0]['objects']}",
        note=f"{title}: one colour per model, dashed for its ablation; the thesis plots these curves without "
        "printed numbers (dashed grey: chance); compare shapes and rankings."
        + (" Hollow markers: points at quick (toy) scale, beside paper-scale ones." if mixed else ""),
    )


def curve_rows(*cols, models=None) -> list[dict]:
    """One table row per (task, series): accuracy at each m, a column for every m of any series (blank where a
    series has no run at that m)."""
    series = series_table(*cols, models=models)
    ms = sorted({m for c in series.values() for m in c})
    return [{"task": t, "model": label, **{f"m = {m}": c.get(m, "") for m in ms}} for (t, label), c in series.items()]


def curve_drop(*cols, models=None) -> dict:
    """``{(task, label): accuracy at the smallest m - accuracy at the largest}`` of each series."""
    return {k: c[min(c)] - c[max(c)] for k, c in series_table(*cols, models=models).items() if len(c) > 1}


# --------------------------------------------------------------------------------------------- Fig. 5.4, three models
ABLATION_PAIRS = {
    "relational only vs relational + sensory": CAT_PAIRS,
    "symmetric vs asymmetric": {"corelnet": "asym", "corelnet_t": "asym_corelnet_t", "esbn": "asym_esbn"},
}
"""Fig. 5.4's left and middle panels: each base model and its ablated version."""


def _ablation_cells(*cols) -> tuple[dict, dict, dict]:
    """Fig. 5.4's cells at the extreme split: ``acc`` ``{(model[@encoder], task): [OOD accuracy per seed]}``, and per
    panel the (base, ablated, task) cells that both sides have at one scale, and those whose sides come at two
    scales (a replay while one side's figure is owed: two set-ups, not two models; left out)."""

    def cell(r):
        c = r.config
        if c["task"] in EXTREME_M and c["m"] == EXTREME_M[c["task"]]:
            return c["model"] + (f"@{c['encoder']}" if "encoder" in c else ""), c["task"]

    def once(rs):  # a run two figures share (figure ablation's are the curves' at the extreme split) counts once
        return list({json.dumps(r.config, sort_keys=True): r["ood"] for r in rs}.values())

    acc = {k: once(rs) for k, rs in pool(cols, cell).items()}
    scale = {cell(r): getattr(col, "scale", None) for col in cols for r in col if cell(r) is not None}
    panels = {
        **ABLATION_PAIRS,
        "random encoder vs learned encoder": {f"{m}@random": f"{m}@learned" for m in ENCODER_MODELS},
    }
    kept, mixed = {}, {}
    for panel, pairs in panels.items():
        both = [(a, b, t) for a, b in pairs.items() for t in EXTREME_M if (a, t) in acc and (b, t) in acc]
        kept[panel] = [(a, b, t) for a, b, t in both if scale[(a, t)] == scale[(b, t)]]
        mixed[panel] = [(a, b, t) for a, b, t in both if scale[(a, t)] != scale[(b, t)]]
    return acc, kept, mixed


def ablation_sources(mc, abl, mk, ms, en) -> list:
    """The collections Fig. 5.4's averages read: the curves' (figures mcurve, mcurve_cat, mcurve_sym: ``mc``, ``mk``,
    ``ms``) and figure encoder's ``en`` (random and learned encoders at the extreme split, Fig. 5.4 right: the same
    configs as figure mcurve_encoder's there); when ``mc`` and figure ablation's ``abl`` are both at full scale, also
    ``abl``, whose runs are CoRelNet's cat and asym ablations at the extreme split with the curves' configs, in place of
    the curves ``mk`` and ``ms`` at another scale (a replay while they are owed; against ``mc`` they would pair
    nothing). Its quick runs train 300 steps and the curves' 60, so a quick profile leaves it out."""
    if getattr(mc, "scale", None) == "full" and getattr(abl, "scale", None) == "full":
        return [mc, abl, *at_scale_of(mc, mk, ms), en]
    return [mc, mk, ms, en]


def ablation_average(*cols) -> list[dict]:
    """Fig. 5.4 as the thesis averages it: for each panel (:data:`ABLATION_PAIRS`, and random vs learned encoder), the
    mean OOD accuracy at the extreme split of the base models and of their ablated versions over the (model, task)
    cells that both sides have at one scale (:func:`_ablation_cells`), from the runs of :func:`ablation_sources`."""
    acc, kept, _ = _ablation_cells(*cols)
    return _ablation_rows(acc, kept)


def _ablation_rows(acc: dict, kept: dict) -> list[dict]:
    """:func:`ablation_average`'s rows from :func:`_ablation_cells`'s accuracies and kept cells."""
    rows = []
    for panel, cells in kept.items():
        if cells:
            first, second = panel.split(" vs ")
            rows.append(
                {
                    "panel": panel,
                    "models": ", ".join(dict.fromkeys(CURVE_MODELS[a.split("@")[0]] for a, _, _ in cells)),
                    "tasks": ", ".join(dict.fromkeys(t for _, _, t in cells)),
                    first: float(np.mean([np.mean(acc[(a, t)]) for a, _, t in cells])),
                    second: float(np.mean([np.mean(acc[(b, t)]) for _, b, t in cells])),
                }
            )
    return rows


def show_ablation_average(*cols) -> None:
    """Fig. 5.4's three panels from :func:`ablation_average`: two bars each."""
    acc, kept, mixed = _ablation_cells(*cols)
    rows = _ablation_rows(acc, kept)
    if not rows:
        raise ValueError("no panel of Fig. 5.4 has both sides at one scale: run its figures at one scale")
    mixed = {panel: cells for panel, cells in mixed.items() if cells}
    fig, ax = plot.figure(len(rows), 1, width=3.3 * len(rows) + 1, height=3.2)
    for a, r in zip(ax[0], rows):
        first, second = r["panel"].split(" vs ")
        a.bar([0, 1], [r[first], r[second]], 0.6, color=["C0", "C1"])
        a.set_xticks([0, 1], [first.replace(" + ", "\n+ "), second.replace(" + ", "\n+ ")], fontsize=8)
        a.set(ylim=(0, 1.05), title=r["panel"].replace(" vs ", " vs\n"))
        a.title.set_fontsize(9)
    ax[0, 0].set_ylabel("mean OOD accuracy, extreme m")
    plot.show(
        fig,
        *cols,
        data=f"{cols[0][0]['objects']}",
        note="Fig. 5.4 averaged as in the thesis over the models each panel has here: "
        + "; ".join(f"{r['panel']}: {r['models']} on {r['tasks']}" for r in rows)
        + ". The thesis prints bars only."
        + "".join(
            f" Left out of {panel}: {len(cells)} (model, task) cell(s) whose two sides come at different scales."
            for panel, cells in mixed.items()
        ),
    )


# --------------------------------------------------------------------------------------------- Fig. C.4
def separated_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on same/different with separated inputs (shape, colour, shape, colour; thesis App. C.6): the 100 shapes
    and 100 plain colour images are embedded once by the same random frozen encoder; shapes are split by ``m``, the
    colours are the same in training and test."""
    torch.manual_seed(ctx.seed)
    objs = objects(ctx)
    emb = torch.cat(
        [encode_objects(objs.images, seed=ctx.seed), encode_colours(colours(), seed=ctx.seed)]
    )  # colours fixed as in the code
    train_shapes, test_shapes = split(cfg["m"], seed=ctx.seed)
    out = train_eval(
        make_model(cfg["model"], cfg["task"]),
        emb,
        SEPARATED[cfg["task"]][0],
        train_shapes,
        test_shapes,
        cfg["iters"],
        cfg["test"],
        ctx.seed,
        lr=cfg.get("lr", 5e-4),
        device=ctx.device,
    )
    out["objects"] = f"{objs.source} and 100 plain colours (RandomState(0))"
    return out


SEPARATED_MODELS = ["esbn", "transformer", "corelnet"]
SEPARATED_SIZES = {
    "quick": dict(models=["corelnet", "transformer"], m=[0, 98], iters=60, lr=2e-3, seeds=[0], test=1000),
    "full": dict(models=SEPARATED_MODELS, m=[0, 50, 85, 98], iters=5000, lr=5e-4, seeds=[0, 1, 2], test=20000),
}
"""Fig. C.4. Full: ESBN, the Transformer and CoRelNet at m in {0, 50, 85, 98}, the paper's 5000 steps, 3 of 10 seeds.
Quick: CoRelNet and the Transformer at m in {0, 98}, 60 steps at lr 2e-3 (over seeds 0-2: CoRelNet 1.0 at both, the
Transformer 0.98-1.0 at m = 0 and 0.50-0.52 at m = 98; 150 steps give the same); ESBN (0.95-0.99 at m = 98 after 60
steps, but ~5 s a run on this CPU) in the full profile only."""


def separated_runs(scale: str) -> list[Run]:
    s = SEPARATED_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "separated",
            f"same_different_sep-{model}-m{m}-s{seed}",
            separated_run,
            dict(task="same_different_sep", model=model, m=m, iters=s["iters"], lr=s["lr"], test=s["test"], seed=seed),
        )
        for model in s["models"]
        for m in s["m"]
        for seed in s["seeds"]
    ]
