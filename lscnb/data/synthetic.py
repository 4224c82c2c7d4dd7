"""Synthetic sequence tasks of the vanishing-gradient literature: copy memory, adding problem, denoise.

Each generator returns fresh ``(x, y)`` tensors from a ``torch.Generator`` so that runs are repeatable, and
has a ``*_baseline`` giving the loss of the best memoryless predictor (the line a model must beat).
"""

from __future__ import annotations

import math

import torch

from .. import checks


def _gen(generator, seed):
    if generator is not None:
        return generator
    g = torch.Generator()
    g.manual_seed(0 if seed is None else seed)
    return g


def copy_memory(
    batch: int,
    blanks: int,
    *,
    n_symbols: int = 8,
    length: int = 10,
    recall_at_marker: bool = False,
    generator: torch.Generator | None = None,
    seed: int | None = None,
    device=None,
):
    """The copy-memory task (Hochreiter & Schmidhuber 1997; Arjovsky et al. 2016).

    Input: ``length`` symbols from ``1..n_symbols``, ``blanks`` blanks (0), a marker (``n_symbols + 1``), then
    ``length`` blanks (``length - 1`` when ``recall_at_marker``). Target: blanks until the recall, then the
    symbols. Returns ``x`` one-hot of shape (B, T, n_symbols + 2) and integer targets ``y`` (B, T) in
    ``0..n_symbols``. With ``blanks = T_c - 1`` this is the thesis's length ``T_c + 20`` variant; with
    ``recall_at_marker=True`` it is the roaRNN paper's ``L + 2S`` variant.
    """
    batch = checks.positive_int(batch, "batch")
    blanks = checks.positive_int(blanks, "blanks", allow_zero=True)
    n_symbols = checks.positive_int(n_symbols, "n_symbols")
    length = checks.positive_int(length, "length")
    g = _gen(generator, seed)
    tail = length - 1 if recall_at_marker else length
    total = length + blanks + 1 + tail
    symbols = torch.randint(1, n_symbols + 1, (batch, length), generator=g)
    tokens = torch.zeros(batch, total, dtype=torch.long)
    tokens[:, :length] = symbols
    tokens[:, length + blanks] = n_symbols + 1
    y = torch.zeros(batch, total, dtype=torch.long)
    y[:, total - length :] = symbols
    x = torch.nn.functional.one_hot(tokens, n_symbols + 2).float()
    return x.to(device), y.to(device)


def copy_memory_baseline(blanks: int, *, n_symbols: int = 8, length: int = 10, recall_at_marker: bool = False) -> float:
    """Cross-entropy per step of the memoryless predictor: ``length * log(n_symbols) / T``."""
    total = 2 * length + blanks + (0 if recall_at_marker else 1)
    return length * math.log(n_symbols) / total


def adding_problem(
    batch: int, length: int, *, generator: torch.Generator | None = None, seed: int | None = None, device=None
):
    """The adding problem (Hochreiter & Schmidhuber 1997): x (B, T, 2) of values U[0,1] and markers, one marker in
    each half of the sequence; y (B, 1) the sum of the two marked values."""
    batch = checks.positive_int(batch, "batch")
    length = checks.positive_int(length, "length")
    if length < 2:
        raise ValueError(f"length must be at least 2, got {length}")
    g = _gen(generator, seed)
    values = torch.rand(batch, length, generator=g)
    half = length // 2
    i1 = torch.randint(0, half, (batch,), generator=g)
    i2 = torch.randint(half, length, (batch,), generator=g)
    marks = torch.zeros(batch, length)
    rows = torch.arange(batch)
    marks[rows, i1] = 1.0
    marks[rows, i2] = 1.0
    x = torch.stack([values, marks], dim=-1)
    y = (values[rows, i1] + values[rows, i2]).unsqueeze(-1)
    return x.to(device), y.to(device)


ADDING_BASELINE = 1.0 / 6.0
"""MSE of always predicting 1, the mean of the target: Var(U1 + U2) = 2/12."""


def denoise(
    batch: int,
    blanks: int,
    *,
    n_symbols: int = 8,
    length: int = 10,
    generator: torch.Generator | None = None,
    seed: int | None = None,
    device=None,
):
    """The denoise task (Jing et al. 2019), as in the relevancy-screening code: ``length`` symbols at random
    distinct positions (in order) among the first ``blanks + length - 1`` steps, a marker, then ``length``
    blanks; the target is the symbols in order after the marker. x is one-hot (B, T, n_symbols + 3)
    with tokens ``0`` (blank), ``1..n_symbols`` and the marker ``n_symbols + 2``; y holds ``0..n_symbols``.
    Length ``T = blanks + 2 * length``; with ``blanks = T_c`` it matches the code's ``T_c + 20``.
    """
    batch = checks.positive_int(batch, "batch")
    blanks = checks.positive_int(blanks, "blanks", allow_zero=True)
    n_symbols = checks.positive_int(n_symbols, "n_symbols")
    length = checks.positive_int(length, "length")
    g = _gen(generator, seed)
    span = blanks + length - 1
    if span < length:
        raise ValueError(f"blanks must be at least 1 for {length} symbols, got {blanks}")
    total = span + 1 + length
    symbols = torch.randint(1, n_symbols + 1, (batch, length), generator=g)
    positions = torch.rand(batch, span, generator=g).argsort(dim=-1)[:, :length].sort(dim=-1).values
    tokens = torch.zeros(batch, total, dtype=torch.long)
    tokens.scatter_(1, positions, symbols)
    tokens[:, span] = n_symbols + 2
    y = torch.zeros(batch, total, dtype=torch.long)
    y[:, total - length :] = symbols
    x = torch.nn.functional.one_hot(tokens, n_symbols + 3).float()
    return x.to(device), y.to(device)
