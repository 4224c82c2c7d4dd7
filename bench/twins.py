"""Benchmark the chapters' batched twins on the owed figures' own runs: a group of a figure's full-profile runs (its
paper-size configs, cut to a few steps), computed one at a time by the run function (``lscnb.runs.compute``) and
together by its twin (``lscnb.runs.run_group``, ``--executor batched``).

    python bench/twins.py --device cpu --threads 1
    python bench/twins.py --device cuda

A twin registered for some devices only (``twin(..., devices=("cuda",))``) is timed on any device here: this is
where it earns that place or not. runs/s counts runs; the two variants are timed in alternation, ``--repeat`` times
each (the median is kept); the speed-up is the group's runs/s over one at a time. Set-up and evaluation weigh more in
these short runs than in the full ones, the same in both variants. ``--smoke`` shrinks the configs as the GPU smoke
test does (for the tests: only agreement means anything there).
"""

from __future__ import annotations

import argparse
import statistics
import sys

import torch
from common import report, threads, timeit

from lscnb.config import Profile
from lscnb.data.mnist import have_mnist
from lscnb.data.objects import have_objects
from lscnb.experiments import chapter_module
from lscnb.figures import smoke_entries
from lscnb.runs import compute, run_group, twin_groups

CASES = {
    "roarnn/copy": ({"model": "roa", "lag": 400}, {"steps": 3, "eval_every": 3}),
    "roarnn/adding": ({"model": "roa", "length": 200}, {"steps": 5, "eval_every": 5}),
    "roarnn/psmnist": ({"width": 178}, {"epochs": 1, "n_train": 1000, "n_test": 100}),
    "lsc/lr_grid:lstm": ({"task": "sl-mnist", "kind": "lstm"}, {"steps": 3, "limit": 400}),
    "lsc/lr_grid:alif": ({"task": "spike-patterns", "kind": "alif+"}, {"steps": 3, "limit": 400}),
    "corelnet/baselines:ntm": ({"task": "identity_rules4", "model": "ntm"}, {"iters": 40, "test": 96}),
    "corelnet/baselines:lstm": ({"task": "identity_rules4", "model": "lstm"}, {"iters": 40, "test": 96}),
    "corelnet/baselines:rn": ({"task": "identity_rules4", "model": "rn"}, {"iters": 40, "test": 96}),
}
"""A name -> (the config entries that pick the group among the figure's runs, the entries that cut it short)."""
ON_MNIST = ("roarnn/psmnist", "lsc/lr_grid:lstm")
"""The cases that read the real MNIST files (left out, with a line saying so, where they are not found)."""
ON_OBJECTS = ("corelnet/baselines:ntm", "corelnet/baselines:lstm", "corelnet/baselines:rn")
"""The cases that read the ESBN object images (a full-profile CoRelNet run refuses the rendered stand-in)."""


def group(name: str, smoke: bool) -> list:
    """The full-profile runs of case ``name`` that train together (one twin key), cut short (or smoke-shrunk)."""
    figure_path, pick_cut = name.split(":")[0], CASES[name]
    chapter, figure = figure_path.split("/")
    module = chapter_module(chapter)
    pick, cut = pick_cut
    runs = [r for r in module.FIGURES[figure]("full") if all(r.config.get(k) == v for k, v in pick.items())]
    mates = next(iter(twin_groups(runs).values()), None)
    if mates is None:
        raise ValueError(f"{name}: its runs have no batched twin")
    shrink = (lambda c: smoke_entries(module, figure, c)) if smoke else (lambda c: {})
    return [type(r)(r.chapter, r.figure, r.name, r.fn, {**r.config, **shrink(r.config), **cut}) for r in mates]


def bench(name: str, runs: list, device: str, repeat: int) -> list[dict]:
    profile = Profile("full", device)
    variants = {
        "one at a time (run function)": lambda: [compute(r, profile, "bench", None, False) for r in runs],
        "together (batched twin)": lambda: run_group(runs, profile, "bench", False),
    }
    last = {v: [float(res.arrays["loss"][-1]) for res in fn()] for v, fn in variants.items()}  # warm-up
    times = {v: [] for v in variants}
    for _ in range(repeat):
        for v, fn in variants.items():
            times[v].append(timeit(fn, device, repeat=1, warmup=0))
    base = len(runs) / (statistics.median(times["one at a time (run function)"]) / 1e3)
    solo = last["one at a time (run function)"]
    rows = []
    for v, ts in times.items():
        s = statistics.median(ts) / 1e3
        rows.append(
            {
                "figure": name,
                "runs": len(runs),
                "variant": v,
                "s per group": s,
                "runs/s": len(runs) / s,
                "speed-up": len(runs) / s / base,
                "max final-loss rel. diff": max(abs(a - b) / max(abs(a), 1e-12) for a, b in zip(solo, last[v])),
            }
        )
    return rows


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: as set)")
    p.add_argument("--smoke", action="store_true", help="shrink the configs as the GPU smoke test does")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    cases = args.cases
    for needs, have, what in ((ON_MNIST, have_mnist, "MNIST files"), (ON_OBJECTS, have_objects, "ESBN object images")):
        if not args.smoke and not have() and (absent := [c for c in cases if c in needs]):
            print(f"twins: no {what} (data/ or $LSCNB_DATA): left out {', '.join(absent)}", file=sys.stderr)
            cases = [c for c in cases if c not in needs]
    with threads(args.threads):
        rows = [r for name in cases for r in bench(name, group(name, args.smoke), args.device, args.repeat)]
        assert all(r["max final-loss rel. diff"] < 1e-3 for r in rows), rows  # the same runs, up to rounding
        report(
            "the owed figures' batched twins on their own paper-size runs, a few steps each: one at a time vs "
            f"together, {torch.get_num_threads()} torch threads (speed-up: runs/s over one at a time)",
            rows,
            args.device,
            "twins",
            args.out,
        )
    return rows


if __name__ == "__main__":
    main()
