"""Memory accounting on any device: the bytes autograd saves for the backward pass of a computation.

``saved_tensor_bytes(fn)`` runs ``fn()`` under :func:`torch.autograd.graph.saved_tensors_hooks` and sums the
sizes of the distinct storages that autograd keeps for the backward pass: the activation memory that makes
full self-attention quadratic in the sequence length (thesis Fig. 4.2, centre), measured without a GPU.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import torch


def saved_tensor_bytes(fn: Callable[[], object]) -> tuple[int, object]:
    """(bytes saved for backward by ``fn()``, its return value); each storage is counted once.

    Only what the graph still holds when ``fn`` returns counts: a tensor saved by a branch whose result was dropped
    (say the attention of a last step nobody reads) is freed during the pass, and its address may be reused by a
    later storage, so storages are identified only among the saved tensors still alive at the end. Autograd keeps
    a detached alias of each (same storage), so that a tensor saved as its own node's output is not kept alive by
    the hook (a reference cycle that would count a dropped branch)."""
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    saved: list[weakref.ref] = []

    def pack(t: torch.Tensor):
        alias = t.detach()  # the same storage; unlike t, it does not hold its own grad_fn, so no cycle keeps it alive
        saved.append(weakref.ref(alias))
        return alias

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    seen: dict[tuple, int] = {}
    for t in (r() for r in saved):
        if t is None:
            continue
        try:
            storage = t.untyped_storage()
            seen[(t.device.type, storage.data_ptr())] = storage.nbytes()
        except (RuntimeError, NotImplementedError):
            seen[(t.device.type, id(t))] = t.numel() * t.element_size()
    return sum(seen.values()), out


def bilinear_bytes(
    measure: Callable[[int, int], int], lengths: tuple[int, int] = (16, 32), batches: tuple[int, int] = (2, 4)
) -> Callable[[int, int], float]:
    """Fit ``bytes(T, B) = c0 + c1 T + c2 B + c3 T B`` through four measurements ``measure(T, B)`` at the corners
    of ``lengths x batches``, and return the fitted function.

    The activations a recurrent network saves for its backward pass are exactly of this form (every step keeps
    tensors of B rows, the weights are kept once), so four small measurements predict the memory of a run too
    large to measure: check the prediction at a fifth point before trusting it.
    """
    (t1, t2), (b1, b2) = lengths, batches
    if t1 == t2 or b1 == b2:
        raise ValueError(f"lengths and batches must each hold two different values, got {lengths}, {batches}")
    m11, m12, m21, m22 = (float(measure(t, b)) for t, b in ((t1, b1), (t1, b2), (t2, b1), (t2, b2)))

    def predict(T: int, B: int) -> float:
        u, v = (T - t1) / (t2 - t1), (B - b1) / (b2 - b1)
        return m11 * (1 - u) * (1 - v) + m12 * (1 - u) * v + m21 * u * (1 - v) + m22 * u * v

    return predict
