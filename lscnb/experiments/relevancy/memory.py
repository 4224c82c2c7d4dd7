"""Fig. 4.2 (centre): activation memory and attended states against the sequence length (figure ``memory``)."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...memprof import saved_tensor_bytes
from ...models.relevancy import Tagger
from ...sweep import Run, RunContext
from .common import CHAPTER, TASK_SIZES, task_batch


def memory_run(cfg: dict, ctx: RunContext) -> dict:
    """Bytes autograd saves for one forward pass (loss on every step) and the number of stored states attended at
    the last step, per model, at length ``T`` (Fig. 4.2 centre; on CUDA also the peak allocated memory).

    With ``probe_batches = (b1, b2)`` the bytes are measured at those two batch sizes and extrapolated to ``batch``:
    exact, since every saved tensor either holds one row per sequence or is a weight kept once, so the bytes are
    affine in the batch size (a run too large for the machine's memory is measured this way; no peak is recorded)."""
    device = ctx.device
    torch.manual_seed(ctx.seed)
    probe = cfg.get("probe_batches")
    batches = {b: _denoise_batch(cfg, b, device) for b in probe or [cfg["batch"]]}
    d_in = next(iter(batches.values()))[0].shape[-1]
    out = {}
    for m in cfg["models"]:
        model = Tagger(m, d_in, cfg["width"], 9, nu=cfg["nu"], rho=cfg["rho"]).to(device)
        if probe:
            (b1, s1), (b2, s2) = ((b, _saved_bytes(model, *batches[b], device)[0]) for b in probe)
            out[f"{m}_saved_bytes"] = s1 + (s2 - s1) * (cfg["batch"] - b1) // (b2 - b1)
        else:
            out[f"{m}_saved_bytes"], peak = _saved_bytes(model, *batches[cfg["batch"]], device)
            if peak is not None:
                out[f"{m}_peak_bytes"] = peak
        out[f"{m}_stored_states"] = max(model.core.memory_trace)
        del model
    return out


def _denoise_batch(cfg: dict, batch: int, device: str):
    # fixed probe batch (seed 0, on purpose): byte and state counts do not depend on the values anyway
    x, y = task_batch("denoise", batch, cfg["T"], L=10, symbols=8, generator=torch.Generator().manual_seed(0))
    return x.to(device), y.to(device)


def _saved_bytes(model, x, y, device: str) -> tuple[int, int | None]:
    """(bytes saved for backward by one forward pass on the denoise batch ``x, y``, peak CUDA bytes of that pass and
    its backward, or None off CUDA)."""
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    saved, loss = saved_tensor_bytes(lambda: torch.nn.functional.cross_entropy(model(x).reshape(-1, 9), y.reshape(-1)))
    if not cuda:
        return saved, None
    loss.backward()
    torch.cuda.synchronize()
    return saved, torch.cuda.max_memory_allocated() - base


def memory_runs(scale: str) -> list[Run]:
    s = TASK_SIZES[scale]
    models = ["RNN", "LSTM", "MemRNN", "RelRNN", "RelLSTM"]
    return [
        Run(
            CHAPTER,
            "memory",
            f"T{T}",
            memory_run,
            dict(
                T=T,
                models=models,
                width=s["memory_width"],
                batch=s["memory_batch"],
                nu=s["nu"],
                rho=s["rho"],
                seed=0,
                **({"probe_batches": [1, 2]} if s.get("memory_probe_T", T + 1) <= T else {}),
            ),
        )
        for T in s["memory_T"]
    ]


def memory_table(col) -> dict:
    """{model: (lengths, saved bytes, stored states)} sorted by length."""
    rs = sorted(col, key=lambda r: r.config["T"])
    T = np.array([r.config["T"] for r in rs])
    return {
        m: (T, np.array([r[f"{m}_saved_bytes"] for r in rs], float), np.array([r[f"{m}_stored_states"] for r in rs]))
        for m in rs[0].config["models"]
    }


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def show_memory(col) -> None:
    tab = memory_table(col)
    fig, ax = plot.figure(2, 1, width=9.5, height=3.6)
    colors = {"RNN": "C0", "LSTM": "C2", "MemRNN": "C3", "RelRNN": "C1", "RelLSTM": "C4"}
    for m, (T, b, k) in tab.items():
        ax[0, 0].plot(T, b / 2**20, "o-", color=colors[m], label=f"{m} (slope {loglog_slope(T, b):.2f})")
        ax[0, 1].plot(T, k, "o-", color=colors[m], label=m)
    ax[0, 0].set(
        xscale="log",
        yscale="log",
        xlabel="sequence length T",
        ylabel="MiB saved for backward",
        title="activation memory of one training step",
    )
    ax[0, 1].set(xlabel="sequence length T", ylabel="states attended at the last step", title="attention memory")
    ax[0, 0].legend(fontsize=7)
    ax[0, 1].legend(fontsize=7)
    plot.show(fig, col, data="denoise sequences, generated; untrained networks, one forward pass")
