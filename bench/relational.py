"""Benchmark the CoRelNet chapter's batched runs against the same runs one at a time: ``--runs`` runs of one model on
one task that differ in seed and held-out split m (a group of figure ``mcurve``), each from its set-up (object
encoder, shapes, model) through ``--steps`` Adam steps of batch 96 to its test accuracy on ``--test`` samples, by the
run function (``task_run``, one at a time) and by its batched twin (``task_group``, ``--executor batched``).

    python bench/relational.py --device cpu --threads 2
    python bench/relational.py --device cuda --models corelnet esbn lstm transformer

runs/s counts runs; the two variants are timed in alternation, ``--repeat`` times each (the median is kept); the
speed-up is the twin's runs/s over one at a time. The full runs are 5000 steps: the set-up and test are a larger
share of these short ones, and the same in both variants.
"""

from __future__ import annotations

import argparse
import statistics

import torch
from common import report, threads, timeit

from lscnb.config import Profile
from lscnb.experiments.corelnet import common as corelnet
from lscnb.runs import RunContext


def configs(model: str, task: str, runs: int, steps: int, test: int) -> list[dict]:
    splits = [0, 50, 85, 95]  # mcurve's held-out splits for every task (same/different adds 98)
    return [dict(task=task, model=model, m=splits[i % 4], seed=i // 4, iters=steps, test=test) for i in range(runs)]


def one_at_a_time(cfgs, device) -> list[float]:
    return [corelnet.task_run(dict(c), _ctx(c, device))["ood"] for c in cfgs]


def together(cfgs, device) -> list[float]:
    return [o["ood"] for o in corelnet.task_group([dict(c) for c in cfgs], [_ctx(c, device) for c in cfgs])]


def _ctx(cfg: dict, device: str) -> RunContext:
    return RunContext(Profile("quick", device), device, cfg["seed"], None, False)


def bench(args, model: str) -> list[dict]:
    cfgs = configs(model, args.task, args.runs, args.steps, args.test)
    variants = {"one at a time (task_run)": one_at_a_time, "batched (task_group)": together}
    acc = {name: fn(cfgs, args.device) for name, fn in variants.items()}  # warm-up
    times = {name: [] for name in variants}
    for _ in range(args.repeat):
        for name, fn in variants.items():
            times[name].append(timeit(lambda: fn(cfgs, args.device), args.device, repeat=1, warmup=0))
    base = args.runs / (statistics.median(times["one at a time (task_run)"]) / 1e3)
    rows = []
    for name, ts in times.items():
        ms = statistics.median(ts)
        rows.append(
            {
                "model": model,
                "variant": name,
                "s per group": ms / 1e3,
                "spread (min-max s)": f"{min(ts) / 1e3:.3g}-{max(ts) / 1e3:.3g}",
                "runs/s": args.runs / (ms / 1e3),
                "speed-up": args.runs / (ms / 1e3) / base,
                "max accuracy diff": max(abs(a - b) for a, b in zip(acc["one at a time (task_run)"], acc[name])),
            }
        )
    return rows


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--models", nargs="+", default=["corelnet", "esbn"], choices=sorted(corelnet.MODELS))
    p.add_argument("--task", default="rmts")
    p.add_argument("--runs", type=int, default=12, help="runs in the group (figure mcurve's: 12)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--test", type=int, default=960)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: as set)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    with threads(args.threads):
        rows = [r for m in args.models for r in bench(args, m)]
        assert all(r["max accuracy diff"] <= 3 / args.test for r in rows), rows  # the same runs, up to rounding
        report(  # inside: its record names the threads the steps ran with
            f"the CoRelNet chapter's runs, {args.runs} of one model on {args.task} (seeds and held-out splits "
            f"differ), {args.steps} Adam steps of batch 96 each and a test on {args.test} samples, "
            f"{torch.get_num_threads()} torch threads: one at a time vs batched (speed-up: runs/s over one at a time)",
            rows,
            args.device,
            "relational",
            args.out,
        )
    return rows


if __name__ == "__main__":
    main()
