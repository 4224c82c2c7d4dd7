"""Chapter "Relational inductive biases and CoRelNet" (Kerg et al. 2022; thesis ch. 5, 7): sweeps and figures.

Figures: ``ood`` (Fig. 5.3: out-of-distribution accuracy on the four basic tasks, CoRelNet vs a Transformer),
``ablation`` (Fig. 5.4: relational-only vs relational + sensory, symmetric vs asymmetric similarity) and
``comparison`` (ch. 7: an antisymmetric relation, CoRelNet vs CoRelNet diff). All runs use the thesis's
random-encoder condition: a random, frozen conv encoder embeds the 100 objects once.
"""

from __future__ import annotations

import numpy as np
import torch

from .. import checks, plot
from ..data.objects import load_objects, resized
from ..data.relational import (
    APPENDIX_UNSEEN,
    SEPARATED,
    SIZE_PAIRS,
    TASKS,
    UNSEEN,
    coloured,
    colours,
    comparison,
    size_comparison,
    split,
)
from ..data.relational_games import GAMES, catalogue, patches
from ..figures import Figure, Item, declare
from ..models.relational import (
    ESBN,
    CoRelNet,
    CoRelNetMix,
    CoRelNetT,
    Encoded,
    LSTMBaseline,
    MLPBaseline,
    PrediNet,
    TransformerBaseline,
    causal_softmax,
    encode_colours,
    encode_objects,
    encode_patches,
    esbn_count,
    nhid_count,
    nhid_width,
)
from ..models.relational_baselines import MNM, NTM, RelationNetwork
from ..sweep import Run, RunContext

CHAPTER = "corelnet"
NOTEBOOK = "book/corelnet.ipynb"

SIZES = {
    "quick": dict(iters=300, seeds=[0], test=2000),
    "full": dict(iters=5000, seeds=[0, 1, 2], test=20000),
}
"""Figs. 5.3, 5.4 and the hidden-order comparison (4x the steps). Quick: 300 steps; over seeds 0-2 CoRelNet was at 1.0
on all four tasks, the Transformer within 0.16 of chance, cat and asym below 0.93, CoRelNet diff's comparison at
0.75-0.80 after 1000 steps."""
EXTREME_M = {"same_different": 98, "rmts": 95, "dist3": 95, "identity_rules": 95}
SEGMENTS = {"rmts": [2, 2, 2], "rmts3": [3, 3, 3]}
UNSEEN_M = {"rmts3": 94, "same_diff6": 98, "identity_rules4": 94, "identity_rules4_missing": 94}


def _embeddings(seed: int = 0):
    objs = load_objects()
    return encode_objects(objs.images, seed=seed), objs.source


MODELS = {
    "corelnet": (CoRelNet, {}),
    "cat": (CoRelNet, {"variant": "cat"}),
    "asym": (CoRelNet, {"variant": "asym"}),
    "diff": (CoRelNet, {"variant": "diff"}),
    "corelnet_t": (CoRelNetT, {}),
    "corelnet_t_cat": (CoRelNetT, {"cat": True}),
    "asym_corelnet_t": (CoRelNetT, {"asym": True}),
    "esbn": (ESBN, {}),
    "asym_esbn": (ESBN, {"asym": True}),
    "esbn_cat": (ESBN, {"cat": True}),
    "transformer": (TransformerBaseline, {}),
    "sym_transformer": (TransformerBaseline, {"symmetric": True}),
    "lstm": (LSTMBaseline, {}),
    "mlp": (MLPBaseline, {}),
    "predinet": (PrediNet, {}),
    "mix": (CoRelNetMix, {}),
    "rn": (RelationNetwork, {}),
    "ntm": (NTM, {}),
    "mnm": (MNM, {}),
}
"""Every model of the chapter by name: its class and keyword arguments (``corelnet_nhid`` is built by :func:`build`)."""


def build(model: str, T: int, classes: int, segments: list | None = None):
    """The model named ``model`` (:data:`MODELS` or ``corelnet_nhid``) for sequences of ``T`` objects and ``classes``
    labels."""
    if model == "corelnet_nhid":
        return CoRelNet(T, classes, hidden=nhid_width(T, classes), segments=segments)
    cls, kw = MODELS[checks.one_of(model, [*MODELS, "corelnet_nhid"], "model")]
    return cls(T, classes, segments=segments, **kw)


def make_model(model: str, task: str):
    """:func:`build` for a task of the ESBN suite (its length, classes and TCN segments)."""
    _, T, classes = {**TASKS, **UNSEEN, **SEPARATED, **APPENDIX_UNSEEN}.get(task, (None, 2, 2))
    return build(model, T, classes, SEGMENTS.get(task))


# --------------------------------------------------------------------------------------------- Figs. 5.1, 5.2
LAYOUT = {"same_different": [2], "rmts": [2, 2, 2], "dist3": [3, 2, 4], "identity_rules": [3, 2, 4]}
"""How a trial of each basic task groups its objects: same/different's pair; RMTS's source and two target pairs;
distribution-of-3's and identity rules' first row, incomplete second row and four options."""


def answer_positions(task: str, label: int) -> list[int]:
    """The positions of a trial that its ``label`` points at: both objects (same/different), the matching target
    pair (RMTS) or the correct option (distribution-of-3, identity rules)."""
    if task == "same_different":
        return [0, 1]
    if task == "rmts":
        return [2 + 2 * label, 3 + 2 * label]
    return [5 + label]


def draw_trial(ax, images, seq, task: str, label: int) -> None:
    """One trial as a strip of object images on ``ax``, its groups (:data:`LAYOUT`) set apart and its answer
    framed (green for a correct answer, red for 'different')."""
    from matplotlib.patches import Rectangle

    x, t = 0.0, 0
    colour = "C3" if task == "same_different" and label == 1 else "C2"
    for size in LAYOUT[task]:
        for _ in range(size):
            ax.imshow(
                torch.as_tensor(images[int(seq[t])]).numpy(), cmap="gray", vmin=0, vmax=1, extent=(x, x + 1, 0, 1)
            )
            if t in answer_positions(task, label):
                ax.add_patch(Rectangle((x, 0), 1, 1, fill=False, edgecolor=colour, linewidth=2.5))
            x, t = x + 1.05, t + 1
        x += 0.5
    ax.set(xlim=(-0.1, x - 0.4), ylim=(-0.05, 1.05), xticks=[], yticks=[], aspect="equal")
    ax.axis("off")


def show_tasks(objs, shapes, seed: int = 0) -> None:
    """Fig. 5.1: one trial of each basic task drawn from its generator on ``shapes``."""
    fig, ax = plot.figure(1, len(TASKS), width=10, height=1.25 * len(TASKS))
    g = torch.Generator().manual_seed(seed)
    what = {
        "same_different": "same/different: same (green frame) or different (red)",
        "rmts": "RMTS: which target pair has the source pair's relation",
        "dist3": "distribution-of-3: the option that completes the second row",
        "identity_rules": "identity rules: the option that gives row 2 row 1's pattern (ABA, ABB or AAA)",
    }
    for a, (task, (fn, _, _)) in zip(ax[:, 0], TASKS.items()):
        seq, y = fn(shapes, 1, g)
        draw_trial(a, objs.images, seq[0], task, int(y[0]))
        a.set_title(f"{what[task]}; label {int(y[0])}", fontsize=9, loc="left")
    plot.show(
        fig,
        data=objs.source,
        note="Fig. 5.1 re-drawn from lscnb.data.relational: one trial per task, training "
        "shapes of the m = 95 split; the framed objects are the answer.",
    )


def show_bottleneck(objs, task: str = "identity_rules", seed: int = 0) -> None:
    """Fig. 5.2 drawn from CoRelNet's own tensors on one trial: the objects, their normalised codes ``Z`` (random
    frozen encoder, TCN), the relations ``R`` (eq. corelnet, causal softmax) and the lower triangle that is all the
    decoder sees."""
    fn, T, classes = TASKS[task]
    seq, y = fn(split(95, seed=seed)[0], 1, torch.Generator().manual_seed(seed))
    net = make_model("corelnet", task)
    with torch.no_grad():
        z = net.tcn(encode_objects(objs.images[seq[0]], seed=seed)[None])[0]
        R = causal_softmax(z @ z.T)
        logits = net(z[None])[0]
    fig = plot.canvas(width=11, height=5.2)
    top, bottom = fig.subfigures(2, 1, height_ratios=[1, 2.4])
    draw_trial(top.subplots(), objs.images, seq[0], task, int(y[0]))
    top.suptitle(f"1. objects (one {task.replace('_', ' ')} trial, answer framed)", fontsize=9, x=0.02, ha="left")
    az, ar, ao = bottom.subplots(1, 3, width_ratios=[2.2, 1.2, 1])
    for a, values, label, kw in (
        (az, z.numpy(), "z", dict(cmap="RdBu_r", vmin=-3, vmax=3, aspect="auto")),
        (ar, np.where(np.tril(np.ones((T, T))) > 0, R.numpy(), np.nan), "R_ij", dict(vmin=0, vmax=1)),
    ):
        fig.colorbar(a.imshow(values, **kw), ax=a).set_label(label)
        a.grid(False)
    az.set(xlabel="feature", ylabel="object t", yticks=range(T))
    az.set_title("2. encoder + TCN: Z (T x 128)", fontsize=9)
    ar.set(xlabel="j", ylabel="i", xticks=range(T), yticks=range(T))
    ar.set_title("3. R = causal softmax(Z Z^T)", fontsize=9)
    ao.barh(range(classes), torch.softmax(logits, -1).numpy(), color="C0")
    ao.set(xlim=(0, 1), yticks=range(classes), xlabel="p(class)", ylabel="class")
    ao.set_title(f"4. MLP on the {T * (T + 1) // 2} entries of R\n(untrained here; label {int(y[0])})", fontsize=9)
    plot.show(
        fig,
        data=objs.source,
        note="Fig. 5.2 (the architecture) drawn from the model's tensors: only panel 3 "
        "reaches the decoder, whatever the objects look like.",
    )


