"""Hand-written recurrent cells, compiled.

The cells of :mod:`lscnb.models` are written one step at a time, ``state_t = cell(state_{t-1}, x_t)``, because
that is what :mod:`lscnb.jacobian` differentiates. Training them in a Python loop pays one kernel launch per
elementary operation per step; ``torch.compile`` fuses each step's element-wise work (the gates, the
nonlinearities) into a few kernels, and ``mode="reduce-overhead"`` replays the step as a CUDA graph. The compiled
step computes the same function (a unit test checks it against the eager cell, values and gradients);
``bench/cells.py`` measures what it buys against cuDNN's ``nn.LSTM``/``nn.GRU``.
"""

from __future__ import annotations

import torch
from torch import nn

from .. import checks


def compiled_step(cell: nn.Module, *, mode: str | None = None, backend: str = "inductor"):
    """``torch.compile`` of one step of ``cell`` (static shapes: every step of a sequence has the same shape).

    ``backend="inductor"`` generates fused kernels (it needs a C++ compiler on a CPU and Triton on a GPU);
    ``"aot_eager"`` traces without generating code, which is what the unit tests use.
    """
    if not isinstance(cell, nn.Module) or not hasattr(cell, "initial_state"):
        raise TypeError(f"cell must be a recurrent cell of lscnb.models, got {type(cell).__name__}")
    if mode is not None:
        checks.one_of(mode, ("default", "reduce-overhead", "max-autotune"), "mode")
    checks.one_of(backend, ("inductor", "aot_eager", "eager"), "backend")
    return torch.compile(cell, dynamic=False, mode=mode, backend=backend)
