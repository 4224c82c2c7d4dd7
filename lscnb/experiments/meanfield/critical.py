"""Figs. 1, 3 and Table 2: a standard against a critical tied peephole LSTM, trained on padded, replicated-pixel,
concatenated and pixel-by-pixel digits."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...data.mnist import digits_sequences, load_mnist, pixel_sequences
from ...data.padded import concatenated_digits, replicated_pixels, standardised_digits
from ...models.unified import (
    GatedClassifier,
    critical_theta,
    standard_theta,
)
from ...runs import part_checkpoints, remove_checkpoints
from ...sweep import Run, RunContext
from ...theory import meanfield as mf
from ...train import fit
from .common import CHAPTER, SIZES, _padder, _sampler, stacked_accuracy, stacked_loss


# --------------------------------------------------------------------------------------------- Fig. 1
def length_run(cfg: dict, ctx: RunContext) -> dict:
    """Train a standard (E.5) and a critical (E.4) tied peephole LSTM at once on padded digits of one length
    (digit at step 1, noise after); accuracy on held-out digits with one fixed noise draw, and both xi. With
    ``repeats`` = R, R networks of each initialisation (their own weight draws, the same batches) train stacked and
    ``accuracy`` is their mean (``accuracy_each`` lists them)."""
    torch.manual_seed(ctx.seed)
    device = torch.device(ctx.device)
    x, y, _ = standardised_digits(cfg["source"], pool=2, limit=cfg.get("limit"))
    cut = len(y) - cfg["held_out"]
    xtr, ytr, xte, yte = x[:cut].to(device), y[:cut].to(device), x[cut:].to(device), y[cut:].to(device)
    pair = [standard_theta("peephole", x.shape[1], cfg["width"]), critical_theta("peephole")]
    thetas = pair * cfg.get("repeats", 1)
    model = GatedClassifier(thetas, cfg["width"], x.shape[1], cfg["length"], 10, untied=False, seed=ctx.seed).to(device)
    gen = torch.Generator(device=device).manual_seed(ctx.seed)

    hist = fit(
        model,
        _sampler(xtr, ytr, cfg["batch"], gen, _padder(cfg["length"], gen)),
        stacked_loss,
        steps=cfg["iters"],
        lr=cfg["lr"],
        checkpoint=ctx.checkpoint,
        progress=False,
        generators=(gen,),
    )
    # fixed on purpose: one noise draw to measure every seed's model on
    acc = stacked_accuracy(
        model, xte, yte, 1024, _padder(cfg["length"], torch.Generator(device=device).manual_seed(12345))
    )
    names, alive = ("standard", "critical"), model.alive.tolist()
    return {
        "accuracy": {k: float(acc[i::2].mean()) for i, k in enumerate(names)},
        "accuracy_each": {k: acc[i::2].tolist() for i, k in enumerate(names)},
        "xi": {k: mf.time_scale(th, 1.0, 0.0) for k, th in zip(names, pair)},
        "diverged": bool(hist.diverged or not model.alive.all()),
        "diverged_models": {k: [not ok for ok in alive[i::2]] for i, k in enumerate(names)},
        "final_loss": float(hist.loss[-1]) if len(hist.loss) else float("nan"),
    }


def length_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    held = 397 if s["len_source"] == "sklearn" else 10_000
    return [
        Run(
            CHAPTER,
            "length",
            f"T{T}",
            length_run,
            dict(
                length=T,
                width=s["len_width"],
                source=s["len_source"],
                held_out=held,
                iters=s["len_iters"],
                lr=s["len_lr"],
                repeats=s["len_repeats"],
                batch=128,
                seed=0,
            ),
        )
        for T in s["len_lengths"]
    ]


def length_table(col) -> list[dict]:
    """Held-out accuracy per length, standard vs critical, with T in units of each xi."""
    rows = []
    for r in sorted(col, key=lambda r: r.config["length"]):
        a, xi = r["accuracy"], r["xi"]
        rows.append(
            {
                "T": r.config["length"],
                "standard": a["standard"],
                "critical": a["critical"],
                "T / ξ standard": r.config["length"] / xi["standard"],
                "T / ξ critical": r.config["length"] / xi["critical"],
            }
        )
    return rows


def show_length(col) -> None:
    rows = length_table(col)
    fig, ax = plot.figure(1, 1, width=6, height=3.6)
    T = [r["T"] for r in rows]
    for init, color in (("standard", "C0"), ("critical", "C3")):
        ax[0, 0].plot(
            T,
            [r[init] for r in rows],
            "o-",
            color=color,
            label=f"{init} ({'E.5' if init == 'standard' else 'E.4'}), ξ = {col[0]['xi'][init]:.1f}",
        )
    ax[0, 0].axhline(0.1, color="0.6", linewidth=0.8, linestyle=":", label="chance")
    ax[0, 0].set(
        xscale="log",
        xlabel="sequence length T",
        ylabel="held-out accuracy",
        ylim=(0, 1.02),
        title="tied peephole LSTM, padded digits",
    )
    ax[0, 0].legend(fontsize=8)
    data = (
        "scikit-learn 8x8 digits (last 397 held out)"
        if col[0].config["source"] == "sklearn"
        else "MNIST, 2x2-pooled (last 10,000 training digits held out)"
    )
    plot.show(fig, col, data=f"padded digits: {data} at step 1, then Gaussian noise (generated)")


def longest_trainable(rows: list[dict], band: float = 6.0) -> dict:
    """The row of :func:`length_table` at the longest length inside the critical networks' trainable band,
    ``T < band * xi_critical`` (the band of Fig. 2); the shortest row if none is inside."""
    inside = [r for r in rows if r["T / ξ critical"] < band]
    return max(inside, key=lambda r: r["T"]) if inside else min(rows, key=lambda r: r["T"])


def gap_length(col) -> str:
    rows = length_table(col)
    band, last = longest_trainable(rows), rows[-1]
    at = lambda r: (
        f"T = {r['T']} ({r['T / ξ critical']:.1f} ξ critical): standard {r['standard']:.2f}, "
        f"critical {r['critical']:.2f}"
    )
    return (
        "paper: no numbers (the standard init becomes untrainable as T grows, the critical one does not); ours at "
        + at(band)
        + ("" if last is band else f"; at {at(last)}")
    )


# --------------------------------------------------------------------------------------------- Fig. 3
def curve_run(cfg: dict, ctx: RunContext) -> dict:
    """Training-accuracy curves of a standard (E.5) and a critical (E.4) tied peephole LSTM, trained one after the
    other with SGD + momentum (gradient norm clipped per model), on unrolled digits: ``task="replicated"``
    (every pixel repeated ``repeat`` times, ``dim`` values per step) or ``"concatenated"`` (``digits`` 0/1 digits in a
    row, pixels repeated ``repeat`` times, label the tuple of digits)."""
    device = torch.device(ctx.device)
    x, y, _ = standardised_digits(cfg["source"], pool=1, limit=cfg.get("limit"))
    x, y = x.to(device), y.to(device)
    dim, rep = cfg["dim"], cfg["repeat"]
    classes = 10 if cfg["task"] == "replicated" else 2 ** cfg["digits"]
    gen = torch.Generator(device=device).manual_seed(ctx.seed)

    def sample(count, g):
        if cfg["task"] == "replicated":
            idx = torch.randint(len(y), (count,), generator=g, device=device)
            return replicated_pixels(x[idx], rep, dim), y[idx]
        flat, lab = concatenated_digits(x, y, cfg["digits"], count, generator=g)
        return replicated_pixels(flat, rep, dim), lab

    # fixed on purpose: one probe batch to measure training accuracy on, the same for every seed
    probe_x, probe_y = sample(cfg["probe"], torch.Generator(device=device).manual_seed(777))
    T = probe_x.shape[1]
    out = {"length": T}
    inits = {"standard": standard_theta("peephole", dim, cfg["width"]), "critical": critical_theta("peephole")}
    ckpts = part_checkpoints(ctx.checkpoint, inits)  # a finished model's restores the shared generator for the next
    for name, theta in inits.items():
        torch.manual_seed(ctx.seed)
        model = GatedClassifier([theta], cfg["width"], dim, T, classes, untied=False, seed=ctx.seed).to(device)

        def accuracy(m):
            with torch.no_grad():
                return {"accuracy": float((m(probe_x)[0].argmax(-1) == probe_y).float().mean())}

        start = accuracy(model)["accuracy"]
        hist = fit(
            model,
            lambda step: sample(cfg["batch"], gen),
            lambda m, xb, yb: torch.nn.functional.cross_entropy(m(xb)[0], yb),
            steps=cfg["iters"],
            lr=cfg["lr"],
            optimizer="sgd",
            optimizer_kwargs={"momentum": 0.9},
            clip=cfg["clip"],
            eval_fn=accuracy,
            eval_every=cfg["every"],
            checkpoint=ckpts[name],
            generators=(gen,),
            progress=False,
        )
        out[f"{name}_step"] = np.array([0] + [e["step"] for e in hist.evals], dtype=float)
        out[f"{name}_accuracy"] = np.array([start] + [e["accuracy"] for e in hist.evals], dtype=float)
        out[f"{name}_diverged"] = hist.diverged
        out[f"{name}_final_loss"] = float(hist.loss[-1]) if hist.loss else float("nan")
    remove_checkpoints(ckpts)  # both finished
    return out


def curve_counts(cfg: dict) -> dict:
    """The sequence length of a Fig. 3 run, which its data set sets: every pixel of its ``digits`` (one digit when
    replicated) repeated ``repeat`` times, ``dim`` values a step (784 pixels an MNIST digit, 64 a scikit-learn one).
    The plan scales an untimed run's cost by it (:func:`lscnb.plan._work`)."""
    pixels = 784 if cfg["source"] == "mnist" else 64
    return {"length": pixels * cfg["repeat"] * cfg.get("digits", 1) // cfg["dim"]}


def curve_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    common = dict(
        width=s["curve_width"],
        source=s["curve_source"],
        iters=s["curve_iters"],
        lr=s["curve_lr"],
        every=s["curve_every"],
        clip=1.0,
        batch=128,
        probe=256,
        seed=0,
    )
    dim_rep = s["curve_dim"] or 7
    runs = [
        Run(CHAPTER, "curves", f"replicated-k{k}", curve_run, dict(task="replicated", repeat=k, dim=dim_rep, **common))
        for k in s["curve_repeats"]
    ]
    dim_cat = s["curve_dim"] or 112
    runs += [
        Run(
            CHAPTER,
            "curves",
            f"concatenated-n{n}",
            curve_run,
            dict(task="concatenated", digits=n, repeat=s["curve_digit_repeat"], dim=dim_cat, **common),
        )
        for n in s["curve_digits"]
    ]
    return runs


def curves_table(col) -> list[dict]:
    """Final training accuracy (fixed probe batch) per task and length, standard vs critical."""
    rows = []
    for r in col:
        c = r.config
        setting = f"k = {c['repeat']}" if c["task"] == "replicated" else f"n = {c['digits']}"
        rows.append(
            {
                "task": c["task"],
                "setting": setting,
                "T": r["length"],
                "classes": 10 if c["task"] == "replicated" else 2 ** c["digits"],
                "standard": float(r["standard_accuracy"][-1]),
                "critical": float(r["critical_accuracy"][-1]),
                "standard diverged": bool(r["standard_diverged"]),
            }
        )
    return rows


def show_curves(col) -> None:
    tasks = ("replicated", "concatenated")
    cols = max(len([r for r in col if r.config["task"] == t]) for t in tasks)
    fig, ax = plot.figure(cols, 2, width=4 * cols, height=6)
    for i, task in enumerate(tasks):
        rs = sorted([r for r in col if r.config["task"] == task], key=lambda r: r["length"])
        for j, r in enumerate(rs):
            a, c = ax[i, j], r.config
            for init, color in (("standard", "C0"), ("critical", "C3")):
                a.plot(
                    r[f"{init}_step"],
                    r[f"{init}_accuracy"],
                    color=color,
                    label=init + (" (diverged)" if r[f"{init}_diverged"] else ""),
                )
            classes = 10 if task == "replicated" else 2 ** c["digits"]
            a.axhline(1 / classes, color="0.6", linewidth=0.8, linestyle=":")
            what = (
                f"pixels ×{c['repeat']}"
                if task == "replicated"
                else f"{c['digits']} digit{'s' * (c['digits'] > 1)} (0/1), {classes} classes"
            )
            a.set(title=f"{what}, T = {r['length']}", ylim=(0, 1.02), xlabel="iteration")
            a.legend(fontsize=8)
        ax[i, 0].set_ylabel(
            "training accuracy\n(" + ("replicated pixels" if task == "replicated" else "concatenated digits") + ")"
        )
    src = col[0].config["source"]
    plot.show(
        fig,
        col,
        data=f"{'scikit-learn 8x8 digits' if src == 'sklearn' else 'MNIST'}, unrolled ({col[0].config['dim']} "
        "values per step for replicated pixels); accuracy on a fixed batch of 256 training sequences",
    )


def gap_curves(col) -> str:
    rows = curves_table(col)
    return "paper: no numbers; ours, final training accuracy standard / critical: " + "; ".join(
        f"{r['task']} T = {r['T']}: {r['standard']:.2f} / {r['critical']:.2f}" for r in rows
    )


# --------------------------------------------------------------------------------------------- Table 2
TABLE2_PAPER = {"standard LSTM": {"MNIST": 98.6, "CIFAR-10": 58.8}, "critical LSTM": {"MNIST": 98.9, "CIFAR-10": 61.8}}


def pixel_digits(source: str, limit: int | None = None):
    """Pixel-by-pixel digit sequences (N, P, 1) standardised to zero mean and unit second moment, train and test:
    scikit-learn's 8x8 digits (the last 397 held out, T = 64) or MNIST's own split (T = 784)."""
    if source == "sklearn":
        x, y = digits_sequences()
        xtr, ytr, xte, yte = x[:1400], y[:1400], x[1400:], y[1400:]
    else:
        tr, te = load_mnist("train"), load_mnist("test")
        xtr, ytr, xte, yte = pixel_sequences(tr), tr.labels, pixel_sequences(te), te.labels
    if limit is not None:
        xtr, ytr, xte, yte = xtr[:limit], ytr[:limit], xte[:limit], yte[:limit]
    mean, std = xtr.mean(), xtr.std()
    return (xtr - mean) / std, ytr, (xte - mean) / std, yte


def table2_run(cfg: dict, ctx: RunContext) -> dict:
    """Table 2, MNIST column: a standard and a critical tied peephole LSTM trained pixel by pixel (Adam), each on its
    own (one diverging does not stop the other), on the same batches; test accuracy of each and whether it diverged."""
    device = torch.device(ctx.device)
    xtr, ytr, xte, yte = (t.to(device) for t in pixel_digits(cfg["source"], cfg.get("limit")))
    T = xtr.shape[1]
    thetas = {"standard": standard_theta("peephole", 1, cfg["width"]), "critical": critical_theta("peephole")}
    out = {"accuracy": {}, "diverged": {}, "final_loss": {}, "length": T}
    ckpts = part_checkpoints(ctx.checkpoint, thetas)
    for name, theta in thetas.items():
        torch.manual_seed(ctx.seed)
        model = GatedClassifier([theta], cfg["width"], 1, T, 10, untied=False, seed=ctx.seed).to(device)
        gen = torch.Generator(device=device).manual_seed(ctx.seed)
        hist = fit(
            model,
            _sampler(xtr, ytr, cfg["batch"], gen),
            stacked_loss,
            steps=cfg["iters"],
            lr=cfg["lr"],
            checkpoint=ckpts[name],
            progress=False,
            generators=(gen,),
        )
        out["accuracy"][name] = float(stacked_accuracy(model, xte, yte, 1000)[0])
        out["diverged"][name] = hist.diverged
        out["final_loss"][name] = float(hist.loss[-1]) if hist.loss else float("nan")
    remove_checkpoints(ckpts)  # both finished
    return out


def table2_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "table2",
            "mnist",
            table2_run,
            dict(source=s["seq_source"], width=s["seq_width"], iters=s["seq_iters"], lr=s["seq_lr"], batch=128, seed=0),
        )
    ]


