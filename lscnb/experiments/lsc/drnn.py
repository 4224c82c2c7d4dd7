"""Fig. 3, a declared subset: d-RNNs on spike tasks, no pre-training vs rho = 1 vs rho = 1/2, depth 2 and 5."""

from __future__ import annotations

import copy

import numpy as np
import torch

from ... import plot
from ...models.drnn import DRNN
from ...pretrain import final_radii, pretrain_stack
from ...runs import twin
from ...sweep import Run, RunContext
from .common import CHAPTER, DRNN_TASKS, DRNN_WIDTHS, KIND_ORDER, SIZES, _spike_task, input_gradient

DRNN_LR = {"sl-mnist": 1e-2, "sl-digits": 1e-2, "spike-patterns": 1e-3}  # Tab. S1 LSTM rates (ALIF: 1e-3)


def _every_step_ce(logits: torch.Tensor, y: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """Cross-entropy of the (batch, steps, classes) ``logits`` at every step against each sequence's label ``y``."""
    steps, classes = logits.shape[1], logits.shape[-1]
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, classes), y.repeat_interleave(steps), reduction=reduction
    )


def _test_scores(m, xte: torch.Tensor, yte: torch.Tensor, encode, chunk: int = 500) -> dict:
    """Test mode accuracy and test cross-entropy (at every step, as the training loss, per sequence) of ``m``."""
    from ...data.spikes import mode_accuracy

    dev, acc, ce = next(m.parameters()).device, 0.0, 0.0
    for i in range(0, len(yte), chunk):
        x, y = encode(xte[i : i + chunk]).to(dev), yte[i : i + chunk].to(dev)
        logits = m(x)
        acc += mode_accuracy(logits, y) * len(y)
        ce += float(_every_step_ce(logits, y, reduction="sum")) / x.shape[1]
    return {"accuracy": acc / len(yte), "ce": ce / len(yte)}


def _setup(cfg: dict, ctx: RunContext):
    """A run's d-RNN (paper initialisation, pre-trained to ``cfg["target"]`` or not), its task, the generator of its
    batches, its batch and loss functions and the outputs known before training."""
    torch.manual_seed(ctx.seed)
    xtr, ytr, xte, yte, encode = _spike_task(cfg["task"], ctx.seed, cfg.get("limit"))
    model = DRNN(
        cfg["kind"], xtr.shape[-1], [cfg["width"]] * cfg["depth"], output_size=int(ytr.max()) + 1, seed=ctx.seed
    )
    gen = torch.Generator().manual_seed(ctx.seed)
    out = {"time_radius": float("nan"), "depth_radius": float("nan"), "converged": False, "pre_steps": 0}
    if cfg["target"] is not None:
        hist = pretrain_stack(
            model.stack,
            lambda s: encode(xtr[torch.randint(len(xtr), (8,), generator=gen)]),
            target=cfg["target"],
            steps=cfg["pre_steps"],
            lr=cfg["pre_lr"],
            eps=0.05,
            seed=ctx.seed,
            progress=False,
        )
        radii = final_radii(hist, last=10)
        out.update(
            time_radius=float(np.mean([v for k, v in radii.items() if k.startswith("time")])),
            depth_radius=float(np.mean([v for k, v in radii.items() if k.startswith("depth")])),
            converged=hist.converged,
            pre_steps=hist.steps,
        )
    if cfg.get("gradient", True):  # Fig. 1c's profile, before training
        out["g"] = input_gradient(model.stack, model.readout, encode(xte[:32]))

    def batch(k):
        idx = torch.randint(len(xtr), (cfg["batch"],), generator=gen)
        return encode(xtr[idx]), ytr[idx]

    def loss(m, x, y):
        return _every_step_ce(m(x), y)

    def scores(m):
        return _test_scores(m, xte, yte, encode)

    return model, gen, batch, loss, scores, out