def train_eval(
    model,
    emb,
    gen_fn,
    train_shapes,
    test_shapes,
    iters: int,
    test: int,
    seed: int,
    lr: float = 5e-4,
    test_fn=None,
    l1: float = 0.0,
    device="cpu",
) -> dict:
    """Adam (lr 5e-4 as in the code, batch 96) on fresh samples from the training shapes; accuracy on the test shapes
    (OOD) and
    on the training shapes. ``test_fn`` (default ``gen_fn``) generates the OOD test set (unseen relations). ``emb``
    (N, 128) is the frozen object table, or ``None`` for a model that takes index sequences (:class:`Encoded`),
    whose ``l1()`` is added to the loss with weight ``l1``. Samples are drawn on the CPU (the same stream on any
    machine) and moved to ``device``, where the model and the object table compute. A model with a ``reconstruction``
    meta-objective (:class:`~lscnb.models.relational_baselines.MNM`) adds it to the loss, as in the ESBN code."""
    device = torch.device(device)
    g = torch.Generator().manual_seed(seed)
    model.to(device)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    emb = None if emb is None else emb.to(device)
    inputs = (lambda seq: seq.to(device)) if emb is None else (lambda seq: emb[seq.to(device)])
    losses = []
    for _it in range(iters):
        seq, y = gen_fn(train_shapes, 96, g)
        loss = torch.nn.functional.cross_entropy(model(inputs(seq)), y.to(device))
        if getattr(model, "reconstruction", None) is not None:
            loss = loss + model.reconstruction
        if l1:
            loss = loss + l1 * model.l1()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    out = {"loss": np.array(losses)}
    for name, shapes, fn in (("ood", test_shapes, test_fn or gen_fn), ("iid", train_shapes, gen_fn)):
        out[name] = accuracy(model, inputs, fn, shapes, test, seed)
    return out


def accuracy(model, inputs, fn, shapes, test: int, seed: int) -> float:
    """Accuracy of ``model`` (in eval mode) on ``test`` samples of ``fn`` from ``shapes``, drawn from seed ``10000 +
    seed``
    (the same test set for every model); ``inputs`` maps index sequences to the model's input."""
    model.eval()
    with torch.no_grad():
        seq, y = fn(shapes, test, torch.Generator().manual_seed(10_000 + seed))
        pred = torch.cat([model(inputs(s)).argmax(-1).cpu() for s in seq.split(1000)])
    model.train()
    return float((pred == y).float().mean())


def task_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on one task at one held-out split m."""
    torch.manual_seed(ctx.seed)
    emb, source = _embeddings(ctx.seed)
    train_shapes, test_shapes = split(cfg["m"], seed=ctx.seed)
    net = make_model(cfg["model"], cfg["task"])
    out = train_eval(
        net,
        emb,
        TASKS[cfg["task"]][0],
        train_shapes,
        test_shapes,
        cfg["iters"],
        cfg["test"],
        ctx.seed,
        device=ctx.device,
    )
    if isinstance(net, CoRelNetMix):
        out["similarity_share"] = similarity_share(net, emb, TASKS[cfg["task"]][0], test_shapes, cfg["test"], ctx.seed)
    out["objects"] = source
    return out


def similarity_share(net: CoRelNetMix, emb, fn, shapes, test: int, seed: int) -> float:
    """The fraction of test samples for which CoRelNet_mix's competition picks the similarity rule."""
    net.eval()
    device = next(net.parameters()).device
    with torch.no_grad():
        seq, _ = fn(shapes, test, torch.Generator().manual_seed(10_000 + seed))
        share = float(net.choice(net.tcn(emb.to(device)[seq.to(device)]))[:, 0].mean())
    net.train()
    return share


def ood_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "ood",
            f"{task}-{model}-s{seed}",
            task_run,
            dict(task=task, model=model, m=EXTREME_M[task], iters=s["iters"], test=s["test"], seed=seed),
        )
        for task in TASKS
        for model in ("corelnet", "transformer")
        for seed in s["seeds"]
    ]


def ablation_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "ablation",
            f"{task}-{model}-s{seed}",
            task_run,
            dict(task=task, model=model, m=EXTREME_M[task], iters=s["iters"], test=s["test"], seed=seed),
        )
        for task in TASKS
        for model in ("cat", "asym")
        for seed in s["seeds"]
    ]


# --------------------------------------------------------------------------------------------- Figs. C.6-style m curves
M_GRID = {t: [0, 50, 85, m] for t, m in EXTREME_M.items()}
CURVE_MODELS = {
    "corelnet": "CoRelNet",
    "corelnet_t": "CoRelNet-T",
    "esbn": "ESBN",
    "transformer": "Transformer",
    "lstm": "LSTM",
    "mlp": "MLP",
}
CURVE_SIZES = {
    "quick": dict(tasks=["same_different"], iters=60, seeds=[0], test=1000, skip=[50]),
    "full": dict(tasks=list(TASKS), iters=5000, seeds=[0, 1, 2], test=20000, skip=[]),
}


def mcurve_runs(scale: str) -> list[Run]:
    """Every model at every held-out count m of the grid; quick: same/different only, m in {0, 85, 98}, 60
    iterations."""
    s = CURVE_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "mcurve",
            f"{task}-{model}-m{m}-s{seed}",
            task_run,
            dict(task=task, model=model, m=m, iters=s["iters"], test=s["test"], seed=seed),
        )
        for task in s["tasks"]
        for model in CURVE_MODELS
        for m in M_GRID[task]
        if m not in s["skip"]
        for seed in s["seeds"]
    ]


def curve_table(col) -> dict:
    """``{(task, model): {m: mean OOD accuracy over seeds}}``."""
    out = {}
    for r in col:
        out.setdefault((r.config["task"], r.config["model"]), {}).setdefault(r.config["m"], []).append(r["ood"])
    return {k: {m: float(np.mean(v)) for m, v in sorted(d.items())} for k, d in out.items()}


def show_mcurve(col) -> None:
    curves = curve_table(col)
    tasks = [t for t in TASKS if any(k[0] == t for k in curves)]
    fig, ax = plot.figure(len(tasks), 1, width=3.2 * len(tasks) + 1.5, height=3.2)
    for a, t in zip(ax[0], tasks):
        for i, (m, label) in enumerate(CURVE_MODELS.items()):
            if (t, m) in curves:
                c = curves[(t, m)]
                a.plot(list(c), list(c.values()), "o-" if i < 3 else "s--", color=f"C{i}", label=label)
        a.set(xlabel="held-out objects m", title=t, ylim=(0, 1.05))
    ax[0, 0].set_ylabel("test accuracy (held-out objects)")
    ax[0, -1].legend(fontsize=7, loc="lower left")
    plot.show(
        fig,
        col,
        data=f"{col[0]['objects']}, random frozen encoder",
        note="Figs. C.6, C.10 and C.13 of the thesis plot such curves without printed numbers: compare shapes "
        "and rankings (similarity-only models flat, sensory models falling with m).",
    )


def accuracy_table(*cols) -> dict:
    """``{(task, model): mean OOD accuracy over seeds}`` over the given collections."""
    out = {}
    for col in cols:
        for r in col:
            out.setdefault((r.config["task"], r.config["model"]), []).append(r["ood"])
    return {k: float(np.mean(v)) for k, v in out.items()}


def show_ood(ood, abl) -> None:
    acc = accuracy_table(ood, abl)
    fig, ax = plot.figure(1, 1, width=9, height=3.6)
    models = [
        ("corelnet", "CoRelNet"),
        ("transformer", "Transformer"),
        ("cat", "CoRelNet + sensory (cat)"),
        ("asym", "CoRelNet, asymmetric"),
    ]
    tasks = list(TASKS)
    w = 0.2
    for i, (m, label) in enumerate(models):
        ax[0, 0].bar(np.arange(len(tasks)) + (i - 1.5) * w, [acc.get((t, m), np.nan) for t in tasks], w, label=label)
    ax[0, 0].set_xticks(range(len(tasks)), [f"{t}\n(m = {EXTREME_M[t]})" for t in tasks])
    ax[0, 0].set(ylabel="OOD test accuracy", ylim=(0, 1.05), title="held-out shapes (Figs. 5.3, 5.4)")
    ax[0, 0].legend(fontsize=7, ncol=2)
    plot.show(fig, ood, abl, data=f"{ood[0]['objects']}, random frozen encoder")


# --------------------------------------------------------------------------------------------- Fig. 5.5
def unseen_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on an unseen-relation task: trained on the training patterns of the training shapes, tested on
    the test patterns (relations never seen) of the held-out shapes."""
    torch.manual_seed(ctx.seed)
    emb, source = _embeddings(ctx.seed)
    train_shapes, test_shapes = split(cfg["m"], seed=ctx.seed)
    fn = {**UNSEEN, **APPENDIX_UNSEEN}[cfg["task"]][0]
    out = train_eval(
        make_model(cfg["model"], cfg["task"]),
        emb,
        lambda sh, b, g: fn(sh, b, g, phase="train"),
        train_shapes,
        test_shapes,
        cfg["iters"],
        cfg["test"],
        ctx.seed,
        lr=cfg.get("lr", 5e-4),
        test_fn=lambda sh, b, g: fn(sh, b, g, phase="test"),
        device=ctx.device,
    )
    out["objects"] = source
    return out


UNSEEN_SIZES = {
    "quick": dict(
        iters={"corelnet": 500, "mlp": 100}, cap={"rmts3": 300, "same_diff6": 300}, lr=2e-3, seeds=[0], test=1000
    ),
    "full": dict(iters={m: 5000 for m in CURVE_MODELS}, cap={}, lr=5e-4, seeds=[0, 1, 2], test=20000),
}
"""Quick: CoRelNet and the cheapest sensory baseline (an MLP), at lr 2e-3 (4x the paper's) so that identity rules 4
is learned in 500 steps (at 5e-4 it is still at 0.6 training accuracy after 600; over seeds 0-1, 500 steps gave 0.99
on identity rules 4 and 0.65-0.66 with two patterns missing); RMTS 3 and same/diff 6 are done
after 300 (``cap``). The full profile is the paper's 5000 steps at 5e-4 for every model."""


def unseen_runs(scale: str) -> list[Run]:
    s = UNSEEN_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "unseen",
            f"{task}-{model}-s{seed}",
            unseen_run,
            dict(
                task=task,
                model=model,
                m=m,
                iters=min(it, s["cap"].get(task, it)),
                lr=s["lr"],
                test=s["test"],
                seed=seed,
            ),
        )
        for task, m in UNSEEN_M.items()
        for model, it in s["iters"].items()
        for seed in s["seeds"]
    ]


