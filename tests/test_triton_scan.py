"""The Triton scan against the sequential reference: on a GPU compiled, on the CPU its own code in Triton's
interpreter."""

import pytest
import torch

from lscnb.kernels import linear_scan, scan_sequential
from lscnb.kernels.scan import triton_available

pytestmark = pytest.mark.skipif(not triton_available(), reason="triton is not installed")


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # on the CPU: the kernels in the interpreter (conftest)


def _inputs(dtype, T=70, B=2, C=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(B, T, C, generator=g) * 0.9 + 0.05
    b = torch.randn(B, T, C, generator=g)
    h0 = torch.randn(B, C, generator=g)
    if dtype.is_complex:
        a = a * torch.exp(1j * torch.randn(B, T, C, generator=g))
        b = b + 1j * torch.randn(B, T, C, generator=g)
        h0 = h0 + 1j * torch.randn(B, C, generator=g)
    return a.to(DEVICE, dtype), b.to(DEVICE, dtype), h0.to(DEVICE, dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
@pytest.mark.parametrize("T", [1, 64, 70])  # one step, exactly one chunk, a partial second chunk
def test_forward_matches_reference(dtype, T):
    a, b, h0 = _inputs(dtype, T=T)
    torch.testing.assert_close(linear_scan(a, b, h0, backend="triton"), scan_sequential(a, b, h0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_backward_matches_reference(dtype):
    a, b, h0 = (x.requires_grad_() for x in _inputs(dtype))
    w = torch.randn(b.shape, dtype=dtype, device=DEVICE)
    loss = lambda h: (h * w).real.sum() + h.abs().pow(2).sum()  # noqa: E731
    ref = torch.autograd.grad(loss(scan_sequential(a, b, h0)), (a, b, h0))
    got = torch.autograd.grad(loss(linear_scan(a, b, h0, backend="triton")), (a, b, h0))
    for r, x in zip(ref, got):
        torch.testing.assert_close(x, r, rtol=1e-9, atol=1e-9)


def test_broadcast_decay_and_dim():
    """A per-channel decay broadcast over batch and time (the diagonal RNNs' case), time along dim 0."""
    a = torch.tensor([0.5, 0.9, 0.99], device=DEVICE).requires_grad_()
    b = torch.randn(90, 2, 3, device=DEVICE)
    got = linear_scan(a, b, dim=0, backend="triton")
    ref = scan_sequential(a, b, dim=0)
    torch.testing.assert_close(got, ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(
        torch.autograd.grad(got.sum(), a)[0], torch.autograd.grad(ref.sum(), a)[0], rtol=1e-4, atol=1e-4
    )


def test_half_precision_runs_in_float32():
    a, b, _ = _inputs(torch.float32, T=20)
    got = linear_scan(a.bfloat16(), b.bfloat16(), backend="triton")
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(
        got.float(), scan_sequential(a.bfloat16().float(), b.bfloat16().float()), rtol=2e-2, atol=2e-2
    )


def test_auto_backend_and_usable_backends():
    from lscnb.kernels import usable_backends

    assert "triton" in usable_backends(DEVICE)
    a, b, _ = _inputs(torch.float32, T=10)
    torch.testing.assert_close(linear_scan(a, b), scan_sequential(a, b), rtol=1e-5, atol=1e-5)
