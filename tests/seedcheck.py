"""Does the reader's seed reach a run? Shared by the chapters' tests.

A figure whose runs train or sample must give the same outputs twice at one seed, and different outputs at
another: otherwise ``SEED`` (or ``--seed``) changes nothing, or the run is not repeatable.
"""

from __future__ import annotations

import json

import numpy as np

from lscnb.config import Profile
from lscnb.sweep import Run, compute

QUICK = Profile("quick", "cpu", 0)


def outputs(run: Run, offset: int) -> dict:
    """Every output of ``run`` computed at the reader's seed ``offset``: arrays as they are, metrics as JSON text."""
    result = compute(run.reseeded(offset), QUICK, "quick", progress=False)
    found = {k: json.dumps(v, sort_keys=True, default=str) for k, v in result.metrics.items()}
    return {**found, **result.arrays}


def _equal(a, b) -> bool:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        numeric = a.dtype.kind in "biufc" and b.dtype.kind in "biufc"
        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=numeric))
    return type(a) is type(b) and a == b


def differing(a: dict, b: dict) -> list[str]:
    """The output names whose values differ between two runs' outputs."""
    return sorted(k for k in a.keys() | b.keys() if k not in a or k not in b or not _equal(a[k], b[k]))


def assert_seed_reaches(run: Run, ignore=()) -> None:
    """Same seed, same outputs; seed offset 1, at least one different output. ``ignore`` names outputs that measure
    the machine rather than the run (wall time, memory)."""
    first, again, other = ({k: v for k, v in outputs(run, offset).items() if k not in ignore} for offset in (0, 0, 1))
    assert not differing(first, again), f"{run.key}: not repeatable at one seed: {differing(first, again)}"
    assert differing(first, other), f"{run.key}: seed offset 1 gives exactly seed 0's outputs"