def show_unseen(col) -> None:
    acc = accuracy_table(col)
    models = [m for m in CURVE_MODELS if any(k[1] == m for k in acc)]
    tasks = list(UNSEEN_M)
    fig, ax = plot.figure(1, 1, width=9, height=3.4)
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        ax[0, 0].bar(
            np.arange(len(tasks)) + (i - (len(models) - 1) / 2) * w,
            [acc.get((t, m), np.nan) for t in tasks],
            w,
            label=CURVE_MODELS[m],
            color=f"C{list(CURVE_MODELS).index(m)}",
        )
    ax[0, 0].set_xticks(range(len(tasks)), [f"{t}\n(m = {UNSEEN_M[t]})" for t in tasks], fontsize=8)
    ax[0, 0].set(ylabel="accuracy, unseen relations + objects", ylim=(0, 1.05), title="unseen relations (Fig. 5.5)")
    ax[0, 0].legend(fontsize=7)
    plot.show(
        fig,
        col,
        data=f"{col[0]['objects']}, random frozen encoder",
        note="The thesis shows bars without numbers: compare rankings (CoRelNet best; near-perfect on RMTS3 and "
        "identity rules 4; every model drops on identity rules 4 missing).",
    )


THESIS_UNSEEN = {
    "rmts3": "CoRelNet near-perfect, above ESBN and Transformer",
    "same_diff6": "CoRelNet above ESBN and Transformer",
    "identity_rules4": "CoRelNet near-perfect, above ESBN and Transformer",
    "identity_rules4_missing": "every model drops (two 'essential' patterns missing)",
}
"""What Fig. 5.5 (left) and §5.6 say per task; the thesis prints no numbers."""


def unseen_table(col) -> list[dict]:
    """One row per task: our mean accuracy per model (unseen relations on held-out objects), the thesis's claim."""
    acc = accuracy_table(col)
    models = [m for m in CURVE_MODELS if any(k[1] == m for k in acc)]
    return [
        {
            "task": f"{t} (m = {m})",
            **{CURVE_MODELS[k]: acc[(t, k)] for k in models if (t, k) in acc},
            "thesis (Fig. 5.5, §5.6)": THESIS_UNSEEN[t],
        }
        for t, m in UNSEEN_M.items()
    ]


# --------------------------------------------------------------------------------------------- Fig. 5.6
ENCODERS = {
    "random": "random encoder (frozen)",
    "linear": "frozen encoder + learned linear layer",
    "learned": "learned encoder",
    "learned_l1": "learned encoder + L1 linear layer",
}
L1 = {"rmts": 5.0}
"""Fig. 5.6's L1 weights on the extra linear layer's sum of |w|: 5 for RMTS, 1 otherwise (thesis; the authors' code
defaults to 1e-3)."""


def _encoded_run(cfg: dict, palette, ctx) -> dict:
    """One model on a basic task behind the encoder ``cfg["encoder"]`` (a key of :data:`ENCODERS`), objects coloured by
    ``palette`` (or grey)."""
    torch.manual_seed(ctx.seed)
    objs = load_objects()
    enc = cfg["encoder"]
    net = Encoded(
        make_model(cfg["model"], cfg["task"]),
        objs.images,
        palette=palette,
        seed=ctx.seed,
        learn=enc in ("learned", "learned_l1"),
        linear=enc in ("linear", "learned_l1"),
    )
    gen = TASKS[cfg["task"]][0] if palette is None else coloured(TASKS[cfg["task"]][0], len(palette))
    train_shapes, test_shapes = split(cfg["m"], seed=ctx.seed)
    out = train_eval(
        net,
        None,
        gen,
        train_shapes,
        test_shapes,
        cfg["iters"],
        cfg["test"],
        ctx.seed,
        lr=cfg.get("lr", 5e-4),
        l1=L1.get(cfg["task"], 1.0) if enc == "learned_l1" else 0.0,
        device=ctx.device,
    )
    out["objects"] = objs.source
    return out


def spurious_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on a basic task whose objects carry a random background colour (a spurious feature), behind an
    encoder that is frozen and random, frozen with a learned linear layer on top, or learned (with or without the
    L1-penalised linear layer)."""
    return _encoded_run(cfg, colours(), ctx)  # the authors' code fixes the colours (RandomState(0)) for every run


def encoder_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on a basic task (grey objects) behind a random frozen or a learned conv encoder (Fig. 5.4 right)."""
    return _encoded_run(cfg, None, ctx)


ENCODER_SIZES = {
    "quick": dict(tasks=["same_different"], models=["corelnet"], iters=100, seeds=[0], test=1000),
    "full": dict(tasks=list(TASKS), models=["corelnet", "corelnet_t", "esbn"], iters=5000, seeds=[0, 1, 2], test=20000),
}
"""Quick: same/different only (two images a sample; the conv encoder trains at ~0.1 s a step on this CPU)."""


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
layer on the frozen conv features; training the conv encoder itself costs ~0.3 s a step on this CPU)."""


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


def spurious_table(col) -> dict:
    """``{(task, encoder): (mean OOD accuracy, mean accuracy on the training shapes)}`` over models and seeds."""
    out = {}
    for r in col:
        out.setdefault((r.config["task"], r.config["encoder"]), []).append((r["ood"], r["iid"]))
    return {k: tuple(float(x) for x in np.mean(v, 0)) for k, v in out.items()}


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
                color=f"C{i}",
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


# --------------------------------------------------------------------------------------------- ch. 7
def comparison_run(cfg: dict, ctx: RunContext) -> dict:
    """CoRelNet or CoRelNet diff on the comparison task (a hidden total order of the 100 objects); the test set
    is swap-balanced."""
    torch.manual_seed(ctx.seed)
    emb, source = _embeddings(ctx.seed)
    rank = torch.randperm(
        100, generator=torch.Generator().manual_seed(7)
    )  # the hidden order is the task: one for all seeds
    shapes = torch.arange(100)

    def gen(sh, b, g):
        return comparison(sh, b, g, rank=rank)

    out = train_eval(
        make_model(cfg["model"], "comparison"),
        emb,
        gen,
        shapes,
        shapes,
        cfg["iters"],
        cfg["test"],
        ctx.seed,
        lr=2e-3,
        device=ctx.device,
    )
    out["objects"] = source
    return out


def comparison_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "comparison",
            f"{model}-s{seed}",
            comparison_run,
            dict(model=model, iters=4 * s["iters"], test=s["test"], seed=seed),
        )
        for model in ("corelnet", "diff")
        for seed in s["seeds"]
    ]


def show_comparison(col) -> None:
    fig, ax = plot.figure(1, 1, width=5.5, height=3.4)
    for m, color in (("corelnet", "C0"), ("diff", "C3")):
        for r in col.where(model=m):
            k = 25
            ax[0, 0].plot(
                np.convolve(r["loss"], np.ones(k) / k, mode="valid"),
                color=color,
                label=f"{'CoRelNet' if m == 'corelnet' else 'CoRelNet diff'}: test accuracy {r['ood']:.3f}"
                if r.config["seed"] == 0
                else None,
            )
    ax[0, 0].axhline(np.log(2), **plot.PAPER, label="chance (log 2)")
    ax[0, 0].set(xlabel="iteration", ylabel="training loss", title="comparison (antisymmetric relation)")
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data=f"{col[0]['objects']}, hidden random order, random frozen encoder")


# --------------------------------------------------------------------------------------------- Figs. 7.1, 7.2
SIZE_MODELS = {
    "corelnet": "CoRelNet",
    "asym": "asymmetric CoRelNet",
    "diff": "CoRelNet diff",
    "esbn": "ESBN",
    "asym_esbn": "asymmetric ESBN",
}


def sizes_run(cfg: dict, ctx: RunContext) -> dict:
    """Which of two copies of a shape is larger? ``comparison``: all size pairs in training and test; ``transitive``:
    trained on (M, L), (S, M) and their swaps, tested on (S, L), (L, S). Test objects are held-out shapes; random frozen
    encoder on the objects drawn at 12, 20 and 28 pixels."""
    torch.manual_seed(ctx.seed)
    objs = load_objects()
    emb = encode_objects(resized(objs.images), seed=ctx.seed)
    train_shapes, test_shapes = split(cfg["m"], seed=ctx.seed)
    train, test = (
        (SIZE_PAIRS["comparison"],) * 2
        if cfg["task"] == "comparison"
        else (SIZE_PAIRS["transitive_train"], SIZE_PAIRS["transitive_test"])
    )
    out = train_eval(
        make_model(cfg["model"], "comparison"),
        emb,
        lambda sh, b, g: size_comparison(sh, b, g, pairs=train),
        train_shapes,
        test_shapes,
        cfg["iters"],
        cfg["test"],
        ctx.seed,
        lr=cfg.get("lr", 5e-4),
        test_fn=lambda sh, b, g: size_comparison(sh, b, g, pairs=test),
        device=ctx.device,
    )
    out["objects"] = objs.source
    return out


SIZES_SIZES = {
    "quick": dict(models=["corelnet", "asym", "diff"], iters=500, lr=2e-3, seeds=[0], test=1000),
    "full": dict(models=list(SIZE_MODELS), iters=5000, lr=5e-4, seeds=[0, 1, 2], test=20000),
}


def sizes_runs(scale: str) -> list[Run]:
    s = SIZES_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "sizes",
            f"{task}-{model}-s{seed}",
            sizes_run,
            dict(task=task, model=model, m=95, iters=s["iters"], lr=s["lr"], test=s["test"], seed=seed),
        )
        for task in ("comparison", "transitive")
        for model in s["models"]
        for seed in s["seeds"]
    ]


def show_sizes(col) -> None:
    acc = accuracy_table(col)
    models = [m for m in SIZE_MODELS if any(k[1] == m for k in acc)]
    fig, ax = plot.figure(1, 1, width=6.5, height=3.4)
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        ax[0, 0].bar(
            np.arange(2) + (i - (len(models) - 1) / 2) * w,
            [acc.get((t, m), np.nan) for t in ("comparison", "transitive")],
            w,
            label=SIZE_MODELS[m],
            color=f"C{i}",
        )
    ax[0, 0].axhline(0.5, **plot.PAPER, label="chance")
    ax[0, 0].set_xticks(range(2), ["comparison", "transitive comparison\n(test: S vs L only)"])
    ax[0, 0].set(ylabel="accuracy on held-out shapes", ylim=(0, 1.05), title="which is larger? (Fig. 7.2)")
    ax[0, 0].legend(fontsize=7)
    plot.show(
        fig,
        col,
        data=f"{col[0]['objects']} at 12, 20, 28 px, random frozen encoder",
        note="The thesis shows bars only: symmetric models fail, asymmetric ones improve on comparison, "
        "CoRelNet diff solves both.",
    )


# --------------------------------------------------------------------------------------------- Fig. 7.3
MIX_MODELS = {
    "corelnet": "CoRelNet",
    "asym": "asymmetric CoRelNet",
    "diff": "CoRelNet diff",
    "mix": "CoRelNet_mix",
    "esbn": "ESBN",
    "asym_esbn": "asymmetric ESBN",
}
MIX_SIZES = {
    "quick": dict(models=["diff", "mix"], iters=300, seeds=[0], test=1000),
    "full": dict(models=["diff", "mix", "esbn", "asym_esbn"], iters=5000, seeds=[0, 1, 2], test=20000),
}
"""Fig. 7.3's new runs; CoRelNet and the asymmetric CoRelNet are those of figures ``ood`` and ``ablation`` (same tasks,
same m), so they are not run twice."""


def mix_runs(scale: str) -> list[Run]:
    s = MIX_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "mix",
            f"{task}-{model}-s{seed}",
            task_run,
            dict(task=task, model=model, m=EXTREME_M[task], iters=s["iters"], test=s["test"], seed=seed),
        )
        for task in TASKS
        for model in s["models"]
        for seed in s["seeds"]
    ]


def show_mix(*cols) -> None:
    acc = accuracy_table(*cols)
    models = [m for m in MIX_MODELS if any(k[1] == m for k in acc)]
    tasks = list(TASKS)
    fig, ax = plot.figure(1, 1, width=9, height=3.4)
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        ax[0, 0].bar(
            np.arange(len(tasks)) + (i - (len(models) - 1) / 2) * w,
            [acc.get((t, m), np.nan) for t in tasks],
            w,
            label=MIX_MODELS[m],
            color=f"C{list(MIX_MODELS).index(m)}",
        )
    ax[0, 0].set_xticks(range(len(tasks)), [f"{t}\n(m = {EXTREME_M[t]})" for t in tasks])
    ax[0, 0].set(ylabel="OOD test accuracy", ylim=(0, 1.05), title="competition of rules (Fig. 7.3)")
    ax[0, 0].legend(fontsize=7, ncol=2)
    plot.show(
        fig,
        *cols,
        data=f"{cols[0][0]['objects']}, random frozen encoder",
        note="The thesis shows bars only: CoRelNet_mix 'decent' on every task, with a high variance over seeds on "
        "same/different and RMTS.",
    )


# ----------------------------------------------------------------------------------------- Table 5.1 (Relational Games)
GAME_MODELS = {
    "corelnet": "CoRelNet",
    "corelnet_t": "CoRelNet-T",
    "esbn": "ESBN",
    "predinet": "PrediNet",
    "transformer": "Transformer",
    "lstm": "LSTM",
    "rn": "RN",
    "ntm": "NTM",
    "mnm": "MNM",
}
GAMES_SIZES = {
    "quick": dict(
        tasks=["row_matching", "colour_shape"],
        models=["corelnet", "predinet", "transformer"],
        iters=150,
        lr=2e-3,
        seeds=[0],
        test=1000,
    ),
    "full": dict(tasks=list(GAMES), models=list(GAME_MODELS), iters=2500, lr=5e-4, seeds=[0, 1, 2], test=20000),
}
"""Quick: row matching and colour/shape (the tasks where the thesis's models differ most), CoRelNet, PrediNet and the
Transformer, 150 steps at lr 2e-3 (over seeds 0-2: CoRelNet 1.0 and <= 0.5, PrediNet and the Transformer <= 0.54 and
0.66-0.75 on hexominoes; CoRelNet-T is not trained yet after 150 steps, so it runs in the full profile only). Full: the
7 games, the thesis's 2500 steps at 5e-4, the five models of Table 5.1 and the LSTM, RN, NTM and MNM of Table C.2,
3 of 10 seeds; all on a random frozen 12x12 patch encoder."""


def games_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on one re-created Relational Game: trained on pentominoes, tested on hexominoes and on stripes. All
    patches (the empty cell and every object) are embedded once by a random frozen encoder."""
    torch.manual_seed(ctx.seed)
    cat = catalogue()
    device = torch.device(ctx.device)
    emb = encode_patches(patches(), seed=ctx.seed).to(device)
    fn, classes = GAMES[cfg["task"]]
    net = _game_model(cfg["model"], classes)
    out = train_eval(
        net, emb, fn, cat.train, cat.hexominoes, cfg["iters"], cfg["test"], ctx.seed, lr=cfg["lr"], device=ctx.device
    )
    out["hexominoes"] = out.pop("ood")
    out["stripes"] = accuracy(net, lambda seq: emb[seq.to(device)], fn, cat.stripes, cfg["test"], ctx.seed)
    out["objects"] = "Relational Games re-created (lscnb.data.relational_games)"
    return out


def _game_model(model: str, classes: int):
    """A model of :data:`GAME_MODELS` (or a relational + sensory version of :data:`CAT_PAIRS`, Fig. C.12) for a game:
    nine patches, ``classes`` labels."""
    return build(checks.one_of(model, [*GAME_MODELS, *CAT_PAIRS.values()], "model"), 9, classes)


def games_runs(scale: str) -> list[Run]:
    s = GAMES_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "games",
            f"{task}-{model}-s{seed}",
            games_run,
            dict(task=task, model=model, iters=s["iters"], lr=s["lr"], test=s["test"], seed=seed),
        )
        for task in s["tasks"]
        for model in s["models"]
        for seed in s["seeds"]
    ]


