"""The chapter's shared pieces: its name, the sizes of figures ``ood``, ``ablation`` and ``comparison``, the
extreme held-out splits, the model table and builders, the training loop and accuracy every run uses, the basic-task
run (:func:`task_run`) and the tables of model names and mean accuracies that several figures read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ... import checks
from ...batched import fit_batched
from ...data.objects import load_objects
from ...data.relational import APPENDIX_UNSEEN, SEPARATED, TASKS, UNSEEN, split
from ...models.relational import (
    ESBN,
    CoRelNet,
    CoRelNetMix,
    CoRelNetT,
    Encoded,
    LSTMBaseline,
    MLPBaseline,
    PrediNet,
    TransformerBaseline,
    encode_objects,
    nhid_width,
)
from ...models.relational_baselines import MNM, NTM, RelationNetwork
from ...runs import twin
from ...sweep import RunContext, pool
from ...train import fit

CHAPTER = "corelnet"

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


def objects(ctx):
    """The 100 ESBN object images; a full-profile run refuses the rendered stand-in (its result would pass as the
    paper's data), a quick one falls back to it."""
    return load_objects(fallback=ctx.profile.scale != "full")


def _embeddings(ctx):
    objs = objects(ctx)
    return encode_objects(objs.images, seed=ctx.seed), objs.source


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
    progress: bool = False,
) -> dict:
    """Adam (lr 5e-4 as in the code, batch 96) on fresh samples from the training shapes; accuracy on the test shapes
    (OOD) and on the training shapes. ``test_fn`` (default ``gen_fn``) generates the OOD test set (unseen relations).
    ``emb`` (N, 128) is the frozen object table, or ``None`` for a model that takes index sequences (:class:`Encoded`),
    whose ``l1()`` is added to the loss with weight ``l1``. Samples are drawn on the CPU (the same stream on any
    machine) and moved to ``device``, where the model and the object table compute. A model with a ``reconstruction``
    meta-objective (:class:`~lscnb.models.relational_baselines.MNM`) adds it to the loss, as in the ESBN code. Trains
    with :func:`lscnb.train.fit`: a run whose loss turns non-finite stops there and is recorded as ``diverged``."""
    device = torch.device(device)
    model.to(device)
    emb = None if emb is None else emb.to(device)
    inputs = _inputs(emb, device)
    g = torch.Generator().manual_seed(seed)

    def loss_fn(net, seq, y):
        loss = torch.nn.functional.cross_entropy(net(inputs(seq)), y)
        if getattr(net, "reconstruction", None) is not None:
            loss = loss + net.reconstruction
        return loss + l1 * net.l1() if l1 else loss

    hist = fit(
        model,
        lambda k: gen_fn(train_shapes, BATCH, g),
        loss_fn,
        steps=iters,
        lr=lr,
        device=device,
        generators=(g,),
        progress=progress,
        desc=type(model).__name__,
    )
    return _scores(hist, model, inputs, gen_fn, train_shapes, test_shapes, test, seed, test_fn)


BATCH = 96  # samples a training step, as in the ESBN code


def _inputs(emb, device):
    """Index sequences -> the model's input on ``device``: embeddings from the table ``emb``, or the indices."""
    return (lambda seq: seq.to(device)) if emb is None else (lambda seq: emb[seq.to(device)])


def _scores(hist, model, inputs, gen_fn, train_shapes, test_shapes, test: int, seed: int, test_fn=None) -> dict:
    """A trained run's record: its loss history, whether it diverged, its OOD and training-shape accuracies."""
    out = {"loss": np.array(hist.loss), "diverged": hist.diverged}
    for name, shapes, fn in (("ood", test_shapes, test_fn or gen_fn), ("iid", train_shapes, gen_fn)):
        out[name] = accuracy(model, inputs, fn, shapes, test, seed)
    return out


@dataclass
class Job:
    """One run's :func:`train_eval` call, ``args`` (its keyword arguments), and what the run makes of the result,
    ``finish(out) -> dict``: the form in which runs that differ only in seed and data train together
    (:func:`run_jobs`)."""

    args: dict
    finish: Callable[[dict], dict] = lambda out: out


