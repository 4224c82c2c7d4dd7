import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from lscnb import jacobian
from lscnb.models import GRUCell, LSTMCell, RNNCell, Stack, recurrent_matrix


def test_linear_rnn_jacobian_is_W():
    torch.manual_seed(0)
    cell = RNNCell(3, 12, activation="linear", weight_scale=0.9).double()
    x = torch.randn(2, 7, 3, dtype=torch.float64)
    J, states = jacobian.time_jacobians(cell, x)
    assert J.shape == (2, 7, 12, 12) and states.shape == (2, 7, 12)
    torch.testing.assert_close(J, cell.weight_hh.detach().expand_as(J))


def test_tanh_jacobian_matches_finite_differences():
    torch.manual_seed(1)
    cell = RNNCell(4, 10, activation="tanh", weight_scale=1.3).double()
    h = torch.randn(10, dtype=torch.float64)
    x = torch.randn(4, dtype=torch.float64)
    J = jacobian.cell_jacobians(cell, h, x)
    eps = 1e-6
    fd = torch.stack(
        [(cell(h + eps * e, x) - cell(h - eps * e, x)) / (2 * eps) for e in torch.eye(10, dtype=torch.float64)], dim=1
    )
    torch.testing.assert_close(J, fd.detach(), atol=1e-8, rtol=1e-6)
    # closed form diag(1 - tanh^2) W
    a = cell.weight_hh @ h + cell.weight_ih @ x + cell.bias
    torch.testing.assert_close(J, ((1 - torch.tanh(a) ** 2)[:, None] * cell.weight_hh).detach())


def test_input_jacobian_and_forward_mode_agree():
    torch.manual_seed(2)
    cell = GRUCell(5, 6).double()
    h, x = torch.randn(3, 6, dtype=torch.float64), torch.randn(3, 5, dtype=torch.float64)
    a = jacobian.cell_jacobians(cell, h, x, wrt="input", mode="rev")
    b = jacobian.cell_jacobians(cell, h, x, wrt="input", mode="fwd")
    assert a.shape == (3, 6, 5)
    torch.testing.assert_close(a, b)


def test_batched_equals_unbatched():
    torch.manual_seed(3)
    cell = LSTMCell(3, 5).double()
    h, x = torch.randn(4, 2, 10, dtype=torch.float64), torch.randn(4, 2, 3, dtype=torch.float64)
    batched = jacobian.cell_jacobians(cell, h, x)
    for i in range(4):
        for j in range(2):
            single = torch.autograd.functional.jacobian(lambda s: cell(s, x[i, j]), h[i, j])
            torch.testing.assert_close(batched[i, j], single)


def test_grid_jacobians_shapes_and_depth_link():
    torch.manual_seed(4)
    stack = Stack([LSTMCell(3, 4), LSTMCell(4, 4), GRUCell(4, 6)]).double()
    x = torch.randn(2, 5, 3, dtype=torch.float64)
    g = jacobian.grid_jacobians(stack, x)
    assert [t.shape for t in g["time"]] == [(2, 5, 8, 8), (2, 5, 8, 8), (2, 5, 6, 6)]
    assert [t.shape for t in g["depth"]] == [(2, 5, 8, 3), (2, 5, 8, 8), (2, 5, 6, 8)]
    # only the h half of an LSTM state feeds the layer above: the c columns of the depth link are zero
    assert torch.all(g["depth"][1][..., 4:] == 0)
    # depth derivative at one grid point, by autograd through the full forward pass
    states = g["states"]
    prev = states[2][0, 2]
    below = states[1][0, 3]
    auto = torch.autograd.functional.jacobian(lambda s: stack.cells[2](prev, stack.cells[1].output(s)), below)
    torch.testing.assert_close(g["depth"][2][0, 3], auto)


def test_product_of_orthogonal_matrices_has_unit_singular_values():
    torch.manual_seed(5)
    qs = torch.stack([recurrent_matrix(16, 1.0, "orthogonal", dtype=torch.float64) for _ in range(2000)])
    logs = jacobian.product_log_singular_values(qs)
    assert logs.shape == (16,)
    assert torch.all(logs.abs() < 1e-9)