TABLE_5_1 = {
    ("same", "hexominoes"): {
        "CoRelNet": 94.7,
        "CoRelNet-T": 98.7,
        "ESBN": 60.9,
        "PrediNet": 99.1,
        "Transformer": 96.3,
        "LSTM": 96.4,
        "RN": 92.9,
        "NTM": 97.2,
        "MNM": 97.3,
    },
    ("same", "stripes"): {
        "CoRelNet": 90.4,
        "CoRelNet-T": 98.4,
        "ESBN": 60.5,
        "PrediNet": 97.7,
        "Transformer": 93.6,
        "LSTM": 90.3,
        "RN": 83.7,
        "NTM": 93.4,
        "MNM": 95.5,
    },
    ("between", "hexominoes"): {
        "CoRelNet": 96.6,
        "CoRelNet-T": 91.9,
        "ESBN": 79.5,
        "PrediNet": 94.4,
        "Transformer": 90.9,
        "LSTM": 94.9,
        "RN": 73.6,
        "NTM": 96.3,
        "MNM": 93.6,
    },
    ("between", "stripes"): {
        "CoRelNet": 93.1,
        "CoRelNet-T": 87.0,
        "ESBN": 82.5,
        "PrediNet": 92.4,
        "Transformer": 87.5,
        "LSTM": 91.7,
        "RN": 54.5,
        "NTM": 93.5,
        "MNM": 90.2,
    },
    ("occurs", "hexominoes"): {
        "CoRelNet": 96.2,
        "CoRelNet-T": 91.6,
        "ESBN": 74.3,
        "PrediNet": 92.9,
        "Transformer": 95.9,
        "LSTM": 92.2,
        "RN": 71.2,
        "NTM": 93.5,
        "MNM": 84.9,
    },
    ("occurs", "stripes"): {
        "CoRelNet": 88.7,
        "CoRelNet-T": 79.3,
        "ESBN": 73.3,
        "PrediNet": 87.4,
        "Transformer": 88.7,
        "LSTM": 79.8,
        "RN": 54.6,
        "NTM": 87.1,
        "MNM": 77.0,
    },
    ("xoccurs", "hexominoes"): {
        "CoRelNet": 92.2,
        "CoRelNet-T": 91.7,
        "ESBN": 63.0,
        "PrediNet": 67.2,
        "Transformer": 75.1,
        "LSTM": 79.1,
        "RN": 65.7,
        "NTM": 84.2,
        "MNM": 73.8,
    },
    ("xoccurs", "stripes"): {
        "CoRelNet": 83.6,
        "CoRelNet-T": 85.4,
        "ESBN": 64.7,
        "PrediNet": 61.3,
        "Transformer": 69.4,
        "LSTM": 77.2,
        "RN": 61.7,
        "NTM": 81.7,
        "MNM": 70.6,
    },
    ("row_matching", "hexominoes"): {
        "CoRelNet": 97.7,
        "CoRelNet-T": 95.4,
        "ESBN": 81.1,
        "PrediNet": 50.3,
        "Transformer": 50.3,
        "LSTM": 50.1,
        "RN": 50.5,
        "NTM": 50.2,
        "MNM": 49.9,
    },
    ("row_matching", "stripes"): {
        "CoRelNet": 94.8,
        "CoRelNet-T": 90.5,
        "ESBN": 76.8,
        "PrediNet": 50.5,
        "Transformer": 50.4,
        "LSTM": 50.2,
        "RN": 50.4,
        "NTM": 49.9,
        "MNM": 49.8,
    },
    ("colour_shape", "hexominoes"): {
        "CoRelNet": 47.2,
        "CoRelNet-T": 49.6,
        "ESBN": 31.2,
        "PrediNet": 74.9,
        "Transformer": 89.1,
        "LSTM": 80.1,
        "RN": 77.5,
        "NTM": 88.0,
        "MNM": 75.7,
    },
    ("left_of", "hexominoes"): {
        "CoRelNet": 99.2,
        "CoRelNet-T": 97.6,
        "ESBN": 49.9,
        "PrediNet": 94.9,
        "Transformer": 96.0,
        "LSTM": 97.2,
        "RN": 51.0,
        "NTM": 97.5,
        "MNM": 97.5,
    },
}
"""Table 5.1 (mean OOD accuracy in %, 10 seeds, on DeepMind's data) with the LSTM, RN, NTM and MNM columns of Table C.2.
The thesis reports colour/shape and left-of on hexominoes only."""


