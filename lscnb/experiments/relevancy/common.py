"""The chapter's shared pieces: its name, the copy and denoise tasks' sizes and batches (figures ``copy``,
``denoise``, ``buffer``, ``memory``), the thesis's model names and the running mean of a loss history."""

from __future__ import annotations

import numpy as np

from ... import checks
from ...data import copy_memory, denoise

CHAPTER = "relevancy"
PAPER_NAME = {"orthRNN": "orth-RNN"}
"""Our model names that the thesis spells differently."""

TASK_SIZES = {
    "quick": dict(
        T=10,
        L=3,
        symbols=4,
        width=32,
        batch=32,
        steps=1000,
        lr=5e-3,
        nu=5,
        rho=5,
        eval_batch=100,
        copy_models=["RelRNN", "LSTM"],
        denoise_models=["RelRNN", "LSTM", "RNN"],
        copy_T=[10],
        denoise_T=[10],
        copy_longest={},
        transfer=[1, 2, 4, 20],
        grad_T=100,
        grad_batch=32,
        seeds=[0],
        memory_T=[25, 50, 100, 200],
        memory_width=32,
        memory_batch=4,
    ),
    "full": dict(
        T=100,
        L=10,
        symbols=8,
        width=128,
        batch=32,
        steps=5000,
        lr=1e-3,
        nu=10,
        rho=10,
        eval_batch=1000,
        copy_models=["RNN", "orthRNN", "LSTM", "MemRNN", "RelRNN", "RelLSTM"],
        denoise_models=["RNN", "orthRNN", "LSTM", "MemRNN", "RelRNN", "RelLSTM"],
        copy_T=[100, 200, 500],
        denoise_T=[100, 300, 500],
        copy_longest={"MemRNN": 100, "RelLSTM": 200},  # the longest T a model trains at (COPY_SUBSET); others: all
        denoise_longest={"MemRNN": 100, "RelLSTM": 300},  # the same cut on denoise (DENOISE_SUBSET)
        transfer=[1, 2, 4, 20, 50],
        grad_T=1000,
        grad_batch=32,
        seeds=[0],
        memory_T=[200, 400, 800, 1200, 1600, 2000],
        memory_width=128,
        memory_batch=10,
        memory_probe_T=1600,  # from here on measured at batches 1 and 2 and extrapolated (exact; 23 GB were too few)
    ),
}
FULL_SUBSET = (
    "one seed; 5,000 Adam updates of batch 32 at lr 1e-3 (RMSprop for orthRNN) instead of the code's "
    "50,000-100,000; copy trained at T = 100, 200, 500 and denoise at T = 100, 300, 500 only; "
    "MemRNN not tested past T = 2,000 (the thesis's ran out of memory at 5,000); no expRNN, h-detach, SAB, GORU"
)
COPY_SUBSET = (
    FULL_SUBSET + "; copy: MemRNN trained at T = 100 only and RelLSTM at T = 100, 200 (at one CPU core, MemRNN's "
    "full attention takes ~1.6 h at T = 100 and grows with T^2, ~6 h at T = 200; RelLSTM at T = 500 ~3.3 h)"
)
DENOISE_SUBSET = (
    FULL_SUBSET + "; denoise, as copy: MemRNN trained at T = 100 only and RelLSTM at T = 100, 300 (on one CPU core "
    "MemRNN's full attention grows with T^2 from ~0.6 h at T = 100, and RelLSTM took 1.1 h at T = 300, so ~1.9 h "
    "at T = 500)"
)


def task_batch(task: str, batch: int, T: int, *, L: int, symbols: int, generator) -> tuple:
    """A copy (length T + 2L) or denoise (T blanks, length T + 2L) batch in the thesis's convention."""
    if task == "copy":
        return copy_memory(batch, T - 1, n_symbols=symbols, length=L, generator=generator)
    if task == "denoise":
        return denoise(batch, T, n_symbols=symbols, length=L, generator=generator)
    raise ValueError(f"task must be 'copy' or 'denoise', got {task!r}")


def smoothed(values, window: int = 50) -> tuple:
    """(update index, running mean over ``window`` updates) of a loss history."""
    v = np.asarray(values, dtype=float)
    window = max(1, min(checks.positive_int(window, "window"), len(v)))
    return np.arange(window - 1, len(v)), np.convolve(v, np.ones(window) / window, "valid")
