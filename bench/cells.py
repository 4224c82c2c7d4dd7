"""Benchmark training steps of the hand-written cells (the kind the Jacobian tooling needs): the plain Python loop,
the loop with each step compiled (``lscnb.kernels.compiled_step``), and, for LSTM and GRU, cuDNN's ``nn.LSTM`` /
``nn.GRU`` as the baseline (ALIF has no library twin: its baseline is its own Python loop).
One step = forward over T steps, a linear readout of the last state, backward, Adam.

    python bench/cells.py --device cuda                # T = 784, B = 64, N = 128 (sequential MNIST)
    python bench/cells.py --device cpu --T 100 --no-compile
"""

from __future__ import annotations

import argparse

import torch
from common import report, timeit

from lscnb.kernels import compiled_step
from lscnb.models import GRUCell, LSTMCell
from lscnb.models.rnn import run_cell
from lscnb.models.spiking import ALIFCell

CELLS = {"LSTM": (LSTMCell, torch.nn.LSTM), "GRU": (GRUCell, torch.nn.GRU), "ALIF": (ALIFCell, None)}


def loop_model(name: str, n: int, compiled: bool, mode: str | None = None):
    cell = CELLS[name][0](n, n)
    step = compiled_step(cell, mode=mode) if compiled else None
    return cell, lambda x: cell.output(run_cell(cell, x, step=step)[:, -1])


def library_model(name: str, n: int):
    rnn = CELLS[name][1](n, n, batch_first=True)
    return rnn, lambda x: rnn(x)[0][:, -1]


def train_step(forward, readout, x, y, opt):
    loss = torch.nn.functional.cross_entropy(readout(forward(x)), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


def variants(name: str, n: int, compile_: bool, cuda: bool) -> dict:
    out = {}
    if CELLS[name][1] is not None:
        out[f"nn.{name} (cuDNN on GPU)"] = lambda: library_model(name, n)
    out["custom cell, Python loop"] = lambda: loop_model(name, n, False)
    if compile_:
        out["custom cell, compiled step"] = lambda: loop_model(name, n, True)
        if cuda:
            out["custom cell, compiled step + CUDA graph"] = lambda: loop_model(name, n, True, "reduce-overhead")
    return out


def bench(name: str, x, y, n: int, device: str, repeat: int, compile_: bool) -> list[dict]:
    rows = []
    for label, make in variants(name, n, compile_, torch.device(device).type == "cuda").items():
        module, forward = make()
        module.to(device)
        readout = torch.nn.Linear(n, 10).to(device)
        opt = torch.optim.Adam([*module.parameters(), *readout.parameters()], lr=1e-3)
        row = {"cell": name, "variant": label, "ms per step": float("nan"), "vs baseline": float("nan"), "note": ""}
        try:
            row["ms per step"] = timeit(
                lambda: train_step(forward, readout, x, y, opt), device, repeat=repeat, warmup=2
            )
        except Exception as err:  # noqa: BLE001 - torch.compile without a compiler, say: report it, go on
            row["note"] = f"unavailable: {type(err).__name__}"
        rows.append(row)
    base = rows[0]
    for r in rows:
        r["vs baseline"] = r["ms per step"] / base["ms per step"]
    base["note"] = base["note"] or "baseline"
    return rows


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--T", type=int, default=None)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--cells", nargs="+", default=list(CELLS), choices=list(CELLS))
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile (it needs a C++ compiler on CPU)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    cuda = torch.device(args.device).type == "cuda"
    T, n, B = args.T or (784 if cuda else 100), args.width, args.batch
    torch.manual_seed(0)
    x = torch.randn(B, T, n, device=args.device)
    y = torch.randint(10, (B,), device=args.device)
    rows = [r for name in args.cells for r in bench(name, x, y, n, args.device, args.repeat, not args.no_compile)]
    report(
        f"training step of a recurrent layer, T = {T}, B = {B}, N = {n}, fp32 (ratio: time / the baseline's "
        "time, the first row of each cell)",
        rows,
        args.device,
        "cells",
        args.out,
    )
    return rows


if __name__ == "__main__":
    main()