def games_table(col) -> list[dict]:
    """One row per (game, test set): our mean OOD accuracy (%) per model beside Table 5.1's, and each side's ranking."""
    ours = {}
    for r in col:
        for test in ("hexominoes", "stripes"):
            ours.setdefault((r.config["task"], test), {}).setdefault(
                GAME_MODELS.get(r.config["model"], r.config["model"]), []
            ).append(100 * r[test])
    rows = []
    for (task, test), d in ours.items():
        mean = {m: float(np.mean(v)) for m, v in d.items()}
        paper = TABLE_5_1.get((task, test), {})
        row = {"game": task, "test": test}
        for m in mean:
            row[f"{m} (ours)"] = mean[m]
            row[f"{m} (thesis)"] = paper.get(m, float("nan"))
        row["ranking (ours)"] = " > ".join(sorted(mean, key=mean.get, reverse=True))
        row["ranking (thesis)"] = (
            " > ".join(sorted((m for m in mean if m in paper), key=paper.get, reverse=True)) or "not reported"
        )
        rows.append(row)
    return rows


def gap_games(col) -> str:
    rows = {(r["game"], r["test"]): r for r in games_table(col)}
    parts = []
    for (task, test), r in rows.items():
        if "CoRelNet (ours)" in r and "Transformer (ours)" in r:
            paper = r["CoRelNet (thesis)"] - r["Transformer (thesis)"]
            parts.append(
                f"{task}/{test}: CoRelNet - Transformer {r['CoRelNet (ours)'] - r['Transformer (ours)']:+.0f} points "
                + (f"(thesis {paper:+.0f})" if np.isfinite(paper) else "(not in the thesis)")
            )
    return "; ".join(parts) + " on a re-generation of the games, not DeepMind's data: rankings compare, values do not"


# --------------------------------------------------------------------------------------------- Fig. C.13
BASELINE_MODELS = {"lstm": "LSTM", "rn": "RN", "ntm": "NTM", "mnm": "MNM"}
BASELINE_SIZES = {
    "quick": dict(tasks=["same_different"], models=["rn", "ntm"], iters=100, seeds=[0], test=1000),
    "full": dict(
        tasks=list(TASKS) + list(UNSEEN_M), models=list(BASELINE_MODELS), iters=5000, seeds=[0, 1, 2], test=20000
    ),
}
"""Fig. C.13's appendix baselines at the extreme split. Quick: same/different (m = 98), the Relation Network and
the NTM, 100 steps (over seeds 0-2: both at 1.0 on the two training objects, 0.50-0.58 on the 98 others; 80, 150 and 300
steps give the same; the MNM, 0.3 s a step for two objects on this CPU, also fits them and is at 0.50 on the others
after 150 steps, seed 0, but runs in the full profile only). Full: the thesis's eight tasks (the four basic ones and
the four unseen-relation ones of Fig. 5.5), LSTM, RN, NTM and MNM, the paper's 5000 steps at 5e-4."""
BASELINE_M = {**EXTREME_M, **UNSEEN_M}


def extreme_run(figure: str, task: str, model: str, seed: int, iters: int, test: int, lr: float = 5e-4) -> Run:
    """One model at the extreme split of one of the eight tasks of Fig. C.13: a basic task (:func:`task_run`, lr 5e-4)
    or an unseen-relation one (:func:`unseen_run` at ``lr``)."""
    basic = task in TASKS
    return Run(
        CHAPTER,
        figure,
        f"{task}-{model}-s{seed}",
        task_run if basic else unseen_run,
        dict(
            task=task,
            model=model,
            m=BASELINE_M[task],
            iters=iters,
            test=test,
            seed=seed,
            **({} if basic else {"lr": lr}),
        ),
    )


def baseline_runs(scale: str) -> list[Run]:
    s = BASELINE_SIZES[scale]
    return [
        extreme_run("baselines", task, model, seed, s["iters"], s["test"])
        for task in s["tasks"]
        for model in s["models"]
        for seed in s["seeds"]
    ]


def baseline_table(col, *refs) -> list[dict]:
    """One row per (task, model): mean accuracy on the held-out (and, for unseen relations, test-pattern) objects and on
    the training ones, with CoRelNet's from the reference collections ``refs`` (figures ``ood``, ``unseen``) beside."""
    out = {}
    for r in col:
        out.setdefault((r.config["task"], r.config["model"]), []).append((r["ood"], r["iid"]))
    ref = accuracy_table(*refs)
    return [
        {
            "task": t,
            "m": BASELINE_M[t],
            "model": BASELINE_MODELS[m],
            "held-out objects": float(np.mean(v, 0)[0]),
            "training objects": float(np.mean(v, 0)[1]),
            "CoRelNet, held-out (Figs. 5.3, 5.5)": ref.get((t, "corelnet"), float("nan")),
        }
        for (t, m), v in out.items()
    ]


def show_baselines(col, *refs) -> None:
    acc, ref = accuracy_table(col), accuracy_table(*refs)
    models = [m for m in BASELINE_MODELS if any(k[1] == m for k in acc)]
    tasks = [t for t in BASELINE_M if any(k[0] == t for k in acc)]
    fig, ax = plot.figure(1, 1, width=min(2.2 * len(tasks) + 3.5, 13), height=3.4)
    w = 0.8 / (len(models) + 1)
    x = np.arange(len(tasks))
    ax[0, 0].bar(
        x - (len(models) / 2) * w,
        [ref.get((t, "corelnet"), np.nan) for t in tasks],
        w,
        color="C0",
        label="CoRelNet (Figs. 5.3, 5.5)",
    )
    for i, m in enumerate(models):
        ax[0, 0].bar(
            x + (i + 1 - len(models) / 2) * w,
            [acc.get((t, m), np.nan) for t in tasks],
            w,
            color=f"C{4 + list(BASELINE_MODELS).index(m)}",
            label=BASELINE_MODELS[m],
        )
    chance = {t: 1 / {**TASKS, **UNSEEN}[t][2] for t in tasks}
    ax[0, 0].hlines([chance[t] for t in tasks], x - 0.45, x + 0.45, **plot.PAPER, label="chance")
    ax[0, 0].set_xticks(x, [f"{t}\n(m = {BASELINE_M[t]})" for t in tasks], fontsize=8 if len(tasks) > 4 else None)
    ax[0, 0].set(ylabel="OOD test accuracy", ylim=(0, 1.05), title="appendix baselines (Fig. C.13)")
    ax[0, 0].legend(fontsize=7)
    plot.show(
        fig,
        col,
        *refs,
        data=f"{col[0]['objects']}, random frozen encoder",
        note="The thesis shows bars only: the sensory baselines (LSTM, RN, NTM, MNM) do not generalise to unseen "
        "objects at the extreme split.",
    )


def gap_baselines(col) -> str:
    acc = accuracy_table(col)
    return (
        "mean OOD accuracy "
        + ", ".join(
            f"{BASELINE_MODELS[m]} {np.mean([v for k, v in acc.items() if k[1] == m]):.1%}"
            for m in BASELINE_MODELS
            if any(k[1] == m for k in acc)
        )
        + "; the thesis prints bars only (Fig. C.13)"
    )


# --------------------------------------------------------------------------------------------- Figs. C.8-C.11
UNSEEN_GRID = {t: [0, 50, 85, m] for t, m in UNSEEN_M.items()}
ENCODER_MODELS = ["corelnet", "corelnet_t", "esbn"]
"""Fig. 5.4 (right) and Fig. 5.5 (right): ESBN, CoRelNet and CoRelNet-T behind a random frozen or a learned encoder."""
CAT_PAIRS = {"corelnet": "cat", "corelnet_t": "corelnet_t_cat", "esbn": "esbn_cat"}
"""Fig. 5.4 (left), Figs. C.7 and C.12: each relational-only model and its relational + sensory version, whose decoder
(CoRelNet's MLP, CoRelNet-T's tokens, ESBN's controller) also reads the embeddings."""
APPENDIX_SIZES = {
    "quick": dict(
        encoder=dict(tasks=["same_different"], models=["corelnet"], encoders=["random"], iters=60),
        sym=dict(tasks=["same_different"], models=["asym", "asym_corelnet_t", "sym_transformer"], iters=60),
        cat=dict(tasks=["same_different"], models=["cat", "corelnet_t_cat"], iters=60),
        unseen=dict(tasks=["rmts3"], models={"corelnet": 300, "mlp": 100}, lr=2e-3),
        unseen_encoder=dict(tasks=["rmts3"], models=["corelnet"], encoders=["random"], iters=300, lr=2e-3),
        seeds=[0],
        test=1000,
        skip=[50, 85],
    ),
    "full": dict(
        encoder=dict(tasks=list(TASKS), models=ENCODER_MODELS, encoders=["random", "learned"], iters=5000),
        sym=dict(tasks=list(TASKS), models=["asym", "asym_corelnet_t", "asym_esbn", "sym_transformer"], iters=5000),
        cat=dict(tasks=list(TASKS), models=list(CAT_PAIRS.values()), iters=5000),
        unseen=dict(tasks=list(UNSEEN_M), models={m: 5000 for m in CURVE_MODELS}, lr=5e-4),
        unseen_encoder=dict(
            tasks=list(UNSEEN_M), models=ENCODER_MODELS, encoders=["random", "learned"], iters=5000, lr=5e-4
        ),
        seeds=[0, 1, 2],
        test=20000,
        skip=[],
    ),
}
"""The appendix's accuracy-vs-m curves behind Figs. 5.4 and 5.5 (thesis Figs. C.8-C.11), on the m grid of figure
``mcurve``. Full: the paper's 5000 steps, 3 of 10 seeds. Quick (a few seconds in all): same/different with the random
encoder, the asymmetric CoRelNet and CoRelNet-T, the symmetric Transformer and the relational + sensory CoRelNet and
CoRelNet-T at
m in {0, 98} (60 steps, as figure ``mcurve``; the ESBN variants, ~4 s a run here, are in the full profile only), RMTS 3
at m = 0 with the set-up of
figure ``unseen`` (whose extreme-m runs complete every curve of Fig. C.10, in both profiles) and RMTS 3 behind the
random encoder at m in {0, 94}. The
learned encoder (~0.1 s a step for two images on this CPU) runs in the full profile only."""


