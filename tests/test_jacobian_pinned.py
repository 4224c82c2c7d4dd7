"""lscnb.jacobian pinned against answers it does not compute: power iteration on a Jordan block in closed form,
the empty product, exact geometric profiles with an intercept, hand recurrences, full error messages, a cell whose
reverse and forward derivatives differ on purpose, and results that stay on the meta device (issue 27)."""

import math

import pytest
import torch

from lscnb import jacobian as J
from lscnb.models.rnn import RNNCell, Stack

F64 = torch.float64
JORDAN = torch.tensor([[1.0, 1.0], [0.0, 1.0]], dtype=F64)


def _jordan_rate(v0: torch.Tensor, iters: int) -> torch.Tensor:
    """Power iteration's answer on the Jordan block: J^k (a, b) = (a + k b, b), so the mean log growth over steps
    burn..iters-1 telescopes to log(|J^iters v0| / |J^burn v0|) / (iters - burn)."""
    burn = iters // 2
    a, b = v0[..., 0], v0[..., 1]
    norm = lambda k: torch.sqrt((a + k * b) ** 2 + b**2)  # noqa: E731
    return (norm(iters) / norm(burn)) ** (1 / (iters - burn))


class _TwoWays(torch.autograd.Function):
    """The identity, with a backward that says 2 and a forward derivative that says 3: which one a Jacobian shows
    tells which mode of differentiation computed it."""

    generate_vmap_rule = True

    @staticmethod
    def forward(s):
        return s.clone()

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return 2 * g

    @staticmethod
    def jvp(ctx, t):
        return 3 * t


def _two_ways_cell(s, u):
    return _TwoWays.apply(s) + u


class _TanhCell(torch.nn.Module):
    """h' = tanh(A h + B u) in float64, with zeros as its initial state."""

    def __init__(self):
        super().__init__()
        self.A = torch.tensor([[0.5, -0.3], [0.2, 0.9]], dtype=F64)
        self.B = torch.tensor([[1.0], [-0.5]], dtype=F64)

    def forward(self, s, u):
        return torch.tanh(s @ self.A.T + u @ self.B.T)

    def initial_state(self, batch, device=None, dtype=None):
        return torch.zeros(batch, 2, device=device, dtype=dtype or F64)


def test_cell_jacobians_names_both_shapes_when_leading_dims_differ():
    """The full message, with the shapes the caller passed."""
    with pytest.raises(ValueError, match=r"^state and x must share leading dimensions, got \(2, 3\) and \(4, 1\)$"):
        J.cell_jacobians(_two_ways_cell, torch.zeros(2, 3), torch.zeros(4, 1))


@pytest.mark.parametrize("mode, slope", [("rev", 2.0), ("fwd", 3.0)])
def test_mode_picks_reverse_or_forward_differentiation(mode, slope):
    """rev reads the cell's backward (2 I), fwd its forward derivative (3 I); the input link is I either way."""
    s = torch.randn(2, 3, dtype=F64, generator=torch.Generator().manual_seed(0))
    x = torch.randn(2, 3, dtype=F64, generator=torch.Generator().manual_seed(1))
    eye = torch.eye(3, dtype=F64).expand(2, 3, 3)
    torch.testing.assert_close(J.cell_jacobians(_two_ways_cell, s, x, mode=mode), slope * eye)
    jac, _ = J.time_jacobians(_two_ways_cell, x.unsqueeze(1), s, mode=mode)
    torch.testing.assert_close(jac[:, 0], slope * eye)


def test_time_jacobians_start_from_the_given_state():
    """States and J_t = diag(1 - h_t^2) A from a recurrence written out here, started at state0 != 0."""
    cell = _TanhCell()
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, 4, 1, dtype=F64, generator=g)
    state0 = torch.tensor([[0.7, -0.4], [-1.0, 0.3]], dtype=F64)
    h, states, jacs = state0, [], []
    for t in range(4):
        h = torch.tanh(h @ cell.A.T + x[:, t] @ cell.B.T)
        states.append(h)
        jacs.append((1 - h**2).unsqueeze(-1) * cell.A)
    jac, got = J.time_jacobians(cell, x, state0)
    torch.testing.assert_close(got, torch.stack(states, 1))
    torch.testing.assert_close(jac, torch.stack(jacs, 1))


def test_eig_is_the_default_method():
    """The Jordan block's eigenvalues are exactly 1; power iteration would only creep towards 1 (~1.007)."""
    assert J.spectral_radius(JORDAN).item() == pytest.approx(1.0, abs=1e-12)
    assert J.spectral_radius(JORDAN.expand(3, 2, 2)).tolist() == pytest.approx([1.0] * 3, abs=1e-12)


@pytest.mark.parametrize("iters", [3, 200, None])
def test_power_method_runs_the_iterations_asked_for(iters):
    """The closed-form Jordan answer from the start the function draws (torch.randn after the same seed);
    None checks the default of 200 iterations. A (2, 3) batch of matrices keeps its (2, 3) shape."""
    matrices = JORDAN.expand(2, 3, 2, 2)
    torch.manual_seed(5)
    v0 = torch.randn(2, 3, 2, dtype=F64)
    torch.manual_seed(5)
    options = {} if iters is None else {"iters": iters}
    got = J.spectral_radius(matrices, method="power", **options)
    assert got.shape == (2, 3)
    torch.testing.assert_close(got, _jordan_rate(v0, 200 if iters is None else iters), rtol=1e-12, atol=0)