def _outputs(cfg: dict, out: dict, hist) -> dict:
    """``out`` with what training left in ``hist``: last test accuracy and cross-entropies (NaN once diverged)."""
    acc, nan = [e["accuracy"] for e in hist.evals], float("nan")
    last = hist.loss[-max(1, cfg["steps"] // 10) :]  # the training cross-entropy over the last tenth of the steps
    return {
        **out,
        "accuracy": acc[-1] if acc and not hist.diverged else nan,
        "diverged": hist.diverged,
        "loss": np.array(hist.loss),
        "curve": np.array(acc),
        "test_ce": hist.evals[-1]["ce"] if hist.evals and not hist.diverged else nan,
        "train_ce": float(np.mean(last)) if last and not hist.diverged else nan,
    }


def drnn_run(cfg: dict, ctx: RunContext) -> dict:
    """One cell of Fig. 3: build a d-RNN (paper initialisation), pre-train it to ``target`` (or not), then train
    it with Adam on a spike task, cross-entropy at every step; test mode accuracy."""
    from ...train import fit

    model, gen, batch, loss, scores, out = _setup(cfg, ctx)
    # pre-training and the gradient profile above ran on the CPU; training runs on ctx.device
    hist = fit(
        model,
        batch,
        loss,
        steps=cfg["steps"],
        lr=cfg["lr"],
        eval_fn=scores,
        device=ctx.device,
        eval_every=max(1, cfg["steps"] // 4),
        checkpoint=ctx.checkpoint,  # a resumed run pre-trains again (the same draws) and goes on from here
        generators=(gen,),
        progress=False,
        desc=f"{cfg['kind']} {cfg['target']}",
    )
    return _outputs(cfg, out, hist)


def _pays(cfg: dict) -> tuple[str, ...] | None:
    """Where :func:`drnn_group` pays: a narrow LSTM anywhere, the others on a GPU only. On one CPU core, 7 full-size
    runs together took 0.8x the time of the 7 one after another with the sl-MNIST LSTM (width 42), but 1.4x with the
    spike-pattern LSTM (94) and 1.9-2.4x with the ALIF+ cells (128, 256), 2026-11-29: wider matrices leave a CPU
    nothing to fill, and ``vmap`` adds its overhead."""
    return None if cfg["kind"] == "lstm" and cfg["width"] <= 64 else ("cuda",)


@twin(drnn_run, key=lambda cfg: {k: v for k, v in cfg.items() if k != "lr"}, devices=_pays)
def drnn_group(cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`drnn_run` of runs that differ only in learning rate (Fig. S1's grid): one initial d-RNN (pre-trained,
    if at all, once) and one stream of batches (the seed's), the copies trained together, each at its own rate
    (:func:`lscnb.batched.fit_batched`: the same runs up to floating-point rounding; ``--executor batched``; where it
    pays, :func:`_pays`)."""
    from ...batched import fit_batched

    cfg, ctx = cfgs[0], ctxs[0]
    model, gen, batch, loss, scores, out = _setup(cfg, ctx)
    models = [model] + [copy.deepcopy(model) for _ in cfgs[1:]]
    hists = fit_batched(
        models,
        batch,
        loss,
        steps=cfg["steps"],
        lr=[c["lr"] for c in cfgs],
        in_dims=None,
        eval_fn=scores,
        eval_every=max(1, cfg["steps"] // 4),
        device=ctx.device,
        checkpoint=ctx.checkpoint,
        generators=(gen,),
        progress=ctx.progress,
        desc=f"{cfg['task']} {cfg['kind']} x{len(cfgs)} (batched)",
    )
    return [_outputs(cfg, out, h) for h in hists]


def drnn_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    runs = []
    for task in s["drnn_tasks"]:
        for kind in s["drnn_kinds"]:
            spiking = kind.startswith("alif")
            width = max(8, int(round(DRNN_WIDTHS[task][kind] * s["drnn_width_scale"])))
            for depth in s["drnn_depths"]:
                for target in (None, 1.0) if spiking else (None, 1.0, 0.5):  # the paper: ALIF reach 1/2 poorly
                    for seed in s["drnn_seeds"]:
                        runs.append(
                            Run(
                                CHAPTER,
                                "drnn",
                                f"{task}-{kind}-L{depth}-rho{target}-s{seed}",
                                drnn_run,
                                dict(
                                    task=task,
                                    kind=kind,
                                    depth=depth,
                                    width=width,
                                    target=target,
                                    pre_steps=s["drnn_pre_steps"],
                                    pre_lr=1e-2 if not spiking else 1e-3,
                                    steps=s["drnn_steps"],
                                    batch=s["drnn_batch"],
                                    lr=1e-3 if spiking else DRNN_LR[task],
                                    seed=seed,
                                ),
                            )
                        )
    return runs


def drnn_table(col) -> list[dict]:
    """Per (task, depth, cell, target): mean test mode accuracy, divergences, the pre-trained radii."""
    rows, keys = (
        [],
        sorted(
            {(r.config["task"], r.config["depth"], r.config["kind"]) for r in col},
            key=lambda k: (k[0], k[1], KIND_ORDER.index(k[2])),
        ),
    )
    for task, depth, kind in keys:
        for target in (None, 1.0, 0.5):
            rs = col.where(task=task, depth=depth, kind=kind, target=target)
            if rs:
                rows.append(
                    {
                        "task": task,
                        "depth": depth,
                        "cell": kind,
                        "pre-training": "none" if target is None else f"ρ = {target:g}",
                        "test mode accuracy": float(np.nanmean([r["accuracy"] for r in rs]))
                        if not all(r["diverged"] for r in rs)
                        else float("nan"),
                        "diverged": f"{sum(bool(r['diverged']) for r in rs)}/{len(rs)}",
                        "time radius": float(np.mean([r["time_radius"] for r in rs])),
                        "depth radius": float(np.mean([r["depth_radius"] for r in rs])),
                        "g early / late": float(np.mean([early_late(r["g"]) for r in rs])),
                    }
                )
    return rows


def early_late(g) -> float:
    """Mean input gradient over the first quarter of the input times over the last quarter (Fig. 1c's shape)."""
    g = np.asarray(g, dtype=float)
    q = max(1, len(g) // 4)
    late = g[-q:].mean()
    return float(g[:q].mean() / late) if late > 0 else float("nan")


DRNN_PAPER = [  # Fig. 3 caption: the only numbers the paper gives for it
    {"claim": "ρ = 1/2 beats ρ = 1 (differentiable d-RNNs, both depths)", "paper": "> 63% of comparisons"},
    {"claim": "ρ = 1/2 beats no pre-training at depth 5", "paper": "70% of comparisons"},
    {"claim": "ρ = 1/2 beats no pre-training at depth 2", "paper": "about as often as not ('matched')"},
]


def drnn_win_rates(col) -> list[dict]:
    """How often ρ = 1/2 beats ρ = 1 and none, over (task, depth, cell) with seeds averaged, beside the paper's
    rates."""
    acc = {(r["task"], r["depth"], r["cell"], r["pre-training"]): r["test mode accuracy"] for r in drnn_table(col)}
    cells = {k[:3] for k in acc if k[3] == "ρ = 0.5"}

    def rate(other, depths):
        pairs = [(acc[c + ("ρ = 0.5",)], acc.get(c + (other,), float("nan"))) for c in cells if c[1] in depths]
        wins = [np.nan_to_num(a, nan=-1) > np.nan_to_num(b, nan=-1) for a, b in pairs]
        return f"{np.mean(wins):.0%} of {len(wins)}" if wins else "not run"

    depths = sorted({c[1] for c in cells})
    ours = [rate("ρ = 1", depths), rate("none", [5]), rate("none", [2])]
    return [dict(row, ours=o) for row, o in zip(DRNN_PAPER, ours)]


def show_drnn(col) -> None:
    rows = drnn_table(col)
    panels = sorted({(r["task"], r["depth"]) for r in rows})
    fig, ax = plot.figure(len(panels), 1, width=5.5 * len(panels), height=3.4)
    for a, (task, depth) in zip(ax[0], panels):
        kinds = [
            k for k in KIND_ORDER if any(r["cell"] == k and r["task"] == task and r["depth"] == depth for r in rows)
        ]
        for j, (label, color) in enumerate((("none", "C7"), ("ρ = 1", "C3"), ("ρ = 0.5", "C0"))):
            vals = [
                next(
                    (
                        r["test mode accuracy"]
                        for r in rows
                        if (r["task"], r["depth"], r["cell"], r["pre-training"]) == (task, depth, k, label)
                    ),
                    np.nan,
                )
                for k in kinds
            ]
            a.bar(np.arange(len(kinds)) + (j - 1) * 0.27, vals, width=0.27, color=color, label=label)
        a.set_xticks(range(len(kinds)), kinds)
        a.set(ylabel="test mode accuracy", title=f"{task}, depth {depth}", ylim=(0, 1))
        a.legend(fontsize=8)
    plot.show(fig, col, data="; ".join(DRNN_TASKS[t] for t in sorted({r["task"] for r in rows})))
