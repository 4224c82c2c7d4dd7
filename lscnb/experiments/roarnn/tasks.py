"""Figs. 2 and 3: the copy-memory and adding tasks, roaRNN vs a vanilla ReLU RNN vs an LSTM, the models
and training they share, and the activation memory one training step needs."""

from __future__ import annotations

import numpy as np
import torch

from ... import checks, plot, train
from ...batched import fit_batched
from ...data.synthetic import ADDING_BASELINE, adding_problem, copy_memory, copy_memory_baseline
from ...memprof import bilinear_bytes, saved_tensor_bytes
from ...models.roa import PaperBaseline, RoaRNN
from ...runs import twin
from ...sweep import Run, RunContext
from .common import CHAPTER, SIZES

LRS = {"roa": 0.5, "eye": 0.05, "vanilla": 1e-4, "lstm": 5e-3}
"""Adam learning rates (Sec. IV: roaRNN 0.5, vanilla 1e-4, LSTM 5e-3); eyeRNN's is ten times roaRNN's smaller, as the
paper advises for Fig. 6 (its legend did not survive)."""
NAMES = {"roa": "roaRNN (random O)", "eye": "eyeRNN (O = I)", "vanilla": "vanilla ReLU RNN", "lstm": "LSTM"}
COLORS = {"roa": "C1", "eye": "C2", "vanilla": "C0", "lstm": "C4"}


def sequence_model(cfg: dict, d_in: int, d_out: int, readout: str, seed: int) -> torch.nn.Module:
    """The model a task run names, initialised from ``seed``: ``roa``/``eye`` (eqs. 19-20, N(0,1) init, alpha from
    the config) or the paper's ``vanilla``/``lstm`` baselines."""
    if cfg["model"] in ("roa", "eye"):
        return RoaRNN(
            d_in,
            cfg["width"],
            d_out,
            alpha=cfg["alpha"],
            activation=cfg.get("activation", "relu"),
            method="identity" if cfg["model"] == "eye" else "paper",
            readout=readout,
            seed=seed,
        )
    torch.manual_seed(seed)
    return PaperBaseline("rnn" if cfg["model"] == "vanilla" else "lstm", d_in, cfg["width"], d_out, readout=readout)


def _train(model, cfg, ctx, batch, loss, evaluate):
    device = torch.device(ctx.device)
    model.to(device)
    return train.fit(
        model,
        lambda k: tuple(t.to(device) for t in batch(k)),
        loss,
        steps=cfg["steps"],
        lr=cfg["lr"],
        eval_fn=evaluate,
        eval_every=cfg["eval_every"],
        checkpoint=ctx.checkpoint,
        progress=ctx.progress,
        desc=f"{cfg['model']} {cfg.get('lag', cfg.get('length'))}",
    )


def _curves(hist, metrics: tuple) -> dict:
    """Training loss per step, the eval ``metrics`` per eval (empty if a run diverged before its first), and divergence
    (the run's wall time is in its provenance: :func:`lscnb.runs.run_group` shares a group's out)."""
    return {
        "loss": np.array(hist.loss),
        "eval_step": np.array([e["step"] for e in hist.evals]),
        **{k: np.array([e[k] for e in hist.evals], dtype=float) for k in metrics},
        "diverged": hist.diverged,
        "diverged_step": hist.diverged_step,
    }


def _copy_task(cfg: dict, seed: int):
    """Copy memory (Fig. 2): S = 10 symbols, a lag of L blanks, the marker, S - 1 blanks (T = L + 2S), batches drawn
    fresh every step from ``seed``; cross-entropy over all T steps, and the accuracy on the last S steps of a held-out
    batch. Returns the batches, the loss, the evaluation and the outputs known before training."""
    L, S = cfg["lag"], cfg["symbols"]
    base = 1_000_003 * (seed + 1)
    batch = lambda k: copy_memory(cfg["batch"], L, length=S, recall_at_marker=True, seed=base + k)  # noqa: E731
    xv, yv = copy_memory(256, L, length=S, recall_at_marker=True, seed=7)  # held-out batch: the same for every seed
    ce = lambda m, x, y: torch.nn.functional.cross_entropy(m(x).flatten(0, 1), y.flatten())  # noqa: E731

    def evaluate(m):
        xd, yd = xv.to(next(m.parameters()).device), yv.to(next(m.parameters()).device)
        logits = m(xd)
        return {
            "ce": torch.nn.functional.cross_entropy(logits.flatten(0, 1), yd.flatten()),
            "accuracy": (logits[:, -S:].argmax(-1) == yd[:, -S:]).float().mean(),
        }

    return batch, ce, evaluate, {"baseline": copy_memory_baseline(L, length=S, recall_at_marker=True)}


