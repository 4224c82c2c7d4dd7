"""Jacobian tooling (lscnb.jacobian) against answers worked by hand: power iteration on small matrices, the stretching
factors of a product with known singular values, rates of exact geometric profiles, and per-step Jacobians by
torch.func in the test (issue 27)."""

import math

import pytest
import torch

from lscnb import jacobian as J


def test_power_radius_by_hand():
    diag = torch.tensor([[3.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    mv = lambda v: v @ diag.T  # noqa: E731
    v0 = torch.tensor([1.0, 1.0], dtype=torch.float64)
    # one step from (1, 1)/sqrt 2: |(3, 1)| / sqrt 2 = sqrt 5
    assert J.power_radius(mv, v0, iters=1).item() == pytest.approx(math.sqrt(5))
    # two steps: only the second half counts, |(9, 1)| / |(3, 1)| = sqrt(8.2)
    assert J.power_radius(mv, v0, iters=2).item() == pytest.approx(math.sqrt(8.2))
    assert J.power_radius(mv, 5 * v0, iters=2).item() == pytest.approx(math.sqrt(8.2))  # v0's scale is irrelevant
    batch = torch.tensor([[1.0, 1.0], [2.0, 0.0]], dtype=torch.float64)  # a batch of starts, normalised row by row
    assert J.power_radius(mv, batch, iters=1).tolist() == pytest.approx([math.sqrt(5), 3.0])
    assert J.power_radius(mv, v0).item() == pytest.approx(3.0, rel=1e-6)
    rotation = 0.5 * torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=torch.float64)  # a complex pair of modulus 1/2
    assert J.power_radius(lambda v: v @ rotation.T, v0, iters=50).item() == pytest.approx(0.5)
    complex_v = torch.tensor([1.0 + 1.0j, 0.5], dtype=torch.complex128)
    out = J.power_radius(lambda v: v * torch.tensor([0.25j, 0.1], dtype=torch.complex128), complex_v, iters=40)
    assert out.dtype == torch.float64 and out.item() == pytest.approx(0.25)


def test_spectral_radius_methods_agree_by_hand():
    m = torch.tensor([[[0.0, -2.0], [2.0, 0.0]], [[0.5, 1.0], [0.0, -0.8]]], dtype=torch.float64)
    assert J.spectral_radius(m).tolist() == pytest.approx([2.0, 0.8])
    assert J.spectral_radius(m, method="power", iters=400).tolist() == pytest.approx([2.0, 0.8], rel=2e-3)


def _rotated(diagonal, seed=0):
    q, _ = torch.linalg.qr(
        torch.randn(len(diagonal), len(diagonal), generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    )
    return q @ torch.diag(torch.tensor(diagonal, dtype=torch.float64)) @ q.T


def test_product_stretching_factors_of_a_known_product():
    """``M = U diag(2, 1, 1/2) U^T`` repeated T times: singular values 2^T, 1, 2^-T, so the log stretching factors
    are T log 2, 0, -T log 2 up to O(1)."""
    T = 60
    m = _rotated([2.0, 1.0, 0.5]).expand(T, 3, 3)
    logs = J.product_log_singular_values(m)
    assert logs.tolist() == pytest.approx([T * math.log(2), 0.0, -T * math.log(2)], abs=1.0)
    assert logs.sum().item() == pytest.approx(0.0, abs=1e-9)  # the total is log |det| exactly
    assert J.product_log_singular_values(m, k=1).tolist() == pytest.approx([T * math.log(2)], abs=1.0)
    assert J.product_log_singular_values(m, k=2).shape == (2,)
    with pytest.raises(ValueError, match="k must be at most the matrix size 3, got 4"):
        J.product_log_singular_values(m, k=4)


def test_product_stretching_factors_batched_total_is_log_det():
    g = torch.Generator().manual_seed(0)
    m = torch.randn(2, 5, 3, 3, generator=g, dtype=torch.float64)  # two sequences of T = 5, n = 3 (T != n)
    logs = J.product_log_singular_values(m)
    assert logs.shape == (2, 3)
    for b in range(2):
        product = torch.eye(3, dtype=torch.float64)
        for t in range(5):
            product = m[b, t] @ product
        assert logs[b].sum().item() == pytest.approx(torch.linalg.slogdet(product)[1].item(), rel=1e-10)
        assert torch.all(logs[b][:-1] >= logs[b][1:])  # decreasing
    one = J.product_log_singular_values(m[:, :1])  # T = 1: the exact singular values of each matrix's first QR
    svd = torch.linalg.svdvals(m[:, 0]).log()
    assert one.sum(-1).tolist() == pytest.approx(svd.sum(-1).tolist(), rel=1e-10)


def test_stable_norm_by_hand():
    v = torch.tensor([[3e-200, 4e-200], [0.0, 0.0], [-6.0, 8.0]], dtype=torch.float64)
    out = J.stable_norm(v)
    assert out[0].item() == pytest.approx(5e-200, rel=1e-12) and out[1].item() == 0.0 and out[2].item() == 10.0
    assert J.stable_norm(v, dim=0).tolist() == pytest.approx([6.0, 8.0])
    assert torch.linalg.vector_norm(v[0]).item() == 0.0  # what stable_norm avoids


@pytest.mark.parametrize("q", [0.8, 1.25])
def test_decay_rate_of_geometric_profiles(q):
    T = 8
    norms = torch.tensor([3.0 * q ** (T - 1 - t) for t in range(T)], dtype=torch.float64)  # q^distance from the end
    assert J.decay_rate(norms).item() == pytest.approx(q, rel=1e-12)
    bent = norms.clone()
    bent[: T - 4] *= 100.0  # a different level beyond distance 3: the fit over distances 0..3 does not see it
    assert J.decay_rate(bent, stop=4).item() == pytest.approx(q, rel=1e-12)
    assert J.decay_rate(bent, start=4).item() == pytest.approx(q, rel=1e-12)
    assert J.decay_rate(bent).item() != pytest.approx(q, rel=1e-3)
    holes = norms.clone()
    holes[2] = 0.0  # underflowed: left out, not clamped
    holes[5] = float("inf")
    assert J.decay_rate(holes).item() == pytest.approx(q, rel=1e-12)


def test_decay_rate_edges():
    two = torch.tensor([2.0, 1.0], dtype=torch.float64)
    assert J.decay_rate(two).item() == pytest.approx(2.0)  # two points suffice
    assert math.isnan(J.decay_rate(torch.tensor([0.0, 1.0, 0.0])).item())  # one usable point
    batch = torch.tensor([[8.0, 4.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    assert J.decay_rate(batch).tolist() == pytest.approx([2.0, 1.0])
    with pytest.raises(ValueError, match=r"need at least two points to fit a rate, got 1 \(start=3, stop=None\)"):
        J.decay_rate(batch, start=3)


class _Tanh(torch.nn.Module):
    """``h' = tanh(W h + U x)`` with a float64 state by default."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.W = torch.randn(3, 3, generator=g, dtype=torch.float64)
        self.U = torch.randn(3, 2, generator=g, dtype=torch.float64)

    def forward(self, h, x):
        return torch.tanh(h @ self.W.T + x @ self.U.T)

    def initial_state(self, batch, device=None, dtype=None):
        return torch.full((batch, 3), 0.5, device=device, dtype=dtype or torch.float32)


def test_time_jacobians_against_jacrev_here():
    cell = _Tanh()
    x = torch.randn(2, 4, 2, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    jac, states = J.time_jacobians(cell, x)
    h = torch.full((2, 3), 0.5, dtype=torch.float64)  # the cell's own initial state, in x's dtype
    for t in range(4):
        for b in range(2):
            expected = torch.func.jacrev(lambda s, b=b, t=t: cell(s, x[b, t]))(h[b])
            torch.testing.assert_close(jac[b, t], expected)
        h = cell(h, x[:, t])
        torch.testing.assert_close(states[:, t], h)
    start = torch.zeros(2, 3, dtype=torch.float64)
    jac0, _ = J.time_jacobians(cell, x, start)
    expected = torch.func.jacrev(lambda s: cell(s, x[0, 0]))(start[0])
    torch.testing.assert_close(jac0[0, 0], expected)
    assert not torch.allclose(jac0[0, 0], jac[0, 0])  # the given start was used


def test_gradient_norms_start_from_the_given_state():
    cell = _Tanh()
    x = torch.randn(1, 3, 2, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    start = torch.full((1, 3), -2.0, dtype=torch.float64)
    got = J.gradient_norms_through_time(cell, x, lambda s: s[:, -1].sum(), start)
    h, hs = start.clone().requires_grad_(True), []
    for t in range(3):
        h = cell(h, x[:, t])
        h.retain_grad()
        hs.append(h)
    hs[-1].sum().backward()
    assert got[0].tolist() == pytest.approx([hs[t].grad.norm().item() for t in range(3)], rel=1e-12)
    with pytest.raises(ValueError, match=r"loss must return a scalar, got shape \(1, 3\)"):
        J.gradient_norms_through_time(cell, x, lambda s: s[:, -1])


def test_product_order_is_m_t_down_to_m_1():
    """With k = 1 the sum of log |R_11| is exactly log ||M_T ... M_2 M_1 e_1||: a reversed product differs."""
    g = torch.Generator().manual_seed(3)
    m = torch.randn(6, 4, 4, generator=g, dtype=torch.float64)
    product = torch.eye(4, dtype=torch.float64)
    for t in range(6):
        product = m[t] @ product
    e1 = torch.eye(4, dtype=torch.float64)[:, 0]
    exact = torch.log(torch.linalg.vector_norm(product @ e1)).item()
    assert J.product_log_singular_values(m, k=1).item() == pytest.approx(exact, rel=1e-12)
    reversed_product = torch.linalg.multi_dot(list(m))  # M_1 M_2 ... M_T
    assert abs(torch.log(torch.linalg.vector_norm(reversed_product @ e1)).item() - exact) > 0.1
