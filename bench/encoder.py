"""Benchmark the learned conv encoder of the CoRelNet chapter (``Encoded(..., learn=True)``, Figs. 5.4 right, 5.5 right,
C.8, C.11): an Adam step of CoRelNet behind it at batch 96, encoding each distinct object of the batch once
(``Encoded.codes``) against encoding every image of the batch, on a task at held-out splits m (the fewer training
objects, the fewer distinct ones in a batch).

    python bench/encoder.py --device cpu --threads 1
    python bench/encoder.py --device cuda

The two variants are timed in alternation; the speed-up is the baseline's ms a step over the variant's. Both start from
the same weights and batches; the codes of the first batch and the losses of every step must agree (they are the same
computation, summed in another order).
"""

from __future__ import annotations

import argparse
import copy

import torch
from common import report, threads, timeit

from lscnb.data.objects import load_objects
from lscnb.data.relational import TASKS, split
from lscnb.experiments.corelnet.common import BATCH, EXTREME_M, make_model
from lscnb.models.relational import Encoded, render


def every_image(net: Encoded, seq: torch.Tensor) -> torch.Tensor:
    """The baseline: the (B, T, 128) codes of every image of ``seq``, duplicates encoded again."""
    return net.encoder(render(net.images, seq.flatten(), net.palette)).view(*seq.shape, -1)


def steps(net: Encoded, codes, batches, lr: float = 5e-4) -> list[float]:
    """Adam steps of ``net`` on ``batches`` with its codes from ``codes(net, seq)``; the losses."""
    opt = torch.optim.Adam(net.parameters(), lr)
    out = []
    for seq, y in batches:
        loss = torch.nn.functional.cross_entropy(net.model(codes(net, seq)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(float(loss.detach()))
    return out


def bench(args, task: str, m: int, images: torch.Tensor) -> list[dict]:
    torch.manual_seed(0)
    net = Encoded(make_model("corelnet", task), images, learn=True).to(args.device)
    train, _ = split(m, seed=0)
    g = torch.Generator().manual_seed(0)
    batches = [tuple(t.to(args.device) for t in TASKS[task][0](train, BATCH, g)) for _ in range(args.steps)]
    variants = {"every image": every_image, "distinct objects (Encoded.codes)": lambda n, s: n.codes(s)}
    with torch.no_grad():
        torch.testing.assert_close(net.codes(batches[0][0]), every_image(net, batches[0][0]), rtol=1e-5, atol=1e-6)
    losses = {name: steps(copy.deepcopy(net), fn, batches) for name, fn in variants.items()}
    ms = {name: [] for name in variants}
    for _ in range(args.repeat):
        for name, fn in variants.items():
            ms[name].append(timeit(lambda: steps(copy.deepcopy(net), fn, batches), args.device, repeat=1, warmup=0))
    base = min(ms["every image"]) / args.steps
    rows = []
    for name in variants:
        step = min(ms[name]) / args.steps
        rows.append(
            {
                "task": task,
                "m": m,
                "images a batch": int(batches[0][0].numel()),
                "distinct": int(batches[0][0].unique().numel()),
                "variant": name,
                "ms a step": step,
                "speed-up": base / step,
                "max loss diff": max(abs(a - b) for a, b in zip(losses["every image"], losses[name])),
            }
        )
    return rows


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--tasks", nargs="+", default=["same_different", "identity_rules"], choices=sorted(TASKS))
    p.add_argument("--splits", nargs="+", default=["0", "85", "extreme"], help="held-out counts m, or 'extreme'")
    p.add_argument("--steps", type=int, default=5, help="Adam steps a timing")
    p.add_argument("--repeat", type=int, default=3, help="timings of each variant (the fastest is kept)")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: as set)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    images = load_objects().images
    with threads(args.threads):
        rows = [
            r
            for task in args.tasks
            for m in dict.fromkeys(EXTREME_M[task] if s == "extreme" else int(s) for s in args.splits)
            for r in bench(args, task, m, images)
        ]
        assert all(r["max loss diff"] <= 1e-4 for r in rows), rows  # the same steps, summed in another order
        report(
            f"the learned conv encoder of the CoRelNet chapter: an Adam step of CoRelNet behind it at batch {BATCH}, "
            f"{torch.get_num_threads()} torch threads: each distinct object encoded once vs every image "
            "(speed-up: ms a step of every image over the variant's; fastest of the timings)",
            rows,
            args.device,
            "encoder",
            args.out,
        )
    return rows


if __name__ == "__main__":
    main()