def unseen_encoder_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on an unseen-relation task behind a random frozen or a learned conv encoder (Fig. 5.5 right)."""
    torch.manual_seed(ctx.seed)
    objs = load_objects()
    net = Encoded(make_model(cfg["model"], cfg["task"]), objs.images, seed=ctx.seed, learn=cfg["encoder"] == "learned")
    fn = UNSEEN[cfg["task"]][0]
    train_shapes, test_shapes = split(cfg["m"], seed=ctx.seed)
    out = train_eval(
        net,
        None,
        lambda sh, b, g: fn(sh, b, g, phase="train"),
        train_shapes,
        test_shapes,
        cfg["iters"],
        cfg["test"],
        ctx.seed,
        lr=cfg.get("lr", 5e-4),
        test_fn=lambda sh, b, g: fn(sh, b, g, phase="test"),
        device=ctx.device,
    )
    out["objects"] = objs.source
    return out


def _grid(task: str, s: dict) -> list[int]:
    return [m for m in {**M_GRID, **UNSEEN_GRID}[task] if m not in s["skip"]]


def mcurve_encoder_runs(scale: str) -> list[Run]:
    """Fig. C.8: the four basic tasks against m behind a random frozen or a learned encoder."""
    s = APPENDIX_SIZES[scale]
    e = s["encoder"]
    return [
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


def _ablation_curve_runs(scale: str, figure: str, part: str) -> list[Run]:
    """Figure ``figure``: the models of ``APPENDIX_SIZES[scale][part]`` on the basic tasks against m (with the
    pre-encoded objects of figure ``mcurve``)."""
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
        for m in _grid(task, s)
        for seed in s["seeds"]
    ]


def mcurve_sym_runs(scale: str) -> list[Run]:
    """Fig. C.9: the asymmetric CoRelNet, CoRelNet-T and ESBN and the symmetric Transformer against m (their
    counterparts are in figure ``mcurve``)."""
    return _ablation_curve_runs(scale, "mcurve_sym", "sym")


def mcurve_cat_runs(scale: str) -> list[Run]:
    """Fig. C.7: the relational + sensory versions (:data:`CAT_PAIRS`, Fig. 5.4 left) against m; the relational-only
    curves are figure ``mcurve``'s."""
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


_SUBSET = "m in {0, 50, 85, extreme}, 3 of 10 seeds"


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


def series_table(*cols, models=None) -> dict:
    """``{(task, label): {m: mean OOD accuracy over seeds}}`` over the collections (only ``models`` if given); the label
    names the model and, for runs behind an image encoder, the encoder (``"CoRelNet, learned encoder"``)."""
    out = {}
    for col in cols:
        for r in col:
            if models is not None and r.config["model"] not in models:
                continue
            label = CURVE_LABELS[r.config["model"]] + (
                f", {r.config['encoder']} encoder" if "encoder" in r.config else ""
            )
            out.setdefault((r.config["task"], label), {}).setdefault(r.config["m"], []).append(r["ood"])
    return {k: {m: float(np.mean(v)) for m, v in sorted(d.items())} for k, d in out.items()}


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
    ax[0, 0].set_ylabel("test accuracy (held-out objects)")
    ax[0, -1].legend(fontsize=7, loc="lower left")
    plot.show(
        fig,
        *cols,
        data=f"{cols[0][0]['objects']}",
        note=f"{title}: one colour per model, dashed for its ablation; the thesis plots these curves without "
        "printed numbers (dashed grey: chance); compare shapes and rankings.",
    )


def curve_rows(*cols, models=None) -> list[dict]:
    """One table row per (task, series): accuracy at each m."""
    return [
        {"task": t, "model": label, **{f"m = {m}": a for m, a in c.items()}}
        for (t, label), c in series_table(*cols, models=models).items()
    ]


def curve_drop(*cols, models=None) -> dict:
    """``{(task, label): accuracy at the smallest m - accuracy at the largest}`` of each series."""
    return {k: c[min(c)] - c[max(c)] for k, c in series_table(*cols, models=models).items() if len(c) > 1}


# --------------------------------------------------------------------------------------------- Fig. 5.4, three models
ABLATION_PAIRS = {
    "relational only vs relational + sensory": CAT_PAIRS,
    "symmetric vs asymmetric": {"corelnet": "asym", "corelnet_t": "asym_corelnet_t", "esbn": "asym_esbn"},
}
"""Fig. 5.4's left and middle panels: each base model and its ablated version."""


def ablation_average(*cols) -> list[dict]:
    """Fig. 5.4 as the thesis averages it: for each panel (:data:`ABLATION_PAIRS`, and random vs learned encoder), the
    mean OOD accuracy at the extreme split of the base models and of their ablated versions over the (model, task)
    cells that both sides have, from the curves' runs (figures mcurve, mcurve_cat, mcurve_sym, mcurve_encoder)."""
    acc = {}
    for col in cols:
        for r in col:
            c = r.config
            if c["task"] in EXTREME_M and c["m"] == EXTREME_M[c["task"]]:
                model = c["model"] + (f"@{c['encoder']}" if "encoder" in c else "")
                acc.setdefault((model, c["task"]), []).append(r["ood"])
    panels = {
        **ABLATION_PAIRS,
        "random encoder vs learned encoder": {f"{m}@random": f"{m}@learned" for m in ENCODER_MODELS},
    }
    rows = []
    for panel, pairs in panels.items():
        cells = [(a, b, t) for a, b in pairs.items() for t in EXTREME_M if (a, t) in acc and (b, t) in acc]
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
    rows = ablation_average(*cols)
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
        + ". The thesis prints bars only.",
    )


