"""Fig. 5's table: a roaRNN on permuted pixel sequences beside the paper's rows."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot, train
from ...batched import fit_batched
from ...data.mnist import digits_sequences, load_mnist, pixel_sequences
from ...models.roa import RoaRNN
from ...runs import twin
from ...sweep import Run, RunContext
from .common import CHAPTER, SIZES
from .tasks import _curves

PSMNIST_PAPER = [
    ("Vanilla RNN [46]", "≈68k", 71.6),
    ("LSTM [31]", "≈270k", 92.9),
    ("GRU [46]", "≈200k", 94.1),
    ("Dilated CNN [46]", "≈46k", 96.7),
    ("FC uRNN [29]", "≈270k", 94.1),
    ("BN LSTM [57]", "–", 95.4),
    ("expRNN [30]", "≈137k", 96.6),
    ("Lipschitz RNN [42]", "≈34k", 96.3),
    ("res-IndRNN [56]", "–", 97.02),
    ("dense-IndRNN [56]", "–", 97.2),
    ("Shuffling RNN [40]", "≈50k", 96.43),
    ("NRU [45]", "≈165k", 95.38),
    ("LMU [44]", "≈102k", 97.15),
    ("coRNN [43]", "≈134k", 97.3),
    ("roaRNN (N = 178)", "≈34k", 97.24),
    ("roaRNN (N = 256)", "≈69k", 97.88),
    ("roaRNN (N = 512)", "≈270k", 98.25),
]
"""The table of the paper's Fig. 5, every row as printed (bracketed numbers are the paper's references; the roaRNN
rows are labelled only by parameter count there, and N follows from it: N^2 + 12 N + 10)."""


def _psmnist_data(cfg: dict):
    """(train x, train y, test x, test y[, source]): real MNIST pixel sequences permuted with the paper's
    ``RandomState(0).permutation(784)`` (``source="mnist"``, cut to ``n_train``/``n_test``; the real files or a
    download, never the small fallback set, so a full run cannot pass a subset off as MNIST), or the 8x8-digits
    stand-in permuted the same way (``"digits"``, T = 64, 1,400 / 397)."""
    if cfg["source"] == "digits":
        x, y = digits_sequences()
        x = x[
            :, torch.from_numpy(np.random.RandomState(0).permutation(64))
        ]  # the paper's permutation, fixed: part of the task
        return x[:1400], y[:1400], x[1400:], y[1400:]
    train_set = load_mnist("train", fallback=False)  # the real files (or a download), never a subset
    test_set = load_mnist("test", fallback=False)
    xtr = pixel_sequences(train_set, permute=True, seed=0, limit=cfg["n_train"])
    xte = pixel_sequences(test_set, permute=True, seed=0, limit=cfg["n_test"])
    return xtr, train_set.labels[: len(xtr)], xte, test_set.labels[: len(xte)], train_set.source


def _setup(cfg: dict, data, seed: int, device: torch.device):
    """A run's roaRNN (from ``seed``), its batches (the training set shuffled every epoch from ``seed``), its test
    accuracy, and its outputs known before training; ``data`` is :func:`_psmnist_data`'s."""
    xtr, ytr, xte, yte, *source = data
    T, per_epoch = xtr.shape[1], len(ytr) // 100
    model = RoaRNN(1, cfg["width"], 10, alpha=cfg["rho"] / T, readout="last", seed=seed).to(device)
    orders = {}

    def batch(k):
        e = k // per_epoch
        if e not in orders:
            orders.clear()
            orders[e] = torch.randperm(len(ytr), generator=torch.Generator().manual_seed(1000 * seed + e))
        idx = orders[e][k % per_epoch * 100 : (k % per_epoch + 1) * 100]
        return xtr[idx].to(device), ytr[idx].to(device)

    def accuracy(m):
        hits = sum(
            int((m(xte[i : i + 1000].to(device)).argmax(-1) == yte[i : i + 1000].to(device)).sum())
            for i in range(0, len(yte), 1000)
        )
        return {"accuracy": hits / len(yte)}

    known = {
        "params": sum(p.numel() for p in model.parameters()),
        "length": T,
        "data": source[0] if source else "scikit-learn 8x8 digits, permuted (RandomState(0))",
    }
    return model, batch, accuracy, per_epoch, known


def _ce(m, x, y):
    return torch.nn.functional.cross_entropy(m(x), y)


def psmnist_run(cfg: dict, ctx: RunContext) -> dict:
    """Fig. 5: a roaRNN (rho = 1/2, alpha = 1/(2T), ReLU, N(0,1) init) classifies permuted pixel sequences from its
    last state; Adam, batch 100, shuffled every epoch, lr 0.1 then 0.01 from epoch ``lr_drop``; test accuracy on the
    whole test set after every epoch."""
    model, batch, accuracy, per_epoch, known = _setup(cfg, _psmnist_data(cfg), ctx.seed, torch.device(ctx.device))
    opt = train.make_optimizer(model.parameters(), "adam", cfg["lr"])

    def drop(m, k):
        if k + 1 == (cfg["lr_drop"] - 1) * per_epoch:
            for group in opt.param_groups:
                group["lr"] = cfg["lr"] / 10

    hist = train.fit(
        model,
        batch,
        _ce,
        steps=cfg["epochs"] * per_epoch,
        optimizer=opt,
        eval_fn=accuracy,
        eval_every=per_epoch,
        after_step=drop,
        checkpoint=ctx.checkpoint,
        progress=ctx.progress,
        desc=f"psMNIST N={cfg['width']}",
    )
    return {**_curves(hist, ("accuracy",)), **known}


