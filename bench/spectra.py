"""Benchmark the spectral radius of every step's transition Jacobian along a trajectory, three ways:
matrix-free power iteration on JVPs (``lscnb.jacobian.cell_spectral_radius``), dense ``vmap(jacrev)`` + ``eigvals``
(``lscnb.jacobian.time_jacobians``), and the naive loop of ``torch.autograd.functional.jacobian`` per step +
``eigvals``. Timings include computing the radii; the three must agree.

    python bench/spectra.py --device cuda                  # 128-wide LSTM, GRU and ALIF cells over T = 1,000
    python bench/spectra.py --device cpu --T 100
"""

from __future__ import annotations

import argparse

import torch
from common import report, timeit

from lscnb.jacobian import cell_spectral_radius, time_jacobians
from lscnb.models import GRUCell, LSTMCell
from lscnb.models.rnn import run_cell
from lscnb.models.spiking import ALIFCell

CELLS = {"LSTM": LSTMCell, "GRU": GRUCell, "ALIF": ALIFCell}


def naive_radii(cell, x, states) -> torch.Tensor:
    """One ``autograd.functional.jacobian`` call per step, then ``eigvals`` (on the CPU: see the issue)."""
    prev = torch.cat([cell.initial_state(1, device=x.device, dtype=x.dtype), states[0, :-1]], dim=0)
    radii = []
    for t in range(x.shape[1]):
        J = torch.autograd.functional.jacobian(lambda s: cell(s, x[0, t]), prev[t])
        radii.append(torch.linalg.eigvals(J.cpu()).abs().max())
    return torch.stack(radii)


def bench(name: str, n: int, T: int, device: str, iters: int, repeat: int) -> list[dict]:
    torch.manual_seed(0)
    cell = CELLS[name](n, n).to(device=device, dtype=torch.float64)
    x = torch.randn(1, T, n, device=device, dtype=torch.float64)
    with torch.no_grad():
        states = run_cell(cell, x)
    prev = torch.cat([cell.initial_state(1, device=device, dtype=x.dtype).unsqueeze(1), states[:, :-1]], dim=1)
    methods = {
        "power iteration (JVP)": lambda: cell_spectral_radius(cell, prev, x, iters=iters)[0],
        "vmap(jacrev) + eigvals": lambda: torch.linalg.eigvals(time_jacobians(cell, x)[0][0].cpu()).abs().amax(-1),
        "per-step jacobian + eigvals": lambda: naive_radii(cell, x, states),
    }
    ref = methods["vmap(jacrev) + eigvals"]().to("cpu")
    rows, base = [], None
    for label, fn in methods.items():
        err = float(((fn().to("cpu") - ref).abs() / ref).max())  # this call is also the warm-up
        slow = label.startswith("per-step")  # seconds a call on a GPU (T = 1,000): timed once
        ms = timeit(fn, device, repeat=1 if slow else repeat, warmup=0)
        rows.append({"cell": f"{name} {n}", "T": T, "method": label, "ms": ms, "err vs dense": err})
    base = rows[-1]["ms"]
    for r in rows:
        r["speed-up vs per-step"] = base / r["ms"]
    return rows


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--T", type=int, default=None)
    p.add_argument("--iters", type=int, default=100, help="power iterations")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    T = args.T or (1000 if torch.device(args.device).type == "cuda" else 50)
    rows = []
    for name in CELLS:
        rows += bench(name, args.width, T, args.device, args.iters, args.repeat)
    # the exact methods agree to rounding; power iteration converges to the dominant modulus, slowly where the
    # top eigenvalues are nearly degenerate in modulus (ALIF's many threshold decays near exp(-1/100)): 2-5% there
    assert all(r["err vs dense"] < (0.1 if r["method"].startswith("power") else 1e-8) for r in rows), rows
    report(
        f"spectral radius of the transition Jacobians, float64, {args.iters} power iterations",
        rows,
        args.device,
        "spectra",
        args.out,
    )
    return rows


if __name__ == "__main__":
    main()