def shared(cfg: dict) -> dict:
    """What runs must share to train together (the key of the chapter's batched twins): all but the seed and the
    held-out split ``m``, which change only the initial weights, the object encoder and the data."""
    return {k: v for k, v in cfg.items() if k not in ("seed", "m")}


def batchable(job: Job) -> bool:
    """Whether ``job`` can train in a group: not CoRelNet_mix (its Gumbel noise is a random op, which ``vmap``
    refuses), not the MNM (its meta-objective is kept on the model), no L1 penalty (it reads the model's own
    weights, not the group's) and no learned encoder (it encodes a batch's distinct objects, a shape ``vmap`` cannot
    know; alone it is faster than a group of the whole images)."""
    model = job.args["model"]
    if job.args.get("l1") or isinstance(model, (CoRelNetMix, MNM)):
        return False
    return not (isinstance(model, Encoded) and model.learn)


def run_jobs(job_fn: Callable[[dict, RunContext], Job], cfgs: list[dict], ctxs: list) -> list[dict]:
    """The runs ``job_fn(cfg, ctx)`` of ``cfgs`` and ``ctxs``: several :func:`batchable` ones trained together
    (:func:`train_eval_group`, with the first context's checkpoint), else each set up and trained alone
    (:func:`train_eval`), as its run function does it; each result through its job's ``finish``."""
    first = job_fn(cfgs[0], ctxs[0])
    if len(cfgs) > 1 and batchable(first):
        jobs = [first] + [job_fn(c, x) for c, x in zip(cfgs[1:], ctxs[1:])]
        outs = train_eval_group([j.args for j in jobs], ctxs[0].checkpoint, ctxs[0].progress)
        return [j.finish(out) for j, out in zip(jobs, outs)]
    out = [first.finish(train_eval(**first.args))]
    for c, x in zip(cfgs[1:], ctxs[1:]):  # set up just before training: a random op draws on from the seed it set
        job = job_fn(c, x)
        out.append(job.finish(train_eval(**job.args)))
    return out


def train_eval_group(runs: list[dict], checkpoint=None, progress: bool = False) -> list[dict]:
    """:func:`train_eval` of ``runs`` (its keyword arguments each; one architecture, one step count) trained together
    (:func:`lscnb.batched.fit_batched`): each model on its own stream of samples, from its own seed and shapes, so
    each ends as it would alone, up to floating-point rounding. ``checkpoint`` saves the group and resumes it."""
    first = runs[0]
    device = torch.device(first.get("device", "cpu"))
    gens = [torch.Generator().manual_seed(r["seed"]) for r in runs]
    inputs = [_inputs(None if r["emb"] is None else r["emb"].to(device), device) for r in runs]

    def draw(r, g, embed):
        def batch(k):
            seq, y = r["gen_fn"](r["train_shapes"], BATCH, g)
            return embed(seq), y

        return batch

    hists = fit_batched(
        [r["model"] for r in runs],
        [draw(r, g, embed) for r, g, embed in zip(runs, gens, inputs)],
        lambda net, x, y: torch.nn.functional.cross_entropy(net(x), y),
        steps=first["iters"],
        lr=[r.get("lr", 5e-4) for r in runs],
        device=device,
        generators=gens,
        checkpoint=checkpoint,
        progress=progress,
        desc=f"{type(first['model']).__name__} x{len(runs)} (batched)",
    )
    keys = ("gen_fn", "train_shapes", "test_shapes", "test", "seed", "test_fn")
    return [_scores(h, r["model"], embed, *(r.get(k) for k in keys)) for h, r, embed in zip(hists, runs, inputs)]


def accuracy(model, inputs, fn, shapes, test: int, seed: int) -> float:
    """Accuracy of ``model`` (in eval mode) on ``test`` samples of ``fn`` from ``shapes``, drawn from seed ``10000 +
    seed`` (the same test set for every model); ``inputs`` maps index sequences to the model's input."""
    model.eval()
    with torch.no_grad():
        seq, y = fn(shapes, test, torch.Generator().manual_seed(10_000 + seed))
        pred = torch.cat([model(inputs(s)).argmax(-1).cpu() for s in seq.split(1000)])
    model.train()
    return float((pred == y).float().mean())


