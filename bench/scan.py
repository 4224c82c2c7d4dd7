"""Benchmark the linear recurrence scan h_t = a_t h_{t-1} + b_t: every backend of ``lscnb.kernels`` that runs on the
device (the Triton scan on CUDA, or in Triton's interpreter with TRITON_INTERPRET=1) against the sequential loop,
forward and forward+backward, with the achieved memory bandwidth.

    python bench/scan.py --device cuda            # the issue's shapes: batch x channels 8 x 1536, T to 65,536
    python bench/scan.py --device cpu --T 256 1024 --channels 256

The sequential loop is timed once (not ``--repeat`` times) above T = 4,096: on a GPU it launches a few kernels a step,
so forward+backward at T = 65,536 takes seconds a call, and its spread is small beside that.

Bandwidth counts the bytes a fused kernel must move: read a and b, write h (3 x B x T x C x element size).
"""

from __future__ import annotations

import argparse

import torch
from common import report, timeit

from lscnb.kernels import BACKENDS, scan_sequential, usable_backends


def bench(T: int, batch: int, channels: int, device: str, dtype, repeat: int, backward: bool) -> list[dict]:
    gen = torch.Generator(device=device).manual_seed(T)
    a = torch.rand(batch, T, channels, generator=gen, device=device, dtype=dtype) * 0.5 + 0.5
    b = torch.randn(batch, T, channels, generator=gen, device=device, dtype=dtype)
    ref = scan_sequential(a, b)
    rows, base = [], None
    for name in usable_backends(device):
        fn = BACKENDS[name]
        reps = 1 if name == "sequential" and T > 4096 else repeat  # a long loop is seconds a call and steady
        out = fn(a, b)
        err = float((out - ref).abs().max() / ref.abs().max())
        if backward:
            aa, bb = a.clone().requires_grad_(), b.clone().requires_grad_()
            ms = timeit(lambda: fn(aa, bb).sum().backward(), device, repeat=reps)
        else:
            with torch.no_grad():
                ms = timeit(lambda: fn(a, b), device, repeat=reps)
        base = ms if name == "sequential" else base
        nbytes = 3 * a.numel() * a.element_size()
        rows.append(
            {
                "T": T,
                "backend": name,
                "pass": "fwd+bwd" if backward else "fwd",
                "ms": ms,
                "speed-up vs loop": base / ms,
                "GB/s": nbytes / ms / 1e6,
                "max rel. error": err,
            }
        )
    return rows


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--T", type=int, nargs="+", default=None)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--channels", type=int, default=None)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--backward", action="store_true", help="time forward+backward instead of forward")
    p.add_argument("--out", default=None, help="JSON file for the rows (default bench/results/scan-DEVICE.json)")
    args = p.parse_args(argv)
    cuda = torch.device(args.device).type == "cuda"
    Ts = args.T or ([1024, 4096, 16384, 65536] if cuda else [256, 1024, 4096])
    channels = args.channels or (1536 if cuda else 256)
    rows = []
    for T in Ts:
        rows += bench(T, args.batch, channels, args.device, torch.float32, args.repeat, args.backward)
        assert all(r["max rel. error"] < 1e-4 for r in rows), rows  # fp32: backends agree with the loop
    kind = "fwd+bwd" if args.backward else "fwd"
    report(
        f"scan ({kind}), batch x channels = {args.batch} x {channels}, fp32",
        rows,
        args.device,
        f"scan-{kind.replace('+', '-')}",  # a plain file name (a GPU machine's result files refuse "+")
        args.out,
    )
    return rows


if __name__ == "__main__":
    main()
