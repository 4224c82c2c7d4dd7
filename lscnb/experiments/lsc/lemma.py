"""Lemma 1 and Corollary 1: the expected spectral radius of Gaussian matrices against the chi-mean formula,
and the radii of the transition derivatives of deep FFNs per initialisation and activation."""

from __future__ import annotations

import numpy as np
import torch

from ...models.ffn import DeepFFN
from ...sweep import Run, RunContext
from ...theory import lsc as theory
from .common import CHAPTER, SIZES


def lemma1_run(cfg: dict, ctx: RunContext) -> dict:
    """Spectral radius and sorted eigenvalue moduli of real N(0, 1) matrices, ``samples`` per size."""
    n, S = cfg["n"], cfg["samples"]
    gen = torch.Generator().manual_seed(ctx.seed)
    mods = torch.linalg.eigvals(torch.randn(S, n, n, generator=gen, dtype=torch.float64)).abs().sort(-1).values
    return {"radius": mods[:, -1].numpy(), "mean_sorted": mods.mean(0).numpy()}


def lemma1_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(CHAPTER, "lemma1", f"n{n}", lemma1_run, dict(n=n, samples=s["lemma_samples"], seed=n))
        for n in s["lemma_sizes"]
    ]


def lemma1_table(col) -> list[dict]:
    rows = []
    for r in sorted(col, key=lambda r: r.config["n"]):
        n = r.config["n"]
        chi = float(theory.chi_mean(n))
        k = np.arange(1, n + 1)
        rel = np.abs(r["mean_sorted"] / theory.chi_mean(k) - 1)
        rows.append(
            {
                "n": n,
                "E ρ (Monte Carlo)": float(r["radius"].mean()),
                "χ_n mean (Lemma 1)": chi,
                "ratio": float(r["radius"].mean()) / chi,
                "std of ρ": float(r["radius"].std()),
                "median rel. error of sorted |λ_k|": float(np.median(rel)),
            }
        )
    return rows


def gap_lemma1(col) -> str:
    rows = lemma1_table(col)
    return (
        "E ρ / χ-mean: "
        + ", ".join(f"n={r['n']}: {r['ratio']:.3f}" for r in rows if r["n"] >= 64)
        + " (the formula underestimates; the paper gives no numbers)"
    )


def corollary_run(cfg: dict, ctx: RunContext) -> dict:
    """Radii of ``diag(phi'(z_l)) W_l`` for layers 2..L of a deep FFN on Gaussian inputs, over seeds."""
    radii = []
    for seed in range(ctx.seed, ctx.seed + cfg["seeds"]):
        net = DeepFFN(
            cfg["width"], cfg["width"], cfg["depth"], 1, activation=cfg["activation"], init=cfg["init"], seed=seed
        ).double()
        x = torch.randn(cfg["batch"], cfg["width"], generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
        with torch.no_grad():
            Ms = torch.stack(net.transition_derivatives(x))  # (L-1, B, n, n)
            radii.append(torch.linalg.eigvals(Ms).abs().amax(-1).numpy())
    return {"radius": np.array(radii)}


def corollary_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    combos = [
        ("he", "relu"),
        ("glorot", "relu"),
        ("glorot", "linear"),
        ("orthogonal", "linear"),
        ("glorot", "sin"),
        ("glorot", "cos"),
        ("he", "cos"),
        ("glorot", "tanh"),
    ]
    return [
        Run(
            CHAPTER,
            "corollary",
            f"{init}-{act}",
            corollary_run,
            dict(init=init, activation=act, width=s["cor_width"], depth=s["cor_depth"], batch=4, seeds=2, seed=0),
        )
        for init, act in combos
    ]


def corollary_table(col) -> list[dict]:
    return [
        {
            "init": r.config["init"],
            "activation": r.config["activation"],
            "E ρ(M_l)": float(r["radius"].mean()),
            "std": float(r["radius"].std()),
        }
        for r in col
    ]