def job_args(cfg: dict, ctx: RunContext, model, emb=None, **extra) -> dict:
    """The :func:`train_eval` arguments a job of run ``cfg`` shares with every other: ``model`` (with ``emb``, its
    object embeddings, or None behind an encoder), the shapes that the split ``m`` holds out for the run's seed, the
    counts, the seed, the rate (the authors' 5e-4 unless ``cfg`` says) and the device; ``extra``: the rest (the
    task's generator, or its phases; an L1 weight)."""
    train_shapes, test_shapes = split(cfg["m"], seed=ctx.seed)  # its own generator: the global one is left as is
    return dict(
        model=model,
        emb=emb,
        train_shapes=train_shapes,
        test_shapes=test_shapes,
        iters=cfg["iters"],
        test=cfg["test"],
        seed=ctx.seed,
        lr=cfg.get("lr", 5e-4),
        device=ctx.device,
        **extra,
    )


def task_job(cfg: dict, ctx: RunContext) -> Job:
    """One model on one task at one held-out split m."""
    torch.manual_seed(ctx.seed)
    emb, source = _embeddings(ctx)
    net = make_model(cfg["model"], cfg["task"])
    fn = TASKS[cfg["task"]][0]
    args = job_args(cfg, ctx, net, emb, gen_fn=fn)

    def finish(out):
        if isinstance(net, CoRelNetMix):
            out["similarity_share"] = similarity_share(net, emb, fn, args["test_shapes"], cfg["test"], ctx.seed)
        out["objects"] = source
        return out

    return Job(args, finish)


def task_run(cfg: dict, ctx: RunContext) -> dict:
    """One model on one task at one held-out split m (:func:`task_job`)."""
    return run_jobs(task_job, [cfg], [ctx])[0]


@twin(task_run, key=shared)
def task_group(cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`task_run` of runs that differ only in seed and m, trained together (``--executor batched``)."""
    return run_jobs(task_job, cfgs, ctxs)


def similarity_share(net: CoRelNetMix, emb, fn, shapes, test: int, seed: int) -> float:
    """The fraction of test samples for which CoRelNet_mix's competition picks the similarity rule."""
    net.eval()
    device = next(net.parameters()).device
    with torch.no_grad():
        seq, _ = fn(shapes, test, torch.Generator().manual_seed(10_000 + seed))
        share = float(net.choice(net.tcn(emb.to(device)[seq.to(device)]))[:, 0].mean())
    net.train()
    return share


CURVE_MODELS = {
    "corelnet": "CoRelNet",
    "corelnet_t": "CoRelNet-T",
    "esbn": "ESBN",
    "transformer": "Transformer",
    "lstm": "LSTM",
    "mlp": "MLP",
}


def accuracy_table(*cols) -> dict:
    """``{(task, model): mean OOD accuracy over seeds}`` over the given collections (never across scales:
    :func:`lscnb.sweep.pool`)."""
    cells = pool(cols, lambda r: (r.config["task"], r.config["model"]))
    return {k: float(np.mean([r["ood"] for r in rs])) for k, rs in cells.items()}


CAT_PAIRS = {"corelnet": "cat", "corelnet_t": "corelnet_t_cat", "esbn": "esbn_cat"}


def model_tasks(sizes: dict, model: str) -> list[str]:
    """The tasks ``model`` runs on in a figure's ``sizes``: its entry in ``sizes["only"]`` where a declared subset runs
    it on fewer, else all of ``sizes["tasks"]``."""
    return sizes.get("only", {}).get(model, sizes["tasks"])


"""Fig. 5.4 (left), Figs. C.7 and C.12: each relational-only model and its relational + sensory version, whose decoder
(CoRelNet's MLP, CoRelNet-T's tokens, ESBN's controller) also reads the embeddings."""
