"""Chapter "Recurrence and self-attention: relevancy screening" (Kerg et al. 2020; thesis ch. 4).

Figures: ``propagation`` (Thms 4.4.2 and 4.4.3 in the scalar linearised model: no attention, uniform, sparse and
windowed attention) and ``reach`` (the gradient reaching a stored relevant state in a nonlinear RelRNN, against
the plain RNN with the same weights, as the sequence grows).
"""
from __future__ import annotations

import numpy as np
import torch

from .. import plot
from ..config import Profile
from ..models.relevancy import RelRNN
from ..sweep import Run, gather
from ..theory import relevancy as theory

CHAPTER = "relevancy"
NOTEBOOK = "book/relevancy.ipynb"

SIZES = {"quick": dict(lengths=[50, 100, 200, 500, 1000], seeds=3, width=32),
         "full": dict(lengths=[50, 100, 200, 500, 1000, 2000, 5000], seeds=10, width=128)}
TABLE_4_1 = {"orth-RNN": [99, 4, 16, 10, 0], "expRNN": [100, 86, 73, 58, 50], "MemRNN": [99, 99, 99, 92, None],
             "RelRNN": [100, 99, 99, 99, 99], "LSTM": [99, 64, 48, 19, 14], "h-detach": [100, 91, 77, 51, 42],
             "SAB": [99, 95, 95, 95, 95], "RelLSTM": [100, 99, 99, 99, 99]}


def propagation_run(cfg: dict, ctx) -> dict:
    """g(k) for the four attention patterns, and the measured uniform-attention exponent for several lam."""
    out = {p: theory.propagation(p, cfg["lam"], cfg["steps"], kappa=cfg["kappa"]) for p in theory.PATTERNS}
    slopes = []
    for lam in cfg["lams"]:
        g = theory.propagation("uniform", lam, 4001)
        slopes.append(np.log(g[4000] / g[400]) / np.log(10))
    out["slopes"] = np.array(slopes)
    return out


def propagation_runs(scale: str) -> list[Run]:
    return [Run(CHAPTER, "propagation", "scalar", propagation_run,
                dict(lam=0.9, kappa=5, steps=1001, lams=[0.3, 0.6, 0.9], seed=0))]


def fig_propagation(profile: Profile):
    return gather(propagation_runs, profile)


def show_propagation(col) -> None:
    r = col[0]
    fig, ax = plot.figure(1, 1, width=6.5, height=3.8)
    names = {"none": "no attention (RNN)", "uniform": "uniform attention (all past states)",
             "sparse": f"sparse: stored event + last {r.config['kappa'] - 1}", "window": f"window of {r.config['kappa']}"}
    for p, color in zip(theory.PATTERNS, ("C0", "C1", "C3", "C2")):
        ax[0, 0].plot(r[p], color=color, label=names[p])
    ax[0, 0].axhline(theory.sparse_plateau(r.config["lam"], r.config["kappa"]), **plot.THEORY, label="sparse plateau (closed form)")
    ax[0, 0].set(yscale="log", ylim=(1e-12, 3), xlabel="k", ylabel="|d s_{t+k} / d h_t|",
                 title=f"linearised model, λ = {r.config['lam']}")
    ax[0, 0].legend(fontsize=7)
    plot.show(fig, col, data="closed-form recursion (no data)")


def reach_run(cfg: dict, ctx) -> dict:
    """||dL/dh_0|| with L = sum of the last macro-state, for a RelRNN whose screening keeps h_0 (an oracle) and
    for the plain RNN with the same weights, over seeds and lengths."""
    rel, plain = [], []
    for seed in range(cfg["seeds"]):
        torch.manual_seed(seed)
        model = RelRNN(4, cfg["width"], nu=5, rho=5).double()
        x = torch.randn(2, cfg["length"], 4, generator=torch.Generator().manual_seed(100 + seed), dtype=torch.float64)
        for att, sink in ((True, rel), (False, plain)):
            hs = []
            model(x, pin=(0,), attention=att, hidden=hs)[:, -1].sum().backward()
            sink.append(float(hs[0].grad.norm()))
            model.zero_grad()
    return {"relrnn": np.array(rel), "rnn": np.array(plain)}


def reach_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [Run(CHAPTER, "reach", f"T{T}", reach_run, dict(length=T, seeds=s["seeds"], width=s["width"], seed=0))
            for T in s["lengths"]]


def fig_reach(profile: Profile):
    return gather(reach_runs, profile)


def show_reach(col) -> None:
    rs = sorted(col, key=lambda r: r.config["length"])
    T = [r.config["length"] for r in rs]
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    ax[0, 0].plot(T, [r["relrnn"].mean() for r in rs], "o-", color="C3", label="RelRNN (ν = ρ = 5), h₀ kept as relevant")
    ax[0, 0].plot(T, [max(r["rnn"].mean(), 1e-300) for r in rs], "o-", color="C0", label="plain tanh RNN, same weights")
    ax[0, 0].set(xscale="log", yscale="log", xlabel="sequence length T", ylabel="‖∂L/∂h₀‖", title="gradient reaching the first state")
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data="Gaussian inputs, generated; untrained networks")


def explore_figure(lam: float = 0.9, kappa: int = 5, steps: int = 1000):
    fig, ax = plot.figure(1, 1, width=6, height=3.6)
    for p in theory.PATTERNS:
        ax[0, 0].plot(theory.propagation(p, lam, steps, kappa=kappa), label=p)
    ax[0, 0].set(yscale="log", ylim=(1e-12, 3), xlabel="k", title=f"λ = {lam:g}, κ = {kappa}")
    ax[0, 0].legend(fontsize=8)
    return fig


FIGURES = {"propagation": propagation_runs, "reach": reach_runs}

REPRODUCES = [
    {"source": "Thm 4.4.2, Thm 4.4.3", "what": "gradient propagation: uniform Omega(1/T), sparse Omega(1/kappa^d)",
     "figure": "propagation", "data": "closed form", "note": "scalar linearised model of the theorems"},
    {"source": "§4.5 (relevancy screening)", "what": "gradients reach stored relevant states at any length",
     "figure": "reach", "data": "generated", "note": "untrained networks, oracle screening"},
    {"source": "Fig. 4.1", "what": "attention weights of a trained MemRNN on copy and denoise", "figure": None,
     "data": "", "note": "not reproduced yet"},
    {"source": "Table 4.1", "what": "transfer copy accuracy, T = 100 to 5,000", "figure": None, "data": "copy task",
     "note": "not reproduced yet (paper numbers shown)"},
    {"source": "Table 4.2", "what": "denoise accuracy, T = 100 to 2,000", "figure": None, "data": "denoise task",
     "note": "not reproduced yet"},
    {"source": "Tables B.2-B.6, Figs. B.1-B.5", "what": "copy, pMNIST, PTB, MiniGrid; hyper-parameters", "figure": None,
     "data": "", "note": "not reproduced yet"},
]