# --------------------------------------------------------------------------------------------- Fig. C.4
def separated_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on same/different with separated inputs (shape, colour, shape, colour; thesis App. C.6): the 100 shapes
    and 100 plain colour images are embedded once by the same random frozen encoder; shapes are split by ``m``, the
    colours are the same in training and test."""
    torch.manual_seed(ctx.seed)
    objs = load_objects()
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


# --------------------------------------------------------------------------------------------- Figs. C.1, C.2
VARIANT_M = {
    "identity_rules4_flipped": 94,
    "identity_rules4_flipped_missing": 94,
    "dist10": 89,
    "dist10_restricted": 89,
}
VARIANT_SIZES = {
    "quick": dict(
        tasks=["identity_rules4_flipped", "dist10_restricted"],
        iters={"corelnet": 300},
        cap={"dist10_restricted": 150},
        lr=2e-3,
        seeds=[0],
        test=1000,
    ),
    "full": dict(
        tasks=list(VARIANT_M), iters=UNSEEN_SIZES["full"]["iters"], cap={}, lr=5e-4, seeds=[0, 1, 2], test=20000
    ),
}
"""Figs. C.1 (identity rules 4 flipped, and flipped + missing, m = 94) and C.2 (distribution-of-10, unrestricted and
restricted, m = 89), with the set-up of figure ``unseen``. Full: the six models of Fig. 5.5, the paper's 5000 steps.
Quick: CoRelNet on identity rules 4 flipped (300 steps at lr 2e-3; over seeds 0-2: 0.99-1.0, while 150 steps give
0.76) and restricted distribution-of-10 (150 steps: 1.0 on the training permutations and objects, 0.27-0.29 on the
others; 300 steps give the same)."""


def variant_runs(scale: str) -> list[Run]:
    s = VARIANT_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "variants",
            f"{task}-{model}-s{seed}",
            unseen_run,
            dict(
                task=task,
                model=model,
                m=VARIANT_M[task],
                iters=min(it, s["cap"].get(task, it)),
                lr=s["lr"],
                test=s["test"],
                seed=seed,
            ),
        )
        for task in s["tasks"]
        for model, it in s["iters"].items()
        for seed in s["seeds"]
    ]


def variant_table(col) -> list[dict]:
    """One row per (task, model): mean accuracy on the test relations of held-out objects and on the training ones."""
    out = {}
    for r in col:
        out.setdefault((r.config["task"], r.config["model"]), []).append((r["ood"], r["iid"]))
    return [
        {
            "task": f"{t} (m = {VARIANT_M[t]})",
            "model": CURVE_MODELS[m],
            "chance": 1 / APPENDIX_UNSEEN[t][2],
            "test relations, held-out objects": float(np.mean([v[0] for v in vs])),
            "training relations and objects": float(np.mean([v[1] for v in vs])),
        }
        for (t, m), vs in out.items()
    ]


def show_variants(col) -> None:
    """Figs. C.1 and C.2: bars per task and model, with chance marked."""
    rows = variant_table(col)
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    models = list(dict.fromkeys(r["model"] for r in rows))
    fig, ax = plot.figure(1, 1, width=2.4 * len(tasks) + 3, height=3.2)
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        acc = {r["task"]: r["test relations, held-out objects"] for r in rows if r["model"] == m}
        ax[0, 0].bar(
            np.arange(len(tasks)) + (i - (len(models) - 1) / 2) * w,
            [acc.get(t, np.nan) for t in tasks],
            w,
            label=m,
            color=f"C{list(CURVE_MODELS.values()).index(m)}",
        )
    for j, t in enumerate(tasks):
        chance = next(r["chance"] for r in rows if r["task"] == t)
        ax[0, 0].plot([j - 0.45, j + 0.45], [chance] * 2, **plot.PAPER)
    ax[0, 0].set_xticks(range(len(tasks)), tasks, fontsize=8)
    ax[0, 0].set(ylabel="accuracy, test relations + objects", ylim=(0, 1.05), title="Figs. C.1, C.2")
    ax[0, 0].legend(fontsize=7)
    plot.show(
        fig,
        col,
        data=f"{col[0]['objects']}, random frozen encoder",
        note="The thesis's Figs. C.1 and C.2 are bars without printed numbers or a stated claim (dashed grey: chance).",
    )


# --------------------------------------------------------------------------------------------- Fig. C.5
NHID_SIZES = {
    "quick": dict(tasks=["identity_rules4"], iters=100, lr=2e-3, seeds=[0], test=1000),
    "full": dict(tasks=list(TASKS) + list(UNSEEN_M), iters=5000, lr=5e-4, seeds=[0, 1, 2], test=20000),
}
"""Fig. C.5: CoRelNet-nhid (decoder widened to ESBN's parameter count, :func:`~lscnb.models.relational.nhid_width`) at
the extreme split of the eight tasks of Fig. C.13, beside CoRelNet and ESBN (figures ood, unseen, mcurve). Full: the
paper's 5000 steps at 5e-4. Quick: identity rules 4 (the narrowest widening, 17,489 units: the 285,313 of same/different
cost ~0.5 s a step on this CPU), 100 steps at figure unseen's lr 2e-3 (over seeds 0-2: 1.0 on held-out objects and
relations; CoRelNet needs 500 steps there, and was at 0.73 after 300)."""


def nhid_runs(scale: str) -> list[Run]:
    s = NHID_SIZES[scale]
    return [
        extreme_run("nhid", task, "corelnet_nhid", seed, s["iters"], s["test"], s["lr"])
        for task in s["tasks"]
        for seed in s["seeds"]
    ]


def nhid_table(nh, *refs) -> list[dict]:
    """Fig. C.5: one row per task of ``nh`` (figure ``nhid``): mean OOD accuracy at the extreme split of CoRelNet,
    CoRelNet-nhid and ESBN, the first and last from the reference collections (figures ood, unseen, mcurve) where they
    have them (NaN otherwise), with the parameter counts of Table C.3."""
    acc = {}
    for r in [*nh, *(r for col in refs for r in col)]:
        t = r.config["task"]
        if r.config["model"] in ("corelnet", "corelnet_nhid", "esbn") and r.config.get(
            "m", BASELINE_M.get(t)
        ) == BASELINE_M.get(t):
            acc.setdefault((t, r.config["model"]), []).append(r["ood"])
    rows = []
    for t in dict.fromkeys(r.config["task"] for r in nh):
        _, T, classes = {**TASKS, **UNSEEN}[t]
        rows.append(
            {
                "task": f"{t} (m = {BASELINE_M[t]})",
                "chance": 1 / classes,
                **{
                    CURVE_LABELS[m]: float(np.mean(acc[(t, m)])) if (t, m) in acc else float("nan")
                    for m in ("corelnet", "corelnet_nhid", "esbn")
                },
                "CoRelNet-nhid parameters": nhid_count(T, classes),
                "ESBN parameters": esbn_count(T, classes),
            }
        )
    return rows


def show_nhid(nh, *refs) -> None:
    """Fig. C.5: bars per task for CoRelNet, CoRelNet-nhid and ESBN at the extreme split, chance marked."""
    rows = nhid_table(nh, *refs)
    models = ["CoRelNet", "CoRelNet-nhid", "ESBN"]
    fig, ax = plot.figure(1, 1, width=2.2 * len(rows) + 3, height=3.2)
    w = 0.8 / len(models)
    for i, m in enumerate(models):
        ax[0, 0].bar(np.arange(len(rows)) + (i - 1) * w, [r[m] for r in rows], w, label=m, color=f"C{i}")
    for j, r in enumerate(rows):
        ax[0, 0].plot([j - 0.45, j + 0.45], [r["chance"]] * 2, **plot.PAPER)
    ax[0, 0].set_xticks(range(len(rows)), [r["task"] for r in rows], fontsize=8)
    ax[0, 0].set(ylabel="OOD test accuracy", ylim=(0, 1.05), title="CoRelNet-nhid (Fig. C.5)")
    ax[0, 0].legend(fontsize=7)
    plot.show(
        fig,
        nh,
        *refs,
        data=f"{nh[0]['objects']}, random frozen encoder",
        note="Fig. C.5 of the thesis prints bars only: CoRelNet-nhid (ESBN's parameter count) as good as CoRelNet, "
        "so ESBN's deficit is not for want of parameters. A missing bar: that model has no run at this "
        "split in this profile.",
    )


# --------------------------------------------------------------------------------------------- Fig. C.3
def spurious_model_table(col) -> list[dict]:
    """Fig. C.3: one row per (task, model, encoder) of figure ``spurious``: mean OOD and training-shape accuracy over
    seeds (figure ``spurious`` averages over the models, as Fig. 5.6 does)."""
    out = {}
    for r in col:
        out.setdefault((r.config["task"], r.config["model"], r.config["encoder"]), []).append((r["ood"], r["iid"]))
    return [
        {
            "task": f"{t} + colour",
            "model": CURVE_MODELS[m],
            "encoder": ENCODERS[e],
            "OOD accuracy": float(np.mean([v[0] for v in vs])),
            "training shapes": float(np.mean([v[1] for v in vs])),
        }
        for (t, m, e), vs in out.items()
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


# --------------------------------------------------------------------------------------------- Fig. C.12
SENSORY_SIZES = {
    "quick": dict(unseen=["rmts3"], games=["row_matching"], models=["cat"], seeds=[0]),
    "full": dict(
        unseen=["same_diff6", "rmts3", "identity_rules4"],
        games=list(GAMES),
        models=list(CAT_PAIRS.values()),
        seeds=[0, 1, 2],
    ),
}
"""Fig. C.12: the relational + sensory versions of CoRelNet, CoRelNet-T and ESBN (:data:`CAT_PAIRS`) on the
unseen-relation tasks (left) and the 7 Relational Games (right), each run with the set-up of figure ``unseen`` or
``games`` (steps, learning rate, test size of the profile), whose runs of the three models are the relational-only
side. Quick: CoRelNet on RMTS 3 and row matching (CoRelNet-T and ESBN are not in those figures' quick runs)."""


def sensory_runs(scale: str) -> list[Run]:
    s, u, g = SENSORY_SIZES[scale], UNSEEN_SIZES[scale], GAMES_SIZES[scale]
    it = u["iters"]["corelnet"]
    return [
        Run(
            CHAPTER,
            "sensory",
            f"{task}-{model}-s{seed}",
            unseen_run,
            dict(
                task=task,
                model=model,
                m=UNSEEN_M[task],
                iters=min(it, u["cap"].get(task, it)),
                lr=u["lr"],
                test=u["test"],
                seed=seed,
            ),
        )
        for task in s["unseen"]
        for model in s["models"]
        for seed in s["seeds"]
    ] + [
        Run(
            CHAPTER,
            "sensory",
            f"game-{task}-{model}-s{seed}",
            games_run,
            dict(task=task, model=model, iters=g["iters"], lr=g["lr"], test=g["test"], seed=seed),
        )
        for task in s["games"]
        for model in s["models"]
        for seed in s["seeds"]
    ]


def _game_acc(r) -> float:
    """Fig. C.12's score of a game run: the mean of hexominoes and stripes where the thesis reports both."""
    return (
        float(np.mean([r["hexominoes"], r["stripes"]]))
        if (r.config["task"], "stripes") in TABLE_5_1
        else r["hexominoes"]
    )


def sensory_table(sens, un, gm) -> list[dict]:
    """Fig. C.12: one row per panel, the mean OOD accuracy of the relational-only models (figures ``unseen`` and
    ``games``) and of their relational + sensory versions (figure ``sensory``), over the (model, task) pairs of
    :data:`CAT_PAIRS` that both sides have, each averaged over seeds first."""
    rows = []
    for panel, base in (("unseen relations", un), ("Relational Games", gm)):
        game = panel == "Relational Games"
        score = _game_acc if game else (lambda r: r["ood"])
        acc = {}
        for r in [r for r in base if r.config["model"] in CAT_PAIRS] + [r for r in sens if ("hexominoes" in r) == game]:
            acc.setdefault(r.config["model"], {}).setdefault(r.config["task"], []).append(score(r))
        cells = [(m, c, t) for m, c in CAT_PAIRS.items() for t in sorted(set(acc.get(m, {})) & set(acc.get(c, {})))]
        if cells:
            rows.append(
                {
                    "panel": panel,
                    "models": ", ".join(dict.fromkeys(CURVE_MODELS[m] for m, _, _ in cells)),
                    "tasks": ", ".join(dict.fromkeys(t for _, _, t in cells)),
                    "relational only": float(np.mean([np.mean(acc[m][t]) for m, _, t in cells])),
                    "relational + sensory": float(np.mean([np.mean(acc[c][t]) for _, c, t in cells])),
                }
            )
    return rows


def show_sensory(sens, un, gm) -> None:
    rows = sensory_table(sens, un, gm)
    fig, ax = plot.figure(len(rows), 1, width=3.4 * len(rows) + 1, height=3.2)
    for a, r in zip(ax[0], rows):
        a.bar([0, 1], [r["relational only"], r["relational + sensory"]], 0.6, color=["C0", "C2"])
        a.set_xticks([0, 1], ["relational only", "relational\n+ sensory"])
        a.set(title=f"{r['panel']} (Fig. C.12)", ylim=(0, 1.05))
    ax[0, 0].set_ylabel("mean OOD test accuracy")
    plot.show(
        fig,
        sens,
        un,
        gm,
        data="ESBN object images; Relational Games re-created; random frozen encoders",
        note="Averaged over " + "; ".join(f"{r['panel']}: {r['models']}" for r in rows) + ". Fig. C.12 of the "
        "thesis averages ESBN, CoRelNet and CoRelNet-T and prints bars only: relational only above "
        "relational + sensory on both panels.",
    )


# --------------------------------------------------------------------------------------------- bookkeeping


def gap_ood(col) -> str:
    acc = accuracy_table(col)
    c = np.mean([v for (t, m), v in acc.items() if m == "corelnet"])
    t = np.mean([v for (t, m), v in acc.items() if m == "transformer"])
    return f"mean OOD accuracy CoRelNet {c:.1%} vs Transformer {t:.1%}; the thesis prints no numbers (bars only)"


FIGURES = declare(
    Figure(
        "ood",
        ood_runs,
        items=[
            Item(
                source="Fig. 5.3",
                what="OOD accuracy on the four basic tasks",
                data="ESBN object images (offline glyphs if absent)",
                note="CoRelNet and Transformer only (ESBN, CoRelNet-T in figure mcurve); PrediNet only on the games",
                gap=gap_ood,
            )
        ],
        subset="extreme m only, 3 of 10 seeds, random frozen encoder",
        show=show_ood,
    ),
    Figure(
        "ablation",
        ablation_runs,
        items=[
            Item(
                source="Fig. 5.4",
                what="relational vs relational + sensory; symmetric vs asymmetric",
                data="ESBN object images",
                note="CoRelNet ablations; random vs learned encoder is figure 'encoder'; the "
                "thesis's three-model averages recomputed from the curves' runs at the "
                "extreme split (ablation_average; ESBN and the encoder panel in full)",
            )
        ],
        subset="extreme m only, random frozen encoder",
    ),
    Figure(
        "encoder",
        encoder_runs,
        items=[
            Item(
                source="Fig. 5.4 (right)",
                what="random frozen vs learned conv encoder",
                data="ESBN object images",
                note="quick: same/different, CoRelNet, 100 steps; full: 4 tasks, CoRelNet, "
                "CoRelNet-T, ESBN (owed: needs a GPU)",
            )
        ],
        subset="extreme m only, 3 of 10 seeds",
        table=encoder_table,
    ),
    Figure(
        "games",
        games_runs,
        items=[
            Item(
                source="Table 5.1, Table C.2",
                what="Relational Games OOD accuracy",
                data="Relational Games re-created (pentominoes; hexominoes and stripes OOD), not DeepMind's files",
                note="quick: row matching and colour/shape, CoRelNet, PrediNet and Transformer, 150 steps; full: 7 "
                "games, CoRelNet, "
                "CoRelNet-T, ESBN, PrediNet, Transformer, LSTM, RN, NTM, MNM (owed: needs a GPU); "
                "rankings compare, values do not",
                gap=gap_games,
            )
        ],
        subset="re-created games, random frozen patch encoder, 3 of 10 seeds",
        table=games_table,
    ),
    Figure(
        "unseen",
        unseen_runs,
        items=[
            Item(
                source="Fig. 5.5 (left)",
                what="unseen relations (RMTS3, same/diff6, identity rules 4 and 4 missing)",
                data="ESBN object images",
                note="quick: CoRelNet and an MLP at lr 2e-3; full: six models (no PrediNet) at the paper's 5000 steps, "
                "5e-4; "
                "the right panel (random vs learned encoder) is figure mcurve_unseen_encoder",
            )
        ],
        subset="extreme m only, 3 of 10 seeds, random frozen encoder, no PrediNet",
        show=show_unseen,
        table=unseen_table,
    ),
    Figure(
        "spurious",
        spurious_runs,
        items=[
            Item(
                source="Fig. 5.6",
                what="spurious colour features: random vs learned encoder (+ L1)",
                data="ESBN object images on 100 background colours",
                note="quick: dist3, CoRelNet, random encoder vs a learned linear layer on it; full: 4 tasks, CoRelNet "
                "and ESBN, "
                "random / learned / learned + L1 conv encoder (owed: needs a GPU)",
            ),
            Item(
                source="Fig. C.3",
                what="spurious colour features per model (Fig. 5.6 per model)",
                data="ESBN object images on 100 background colours",
                note="a per-model view of figure spurious's runs (quick: CoRelNet only; full: CoRelNet and ESBN, owed: "
                "needs a GPU)",
            ),
        ],
        subset="extreme m only, 3 of 10 seeds, CoRelNet and ESBN",
        show=show_spurious,
        table=spurious_table,
    ),
    Figure(
        "mcurve",
        mcurve_runs,
        items=[
            Item(
                source="Fig. C.6",
                what="accuracy vs m: CoRelNet, CoRelNet-T, ESBN vs Transformer, LSTM, MLP",
                data="ESBN object images",
                note="random frozen encoder; PrediNet not on these tasks; RN and NTM at extreme m in figure baselines",
            )
        ],
        subset="m in {0, 50, 85, extreme}, 3 of 10 seeds, random frozen encoder",
        show=show_mcurve,
    ),
    Figure(
        "baselines",
        baseline_runs,
        items=[
            Item(
                source="Fig. C.13",
                what="appendix baselines (MNM, NTM, LSTM, RN) at extreme m",
                data="ESBN object images",
                note="quick: same/different, RN and NTM, 100 steps; full: the eight tasks (basic and "
                "unseen relations), LSTM, RN, NTM, MNM (owed: needs a GPU)",
                gap=gap_baselines,
            )
        ],
        subset="extreme m, 3 of 10 seeds, random frozen encoder",
        show=show_baselines,
    ),
    Figure(
        "mcurve_encoder",
        mcurve_encoder_runs,
        items=[
            Item(
                source="Fig. C.8",
                what="accuracy vs m behind a random frozen vs a learned encoder (Fig. 5.4 right)",
                data="ESBN object images",
                note="quick: same/different, CoRelNet, random encoder, m in {0, 98}; full: 4 tasks, CoRelNet, "
                "CoRelNet-T, ESBN, "
                "both encoders (owed: needs a GPU)",
            )
        ],
        subset=_SUBSET,
    ),
    Figure(
        "mcurve_sym",
        mcurve_sym_runs,
        items=[
            Item(
                source="Fig. C.9",
                what="accuracy vs m, asymmetric vs symmetric similarity (Fig. 5.4 middle)",
                data="ESBN object images",
                note="asymmetric CoRelNet, CoRelNet-T and ESBN and the symmetric Transformer beside figure mcurve's "
                "counterparts; quick: same/different, all but asymmetric ESBN; full adds 4 tasks and asymmetric ESBN "
                "(owed: needs a GPU)",
            )
        ],
        subset=_SUBSET + ", random frozen encoder",
    ),
    Figure(
        "mcurve_unseen",
        mcurve_unseen_runs,
        items=[
            Item(
                source="Fig. C.10",
                what="accuracy vs m on the unseen-relation tasks (Fig. 5.5 left)",
                data="ESBN object images",
                note="extreme m from figure unseen; quick: RMTS 3, CoRelNet and MLP at m = 0; full: 4 tasks, six "
                "models, "
                "m in {0, 50, 85} (owed: needs a GPU); no PrediNet",
            )
        ],
        subset=_SUBSET + ", random frozen encoder, no PrediNet",
    ),
    Figure(
        "mcurve_unseen_encoder",
        mcurve_unseen_encoder_runs,
        items=[
            Item(
                source="Fig. C.11, Fig. 5.5 (right)",
                what="accuracy vs m on unseen relations, random vs learned encoder",
                data="ESBN object images",
                note="quick: RMTS 3, CoRelNet, random encoder, m in {0, 94}; full: 4 tasks, CoRelNet, CoRelNet-T, "
                "ESBN, both "
                "encoders (owed: needs a GPU)",
            )
        ],
        subset=_SUBSET,
    ),
    Figure(
        "separated",
        separated_runs,
        items=[
            Item(
                source="Fig. C.4",
                what="same/different with separated inputs (shape, colour, shape, colour) vs m",
                data="ESBN object images and 100 plain colours",
                note="quick: CoRelNet and Transformer at m in {0, 98}, 60 steps; full: ESBN, Transformer, CoRelNet at "
                "m in {0, 50, 85, 98} (owed: needs a GPU)",
            )
        ],
        subset="m in {0, 50, 85, 98}, 3 of 10 seeds, random frozen encoder",
    ),
    Figure(
        "sensory",
        sensory_runs,
        items=[
            Item(
                source="Fig. C.12",
                what="relational only vs relational + sensory on unseen relations and Relational Games",
                data="ESBN object images; Relational Games re-created",
                note="cat variants of CoRelNet, CoRelNet-T and ESBN beside figures unseen's and games's runs; quick: "
                "CoRelNet on "
                "RMTS 3 and row matching; full: the three models, 3 tasks and 7 games (owed: needs a GPU)",
            )
        ],
        subset="3 of 10 seeds, random frozen encoder",
        show=show_sensory,
        table=sensory_table,
    ),
    Figure(
        "mcurve_cat",
        mcurve_cat_runs,
        items=[
            Item(
                source="Fig. C.7",
                what="accuracy vs m, relational only vs relational + sensory (Fig. 5.4 left)",
                data="ESBN object images",
                note="cat variants beside figure mcurve's relational-only curves; quick: CoRelNet and CoRelNet-T, "
                "same/different, "
                "m in {0, 98}, 60 steps; full adds ESBN and 4 tasks (owed: needs a GPU)",
            )
        ],
        subset=_SUBSET + ", random frozen encoder",
    ),
    Figure(
        "variants",
        variant_runs,
        items=[
            Item(
                source="Figs. C.1, C.2",
                what="identity rules 4 flipped (+ missing), distribution-of-10 (+ restricted)",
                data="ESBN object images",
                note="quick: CoRelNet on identity rules 4 flipped and restricted distribution-of-10; full: the four "
                "tasks, the six "
                "models of figure unseen (owed: needs a GPU)",
            )
        ],
        subset="3 of 10 seeds, random frozen encoder, no PrediNet",
        show=show_variants,
    ),
    Figure(
        "nhid",
        nhid_runs,
        items=[
            Item(
                source="Fig. C.5, Table C.3",
                what="CoRelNet-nhid (decoder widened to ESBN's parameter count) at extreme m",
                data="ESBN object images",
                note="widths give Table C.3's CoRelNet-nhid counts on 6 of 7 tasks (unit test, chapter table); quick: "
                "identity "
                "rules 4, 100 steps; full: the eight tasks (owed: needs a GPU)",
            )
        ],
        subset="extreme m, 3 of 10 seeds, random frozen encoder",
        show=show_nhid,
        table=nhid_table,
    ),
    Figure(
        "comparison",
        comparison_runs,
        items=[
            Item(
                source="Figs. 7.1-7.3",
                what="comparison tasks: symmetric similarity fails, differences succeed",
                data="ESBN object images, hidden order",
                note="a hidden-order variant",
            )
        ],
        show=show_comparison,
    ),
    Figure(
        "sizes",
        sizes_runs,
        items=[
            Item(
                source="Figs. 7.1, 7.2",
                what="comparison and transitive comparison of sizes",
                data="ESBN object images at 3 sizes",
                note="CoRelNet, asymmetric CoRelNet, CoRelNet diff (+ ESBN and "
                "asymmetric ESBN in full, owed: needs a GPU); CoRelNet_mix not run here",
            )
        ],
        subset="3 of 10 seeds, m = 95 held-out shapes (the thesis does not give m), no CoRelNet-mix",
        show=show_sizes,
    ),
    Figure(
        "mix",
        mix_runs,
        items=[
            Item(
                source="Fig. 7.3",
                what="the four basic tasks with CoRelNet_mix (competition of rules)",
                data="ESBN object images",
                note="quick: CoRelNet diff and CoRelNet_mix, 300 steps (CoRelNet and asymmetric "
                "CoRelNet from figures ood, ablation); full adds ESBN and asymmetric ESBN "
                "(owed: needs a GPU)",
            )
        ],
        subset="extreme m only, 3 of 10 seeds, random frozen encoder",
        show=show_mix,
    ),
)
# the paper's figures and tables that no figure here reproduces (illustrations, say)
NOT_RUN = [
    Item(
        source="Fig. 5.1",
        what="task illustrations",
        data="ESBN object images, generated trials",
        note="one trial per basic task drawn from the generators (show_tasks), with the index sequences; no training",
    ),
    Item(
        source="Fig. 5.2",
        what="architecture diagram",
        data="ESBN object images",
        note="drawn from an untrained CoRelNet's tensors on one trial: objects, Z after TCN, R, decoder "
        "(show_bottleneck)",
    ),
    Item(
        source="Table C.3",
        what="parameter counts",
        data="none",
        note="CoRelNet rows reproduced exactly (unit test and chapter table)",
    ),
]
