"""Triton kernels for the element-wise linear recurrence ``h_t = a_t * h_{t-1} + b_t`` (real or complex).

The chunked scan of three launches, each parallel over channels, reads ``a`` and ``b`` twice and writes ``h`` once:

1. ``_chunk_totals``: every (chunk of ``CHUNK`` steps) x (block of channels) tile is scanned with
   ``tl.associative_scan`` under the composition of affine maps
   ``(a_1, b_1) . (a_2, b_2) = (a_2 a_1, a_2 b_1 + b_2)``; only the tile's total map is stored.
2. ``_carries``: one short loop over the chunks composes those totals into the state entering each chunk.
3. ``_chunk_scan``: every tile is scanned again with its entering state folded into its first ``b``, and ``h``
   is written.

The backward pass is the same scan run backwards in time (the adjoint recurrence
``delta_t = g_t + conj(a_{t+1}) delta_{t+1}``), so there is one kernel to get right. Complex recurrences run the same
kernels on (real, imaginary) pairs. On a machine without CUDA, ``TRITON_INTERPRET=1`` (set before this module is
imported) runs the kernels' code in Triton's interpreter, which is how the CPU tests exercise it.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

CHUNK = 64
BLOCK_C = 32


@triton.jit
def _compose(a1, b1, a2, b2):
    return a2 * a1, a2 * b1 + b2


@triton.jit
def _compose_complex(ar1, ai1, br1, bi1, ar2, ai2, br2, bi2):
    return (ar2 * ar1 - ai2 * ai1, ar2 * ai1 + ai2 * ar1, ar2 * br1 - ai2 * bi1 + br2, ar2 * bi1 + ai2 * br1 + bi2)


@triton.jit
def _tile(ptr, T, C, one, CHUNK: tl.constexpr, BLOCK_C: tl.constexpr):
    """Load the (chunk, channel-block) tile of this program; padding is the identity map (a=1, b=0)."""
    t = tl.program_id(0) * CHUNK + tl.arange(0, CHUNK)[:, None]
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
    mask = (t < T) & (c < C)
    return tl.load(ptr + t * C + c, mask=mask, other=one), t * C + c, mask


@triton.jit
def _last_row(x, CHUNK: tl.constexpr):
    rows = tl.arange(0, CHUNK)[:, None]
    return tl.sum(tl.where(rows == CHUNK - 1, x, 0.0), axis=0)


@triton.jit
def _chunk_totals(
    ar, ai, br, bi, Ar, Ai, Br, Bi, T, C, COMPLEX: tl.constexpr, CHUNK: tl.constexpr, BLOCK_C: tl.constexpr
):
    a_r, _, _ = _tile(ar, T, C, 1.0, CHUNK, BLOCK_C)
    b_r, _, _ = _tile(br, T, C, 0.0, CHUNK, BLOCK_C)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    out = tl.program_id(0) * C + c
    if COMPLEX:
        a_i, _, _ = _tile(ai, T, C, 0.0, CHUNK, BLOCK_C)
        b_i, _, _ = _tile(bi, T, C, 0.0, CHUNK, BLOCK_C)
        sa_r, sa_i, sb_r, sb_i = tl.associative_scan((a_r, a_i, b_r, b_i), 0, _compose_complex)
        tl.store(Ai + out, _last_row(sa_i, CHUNK), mask=c < C)
        tl.store(Bi + out, _last_row(sb_i, CHUNK), mask=c < C)
    else:
        sa_r, sb_r = tl.associative_scan((a_r, b_r), 0, _compose)
    tl.store(Ar + out, _last_row(sa_r, CHUNK), mask=c < C)
    tl.store(Br + out, _last_row(sb_r, CHUNK), mask=c < C)


@triton.jit
def _carries(Ar, Ai, Br, Bi, Hr, Hi, n_chunks, C, COMPLEX: tl.constexpr, BLOCK_C: tl.constexpr):
    c = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    mask = c < C
    h_r = tl.zeros([BLOCK_C], dtype=Hr.dtype.element_ty)
    h_i = tl.zeros([BLOCK_C], dtype=Hr.dtype.element_ty)
    for k in range(0, n_chunks):
        tl.store(Hr + k * C + c, h_r, mask=mask)
        a_r = tl.load(Ar + k * C + c, mask=mask, other=1.0)
        b_r = tl.load(Br + k * C + c, mask=mask, other=0.0)
        if COMPLEX:
            tl.store(Hi + k * C + c, h_i, mask=mask)
            a_i = tl.load(Ai + k * C + c, mask=mask, other=0.0)
            b_i = tl.load(Bi + k * C + c, mask=mask, other=0.0)
            h_r, h_i = a_r * h_r - a_i * h_i + b_r, a_r * h_i + a_i * h_r + b_i
        else:
            h_r = a_r * h_r + b_r


@triton.jit
def _chunk_scan(
    ar, ai, br, bi, Hr, Hi, outr, outi, T, C, COMPLEX: tl.constexpr, CHUNK: tl.constexpr, BLOCK_C: tl.constexpr
):
    a_r, off, mask = _tile(ar, T, C, 1.0, CHUNK, BLOCK_C)
    b_r, _, _ = _tile(br, T, C, 0.0, CHUNK, BLOCK_C)
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    h_r = tl.load(Hr + tl.program_id(0) * C + c, mask=c < C, other=0.0)[None, :]
    first = tl.arange(0, CHUNK)[:, None] == 0
    if COMPLEX:
        a_i, _, _ = _tile(ai, T, C, 0.0, CHUNK, BLOCK_C)
        b_i, _, _ = _tile(bi, T, C, 0.0, CHUNK, BLOCK_C)
        h_i = tl.load(Hi + tl.program_id(0) * C + c, mask=c < C, other=0.0)[None, :]
        b_r2 = tl.where(first, a_r * h_r - a_i * h_i + b_r, b_r)
        b_i2 = tl.where(first, a_r * h_i + a_i * h_r + b_i, b_i)
        _, _, s_r, s_i = tl.associative_scan((a_r, a_i, b_r2, b_i2), 0, _compose_complex)
        tl.store(outi + off, s_i, mask=mask)
    else:
        _, s_r = tl.associative_scan((a_r, tl.where(first, a_r * h_r + b_r, b_r)), 0, _compose)
    tl.store(outr + off, s_r, mask=mask)


def _parts(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if x.is_complex():
        return x.real.contiguous(), x.imag.contiguous()
    return x.contiguous(), x.contiguous()  # the imaginary pointer is never read for real inputs


def scan_2d(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``h_t = a_t h_{t-1} + b_t`` over dim 0 of two (T, C) tensors of one dtype, ``h_{-1} = 0``; no autograd."""
    T, C = b.shape
    complex_ = b.is_complex()
    real = b.real.dtype if complex_ else b.dtype
    ar, ai = _parts(a)
    br, bi = _parts(b)
    n_chunks = triton.cdiv(T, CHUNK)
    totals = [torch.empty(n_chunks, C, dtype=real, device=b.device) for _ in range(4)]
    carries = [torch.empty(n_chunks, C, dtype=real, device=b.device) for _ in range(2)]
    out = [torch.empty(T, C, dtype=real, device=b.device) for _ in range(2 if complex_ else 1)]
    grid = (n_chunks, triton.cdiv(C, BLOCK_C))
    _chunk_totals[grid](ar, ai, br, bi, *totals, T, C, COMPLEX=complex_, CHUNK=CHUNK, BLOCK_C=BLOCK_C)
    _carries[(grid[1],)](*totals, *carries, n_chunks, C, COMPLEX=complex_, BLOCK_C=BLOCK_C)
    _chunk_scan[grid](ar, ai, br, bi, *carries, out[0], out[-1], T, C, COMPLEX=complex_, CHUNK=CHUNK, BLOCK_C=BLOCK_C)
    return torch.complex(out[0], out[1]) if complex_ else out[0]


class TritonScan(torch.autograd.Function):
    """Autograd for :func:`scan_2d`: the backward pass is the reverse-time scan of the adjoint."""

    @staticmethod
    def forward(a, b):
        return scan_2d(a, b)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], output)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_h):
        a, h = ctx.saved_tensors
        # delta_t = g_t + conj(a_{t+1}) delta_{t+1}: a forward scan of the time-reversed sequence
        a_next = torch.cat([a[1:], torch.zeros_like(a[:1])]).conj()
        delta = scan_2d(a_next.flip(0).contiguous(), grad_h.flip(0).contiguous()).flip(0)
        h_prev = torch.cat([torch.zeros_like(h[:1]), h[:-1]])
        return delta * h_prev.conj(), delta