def table2_rows(col) -> list[dict]:
    """Table 2: the paper's test accuracies (%) beside ours (marked when that network diverged); our CIFAR-10 column
    is owed."""
    r = col[0]
    scale = (
        "full"
        if col.is_paper_scale
        else f"quick: {'8x8 digits, T = 64' if r.config['source'] == 'sklearn' else 'MNIST'}"
    )
    return [
        {
            "model": f"{init} peephole LSTM",
            "MNIST, paper": v["MNIST"],
            f"MNIST, ours ({scale})": round(100 * r["accuracy"][init], 1),
            "diverged": "yes" if r["diverged"][init] else "no",
            "CIFAR-10, paper": v["CIFAR-10"],
            "CIFAR-10, ours": "owed (not available offline; needs a GPU run)",
        }
        for init, v in (("standard", TABLE2_PAPER["standard LSTM"]), ("critical", TABLE2_PAPER["critical LSTM"]))
    ]


def gap_table2(col) -> str:
    a, d = col[0]["accuracy"], col[0]["diverged"]
    ours = ", ".join(f"{k} {100 * a[k]:.1f}{' (diverged)' if d[k] else ''}" for k in ("standard", "critical"))
    return f"MNIST paper: standard 98.6, critical 98.9; ours: {ours}; CIFAR-10 owed"
