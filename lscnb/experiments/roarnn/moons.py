"""Fig. 1: double-moon regression, shallow vs deep vanilla vs deep roaFNN, and an extreme-depth roaFNN."""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import plot, train
from ...data.moons import double_moon
from ...models.roa import RoaFNN
from ...sweep import Run, RunContext
from .common import CHAPTER, SIZES


def moons_run(cfg: dict, ctx: RunContext) -> dict:
    """Train one network on the double moon (batch 100) with ``lscnb.train.fit``, checkpointing every epoch (so a
    killed 50,000-layer run resumes where it stopped); MSE after every epoch, its output on a grid, and what the
    run cost: seconds per iteration and the process's peak resident memory (an upper bound for this run)."""
    x, y = double_moon(1000, d=1.0, seed=0)  # the data set, fixed: show_moons draws these same points
    net = RoaFNN(2, cfg["width"], 1, cfg["depth"], rho=cfg["rho"], seed=ctx.seed)
    g = torch.Generator().manual_seed(ctx.seed)
    perms = [torch.randperm(1000, generator=g) for _ in range(cfg["epochs"])]

    def batch(k):  # batch k % 10 of epoch k // 10, in the order the epoch's shuffle gives
        idx = perms[k // 10][k % 10 * 100 : (k % 10 + 1) * 100]
        return x[idx], y[idx]

    mse = lambda m, xb, yb: (m(xb).squeeze(-1) - yb).pow(2).mean()  # noqa: E731
    hist = train.fit(
        net,
        batch,
        mse,
        steps=10 * cfg["epochs"],
        lr=cfg["lr"],
        optimizer=cfg["optimizer"],
        eval_fn=lambda m: {"mse": mse(m, x, y)},
        eval_every=10,
        checkpoint=ctx.checkpoint,
        checkpoint_every=10,
        progress=ctx.progress,
        desc=f"moons L={cfg['depth']}",
    )
    curve = [e["mse"] if math.isfinite(e["mse"]) else float("nan") for e in hist.evals]
    gx, gy = torch.meshgrid(torch.linspace(-20, 30, 100), torch.linspace(-15, 20, 70), indexing="xy")
    with torch.no_grad():
        surface = net(torch.stack([gx.ravel(), gy.ravel()], 1)).reshape(70, 100)
    return {
        "mse": np.array(curve),
        "surface": surface.numpy(),
        "params": sum(p.numel() for p in net.parameters()),
        "diverged": hist.diverged,
        "seconds_per_iteration": hist.wall_time_s / max(len(hist.loss), 1),
        "peak_rss_mb": _peak_rss_mb(),
    }


def _peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports kB)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def moons_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    E = s["moon_epochs"]
    specs = [
        ("shallow (L = 3)", 3, 72, None, "sgd", 0.01, E),
        ("vanilla L = 50", 50, 2, None, "sgd", 0.1, E),
        ("vanilla L = 50", 50, 2, None, "sgd", 0.01, E),
        ("roaFNN L = 50", 50, 2, 5.0, "sgd", 5.0, E),
        (f"roaFNN L = {s['deep_depth']:,}", s["deep_depth"], 2, 5.0, "adam", 0.05, s["deep_epochs"]),
    ]
    return [
        Run(
            CHAPTER,
            "moons",
            f"{name.split()[0]}-L{depth}-{opt}{lr:g}",
            moons_run,
            dict(label=name, depth=depth, width=w, rho=rho, optimizer=opt, lr=lr, epochs=ep, seed=0),
        )
        for name, depth, w, rho, opt, lr, ep in specs
    ]


def show_moons(col) -> None:
    fig, ax = plot.figure(4, 1, width=14, height=3.4)
    for i, r in enumerate(col):
        ax[0, 0].plot(
            np.arange(1, len(r["mse"]) + 1),
            r["mse"],
            color=f"C{i}",
            label=f"{r.config['label']}, {r.config['optimizer']} lr {r.config['lr']:g}",
        )
    ax[0, 0].set(yscale="log", xlabel="epoch", ylabel="MSE", title="training")
    ax[0, 0].legend(fontsize=6)
    x, y = double_moon(1000, d=1.0, seed=0)
    picks = [col[0], col[3], col[len(col) - 1]]
    for a, r in zip(ax[0, 1:], picks):
        a.imshow(
            np.clip(r["surface"], -1.5, 1.5), origin="lower", extent=(-20, 30, -15, 20), cmap="coolwarm", aspect="auto"
        )
        a.scatter(x[:, 0], x[:, 1], c=y, s=2, cmap="coolwarm", edgecolors="none")
        a.set(title=r.config["label"], xticks=[], yticks=[])
    plot.show(fig, col, data="Haykin's double moon (r = 10, w = 6, d = 1), generated")


def moons_cost(col) -> list[dict]:
    """What each double-moon run cost where it ran: seconds per iteration and the process's peak memory (runs
    stored before these were recorded show none)."""
    return [
        {
            "model": r.config["label"],
            "layers": r.config["depth"],
            "parameters": r["params"],
            "s / iteration": r.get("seconds_per_iteration", float("nan")),
            "peak RSS of the process (MB)": r.get("peak_rss_mb", float("nan")),
            "where": r.provenance.get("device_name", "?"),
        }
        for r in col
    ]
