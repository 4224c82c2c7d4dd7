"""Figs. 5 and 6 at proxy scale: permuted sequential digits, roaRNN vs eyeRNN (O = I) vs a vanilla RNN."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...models.roa import RoaRNNCell
from ...sweep import Run, RunContext
from .common import CHAPTER, SIZES


def digits_run(cfg: dict, ctx: RunContext) -> dict:
    """Classify permuted sequential digits (one pixel per step) from the last state; test accuracy per epoch."""
    from sklearn.datasets import load_digits

    d = load_digits()
    perm = np.random.RandomState(0).permutation(64)  # the task's pixel permutation, fixed (as the paper's psMNIST)
    x = torch.tensor(d.data[:, perm] / 16.0, dtype=torch.float32).unsqueeze(-1)
    y = torch.tensor(d.target)
    xtr, ytr, xte, yte = x[:1400], y[:1400], x[1400:], y[1400:]
    torch.manual_seed(ctx.seed)
    n = cfg["width"]
    if cfg["model"] == "vanilla":
        rnn = torch.nn.RNN(1, n, nonlinearity="relu", batch_first=True)
        torch.nn.init.orthogonal_(rnn.weight_hh_l0)
        run = lambda xb: rnn(xb)[0][:, -1]
        params = list(rnn.parameters())
    else:
        cell = RoaRNNCell(
            1, n, alpha=cfg["rho"] / 64, seed=ctx.seed, method="identity" if cfg["model"] == "eye" else "paper"
        )

        def run(xb):
            h = cell.initial_state(xb.shape[0])
            for t in range(xb.shape[1]):
                h = cell(h, xb[:, t])
            return h

        params = list(cell.parameters())
    head = torch.nn.Linear(n, 10)
    if cfg["model"] != "vanilla":
        torch.nn.init.normal_(head.weight)
        torch.nn.init.normal_(head.bias)
    opt = torch.optim.Adam(params + list(head.parameters()), lr=cfg["lr"])
    g = torch.Generator().manual_seed(ctx.seed)
    acc = []
    for _epoch in range(cfg["epochs"]):
        order = torch.randperm(len(ytr), generator=g)
        for i in range(0, len(ytr), 100):
            idx = order[i : i + 100]
            loss = torch.nn.functional.cross_entropy(head(run(xtr[idx])), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            acc.append(float((head(run(xte)).argmax(-1) == yte).float().mean()))
    return {"accuracy": np.array(acc)}


def digits_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    specs = [("roa", 0.1), ("eye", 0.01), ("vanilla", 1e-3)]
    return [
        Run(
            CHAPTER,
            "digits",
            f"{model}-s{seed}",
            digits_run,
            dict(model=model, lr=lr, rho=1.0, width=s["digit_width"], epochs=s["digit_epochs"], seed=seed),
        )
        for model, lr in specs
        for seed in s["digit_seeds"]
    ]


def show_digits(col) -> None:
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    colors = {"roa": "C3", "eye": "C2", "vanilla": "C0"}
    names = {"roa": "roaRNN (random O)", "eye": "eyeRNN (O = I)", "vanilla": "vanilla ReLU RNN (orthogonal init)"}
    for r in col:
        m = r.config["model"]
        ax[0, 0].plot(
            np.arange(1, len(r["accuracy"]) + 1),
            r["accuracy"],
            color=colors[m],
            label=names[m] if r.config["seed"] == 0 else None,
        )
    ax[0, 0].set(xlabel="epoch", ylabel="test accuracy", ylim=(0, 1), title="permuted sequential digits (T = 64)")
    ax[0, 0].legend(fontsize=8)
    plot.show(
        fig, col, data="scikit-learn's 1,797 real 8x8 digits, pixels permuted (RandomState(0)), 1,400 train / 397 test"
    )


def digits_final(col) -> dict:
    return {m: [float(r["accuracy"][-1]) for r in col.where(model=m)] for m in ("roa", "eye", "vanilla")}


def gap_digits(col) -> str:
    f = digits_final(col)
    return (
        f"proxy task, not psMNIST: roaRNN {np.mean(f['roa']):.1%} vs eyeRNN {np.mean(f['eye']):.1%}; "
        "paper psMNIST roaRNN 97.2-98.3%"
    )
