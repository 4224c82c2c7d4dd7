"""Figs. 5 and 7: GRU order parameters and the LSTM's stationary cell state, mean field against networks; the
chapter's explorer and the GRU's chi as corrected and as printed."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from ... import plot
from ...models.unified import (
    Theta,
    pair_statistics,
    simulate_pair,
    uniform_theta,
)
from ...sweep import Run, RunContext
from ...theory import meanfield as mf
from .common import CHAPTER, SIZES, theta_config, theta_from

# --------------------------------------------------------------------------------------------- Fig. 5
# Fig. 5's GRU (spec 2, Fig. 5)
GRU_FIG5 = Theta("gru", {"f": 1.0, "r": 1.0, "r2": 2.0}, {"f": 0.5, "r": 0.5, "r2": 0.5}, {})


def dynamics_run(cfg: dict, ctx: RunContext) -> dict:
    """Q^t and C^t of two copies of a GRU (inputs uncorrelated before ``switch``, identical after), measured
    over seeds, and the mean-field trajectory from the same start (Q^0 = 1, C^0 = 1)."""
    theta = theta_from(cfg["theta"])
    n, T, sw = cfg["width"], cfg["steps"], cfg["switch"]
    Q, C = [], []
    for seed in range(ctx.seed, ctx.seed + cfg["seeds"]):
        gen = torch.Generator().manual_seed(1000 + seed)
        za = torch.randn(T, n, generator=gen, dtype=torch.float64)
        zb = torch.cat([torch.randn(sw, n, generator=gen, dtype=torch.float64), za[sw:]])
        states = simulate_pair(theta, n, torch.stack([za, zb]), tied=cfg["tied"], seed=seed)
        stats = pair_statistics(states, theta.arch)
        Q.append(stats["Q"].numpy())
        C.append(stats["C"].numpy())
    Sz = np.r_[np.zeros(sw), np.ones(T - sw)]
    traj = mf.trajectory(theta, T, mf.State(0.0, 1.0, 1.0), 1.0, Sz)
    return {
        "Q": np.array(Q),
        "C": np.array(C),
        "mf_Q": np.array([s.Q for s in traj]),
        "mf_C": np.array([s.C for s in traj]),
        "Q_star": mf.fixed_point(theta, 1.0, 1.0).Q,
    }


def dynamics_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "dynamics",
            f"muf{mu}-{'tied' if tied else 'untied'}",
            dynamics_run,
            dict(
                theta=theta_config(GRU_FIG5.with_(mu={"f": float(mu)})),
                width=s["dyn_width"],
                steps=40,
                switch=10,
                seeds=s["dyn_seeds"],
                tied=tied,
                seed=0,
            ),
        )
        for tied in (False, True)
        for mu in (-1, 0, 1, 2, 3)
    ]


def dynamics_errors(col) -> dict:
    """Worst deviations of the untied networks from the mean field: relative in Q, absolute in C (T1)."""
    rs = [r for r in col if not r.config["tied"]]
    return {
        "Q_rel": max(float(np.max(np.abs(r["Q"].mean(0) - r["mf_Q"]) / r["mf_Q"])) for r in rs),
        "C_abs": max(float(np.max(np.abs(r["C"].mean(0) - r["mf_C"]))) for r in rs),
    }


def show_dynamics(col) -> None:
    fig, ax = plot.figure(3, 1, width=12, height=3.5)
    colors = {-1: "C0", 1: "C1", 3: "C2"}
    for r in col:
        mu = r.config["theta"]["mu"]["f"]
        if mu not in colors:
            continue
        t = np.arange(len(r["mf_C"]))
        a = ax[0, 1] if r.config["tied"] else ax[0, 0]
        a.plot(t, r["C"].mean(0), color=colors[mu], label=f"μ_f = {mu:g}")
        a.plot(t, r["mf_C"], **{**plot.THEORY, "color": colors[mu]})
    for a, title in zip(ax[0, :2], ("untied network vs mean field (dotted)", "tied network vs mean field (dotted)")):
        a.axvline(10, color="0.7", linewidth=0.8)
        a.set(xlabel="step t", ylabel="correlation $C^t$ of the two copies", title=title, ylim=(-0.05, 1.05))
        a.legend(fontsize=8)
    mus = np.linspace(-2, 4, 25)
    ax[0, 2].plot(
        mus,
        [mf.fixed_point(GRU_FIG5.with_(mu={"f": float(m)}), 1.0, 1.0).Q for m in mus],
        **plot.THEORY,
        label="mean field $Q^*$",
    )
    for tied, marker in ((False, "o"), (True, "s")):
        rs = sorted(col.where(tied=tied), key=lambda r: r.config["theta"]["mu"]["f"])
        ax[0, 2].plot(
            [r.config["theta"]["mu"]["f"] for r in rs],
            [float(r["Q"][:, -10:].mean()) for r in rs],
            marker,
            label=f"{'tied' if tied else 'untied'} network, steps 31-40",
        )
    ax[0, 2].set(xlabel="forget-gate bias μ_f", ylabel="$Q^*$", yscale="log", title="fixed point vs μ_f")
    ax[0, 2].legend(fontsize=8)
    plot.show(fig, col, data="Gaussian inputs, generated")


# --------------------------------------------------------------------------------------------- Fig. 7
# Fig. 7: a bimodal and a unimodal stationary cell state (spec T11)
CELL_THETAS = {
    "bimodal: μ_f = −2, μ_i = 1, ν_r² = 8": Theta(
        "lstm", {k: 1.0 for k in "ifro"}, {"i": 1.0, "f": 1.0, "r": 8.0, "o": 1.0}, {"f": -2.0, "i": 1.0}
    ),
    "unimodal: μ_f = 2": uniform_theta("lstm", 1.0, 1.0, {"f": 2.0}),
}


def cellstate_run(cfg: dict, ctx: RunContext) -> dict:
    """Cell states of an untied LSTM (all units, over seeds) after ``steps`` steps of Gaussian input, and
    samples of the population dynamics (Algorithm 1) run for as many steps from the same start."""
    theta = theta_from(cfg["theta"])
    n, T = cfg["width"], cfg["steps"]
    cells, Qs = [], []
    for seed in range(ctx.seed, ctx.seed + cfg["seeds"]):
        gen = torch.Generator().manual_seed(seed)
        z = torch.randn(T, n, generator=gen, dtype=torch.float64)
        s0 = torch.cat([torch.randn(n, generator=gen, dtype=torch.float64), torch.zeros(n, dtype=torch.float64)])
        states = simulate_pair(theta, n, torch.stack([z, z]), tied=False, seed=seed, state0=s0.expand(2, -1))
        cells.append(states[-1, 0, n:].numpy())
        Qs.append(states[1:, 0, :n].pow(2).mean(-1).numpy())
    pop = mf.population(theta, T, samples=cfg["samples"], seed=ctx.seed)
    return {"c_network": np.array(cells), "Q_network": np.array(Qs), "c_population": pop["c"], "Q_population": pop["Q"]}


def cellstate_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "cellstate",
            f"theta{i}",
            cellstate_run,
            dict(
                label=label,
                theta=theta_config(th),
                width=s["cell_width"],
                steps=100,
                seeds=s["cell_seeds"],
                samples=s["cell_samples"],
                seed=0,
            ),
        )
        for i, (label, th) in enumerate(CELL_THETAS.items())
    ]


def cellstate_errors(col) -> dict:
    """KS statistic between network and population cell states, and the relative gap in the final Q_h (T11)."""
    from scipy.stats import ks_2samp

    out = {}
    for r in col:
        out[r.config["label"]] = {
            "KS": float(ks_2samp(r["c_network"].ravel(), r["c_population"]).statistic),
            "Q_rel": float(abs(r["Q_network"][:, -1].mean() / r["Q_population"][-1] - 1)),
        }
    return out


def show_cellstate(col) -> None:
    fig, ax = plot.figure(len(col), 1, width=5 * len(col), height=3.4)
    for a, r in zip(ax[0], col):
        bins = np.linspace(
            min(r["c_population"].min(), r["c_network"].min()), max(r["c_population"].max(), r["c_network"].max()), 60
        )
        a.hist(r["c_population"], bins=bins, density=True, color="0.6", label="population dynamics (theory)")
        a.hist(
            r["c_network"].ravel(),
            bins=bins,
            density=True,
            histtype="step",
            color="C3",
            linewidth=1.5,
            label=f"untied network, N = {r.config['width']}",
        )
        a.set(title=r.config["label"], xlabel="cell state c after 100 steps")
        a.legend(fontsize=8)
    ax[0, 0].set_ylabel("density")
    plot.show(fig, col, data="Gaussian inputs, generated")


# --------------------------------------------------------------------------------------------- explorer
def explore_figure(mu_f: float = 1.0, sigma2: float = 1.0, nu2: float = 0.5, width: int = 500, seed: int = 0):
    """A GRU with weight variance ``sigma2`` and input variance ``nu2`` on every gate and forget bias ``mu_f``:
    Q^t and C^t of an untied network (inputs uncorrelated until t = 10, identical after) against the mean
    field, with Q*, chi and xi in the title. Returns the figure."""
    theta = uniform_theta("gru", sigma2, nu2, {"f": mu_f})
    out = dynamics_run(
        dict(theta=theta_config(theta), width=width, steps=40, switch=10, seeds=1, tied=False),
        SimpleNamespace(seed=seed),
    )  # the one thing dynamics_run reads from its context
    fig, ax = plot.figure(2, 1, width=10, height=3.3)
    t = np.arange(41)
    ax[0, 0].plot(t, out["Q"][0], color="C3", label="untied network")
    ax[0, 0].plot(t, out["mf_Q"], **plot.THEORY, label="mean field")
    ax[0, 0].set(xlabel="step t", ylabel="$Q^t$", yscale="log")
    ax[0, 1].plot(t, out["C"][0], color="C3", label="untied network")
    ax[0, 1].plot(t, out["mf_C"], **plot.THEORY, label="mean field")
    ax[0, 1].axvline(10, color="0.7", linewidth=0.8)
    ax[0, 1].set(xlabel="step t", ylabel="$C^t$", ylim=(-0.05, 1.05))
    ax[0, 1].legend(fontsize=8)
    fig.suptitle(
        f"GRU, μ_f = {mu_f:g}, σ² = {sigma2:g}, ν² = {nu2:g}:  Q* = {out['Q_star']:.3g},  "
        f"χ(Σz=0) = {mf.chi(theta, 1.0, 0.0):.3f},  ξ = {mf.time_scale(theta, 1.0, 0.0):.2f} steps",
        fontsize=10,
    )
    return fig


def gru_chi_errata(thetas: dict) -> list[dict]:
    """chi of GRUs three ways: the corrected formula, the paper's A.3.1 as printed, and a finite difference."""
    return [
        {
            "Θ": name,
            "χ corrected": mf.chi(th),
            "χ as printed (A.3.1)": mf.chi(th, paper=True),
            "χ finite difference": mf.chi_numeric(th),
        }
        for name, th in thetas.items()
    ]