@twin(psmnist_run, key=lambda cfg: {k: v for k, v in cfg.items() if k != "seed"}, devices=("cuda",))
def psmnist_group(cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`psmnist_run` of runs that differ only in seed, trained together (:func:`lscnb.batched.fit_batched`,
    ``--executor batched``): each roaRNN from its seed on its own shuffles, one rate drop for all. On a GPU only: on
    one CPU core, 5 seeds on real MNIST took 0.9x (N = 178) and 1.4x (N = 512) the time of the 5 alone (2026-11-29)."""
    cfg, device, data = cfgs[0], torch.device(ctxs[0].device), _psmnist_data(cfgs[0])
    runs = [_setup(cfg, data, x.seed, device) for x in ctxs]
    per_epoch, drop = runs[0][3], (cfg["lr_drop"] - 1) * runs[0][3]
    hists = fit_batched(
        [r[0] for r in runs],
        [r[1] for r in runs],
        _ce,
        steps=cfg["epochs"] * per_epoch,
        lr=cfg["lr"],
        schedule=lambda k: cfg["lr"] if k < drop else cfg["lr"] / 10,  # psmnist_run's drop, after step drop - 1
        eval_fn=runs[0][2],  # one test set: the accuracy of whichever model it is given
        eval_every=per_epoch,
        device=device,
        checkpoint=ctxs[0].checkpoint,
        progress=ctxs[0].progress,
        desc=f"psMNIST N={cfg['width']} x{len(cfgs)} (batched)",
    )
    return [{**_curves(h, ("accuracy",)), **r[4]} for h, r in zip(hists, runs)]


def psmnist_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "psmnist",
            f"N{n}-s{seed}",
            psmnist_run,
            dict(
                source=s["psmnist_source"],
                n_train=s["psmnist_train"],
                n_test=s["psmnist_test"],
                width=n,
                rho=0.5,
                lr=0.1,
                lr_drop=s["psmnist_drop"],
                epochs=s["psmnist_epochs"],
                seed=seed,
            ),
        )
        for n in s["psmnist_widths"]
        for seed in s["psmnist_seeds"]
    ]


def show_psmnist(col) -> None:
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    widths = sorted({r.config["width"] for r in col})
    for i, n in enumerate(widths):
        for r in col.where(width=n):
            shade = plot.plt.cm.Blues(0.45 + 0.5 * i / max(len(widths) - 1, 1))  # darker for wider, as the paper
            first = r.config["seed"] == col[0].config["seed"]
            ax[0, 0].plot(
                np.arange(1, len(r["accuracy"]) + 1),
                r["accuracy"],
                color=shade,
                label=f"roaRNN N = {n} ({r['params']:,} parameters)" if first else None,
            )
    T = col[0]["length"]
    ax[0, 0].set(xlabel="epoch", ylabel="test accuracy", title=f"permuted pixel sequences, T = {T}")
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data=col[0]["data"])


def psmnist_table(col) -> list[dict]:
    """The paper's table (its rows cite their own sources) with our roaRNN rows: best test accuracy in the epochs run,
    best and median over seeds (a run's own with one seed)."""
    rows = [
        {"model": m, "parameters": p, "test accuracy (%)": a, "source": "the paper's table (Fig. 5)"}
        for m, p, a in PSMNIST_PAPER
    ]
    T = col[0]["length"]
    what = "ours, psMNIST" if T == 784 and col.scale == "full" else f"ours, {col.scale} scale, T = {T}: not psMNIST"
    for n in sorted({r.config["width"] for r in col}):
        best = [100 * float(np.max(r["accuracy"], initial=0.0)) for r in col.where(width=n)]
        many = len(best) > 1
        rows.append(
            {
                "model": f"roaRNN (N = {n}), " + (f"best / median of {len(best)} seeds" if many else "1 seed"),
                "parameters": f"{col.where(width=n)[0]['params']:,}",
                "test accuracy (%)": f"{max(best):.2f} / {np.median(best):.2f}" if many else f"{best[0]:.2f}",
                "source": what,
            }
        )
    return rows


def gap_psmnist(col) -> str:
    rows = [r for r in psmnist_table(col) if r["source"].startswith("ours")]
    return (
        "; ".join(f"{r['model'].split(',')[0]}: {r['test accuracy (%)']}% ({r['source']})" for r in rows)
        + " (paper: 97.24 / 97.88 / 98.25% at N = 178 / 256 / 512)"
    )