def test_product_log_singular_values_long_products_and_short_exactness():
    torch.manual_seed(6)
    # a power of one normal matrix: logs are T log(eigenvalue moduli) up to an O(1) transient
    q = recurrent_matrix(8, 1.0, "orthogonal", dtype=torch.float64)
    scales = torch.linspace(0.5, 0.9, 8, dtype=torch.float64)
    m = q @ torch.diag(scales) @ q.T
    logs = jacobian.product_log_singular_values(m.expand(10_000, 8, 8))
    torch.testing.assert_close(
        logs, 10_000 * torch.log(scales).flip(0), atol=5.0, rtol=0
    )  # ~ -6900: no float64 can hold the product
    torch.testing.assert_close(logs.sum(), 10_000 * torch.log(scales).sum())
    # random Gaussian: compare with the explicit product where float64 still holds it
    ms = torch.randn(40, 10, 10, dtype=torch.float64) / math.sqrt(10)
    prod = torch.eye(10, dtype=torch.float64)
    for k in range(40):
        prod = ms[k] @ prod
    exact = torch.log(torch.linalg.svdvals(prod))
    qr = jacobian.product_log_singular_values(ms)
    assert abs(qr[0] - exact[0]) < 1.0 and abs(qr[1] - exact[1]) < 1.0
    # the sum is exact, log |det| of the product, even where the explicit product has lost its small singular values
    log_det = torch.linalg.slogdet(ms).logabsdet.sum()
    assert abs(qr.sum() - log_det) < 1e-8


def test_gradient_norms_through_time_linear_closed_form():
    torch.manual_seed(7)
    n, T = 6, 15
    cell = RNNCell(2, n, activation="linear", weight_scale=0.8).double()
    x = torch.randn(3, T, 2, dtype=torch.float64)
    c = torch.randn(n, dtype=torch.float64)
    norms = jacobian.gradient_norms_through_time(cell, x, lambda h: (h[:, -1] @ c).sum())
    W = cell.weight_hh.detach()
    for t in range(T):
        expected = torch.linalg.matrix_power(W.T, T - 1 - t) @ c
        torch.testing.assert_close(norms[:, t], expected.norm().expand(3))


def test_grid_gradient_norms_match_single_layer():
    torch.manual_seed(8)
    cell = RNNCell(3, 5, activation="tanh").double()
    x = torch.randn(2, 9, 3, dtype=torch.float64)
    loss = lambda h: h[:, -1].sum()  # noqa: E731
    one = jacobian.gradient_norms_through_time(cell, x, loss)
    grid = jacobian.grid_gradient_norms(Stack([cell]), x, lambda seqs: loss(seqs[-1]))
    torch.testing.assert_close(grid[..., 0], one)


def test_spectral_radius_eig_and_power_agree():
    torch.manual_seed(9)
    m = torch.randn(5, 30, 30, dtype=torch.float64) / math.sqrt(30)
    exact = jacobian.spectral_radius(m)
    power = jacobian.spectral_radius(m, method="power", iters=3000)
    torch.testing.assert_close(power, exact, rtol=0.02, atol=0)


def test_cell_spectral_radius_matrix_free():
    torch.manual_seed(10)
    cell = RNNCell(4, 20, activation="tanh", weight_scale=1.2).double()
    h, x = torch.randn(3, 20, dtype=torch.float64), torch.randn(3, 4, dtype=torch.float64)
    dense = jacobian.spectral_radius(jacobian.cell_jacobians(cell, h, x))
    free = jacobian.cell_spectral_radius(cell, h, x, iters=3000)
    torch.testing.assert_close(free, dense, rtol=0.03, atol=0)


def test_decay_rate_recovers_geometric_profile():
    k = torch.arange(50, dtype=torch.float64)
    profile = (0.9**k).flip(0) * 3.0  # time order: smallest first
    assert abs(float(jacobian.decay_rate(profile)) - 0.9) < 1e-12


