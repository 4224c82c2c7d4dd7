"""Gradient propagation without training: Thms 4.4.2 and 4.4.3 in the scalar linearised model (figure
``propagation``), the gradient reaching a stored state in untrained RelRNNs (figure ``reach``) and the nu / rho
trade-off of Fig. B.1 (figure ``screening``)."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...models.relevancy import RelRNN
from ...sweep import Run, RunContext
from ...theory import relevancy as theory
from .common import CHAPTER

SIZES = {
    "quick": dict(lengths=[50, 100, 200, 500, 1000], seeds=3, width=32),
    "full": dict(lengths=[50, 100, 200, 500, 1000, 2000, 5000], seeds=10, width=128),
}


def propagation_run(cfg: dict, ctx: RunContext) -> dict:
    """g(k) for the four attention patterns, and the measured uniform-attention exponent for several lam."""
    out = {p: theory.propagation(p, cfg["lam"], cfg["steps"], kappa=cfg["kappa"]) for p in theory.PATTERNS}
    slopes = []
    for lam in cfg["lams"]:
        g = theory.propagation("uniform", lam, 4001)
        slopes.append(np.log(g[4000] / g[400]) / np.log(10))
    out["slopes"] = np.array(slopes)
    return out


def propagation_runs(scale: str) -> list[Run]:
    return [
        Run(
            CHAPTER,
            "propagation",
            "scalar",
            propagation_run,
            dict(lam=0.9, kappa=5, steps=1001, lams=[0.3, 0.6, 0.9], seed=0),
        )
    ]


def show_propagation(col) -> None:
    r = col[0]
    fig, ax = plot.figure(1, 1, width=6.5, height=3.8)
    names = {
        "none": "no attention (RNN)",
        "uniform": "uniform attention (all past states)",
        "sparse": f"sparse: stored event + last {r.config['kappa'] - 1}",
        "window": f"window of {r.config['kappa']}",
    }
    for p, color in zip(theory.PATTERNS, ("C0", "C1", "C3", "C2")):
        ax[0, 0].plot(r[p], color=color, label=names[p])
    ax[0, 0].axhline(
        theory.sparse_plateau(r.config["lam"], r.config["kappa"]), **plot.THEORY, label="sparse plateau (closed form)"
    )
    ax[0, 0].set(
        yscale="log",
        ylim=(1e-12, 3),
        xlabel="k",
        ylabel="|d s_{t+k} / d h_t|",
        title=f"linearised model, λ = {r.config['lam']}",
    )
    ax[0, 0].legend(fontsize=7)
    plot.show(fig, col, data="closed-form recursion (no data)")


def reach_run(cfg: dict, ctx: RunContext) -> dict:
    """||dL/dh_0|| with L = sum of the last macro-state s_{T-1} (the theorems' quantity), for a RelRNN whose
    screening keeps h_0 (an oracle) and for the plain RNN with the same weights, over ``seeds`` networks (seeds
    ``ctx.seed`` onwards) and lengths."""
    rel, plain = [], []
    for seed in range(ctx.seed, ctx.seed + cfg["seeds"]):
        torch.manual_seed(seed)
        model = RelRNN(4, cfg["width"], nu=5, rho=5).double()
        x = torch.randn(2, cfg["length"], 4, generator=torch.Generator().manual_seed(100 + seed), dtype=torch.float64)
        for att, sink in ((True, rel), (False, plain)):
            hs = []
            model(x, pin=(0,), attention=att, hidden=hs, macro=True)[:, -1].sum().backward()
            sink.append(float(hs[0].grad.norm()))
            model.zero_grad()
    return {"relrnn": np.array(rel), "rnn": np.array(plain)}


def reach_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(CHAPTER, "reach", f"T{T}", reach_run, dict(length=T, seeds=s["seeds"], width=s["width"], seed=0))
        for T in s["lengths"]
    ]


def show_reach(col) -> None:
    rs = sorted(col, key=lambda r: r.config["length"])
    T = [r.config["length"] for r in rs]
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    ax[0, 0].plot(
        T, [r["relrnn"].mean() for r in rs], "o-", color="C3", label="RelRNN (ν = ρ = 5), h₀ kept as relevant"
    )
    ax[0, 0].plot(T, [max(r["rnn"].mean(), 1e-300) for r in rs], "o-", color="C0", label="plain tanh RNN, same weights")
    ax[0, 0].set(
        xscale="log",
        yscale="log",
        xlabel="sequence length T",
        ylabel="‖∂L/∂h₀‖",
        title="gradient reaching the first state",
    )
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data="Gaussian inputs, generated; untrained networks")


# ------------------------------------------------------------------ Fig. B.1: the nu / rho trade-off (toy)
SCREENING_NOTE = (
    "the linearised model of App. B.3's argument (T = 1,000, the thesis's nu and rho values, 5 relevant "
    "events), not the trained RelLSTM on denoise of Fig. B.1, which is owed"
)


def screening_run(cfg: dict, ctx: RunContext) -> dict:
    """|dL/dh_t| in the linearised screening model for rho in ``rhos`` at nu = ``fixed`` and nu in ``nus`` at
    rho = ``fixed``, with ``events`` relevant inputs at random positions (App. B.3, Fig. B.1)."""
    rng = np.random.default_rng(ctx.seed)
    events = np.sort(rng.choice(cfg["T"], cfg["events"], replace=False))
    out = {"events": events}
    for name, pairs in (
        ("rho", [(cfg["fixed"], r) for r in cfg["rhos"]]),
        ("nu", [(n, cfg["fixed"]) for n in cfg["nus"]]),
    ):
        for nu, rho in pairs:
            r = theory.screened_gradients(cfg["T"], events, nu=nu, rho=rho, lam=cfg["lam"], boost=cfg["boost"])
            value = rho if name == "rho" else nu
            out[f"{name}{value}_grad"] = r["grad"]
            out[f"{name}{value}_kept"] = int(np.isin(events, r["stored"]).sum())
    return out


def screening_runs(scale: str) -> list[Run]:
    return [
        Run(
            CHAPTER,
            "screening",
            "linear",
            screening_run,
            dict(T=1000, events=5, rhos=[3, 8, 18, 25], nus=[3, 8, 18, 25], fixed=15, lam=0.9, boost=4.0, seed=0),
        )
    ]


def event_gradients(col, name: str) -> dict:
    """{value of ``name`` ("rho" or "nu"): smallest |dL/dh_t| over the relevant events}."""
    r = col[0]
    return {v: float(r[f"{name}{v}_grad"][r["events"]].min()) for v in r.config[f"{name}s"]}


def show_screening(col) -> None:
    r = col[0]
    fig, ax = plot.figure(2, 1, width=10, height=3.6, sharey=True)
    for a, name in zip(ax[0], ("rho", "nu")):
        for v, color in zip(r.config[f"{name}s"], ("C3", "C1", "C2", "C0")):
            g = r[f"{name}{v}_grad"][::-1]
            a.plot(
                np.log10(np.clip(g, 1e-300, None)),
                color=color,
                lw=1,
                label=f"{'ρ' if name == 'rho' else 'ν'} = {v} ({r[f'{name}{v}_kept']} of {len(r['events'])} kept)",
            )
        for e in r["events"]:
            a.axvline(r.config["T"] - 1 - e, color="k", lw=0.5, ls=":")
        other = "ν" if name == "rho" else "ρ"
        a.set(xlabel="t, steps back from the end", title=f"{other} = {r.config['fixed']}, λ = {r.config['lam']}")
        a.legend(fontsize=7)
    ax[0, 0].set_ylabel("log₁₀ |∂L/∂h_t|")
    plot.show(fig, col, data=f"no data: {len(r['events'])} relevant events at random positions (dotted)")


def explore_figure(lam: float = 0.9, kappa: int = 5, steps: int = 1000):
    fig, ax = plot.figure(1, 1, width=6, height=3.6)
    for p in theory.PATTERNS:
        ax[0, 0].plot(theory.propagation(p, lam, steps, kappa=kappa), label=p)
    ax[0, 0].set(yscale="log", ylim=(1e-12, 3), xlabel="k", title=f"λ = {lam:g}, κ = {kappa}")
    ax[0, 0].legend(fontsize=8)
    return fig