def _adding_task(cfg: dict, seed: int):
    """Adding problem (Fig. 3): batches drawn fresh every step from ``seed``, MSE read from the last state; held-out
    MSE on a fixed batch every ``eval_every`` steps (the paper: on a fresh batch every 100 steps)."""
    base = 1_000_003 * (seed + 1)
    batch = lambda k: adding_problem(cfg["batch"], cfg["length"], seed=base + k)  # noqa: E731
    xv, yv = adding_problem(500, cfg["length"], seed=7)  # held-out batch: the same for every seed
    mse = lambda m, x, y: torch.nn.functional.mse_loss(m(x), y)  # noqa: E731
    evaluate = lambda m: {"mse": mse(m, xv.to(next(m.parameters()).device), yv.to(next(m.parameters()).device))}  # noqa: E731
    return batch, mse, evaluate, {}


TASKS = {"copy": (_copy_task, 10, 9, "all", ("ce", "accuracy")), "adding": (_adding_task, 2, 1, "last", ("mse",))}
"""A task's set-up, the model's input and output sizes, where it reads out, and the metrics its evaluation gives."""


def _task_run(task: str, cfg: dict, ctx: RunContext) -> dict:
    make, d_in, d_out, readout, metrics = TASKS[task]
    batch, loss, evaluate, known = make(cfg, ctx.seed)
    hist = _train(sequence_model(cfg, d_in, d_out, readout, ctx.seed), cfg, ctx, batch, loss, evaluate)
    return {**_curves(hist, metrics), **known}


def copy_run(cfg: dict, ctx: RunContext) -> dict:
    """Copy memory (Fig. 2), one model and seed (:func:`_copy_task`)."""
    return _task_run("copy", cfg, ctx)


def adding_run(cfg: dict, ctx: RunContext) -> dict:
    """Adding problem (Fig. 3), one model and seed (:func:`_adding_task`)."""
    return _task_run("adding", cfg, ctx)


def seeds_key(cfg: dict) -> dict:
    """The batched twins' key: roaRNN and eyeRNN runs that differ only in seed train together; a baseline's run alone
    (its whole config: ``nn.RNN`` and ``nn.LSTM`` run fused kernels, which ``vmap`` cannot batch)."""
    return {k: v for k, v in cfg.items() if k != "seed"} if cfg["model"] in ("roa", "eye") else dict(cfg)


