"""Benchmark training steps of a hand-written LSTM cell (the kind the Jacobian tooling needs) against cuDNN's
``nn.LSTM``: the plain Python loop, the loop with ``torch.compile`` on the cell, and ``nn.LSTM``.
One step = forward over T steps, a linear readout of the last state, backward, Adam.

    python bench/cells.py --device cuda                # T = 784, B = 64, N = 128 (sequential MNIST)
    python bench/cells.py --device cpu --T 100 --no-compile
"""
from __future__ import annotations

import argparse

import torch

from common import report, timeit
from lscnb.models import LSTMCell


def loop_model(n: int, compiled: bool):
    cell = LSTMCell(n, n)
    step = torch.compile(cell, dynamic=False) if compiled else cell

    def forward(x):
        h = cell.initial_state(x.shape[0], device=x.device, dtype=x.dtype)
        for t in range(x.shape[1]):
            h = step(h, x[:, t])
        return cell.output(h)

    return cell, forward


def cudnn_model(n: int):
    lstm = torch.nn.LSTM(n, n, batch_first=True)
    return lstm, lambda x: lstm(x)[0][:, -1]


def train_step(forward, readout, x, y, opt):
    loss = torch.nn.functional.cross_entropy(readout(forward(x)), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--T", type=int, default=None)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile (it needs a C++ compiler on CPU)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    cuda = torch.device(args.device).type == "cuda"
    T, n, B = args.T or (784 if cuda else 100), args.width, args.batch
    torch.manual_seed(0)
    x = torch.randn(B, T, n, device=args.device)
    y = torch.randint(10, (B,), device=args.device)
    variants = {"custom cell, Python loop": lambda: loop_model(n, False), "nn.LSTM (cuDNN on GPU)": lambda: cudnn_model(n)}
    if not args.no_compile:
        variants["custom cell, torch.compile"] = lambda: loop_model(n, True)
    rows = []
    for label, make in variants.items():
        module, forward = make()
        module.to(args.device)
        readout = torch.nn.Linear(n, 10).to(args.device)
        opt = torch.optim.Adam([*module.parameters(), *readout.parameters()], lr=1e-3)
        try:
            ms = timeit(lambda: train_step(forward, readout, x, y, opt), args.device, repeat=args.repeat, warmup=2)
        except Exception as err:  # noqa: BLE001 - torch.compile without a compiler, say: report it, go on
            rows.append({"variant": label, "ms per step": float("nan"), "vs nn.LSTM": float("nan"),
                         "note": f"unavailable: {type(err).__name__}"})
            continue
        rows.append({"variant": label, "ms per step": ms, "vs nn.LSTM": float("nan"), "note": ""})
    ref = next(r["ms per step"] for r in rows if r["variant"].startswith("nn.LSTM"))
    for r in rows:
        r["vs nn.LSTM"] = r["ms per step"] / ref
    report(f"LSTM training step, T = {T}, B = {B}, N = {n}, fp32 (ratio: time / nn.LSTM's time)", rows,
           args.device, "cells", args.out)
    return rows


if __name__ == "__main__":
    main()