def test_decay_rate_ignores_underflowed_tail():
    k = torch.arange(400, dtype=torch.float64)
    profile = 0.5**k
    profile[300:] = 0.0  # underflowed
    rates = jacobian.decay_rate(torch.stack([profile.flip(0), torch.zeros(400, dtype=torch.float64)]))
    assert abs(float(rates[0]) - 0.5) < 1e-12 and torch.isnan(rates[1])


def test_gradient_norms_do_not_underflow():
    """A linear RNN with gain 0.5 over 600 steps: the gradient reaches ~1e-180; its norm must not read 0."""
    torch.manual_seed(0)
    cell = RNNCell(8, 64, activation="linear", weight_scale=0.5, bias=False).double()
    x = torch.randn(2, 600, 8, dtype=torch.float64)
    norms = jacobian.gradient_norms_through_time(cell, x, lambda h: h[:, -1].sum())
    assert bool((norms > 0).all()) and float(norms[:, 0].max()) < 1e-150
    rate = jacobian.decay_rate(norms, start=20)
    radius = float(jacobian.spectral_radius(cell.weight_hh.detach()))
    assert torch.allclose(rate, torch.full_like(rate, radius), rtol=0.02)
    v = torch.full((3, 5), 1e-200, dtype=torch.float64)
    torch.testing.assert_close(jacobian.stable_norm(v), torch.full((3,), 5**0.5 * 1e-200, dtype=torch.float64))


@pytest.mark.parametrize("bad", [torch.zeros(3, 4), torch.zeros(4)])
def test_spectral_radius_rejects_non_square(bad):
    with pytest.raises(ValueError, match="matrices"):
        jacobian.spectral_radius(bad)


def test_bad_arguments_name_themselves():
    cell = RNNCell(2, 3)
    with pytest.raises(ValueError, match="wrt"):
        jacobian.cell_jacobians(cell, torch.zeros(3), torch.zeros(2), wrt="time")
    with pytest.raises(ValueError, match="x must have 3"):
        jacobian.time_jacobians(cell, torch.zeros(4, 2))
    with pytest.raises(ValueError, match="k must be at most"):
        jacobian.product_log_singular_values(torch.zeros(2, 3, 3), k=4)
    with pytest.raises(ValueError, match="method"):
        jacobian.spectral_radius(torch.eye(3), method="qr")
    with pytest.raises(TypeError, match="matrices must be a torch.Tensor"):
        jacobian.spectral_radius([[1.0]])


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 6), scale=st.floats(0.1, 2.0))
def test_scaled_orthogonal_radius_property(n, scale):
    q = recurrent_matrix(n, scale, "orthogonal", dtype=torch.float64)
    assert abs(float(jacobian.spectral_radius(q)) - scale) < 1e-9
    assert torch.allclose(jacobian.singular_values(q), torch.full((n,), scale, dtype=torch.float64))


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4))
def test_non_square_shapes_always_rejected(shape):
    shape = shape + [shape[-1] + 1]
    with pytest.raises((ValueError, TypeError)):
        jacobian.spectral_radius(torch.zeros(*shape))


def test_product_log_singular_values_are_the_r_factor_of_the_explicit_product():
    """For a short product QR renormalisation is exact: the sums of log|diag R_t| are log|diag R| of QR(M_T...M_1),
    computed here from the explicit product; the reversed product M_1...M_T gives visibly different values."""
    torch.manual_seed(7)
    ms = torch.randn(6, 5, 5, dtype=torch.float64)
    prod, rev = torch.eye(5, dtype=torch.float64), torch.eye(5, dtype=torch.float64)
    for m in ms:
        prod, rev = m @ prod, rev @ m
    diag = torch.log(torch.linalg.qr(prod).R.diagonal().abs())
    expected = diag.sort(descending=True).values
    reversed_ = torch.log(torch.linalg.qr(rev).R.diagonal().abs()).sort(descending=True).values
    got = jacobian.product_log_singular_values(ms)
    torch.testing.assert_close(got, expected, atol=1e-10, rtol=0)
    assert (got - reversed_).abs().max() > 0.1
    # k columns follow the first k basis vectors: the first k diagonal entries of R
    torch.testing.assert_close(
        jacobian.product_log_singular_values(ms, k=2), diag[:2].sort(descending=True).values, atol=1e-10, rtol=0
    )
