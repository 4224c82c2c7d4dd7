"""Shared pieces of the benchmarks: a median timer (torch.utils.benchmark), and a record of where a run happened."""

from __future__ import annotations

import contextlib
import json
import statistics
import time
from pathlib import Path

import torch
from torch.utils import benchmark

from lscnb import config, results

HERE = Path(__file__).resolve().parent


def timeit(fn, device: str, *, repeat: int = 5, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` in milliseconds over ``repeat`` timed calls after ``warmup`` untimed ones, each
    timed by :class:`torch.utils.benchmark.Timer` (which synchronises CUDA around it and fixes the thread count)."""
    for _ in range(warmup):
        fn()
    timer = benchmark.Timer(stmt="fn()", globals={"fn": fn}, num_threads=torch.get_num_threads())
    return 1e3 * statistics.median(timer.timeit(1).median for _ in range(repeat))


@contextlib.contextmanager
def threads(n: int | None):
    """Torch's thread count set to ``n`` (None: as it is) inside the block, and the caller's restored after it: the
    benchmarks run one after another in one process (run_all.py)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n or before)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def machine(device: str) -> dict:
    """Device, versions and commit of this run (the same facts a result file records)."""
    return {
        "device": device,
        "device_name": config.device_name(device),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "git_commit": results.git_commit(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


def report(name: str, rows: list[dict], device: str, stem: str, out: str | None = None) -> str:
    """Print ``rows`` as a Markdown table under the machine's provenance line; save rows and provenance as JSON
    to ``out`` (default ``bench/results/<stem>-<device type>.json``)."""
    meta = machine(device)
    out = out or str(HERE / "results" / f"{stem}-{torch.device(device).type}.json")
    cols = list(rows[0]) if rows else []
    lines = [
        f"### {name}",
        "",
        f"{meta['device_name']} (`{meta['device']}`, {meta['threads']} threads), "
        f"torch {meta['torch']}, commit {str(meta['git_commit'])[:10]}, {meta['date']}",
        "",
    ]
    if cols:
        lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(_fmt(r[c]) for c in cols) + " |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps({"name": name, "meta": meta, "rows": rows}, indent=1))
    return text


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.0f}"
    return str(v)
