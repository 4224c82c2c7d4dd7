"""The element-wise linear recurrence ``h_t = a_t * h_{t-1} + b_t`` (real or complex), forward and backward.

``linear_scan`` picks a backend: ``sequential`` (the reference loop, O(T) steps) or ``parallel`` (Hillis-Steele
doubling in PyTorch, O(log T) steps of O(T) work each; a GPU matter, no win on 2 CPU cores), both plain
autograd-differentiable torch code, or ``triton`` (a chunked scan with its own backward, :mod:`.triton_scan`; CUDA
tensors, or any tensor under ``TRITON_INTERPRET=1``).
"""

from __future__ import annotations

import os

import torch

from .. import checks


def _prepare(a, b, h0, dim):
    checks.tensor(b, "b", min_dim=1)
    a = torch.as_tensor(a, dtype=b.dtype, device=b.device) if not isinstance(a, torch.Tensor) else a
    try:
        a, b = torch.broadcast_tensors(a, b)
    except RuntimeError as err:
        raise ValueError(f"a and b must broadcast, got {tuple(a.shape)} and {tuple(b.shape)}") from err
    dim = dim % b.ndim
    a, b = a.movedim(dim, 0), b.movedim(dim, 0)
    if h0 is not None:
        b = torch.cat([(a[:1] * h0.unsqueeze(0) + b[:1]), b[1:]], dim=0)
    return a, b, dim


def scan_sequential(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None, dim: int = 1) -> torch.Tensor:
    """Reference loop: ``h_t = a_t h_{t-1} + b_t`` along ``dim`` with ``h_{-1} = h0`` (zeros if None)."""
    a, b, dim = _prepare(a, b, h0, dim)
    out, h = [], None
    # unbind, not a[t]: autograd then gathers the steps' gradients with one stack instead of T full-size scatters
    for a_t, b_t in zip(a.unbind(0), b.unbind(0)):
        h = b_t if h is None else a_t * h + b_t
        out.append(h)
    return torch.stack(out, 0).movedim(0, dim)


def scan_parallel(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None, dim: int = 1) -> torch.Tensor:
    """Hillis-Steele scan: ``ceil(log2 T)`` rounds of ``(a, b)[t] <- (a[t] a[t-d], a[t] b[t-d] + b[t])``."""
    a, b, dim = _prepare(a, b, h0, dim)
    T, d = b.shape[0], 1
    while d < T:
        b = torch.cat([b[:d], a[d:] * b[:-d] + b[d:]], dim=0)
        a = torch.cat([a[:d], a[d:] * a[:-d]], dim=0)
        d *= 2
    return b.movedim(0, dim)


def triton_available() -> bool:
    """Whether the ``triton`` backend can be imported here (it runs on CUDA, or anywhere in Triton's interpreter)."""
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True


def triton_interpreted() -> bool:
    """Whether Triton kernels run in its CPU interpreter (``TRITON_INTERPRET=1``, read when triton is imported)."""
    return os.environ.get("TRITON_INTERPRET") == "1"


def scan_triton(a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None, dim: int = 1) -> torch.Tensor:
    """The chunked Triton scan (:mod:`.triton_scan`) with its reverse-scan backward; fp16/bf16 run in fp32."""
    if not triton_available():
        raise RuntimeError("backend='triton' needs the triton package (pip install triton)")
    from . import triton_scan

    if not (b.is_cuda or triton_interpreted()):
        raise ValueError(
            "backend='triton' needs CUDA tensors (or TRITON_INTERPRET=1 set before lscnb.kernels.triton_scan "
            f"is imported, to run the kernels on the CPU); b is on {b.device}"
        )
    a, b, dim = _prepare(a, b, h0, dim)
    dtype = b.dtype
    if dtype in (torch.float16, torch.bfloat16):
        a, b = a.float(), b.float()
    shape = b.shape
    h = triton_scan.TritonScan.apply(a.reshape(shape[0], -1).contiguous(), b.reshape(shape[0], -1).contiguous())
    return h.reshape(shape).to(dtype).movedim(0, dim)


BACKENDS = {"sequential": scan_sequential, "parallel": scan_parallel, "triton": scan_triton}


def usable_backends(device) -> list[str]:
    """The backends that run on ``device`` here (``triton``: with the package, on CUDA or in the interpreter)."""
    cuda = torch.device(device).type == "cuda"
    triton_ok = triton_available() and (cuda or triton_interpreted())
    return [name for name in BACKENDS if name != "triton" or triton_ok]


def linear_scan(a, b, h0=None, *, dim: int = 1, backend: str = "auto") -> torch.Tensor:
    """``h_t = a_t * h_{t-1} + b_t`` along ``dim`` (default 1: (B, T, ...)); ``a`` broadcasts against ``b``.

    ``backend="auto"`` uses the sequential loop on the CPU, and on a GPU the Triton scan where triton is installed,
    the parallel scan otherwise.
    """
    checks.tensor(b, "b", min_dim=1)
    if backend == "auto":
        backend = ("triton" if triton_available() else "parallel") if b.is_cuda else "sequential"
    checks.one_of(backend, BACKENDS, "backend")
    return BACKENDS[backend](a, b, h0, dim)
