"""Fig. 3.2 (right) and Fig. A.1 (right): permuted pixel-by-pixel MNIST at equal width and equal
parameters (Table A.2's rates)."""

from __future__ import annotations

import functools

import numpy as np
import torch

from ... import checks, plot
from ...data.mnist import load_mnist, pixel_sequences
from ...sweep import Run, RunContext
from ...train import EpochBatches, fit
from .common import CHAPTER, CoreReadout, _theta_snapshot, effective_parameters, make_model

PSMNIST_HYPER = {  # Table A.2 (psMNIST), equal width N = 512; "RNN Orth" and EURNN rows not run
    "nnRNN": dict(hid=512, lr=1.5e-4, lr_orth=1.5e-5, alpha=0.99, delta=0.15, t_decay=1e-4, init="cayley"),
    "expRNN": dict(hid=512, lr=5e-4, lr_orth=5e-5, alpha=0.99, init="cayley"),
    "RNN": dict(hid=512, lr=1e-4, alpha=0.9, init="glorot"),
    "LSTM": dict(hid=512, lr=5e-4, alpha=0.9, init="glorot"),
}
PSMNIST_MATCHED = {"nnRNN": 512, "expRNN": 722, "LSTM": 257}
"""Table A.2's equal-parameter widths (about 269K parameters, Fig. A.1 right)."""
PSMNIST_QUICK_HYPER = {  # toy scale: one shared learning rate (the paper's per-model rates were tuned at N = 512)
    m: dict(hp, lr=2e-3, **({"lr_orth": 2e-4} if "lr_orth" in hp else {}), **({"delta": 1e-3} if m == "nnRNN" else {}))
    for m, hp in PSMNIST_HYPER.items()
}
PSMNIST_SIZES = {  # pool: side of the average-pooling window (28 / pool pixels per side)
    "quick": dict(
        pool=4,
        n_train=1500,
        n_eval=500,
        batch=100,
        epochs=3,
        widths={m: 32 for m in PSMNIST_HYPER},
        matched={"nnRNN": 32, "expRNN": 42, "LSTM": 16},
        seeds=[0],
        hyper="quick",
    ),
    "full": dict(
        pool=1,
        n_train=50000,
        n_eval=10000,
        batch=100,
        epochs=10,
        widths={m: hp["hid"] for m, hp in PSMNIST_HYPER.items()},
        matched=PSMNIST_MATCHED,
        seeds=[0],
        hyper="paper",
    ),
}
PSMNIST_SUBSET = "1 seed and 10 of the paper's 100 epochs; RNN-orth and EURNN rows not run"


@functools.lru_cache(maxsize=2)
def psmnist_data(pool: int, n_train: int, n_eval: int, split_seed: int = 0):
    """Permuted pixel sequences of real MNIST, average-pooled by ``pool`` (1: the paper's 784 steps): train and
    validation (a random split of the 60K training images, as the code's 50K/10K) and the 10K test set."""
    pool = checks.positive_int(pool, "pool")
    if 28 % pool:
        raise ValueError(f"pool must divide 28, got {pool}")
    train, test = load_mnist("train"), load_mnist("test")

    def seq(images):
        imgs = torch.nn.functional.avg_pool2d(images.float().unsqueeze(1), pool).squeeze(1)
        return pixel_sequences(imgs, permute=True)

    order = torch.randperm(len(train), generator=torch.Generator().manual_seed(split_seed))  # fixed: held-out split
    tr, va = order[:n_train], order[len(train) - n_eval :]
    x = seq(train.images)
    return {
        "train": (x[tr], train.labels[tr]),
        "valid": (x[va], train.labels[va]),
        "test": (seq(test.images[:n_eval]), test.labels[:n_eval]),
        "source": train.source,
    }


@torch.no_grad()
def _accuracy(model, x, y, batch: int = 500) -> float:
    hits = sum(
        int((model.last(x[i : i + batch]).argmax(-1) == y[i : i + batch]).sum()) for i in range(0, len(y), batch)
    )
    return hits / len(y)


