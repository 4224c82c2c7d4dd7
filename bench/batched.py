"""Benchmark batched training (``lscnb.batched.fit_batched``) against training the same runs one at a time
(``lscnb.train.fit``): ``--models`` small tanh RNNs on the adding problem (the gradients chapter's model), each
with its own seed, initial gain and learning rate, Adam, gradient clipping at 1, each on its own batches.

    python bench/batched.py --device cpu --threads 2 1        # 8 RNNs, N = 64, T = 100, B = 32
    python bench/batched.py --device cuda

A run is one model trained for ``--steps`` steps; runs/s counts them. The variants are timed in alternation,
``--repeat`` times each (the median is kept), so a machine whose load changes slows them alike; the speed-up is a
variant's runs/s over the one-at-a-time ``fit`` runs/s at the same thread count. The middle row runs
``fit_batched`` on one model at a time: it shows how much of the gain comes from the stacked forward of
``lscnb.models.stacked`` (batched matrix products, the input drive of all steps in one product) rather than from
training the runs together.
"""

from __future__ import annotations

import argparse
import statistics

import torch
from common import report, threads, timeit

from lscnb.batched import fit_batched
from lscnb.data.synthetic import adding_problem
from lscnb.models.rnn import RNNCell, SequenceModel
from lscnb.train import fit


def setups(count: int, width: int, T: int, batch: int, steps: int, device: str):
    """Per model: (seed, gain, lr, batches of every step); the runs differ in seed, init scale and learning rate."""
    runs = []
    for i in range(count):
        x, y = adding_problem(batch * steps, T, seed=1000 + i, device=device)
        gain, lr = 0.5 + i / max(count - 1, 1), 10 ** (-3 + i / max(count - 1, 1))
        runs.append((i, gain, lr, x.view(steps, batch, T, 2), y.view(steps, batch, 1)))
    return runs


def make(seed: int, width: int, gain: float, device: str) -> SequenceModel:
    torch.manual_seed(seed)
    return SequenceModel([RNNCell(2, width, weight_scale=gain)], 1).to(device)


def mse(m, x, y):
    return torch.nn.functional.mse_loss(m(x), y)


def one_at_a_time(runs, width, steps, device) -> list[float]:
    out = []
    for seed, gain, lr, x, y in runs:
        model = make(seed, width, gain, device)
        h = fit(model, lambda k: (x[k], y[k]), mse, steps=steps, lr=lr, clip=1.0, progress=False)
        out.append(h.loss[-1])
    return out


def together(runs, width, steps, device) -> list[float]:
    models = [make(seed, width, gain, device) for seed, gain, *_ in runs]
    fns = [lambda k, x=x, y=y: (x[k], y[k]) for *_, x, y in runs]
    hists = fit_batched(models, fns, mse, steps=steps, lr=[r[2] for r in runs], clip=1.0, progress=False)
    return [h.loss[-1] for h in hists]


def batched_one_at_a_time(runs, width, steps, device) -> list[float]:
    """fit_batched on one model at a time: how much of the gain is the stacked forward's and not the batching's."""
    return [together([run], width, steps, device)[0] for run in runs]


def bench(args, n_threads: int) -> list[dict]:
    torch.set_num_threads(n_threads)
    runs = setups(args.models, args.width, args.T, args.batch, args.steps, args.device)
    variants = {
        "one at a time (fit)": one_at_a_time,
        "one at a time (fit_batched, 1 model)": batched_one_at_a_time,
        "batched (fit_batched)": together,
    }
    losses = {name: fn(runs, args.width, args.steps, args.device) for name, fn in variants.items()}  # warm-up
    times = {name: [] for name in variants}
    for _ in range(args.repeat):  # alternate, so load changes hit both
        for name, fn in variants.items():
            run = lambda: fn(runs, args.width, args.steps, args.device)
            times[name].append(timeit(run, args.device, repeat=1, warmup=0))
    base = args.models / (statistics.median(times["one at a time (fit)"]) / 1e3)
    ref = losses["one at a time (fit)"]
    rows = []
    for name, ts in times.items():
        ms = statistics.median(ts)
        rate = args.models / (ms / 1e3)
        rows.append(
            {
                "threads": n_threads,
                "variant": name,
                "s per sweep": ms / 1e3,
                "spread (min-max s)": f"{min(ts) / 1e3:.3g}-{max(ts) / 1e3:.3g}",
                "runs/s": rate,
                "speed-up": rate / base,
                "max final-loss diff vs fit": max(abs(a - b) for a, b in zip(ref, losses[name])),
            }
        )
    return rows


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--models", type=int, default=8)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--T", type=int, default=100)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, nargs="+", default=None, help="torch threads (default: as set)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    with threads(None):  # bench sets each count in turn; the caller's comes back after
        rows = [r for t in args.threads or [torch.get_num_threads()] for r in bench(args, t)]
    assert all(r["max final-loss diff vs fit"] < 1e-3 for r in rows), rows  # fp32: the batched runs are the same runs
    report(
        f"training {args.models} tanh RNNs (N = {args.width}, T = {args.T}, B = {args.batch}, {args.steps} Adam steps "
        "each, per-model seed, gain and learning rate), fp32: one at a time vs batched (speed-up: runs/s over the "
        "one-at-a-time runs/s at the same thread count)",
        rows,
        args.device,
        "batched",
        args.out,
    )
    return rows


if __name__ == "__main__":
    main()
