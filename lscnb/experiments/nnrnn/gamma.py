"""Table A.6 and Fig. A.3: the nnRNN on PTB with gamma clamped, and how its gradient propagates."""

from __future__ import annotations

import numpy as np

from ... import plot
from ...sweep import Run
from .common import CHAPTER
from .ptb import PTB_SIZES, _mean_cell, _ptb_config, _ptb_data_note, _scaled_rows, ptb_run

GAMMA_FIXED = (1.0, 0.958)
TABLE_A6 = {  # thesis Table A.6: test BPC (mean, SEM, failed runs out of 5), N = 1024, about 1.32M parameters
    ("nnRNN", 150): (1.47, 0.003, 0),
    ("nnRNN", 300): (1.49, 0.002, 0),
    ("γ = 1", 150): (1.46, 0.005, 1),
    ("γ = 1", 300): (1.49, 0.022, 2),
    ("γ = 0.958", 150): (1.47, 0.005, 0),
    ("γ = 0.958", 300): (1.49, 0.008, 0),
}
GAMMA_SEEDS = {"quick": [0], "full": [0, 1, 2, 3, 4]}
GAMMA_SUBSET = "the regularised nnRNN row has the seeds of Table 3.1 (1); the clamped rows have the thesis's 5"


def gamma_runs(scale: str) -> list[Run]:
    """nnRNN on PTB with every gamma_i clamped at 1 or at 0.958 (thesis App. A.6), both truncation lengths; the
    regularised nnRNN of Table 3.1 is the third row. Each run also records ||dL/dh_t|| on a validation window."""
    s = PTB_SIZES[scale]
    runs = []
    for length in (150, 300):
        row = next(r for r in _scaled_rows(scale, length) if r["model"] == "nnRNN")
        for g in GAMMA_FIXED:
            for seed in GAMMA_SEEDS[scale]:
                runs.append(
                    Run(
                        CHAPTER,
                        "gamma",
                        f"nnRNN-gamma{g}-N{row['hid']}-T{length}-s{seed}",
                        ptb_run,
                        _ptb_config(
                            s, dict(row, gamma_fixed=g), length, seed, budgets=row["budgets"], gamma_fixed=g, probe=True
                        ),
                    )
                )
    return runs


def _gamma_variants(gamma_col, ptb_col, length: int) -> dict:
    """Label -> runs of the three nnRNN variants at ``length``."""
    return {
        "nnRNN": ptb_col.where(model="nnRNN", length=length, width=gamma_col[0].config["width"]),
        **{f"γ = {g:g}": gamma_col.where(gamma_fixed=g, length=length) for g in GAMMA_FIXED},
    }


def table_a6(gamma_col, ptb_col) -> list[dict]:
    """Table A.6: test BPC of the nnRNN with regularised and clamped gamma, failed runs counted, beside the thesis."""
    rows = []
    for label in ("nnRNN", "γ = 1", "γ = 0.958"):
        row = {"model": label if label == "nnRNN" else f"nnRNN, {label}"}
        for length in (150, 300):
            runs = _gamma_variants(gamma_col, ptb_col, length)[label]
            failed = sum(bool(r["diverged"]) for r in runs)
            paper = TABLE_A6[(label, length)]
            ok = [r["test_bpc"] for r in runs if not r["diverged"]]
            row[f"ours, T={length}"] = float(np.mean(ok)) if ok else ("diverged" if runs else "not run")
            row[f"failed, T={length}"] = f"{failed} of {len(runs)}"
            row[f"thesis, T={length}"] = f"{paper[0]:g} ± {paper[1]:g}" + (
                f" ({paper[2]} of 5 failed)" if paper[2] else ""
            )
        rows.append(row)
    return rows


def show_gamma(gamma_col, ptb_col) -> None:
    fig, ax = plot.figure(2, 1, width=11, height=3.6)
    styles = {150: "-", 300: "--"}
    for length in (150, 300):
        for i, (label, runs) in enumerate(_gamma_variants(gamma_col, ptb_col, length).items()):
            r = next((r for r in runs if "backprop_norm" in r), None)
            if r is None:
                continue
            g = r["backprop_norm"][::-1]  # distance back from the end of the window
            ax[0, 0].plot(np.arange(len(g)), g, styles[length], color=f"C{i}", label=f"{label}, T = {length}")
            k = max(1, len(r["grad_norm"]) // 25)
            smooth = np.convolve(r["grad_norm"], np.ones(k) / k, mode="valid")
            ax[0, 1].plot(
                np.arange(len(smooth)) + k, smooth, styles[length], color=f"C{i}", label=f"{label}, T = {length}"
            )
    ax[0, 0].set(
        yscale="log",
        xlabel="steps back from the window's end",
        ylabel="‖∂L/∂h_t‖",
        title="Fig. A.3 left: gradient while backpropagating",
    )
    ax[0, 1].set(
        yscale="log",
        xlabel="training window",
        ylabel="‖∇L‖ (before the step)",
        title="Fig. A.3 right: gradient norm during training",
    )
    for a in ax[0]:
        a.legend(fontsize=6)
    plot.show(fig, gamma_col, ptb_col, data=_ptb_data_note(gamma_col))


def gap_gamma(col) -> str:
    def cell(g, n):
        c = _mean_cell(col.where(gamma_fixed=g, length=n), "test_bpc")
        return f"{c:.3f}" if isinstance(c, float) else c

    rows = [f"γ = {g:g}: {cell(g, 150)}, {cell(g, 300)}" for g in GAMMA_FIXED]
    return (
        "test BPC (T = 150, 300) "
        + "; ".join(rows)
        + "; thesis γ = 1: 1.46, 1.49 (1 and 2 of 5 failed), γ = 0.958: 1.47, 1.49"
    )
