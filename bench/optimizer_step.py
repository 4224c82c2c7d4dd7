"""Benchmark one optimiser step in its three PyTorch implementations on the parameters of the book's models: the
per-tensor loop (``foreach=False``, PyTorch's default on a CPU), the multi-tensor kernels (``foreach=True``, what
:func:`lscnb.train.make_optimizer` asks for) and the fused kernel (``fused=True``, Adam and AdamW only).

    python bench/optimizer_step.py --device cpu --threads 1

Parameter sets: ``ffn``, the LSC chapter's 30-layer feed-forward network (width 64: 60 small tensors); ``esbn``,
the CoRelNet chapter's ESBN (an LSTM cell of hidden 512 and its read-outs: 1.7 M parameters in 14 tensors). Each
variant steps ``--steps`` times on the same gradients from the same start; the table gives the median time of a step,
its speed against the per-tensor loop, and the largest difference of the parameters from the loop's after those
steps (0: the same numbers bit for bit).
"""

from __future__ import annotations

import argparse

import torch
from common import report, threads, timeit

from lscnb.experiments.corelnet.common import make_model
from lscnb.models.ffn import DeepFFN

OPTIMIZERS = {
    "Adam": (torch.optim.Adam, {}),
    "AdamW": (torch.optim.AdamW, {"weight_decay": 0.01}),
    "RMSprop": (torch.optim.RMSprop, {"alpha": 0.9}),
    "SGD + momentum": (torch.optim.SGD, {"momentum": 0.9}),
}
VARIANTS = {"per-tensor loop": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}


def parameter_sets(width: int) -> dict:
    """The shapes of each model's parameters (``width`` scales the FFN; ESBN keeps the authors' sizes)."""
    ffn = DeepFFN(width, width, 30, 10)
    return {
        "ffn": [p.shape for p in ffn.parameters()],
        "esbn": [p.shape for p in make_model("esbn", "same_different").parameters()],
    }


def trained(shapes, cls, kwargs, variant: dict, steps: int, device: str):
    """Parameters of ``shapes`` after ``steps`` steps of ``cls`` on fixed pseudo-random gradients, and the step."""
    g = torch.Generator().manual_seed(0)
    params = [torch.randn(s, generator=g).to(device).requires_grad_() for s in shapes]
    grads = [[torch.randn(s, generator=g).to(device) for s in shapes] for _ in range(steps)]
    opt = cls(params, lr=1e-3, **kwargs, **variant)

    def step(k=0):
        for p, gr in zip(params, grads[k % steps]):
            p.grad = gr
        opt.step()

    for k in range(steps):
        step(k)
    return [p.detach() for p in params], step


def bench(args) -> list[dict]:
    rows = []
    for set_name, shapes in parameter_sets(args.width).items():
        for opt_name, (cls, kwargs) in OPTIMIZERS.items():
            ref, base_ms = None, None
            for name, variant in VARIANTS.items():
                if "fused" in variant and opt_name not in ("Adam", "AdamW"):
                    continue
                params, step = trained(shapes, cls, kwargs, variant, args.steps, args.device)
                ms = timeit(step, args.device, repeat=args.repeat)
                ref = params if ref is None else ref
                base_ms = ms if base_ms is None else base_ms
                rows.append(
                    {
                        "parameters": f"{set_name} ({sum(s.numel() for s in shapes):,} in {len(shapes)} tensors)",
                        "optimiser": opt_name,
                        "variant": name,
                        "ms per step": ms,
                        "speed-up": base_ms / ms,
                        "max diff vs loop": max(float((a - b).abs().max()) for a, b in zip(ref, params)),
                    }
                )
    return rows


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: as set)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    if args.steps < 1 or args.repeat < 1:
        p.error("--steps and --repeat must be 1 or more")
    with threads(args.threads):
        rows = bench(args)
        report(  # inside: its record names the threads the steps ran with
            f"one optimiser step, fp32, on the parameters of the book's models: per-tensor loop vs foreach vs fused "
            f"(speed-up over the loop; parameters compared after {args.steps} steps on the same gradients)",
            rows,
            args.device,
            "optimizer_step",
            args.out,
        )
    return rows


if __name__ == "__main__":
    main()