def psmnist_run(cfg: dict, ctx: RunContext) -> dict:
    """Train one model on permuted pixel-by-pixel MNIST (classification from the last state, RMSprop, Table
    A.2 or the quick shared rates); validation accuracy after every epoch, test accuracy of the best epoch. Both are
    measured every epoch and kept in the history, so a run resumed from its checkpoint knows its best epoch."""
    hyper = PSMNIST_HYPER if cfg["hyper"] == "paper" else PSMNIST_QUICK_HYPER
    name = cfg["model"]
    data = psmnist_data(cfg["pool"], cfg["n_train"], cfg["n_eval"])
    core, readout, opts = make_model(name, cfg["width"], ctx.seed, n_in=1, n_out=10, hyper=hyper, init="cayley")
    x, y = data["train"]
    device = ctx.device
    model = CoreReadout(core, readout).to(device)

    def evaluate(model):  # every epoch, both accuracies, kept in the history (and so in a checkpoint)
        return {
            "valid_acc": _accuracy(model, *(t.to(device) for t in data["valid"])),
            "test_acc": _accuracy(model, *(t.to(device) for t in data["test"])),
        }

    batches = EpochBatches(len(y), cfg["batch"], ctx.seed, drop_last=True)
    hist = fit(
        model,
        batches.over(x, y),
        lambda model, xb, yb: torch.nn.functional.cross_entropy(model.last(xb), yb),
        steps=cfg["epochs"] * batches.per_epoch,
        optimizer=opts,
        penalty=lambda model: model.gamma_penalty(hyper[name].get("delta", 0.0)),
        eval_fn=evaluate,
        eval_every=batches.per_epoch,
        checkpoint=ctx.checkpoint,
        device=device,
        progress=ctx.progress,
        desc=f"psMNIST {name}",
    )
    valid = [e["valid_acc"] for e in hist.evals]
    at_best = hist.evals[int(np.argmax(valid))] if valid else {"valid_acc": 0.0, "test_acc": float("nan")}
    out = {
        "loss": np.array(hist.loss),
        "valid_acc": np.array(valid),
        "best_valid": max(at_best["valid_acc"], 0.0),
        "test_at_best": at_best["test_acc"],  # the test accuracy of the first epoch with the best validation
        "diverged": hist.diverged,
        "params": effective_parameters(core, readout),
        "steps": int(x.shape[1]),
    }
    if name == "nnRNN":
        out.update(_theta_snapshot(core))
    return out


def psmnist_runs(scale: str) -> list[Run]:
    s = PSMNIST_SIZES[scale]
    base = dict(
        pool=s["pool"], n_train=s["n_train"], n_eval=s["n_eval"], batch=s["batch"], epochs=s["epochs"], hyper=s["hyper"]
    )
    runs = [
        Run(
            CHAPTER,
            "psmnist",
            f"{m}-N{s['widths'][m]}-s{seed}",
            psmnist_run,
            dict(base, model=m, width=s["widths"][m], budget="width", seed=seed),
        )
        for m in PSMNIST_HYPER
        for seed in s["seeds"]
    ]
    runs += [
        Run(
            CHAPTER,
            "psmnist",
            f"{m}-N{w}-params-s{seed}",
            psmnist_run,
            dict(base, model=m, width=w, budget="params", seed=seed),
        )
        for m, w in s["matched"].items()
        if w != s["widths"][m]
        for seed in s["seeds"]
    ]
    return runs


def _budget_runs(col, model: str, budget: str) -> list:
    """The runs of ``model`` in the equal-width or equal-parameter comparison (a model whose matched width is its
    equal width is run once and shown in both)."""
    runs = col.where(model=model, budget=budget)
    if budget == "params" and not runs:
        matched = PSMNIST_SIZES[col.scale]["matched"].get(model)
        runs = [r for r in col.where(model=model, budget="width") if r.config["width"] == matched]
    return runs


def psmnist_final(col) -> list[dict]:
    """Per budget and model: width, effective parameters, best validation accuracy and the test accuracy at
    that epoch (mean over seeds)."""
    rows = []
    for budget in ("width", "params"):
        for m in PSMNIST_HYPER:
            runs = _budget_runs(col, m, budget)
            if runs:
                rows.append(
                    {
                        "budget": "equal width" if budget == "width" else "equal parameters",
                        "model": m,
                        "N": runs[0].config["width"],
                        "parameters": int(runs[0]["params"]),
                        "best valid acc": float(np.mean([r["best_valid"] for r in runs])),
                        "test acc at best": float(np.mean([r["test_at_best"] for r in runs])),
                    }
                )
    return rows


def show_psmnist(col) -> None:
    fig, ax = plot.figure(2, 1, width=11, height=3.6)
    for j, budget in enumerate(("width", "params")):
        for i, m in enumerate(PSMNIST_HYPER):
            for r in _budget_runs(col, m, budget):
                acc = r["valid_acc"]
                ax[0, j].plot(
                    np.arange(1, len(acc) + 1),
                    acc,
                    "o-",
                    color=f"C{i}",
                    label=f"{m} (N = {r.config['width']}, {int(r['params']):,} params)",
                )
        ax[0, j].set(
            xlabel="epoch",
            ylabel="validation accuracy",
            title=("Fig. 3.2 right: equal width" if budget == "width" else "Fig. A.1 right: equal parameters")
            + f", {col[0]['steps']} steps",
        )
        ax[0, j].legend(fontsize=7)
    plot.show(
        fig,
        col,
        data=f"real MNIST, pixels average-pooled by {col[0].config['pool']} and permuted "
        f"(RandomState(1234)); {col[0].config['n_train']:,} training images",
    )


PSMNIST_THESIS = "no final numbers printed (curves only); best validation accuracy read off Fig. 3.2 is not quoted"


def gap_psmnist(col) -> str:
    rows = [r for r in psmnist_final(col) if r["budget"] == "equal width"]
    return (
        "best validation accuracy "
        + ", ".join(f"{r['model']} {r['best valid acc']:.3f}" for r in rows)
        + f" ({col[0]['steps']} steps); thesis: {PSMNIST_THESIS}"
    )
