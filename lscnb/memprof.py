"""Memory accounting on any device: the bytes autograd saves for the backward pass of a computation.

``saved_tensor_bytes(fn)`` runs ``fn()`` under :func:`torch.autograd.graph.saved_tensors_hooks` and sums the
sizes of the distinct storages that autograd keeps for the backward pass: the activation memory that makes
full self-attention quadratic in the sequence length (thesis Fig. 4.2, centre), measured without a GPU.
"""
from __future__ import annotations

from typing import Callable

import torch


def saved_tensor_bytes(fn: Callable[[], object]) -> tuple[int, object]:
    """(bytes saved for backward by ``fn()``, its return value); each storage is counted once."""
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    seen: dict[tuple, int] = {}

    def pack(t: torch.Tensor):
        try:
            storage = t.untyped_storage()
            seen[(t.device.type, storage.data_ptr())] = storage.nbytes()
        except (RuntimeError, NotImplementedError):
            seen[(t.device.type, id(t))] = t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return sum(seen.values()), out