def test_power_radius_default_iterations_and_batch_shape():
    """Closed form for 200 iterations from e_2 (the documented default); a (2, 3, n) start keeps its (2, 3) shape."""
    mv = lambda v: v @ JORDAN.T  # noqa: E731
    e2 = torch.tensor([0.0, 1.0], dtype=F64)
    expected = (math.sqrt(200**2 + 1) / math.sqrt(100**2 + 1)) ** (1 / 100)
    assert J.power_radius(mv, e2).item() == pytest.approx(expected, rel=1e-13)
    v0 = torch.randn(2, 3, 2, dtype=F64, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(J.power_radius(mv, v0, 6), _jordan_rate(v0, 6), rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_power_radius_keeps_the_real_dtype_of_its_start(dtype):
    """2 v has growth 2 in any dtype, returned in v0's own dtype (not float32)."""
    out = J.power_radius(lambda v: 2 * v, torch.ones(2, 3, dtype=dtype), 4)
    assert out.dtype == dtype and out.tolist() == [2.0, 2.0]


def test_results_stay_on_the_inputs_device():
    """On the meta device (there on every machine) every intermediate must be made where the inputs live."""
    meta = torch.zeros(2, 3, 2, 2, dtype=F64, device="meta")
    assert J.spectral_radius(meta, method="power", iters=3).device.type == "meta"
    assert J.power_radius(lambda v: v, torch.zeros(3, 2, device="meta"), 3).device.type == "meta"
    out = J.product_log_singular_values(meta)
    assert out.device.type == "meta" and out.shape == (2, 2)
    assert J.decay_rate(torch.zeros(2, 5, device="meta")).device.type == "meta"
    stack = Stack([RNNCell(1, 2), RNNCell(2, 2)]).to("meta")
    grid = J.grid_jacobians(stack, torch.zeros(2, 3, 1, device="meta"))
    assert all(t.device.type == "meta" for t in grid["time"] + grid["depth"])


@pytest.mark.parametrize("iters", [4, None])
def test_cell_spectral_radius_of_a_linear_cell(iters):
    """A linear cell h' = J h + u has the Jordan block as its Jacobian: the closed form from the randn_like start
    (None: the default of 100 iterations); a 1-D state (one sample) is accepted and gives a 0-d result."""
    cell = lambda h, u: h @ JORDAN.T + u  # noqa: E731
    state, x = torch.tensor([0.3, -0.2], dtype=F64), torch.tensor([1.0, 2.0], dtype=F64)
    torch.manual_seed(7)
    v0 = torch.randn(1, 2, dtype=F64)
    torch.manual_seed(7)
    options = {} if iters is None else {"iters": iters}
    got = J.cell_spectral_radius(cell, state, x, **options)
    assert got.shape == ()
    torch.testing.assert_close(got, _jordan_rate(v0, 100 if iters is None else iters)[0], rtol=1e-12, atol=0)


def test_empty_product_has_zero_log_singular_values():
    """A product of no matrices is I: every log singular value is 0, one row per leading index, in float64."""
    out = J.product_log_singular_values(torch.zeros(3, 0, 2, 2, dtype=F64))
    assert out.dtype == F64 and out.shape == (3, 2)
    assert out.tolist() == [[0.0, 0.0]] * 3


def test_stable_norm_scales_each_row_by_its_own_largest_entry():
    """Row norms of [[1e-200, 1e-200], [1, 0]] are sqrt(2) 1e-200 and 1; a shared scale would square 1e-200 to 0."""
    v = torch.tensor([[1e-200, 1e-200], [1.0, 0.0]], dtype=F64)
    got = J.stable_norm(v)
    assert got[0].item() == pytest.approx(math.sqrt(2) * 1e-200, rel=1e-12, abs=0) and got[1].item() == 1.0


def test_grid_gradient_norms_names_the_shape_of_a_non_scalar_loss():
    """The full message, with the shape the loss returned."""
    stack = Stack([RNNCell(1, 2)])
    with pytest.raises(ValueError, match=r"^loss must return a scalar, got shape \(2,\)$"):
        J.grid_gradient_norms(stack, torch.zeros(2, 3, 1), lambda seqs: seqs[0].sum((1, 2)))


def test_decay_rate_of_a_single_profile_too_short():
    """A 1-D profile of one point: the full message (the count read from its last dimension)."""
    with pytest.raises(ValueError, match=r"^need at least two points to fit a rate, got 1 \(start=0, stop=None\)$"):
        J.decay_rate(torch.tensor([1.0], dtype=F64))


def test_decay_rate_fits_each_profile_of_a_batch_on_its_own():
    """Rows c g^k (from the end) with different c, g and a dropped zero: the least-squares rate is exactly g."""
    k = torch.arange(6, dtype=F64)
    values = torch.stack([3.0 * 0.5**k, 5.0 * 2.0**k, 0.2 * 1.5**k])
    values[2, 4] = 0.0  # underflowed: left out of the fit
    got = J.decay_rate(values.flip(-1))
    torch.testing.assert_close(got, torch.tensor([0.5, 2.0, 1.5], dtype=F64), rtol=1e-12, atol=0)