def _task_group(task: str, cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`_task_run` of runs that differ only in seed, trained together (:func:`lscnb.batched.fit_batched`), each
    model from its seed on its own batches."""
    make, d_in, d_out, readout, metrics = TASKS[task]
    cfg, ctx = cfgs[0], ctxs[0]
    tasks = [make(c, x.seed) for c, x in zip(cfgs, ctxs)]
    hists = fit_batched(
        [sequence_model(c, d_in, d_out, readout, x.seed) for c, x in zip(cfgs, ctxs)],
        [t[0] for t in tasks],
        tasks[0][1],
        steps=cfg["steps"],
        lr=cfg["lr"],
        eval_fn=tasks[0][2],  # one held-out batch for every seed
        eval_every=cfg["eval_every"],
        device=torch.device(ctx.device),
        checkpoint=ctx.checkpoint,
        progress=ctx.progress,
        desc=f"{cfg['model']} {cfg.get('lag', cfg.get('length'))} x{len(cfgs)} (batched)",
    )
    return [{**_curves(h, metrics), **t[3]} for h, t in zip(hists, tasks)]


@twin(copy_run, key=seeds_key)
def copy_group(cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`copy_run` of roaRNN runs that differ only in seed, trained together (``--executor batched``). On one CPU
    core 5 seeds of Fig. 2's L = 400 took 0.8-0.9x the time of the 5 alone (2026-11-29); the gain is a GPU's, whose
    10,000-step loops are bound by kernel launches."""
    return _task_group("copy", cfgs, ctxs)


@twin(adding_run, key=seeds_key)
def adding_group(cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`adding_run` of roaRNN runs that differ only in seed, trained together (``--executor batched``; on one
    CPU core, 5 seeds of Fig. 3's T = 200 in 0.5x the time of the 5 alone, 2026-11-29)."""
    return _task_group("adding", cfgs, ctxs)


def copy_runs(scale: str, models=("vanilla", "lstm", "roa")) -> list[Run]:
    s = SIZES[scale]
    out = []
    for L, steps in zip(s["copy_lags"], s["copy_steps"]):
        for m in models:
            for seed in s["task_seeds"]:
                rho = 3.0
                out.append(
                    Run(
                        CHAPTER,
                        "copy",
                        f"{m}-L{L}-s{seed}",
                        copy_run,
                        dict(
                            model=m,
                            lag=L,
                            symbols=10,
                            width=s["copy_width"],
                            batch=s["copy_batch"],
                            steps=steps,
                            eval_every=max(steps // 10, 1),
                            lr=LRS[m],
                            rho=rho,
                            alpha=rho / (L + 10) if m == "roa" else None,
                            seed=seed,
                        ),
                    )
                )
    return out


def adding_runs(scale: str, models=("vanilla", "lstm", "roa")) -> list[Run]:
    s = SIZES[scale]
    rho = s["adding_rho"]
    return [
        Run(
            CHAPTER,
            "adding",
            f"{m}-T{T}-s{seed}",
            adding_run,
            dict(
                model=m,
                length=T,
                width=s["adding_width"],
                batch=50,
                steps=steps,
                eval_every=s["adding_eval"],
                lr=LRS[m],
                rho=rho,
                alpha=rho / T if m == "roa" else None,
                seed=seed,
            ),
        )
        for T, steps in zip(s["adding_lengths"], s["adding_steps"])
        for m in models
        for seed in s["task_seeds"]
    ]


def step_saved_bytes(cfg: dict, task: str, T: int, B: int) -> int:
    """Bytes autograd keeps for the backward pass of one training step of a task model (``task`` is ``"copy"``:
    10 one-hot inputs, 9 classes at every step; or ``"adding"``: 2 inputs, one output from the last state),
    counted by :func:`lscnb.memprof.saved_tensor_bytes` on the CPU (cuDNN's LSTM keeps its own reserve buffer)."""
    checks.one_of(task, ("copy", "adding"), "task")
    d_in, d_out, readout = (10, 9, "all") if task == "copy" else (2, 1, "last")
    model = sequence_model({**cfg, "alpha": cfg.get("alpha") or 0.5}, d_in, d_out, readout, 0)
    g = torch.Generator().manual_seed(0)  # measures memory only: any weights and inputs do
    x = torch.nn.functional.one_hot(torch.randint(d_in, (B, T), generator=g), d_in).float()
    if task == "copy":
        y = torch.randint(d_out, (B, T), generator=g)
        step = lambda: torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())  # noqa: E731
    else:
        step = lambda: torch.nn.functional.mse_loss(model(x), torch.rand(B, 1, generator=g))  # noqa: E731
    return saved_tensor_bytes(step)[0]


def backward_memory(scale: str = "full", lengths=(16, 32), batches=(2, 4)) -> list[dict]:
    """Activation memory of one training step of every model of Figs. 2 and 3 at ``scale``'s configuration,
    predicted from four small measurements (:func:`lscnb.memprof.bilinear_bytes`): what the 10,000-step copy task
    needs before any memory-saving scheme is considered."""
    rows = []
    for task, runs in (("copy", copy_runs(scale)), ("adding", adding_runs(scale))):
        seen = set()
        for r in runs:
            c = r.config
            T = c["lag"] + 2 * c["symbols"] if task == "copy" else c["length"]
            if (c["model"], T) in seen:
                continue
            seen.add((c["model"], T))
            predict = bilinear_bytes(lambda t, b: step_saved_bytes(c, task, t, b), lengths, batches)
            rows.append(
                {
                    "task": task,
                    "T": T,
                    "model": NAMES[c["model"]],
                    "width": c["width"],
                    "batch": c["batch"],
                    "saved for backward (GB)": predict(T, c["batch"]) / 1e9,
                }
            )
    return rows


def best_run(runs, key: str):
    """The paper's statistic: the run with the lowest final value of ``key`` (a diverged run counts as worst)."""

    def final(r):
        v = r[key][-1] if len(r[key]) else float("nan")
        return v if np.isfinite(v) and not r["diverged"] else float("inf")

    return min(runs, key=final)


def task_table(col, key: str, length: str) -> list[dict]:
    """Per length and model: the best-of-seeds and the median final ``key`` (training CE or held-out MSE), and
    how many seeds diverged."""
    rows = []
    for T in sorted({r.config[length] for r in col}):
        for m in NAMES:
            runs = col.where(**{length: T}, model=m)
            if not runs:
                continue
            finals = [float(r[key][-1]) if len(r[key]) and not r["diverged"] else float("nan") for r in runs]
            rows.append(
                {
                    length: T,
                    "model": NAMES[m],
                    f"best final {key}": float(best_run(runs, key)[key][-1])
                    if np.isfinite(np.nanmin(finals + [np.inf]))
                    else float("nan"),
                    f"median final {key}": float(np.nanmedian(finals)) if np.isfinite(finals).any() else float("nan"),
                    "diverged": f"{sum(r['diverged'] for r in runs)} of {len(runs)}",
                }
            )
    return rows


def _task_panels(col, length: str, key: str, steps_key: str, baseline, title: str, ylabel: str, data: str) -> None:
    Ts = sorted({r.config[length] for r in col})
    fig, ax = plot.figure(len(Ts), 1, width=min(4.2 * len(Ts), 13), height=3.4)
    for a, T in zip(ax[0], Ts):
        for m in NAMES:
            runs = col.where(**{length: T}, model=m)
            if not runs:
                continue
            best = best_run(runs, key)
            for r in runs:
                x = np.arange(1, len(r[key]) + 1) if steps_key is None else r[steps_key]
                a.plot(
                    x,
                    r[key],
                    color=COLORS[m],
                    alpha=1.0 if r is best else 0.25,
                    linewidth=1.4 if r is best else 0.8,
                    label=f"{NAMES[m]} (best of {len(runs)})" if r is best else None,
                )
                if r["diverged"]:
                    a.axvline(r["diverged_step"], color=COLORS[m], linestyle=":", linewidth=0.8)
        a.axhline(baseline(T), **plot.PAPER, label="memoryless baseline")
        a.set(yscale="log", xlabel="iteration", ylabel=ylabel, title=title.format(T=T))
    ax[0, 0].legend(fontsize=7)
    plot.show(fig, col, data=data)


def show_copy(col) -> None:
    _task_panels(
        col,
        "lag",
        "loss",
        None,
        lambda L: copy_memory_baseline(L, length=10, recall_at_marker=True),
        "copy task, L = {T:,}",
        "training cross-entropy",
        "copy-memory sequences, generated (8 symbols, S = 10, T = L + 20), a fresh batch every step",
    )


def show_adding(col) -> None:
    _task_panels(
        col,
        "length",
        "mse",
        "eval_step",
        lambda T: ADDING_BASELINE,
        "adding problem, T = {T:,}",
        "held-out MSE",
        "adding problem, generated, a fresh batch every step",
    )


def gap_copy(col) -> str:
    rows = [r for r in task_table(col, "loss", "lag") if r["model"] == NAMES["roa"]]
    return (
        "; ".join(f"L = {r['lag']:,}: roaRNN best CE {r['best final loss']:.3g}" for r in rows)
        + " (paper: near zero, below the baseline within 500 iterations even at L = 10,000)"
    )


def gap_adding(col) -> str:
    rows = [r for r in task_table(col, "mse", "length") if r["model"] == NAMES["roa"]]
    return (
        "; ".join(f"T = {r['length']:,}: roaRNN best MSE {r['best final mse']:.3g}" for r in rows)
        + " (paper: converged within 5,000 iterations at every T)"
    )
