"""Cells and the scan pinned against answers they do not compute (lscnb.models.modrelu_rnn, nonnormal, orthogonal,
rnn, spiking, stacked and lscnb.kernels.scan): seeded draws written out, closed-form rotations and spike
derivatives, plain recurrences, full error messages, and results kept on the meta device (issue 27)."""

import math
import sys

import pytest
import torch
from scipy import stats

from lscnb.kernels import scan
from lscnb.models import gated as G
from lscnb.models import modrelu_rnn as MR
from lscnb.models import nonnormal as NN
from lscnb.models import orthogonal as O
from lscnb.models import rnn as R
from lscnb.models import spiking as S
from lscnb.models.drnn import DRNN
from lscnb.models.stacked import stacked_forward

F64 = torch.float64


def _modrelu(z, bias):
    return torch.sign(z) * torch.relu(z.abs() + bias)


def _loop(a, b, h0=None):
    """h_t = a_t h_{t-1} + b_t along dim 1, written out."""
    h, out = (torch.zeros_like(b[:, 0]) if h0 is None else h0), []
    for t in range(b.shape[1]):
        h = a[:, t] * h + b[:, t]
        out.append(h)
    return torch.stack(out, 1)


# --------------------------------------------------------------------------------------------- kernels.scan
@pytest.mark.parametrize("T, rounds", [(4, 2), (5, 3)])
def test_parallel_scan_takes_ceil_log2_t_rounds(monkeypatch, T, rounds):
    """The plain loop's values, in ceil(log2 T) doubling rounds of two concatenations each."""
    g = torch.Generator().manual_seed(0)
    a, b = torch.rand(2, T, 3, generator=g, dtype=F64), torch.randn(2, T, 3, generator=g, dtype=F64)
    cat, calls = torch.cat, []

    def counted(*args, **kwargs):
        calls.append(1)
        if len(calls) > 50:
            raise RuntimeError("the doubling never ends")
        return cat(*args, **kwargs)

    monkeypatch.setattr(torch, "cat", counted)
    got = scan.scan_parallel(a, b)
    monkeypatch.undo()
    assert len(calls) == 2 * rounds
    torch.testing.assert_close(got, _loop(a, b), rtol=1e-12, atol=1e-12)


def test_triton_available_is_false_without_the_package(monkeypatch):
    """With `import triton` failing, the backend is reported missing, and scan_triton says how to install it."""
    monkeypatch.setitem(sys.modules, "triton", None)  # makes `import triton` raise ImportError
    assert scan.triton_available() is False
    with pytest.raises(RuntimeError, match=r"^backend='triton' needs the triton package \(pip install triton\)$"):
        scan.scan_triton(torch.ones(1, 2), torch.ones(1, 2))


@pytest.mark.skipif(not scan.triton_available(), reason="triton is not installed")
def test_triton_scan_names_the_device_it_cannot_use(monkeypatch):
    """Outside the interpreter a CPU tensor is refused with the full message naming its device."""
    import lscnb.kernels.triton_scan  # noqa: F401 - imported while the interpreter is on, as conftest arranges

    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    message = (
        r"^backend='triton' needs CUDA tensors \(or TRITON_INTERPRET=1 set before lscnb\.kernels\.triton_scan "
        r"is imported, to run the kernels on the CPU\); b is on cpu$"
    )
    with pytest.raises(ValueError, match=message):
        scan.scan_triton(torch.ones(1, 2), torch.ones(1, 2))


@pytest.mark.skipif(
    not (scan.triton_available() and (torch.cuda.is_available() or scan.triton_interpreted())),
    reason="the triton backend cannot run here",
)
def test_triton_scan_runs_along_time_by_default():
    """(B, T, C) inputs scanned along T (dim 1, as every backend) match the plain loop."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator().manual_seed(1)
    a, b = torch.rand(2, 3, 4, generator=g, dtype=F64), torch.randn(2, 3, 4, generator=g, dtype=F64)
    got = scan.scan_triton(a.to(device), b.to(device)).cpu()
    torch.testing.assert_close(got, _loop(a, b), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", ["auto", "sequential", "parallel", "triton"])
def test_linear_scan_names_a_zero_dimensional_b_before_choosing_a_backend(monkeypatch, backend):
    """A scalar b has no time axis: the full message with the shape passed, for every backend, even triton where
    the package is missing (which would otherwise be the complaint)."""
    monkeypatch.setitem(sys.modules, "triton", None)  # makes `import triton` raise ImportError
    with pytest.raises(ValueError, match=r"^b must have at least 1 dimensions, got shape \(\)$"):
        scan.linear_scan(0.5, torch.tensor(1.0), backend=backend)


def test_scan_of_a_complex_a_over_a_real_b():
    """A complex decay tensor a, kept as given, over real inputs b: the plain loop in complex128."""
    g = torch.Generator().manual_seed(4)
    a = 0.5 * torch.complex(torch.rand(2, 3, 2, generator=g, dtype=F64), torch.rand(2, 3, 2, generator=g, dtype=F64))
    b = torch.randn(2, 3, 2, generator=g, dtype=F64)
    got = scan.scan_sequential(a, b)
    assert got.dtype == torch.complex128
    torch.testing.assert_close(got, _loop(a, b.to(torch.complex128)), rtol=1e-12, atol=1e-12)


def test_a_number_a_is_made_beside_b_not_on_the_default_device():
    """With meta as torch's default device, a = 0.5 still joins a CPU b: h = 1, 0.5 * 1 + 2, by hand."""
    b = torch.tensor([[1.0, 2.0]], dtype=F64)
    with torch.device("meta"):
        got = scan.scan_sequential(0.5, b)
    assert got.device.type == "cpu"
    torch.testing.assert_close(got, torch.tensor([[1.0, 2.5]], dtype=F64), rtol=0, atol=0)


def test_scan_names_the_shapes_that_do_not_broadcast():
    """(2, 3) against (2, 4): ValueError with the full message naming both shapes."""
    with pytest.raises(ValueError, match=r"^a and b must broadcast, got \(2, 3\) and \(2, 4\)$"):
        scan.scan_sequential(torch.ones(2, 3), torch.ones(2, 4))


# --------------------------------------------------------------------------------------------- gated
@pytest.mark.parametrize(
    "make, gates, forget_bias", [(G.LSTMCell, 4, None), (G.GRUCell, 3, None), (G.LSTMCell, 4, 2.0)]
)
def test_gated_cell_initial_weights_written_out(make, gates, forget_bias):
    """PyTorch's default: weight_ih, weight_hh, bias_ih, bias_hh uniform in +-1/sqrt(5) from the global RNG in that
    order; an LSTM's forget_bias then fills bias_ih's f block (gates i, f, g, o) and zeroes bias_hh's."""
    torch.manual_seed(3)
    cell = make(3, 5) if forget_bias is None else make(3, 5, forget_bias=forget_bias)
    torch.manual_seed(3)
    bound, g = 1 / math.sqrt(5), 5 * gates
    want = [torch.empty(*shape).uniform_(-bound, bound) for shape in [(g, 3), (g, 5), (g,), (g,)]]
    if forget_bias is not None:
        want[2][5:10], want[3][5:10] = forget_bias, 0.0
    for p, w in zip([cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh], want):
        torch.testing.assert_close(p.detach(), w, rtol=0, atol=0)


@pytest.mark.parametrize("make, width", [(G.LSTMCell, 6), (G.GRUCell, 3)])
def test_gated_initial_state_device_and_dtype(make, width):
    """Zeros (batch, state_size: [h, c] for the LSTM) on the device and in the dtype asked for, else the weights'."""
    cell = make(2, 3)
    state = cell.initial_state(4, device="meta")
    assert state.device.type == "meta" and state.shape == (4, width)
    assert cell.initial_state(4, dtype=F64).dtype == F64
    assert torch.equal(cell.double().initial_state(2), torch.zeros(2, width, dtype=F64))


# --------------------------------------------------------------------------------------------- drnn
def test_drnn_logits_are_the_readout_of_the_top_lstm_layers_h():
    """Three LSTM layers of widths 3, 4, 5 run step by step by hand, each feeding h (the first half of [h, c]) up;
    the logits are h_top W^T + b."""
    torch.manual_seed(11)
    model = DRNN("lstm", 2, [3, 4, 5], output_size=2)
    x = torch.randn(2, 4, 2, generator=torch.Generator().manual_seed(12))
    inp = x
    with torch.no_grad():
        for cell, width in zip(model.stack.cells, (3, 4, 5)):
            state, hs = torch.zeros(2, 2 * width), []
            for t in range(x.shape[1]):
                state = cell(state, inp[:, t])
                hs.append(state[:, :width])
            inp = torch.stack(hs, 1)
        expected = inp @ model.readout.weight.T + model.readout.bias
        torch.testing.assert_close(model(x), expected)


# --------------------------------------------------------------------------------------------- modrelu_rnn
@pytest.mark.parametrize("make", [lambda: MR.FreeRNNCell(3, 4), lambda: MR.EURNNCell(3, 4), lambda: NN.NNRNNCell(3, 4)])
def test_forward_uses_the_recurrent_matrix_it_is_given(make):
    """With W = 0 passed in, one step is modReLU(U x) alone, written out."""
    cell = make()
    h, x = torch.ones(2, 4), torch.randn(2, 3, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        got = cell(h, x, torch.zeros(4, 4))
        torch.testing.assert_close(got, _modrelu(x @ cell.U.T, cell.phi.bias))


def _rotations(s: torch.Tensor, n: int) -> torch.Tensor:
    """exp of the skew matrix with s_i at (2i, 2i+1): blocks [[cos s, sin s], [-sin s, cos s]], 1 where none."""
    W = torch.eye(n)
    for i, si in enumerate(s.tolist()):
        c, sn = math.cos(si), math.sin(si)
        W[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor([[c, sn], [-sn, c]])
    return W


def test_free_rnn_draws_from_its_own_seeded_generator():
    """Default seed 0, whatever the global RNG state: glorot's N(0, 1/n) draw, orth's sign-fixed QR factor, and the
    closed-form rotations of the henaff (s ~ -pi U) and cayley (s = -tan(pi/4 U)) angles."""
    n = 5
    seeded = lambda: torch.Generator().manual_seed(0)  # noqa: E731
    for state in (1, 2):
        torch.manual_seed(state)
        torch.testing.assert_close(
            MR.FreeRNNCell(2, n).W.detach(), torch.randn(n, n, generator=seeded()) / math.sqrt(n)
        )
        q, r = torch.linalg.qr(torch.randn(n, n, generator=seeded()))
        torch.testing.assert_close(MR.FreeRNNCell(2, n, init="orth").W.detach(), q * torch.sign(torch.diagonal(r)))
        henaff = -math.pi * torch.rand(n // 2, generator=seeded())
        torch.testing.assert_close(MR.FreeRNNCell(2, n, init="henaff").W.detach(), _rotations(henaff, n))
        cay = -torch.tan(math.pi / 4 * torch.rand(n // 2, generator=seeded()))
        torch.testing.assert_close(MR.FreeRNNCell(2, n, init="cayley").W.detach(), _rotations(cay, n))


def test_eurnn_angles_are_uniform_in_plus_minus_pi_from_seed_0():
    """U(-pi, pi) angles drawn from a generator seeded with 0 (the default), even layers first, whatever the
    global RNG state."""
    for state in (3, 4):
        torch.manual_seed(state)
        cell = MR.EURNNCell(2, 5, capacity=3)
        g = torch.Generator().manual_seed(0)
        even = (2 * torch.rand(2, 2, generator=g) - 1) * math.pi
        odd = (2 * torch.rand(1, 2, generator=g) - 1) * math.pi
        torch.testing.assert_close(cell.angles_even.detach(), even)
        torch.testing.assert_close(cell.angles_odd.detach(), odd)


def test_eurnn_of_two_units_is_one_rotation():
    """hidden_size 2 is allowed: W = [[c, -s], [s, c]] for the single even angle."""
    cell = MR.EURNNCell(1, 2)
    t = float(cell.angles_even[0, 0].detach())
    expected = torch.tensor([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    torch.testing.assert_close(cell.weight().detach(), expected)


@pytest.mark.parametrize(
    "make",
    [
        lambda: MR.FreeRNNCell(1, 4),
        lambda: MR.EURNNCell(1, 4, capacity=3),
        lambda: R.RNNCell(1, 4),
        lambda: S.ALIFCell(1, 2),
    ],
)
def test_states_and_weights_are_made_on_the_cells_device(make):
    """On the meta device (there on every machine): initial states where asked, W and sequences beside the weights."""
    cell = make()
    assert cell.initial_state(2, device="meta").device.type == "meta"
    cell = cell.to("meta")
    if hasattr(cell, "sequence"):
        assert cell.weight().device.type == "meta"
        assert cell.sequence(torch.zeros(2, 3, 1, device="meta")).device.type == "meta"


# --------------------------------------------------------------------------------------------- orthogonal
def test_cayley_of_a_batch_of_batches():
    """(2, 3, 4, 4) skew matrices: (I - A)(I + A)^-1 (they commute) by an explicit inverse, each orthogonal."""
    a = O.skew(torch.randn(2, 3, 4, 4, dtype=F64, generator=torch.Generator().manual_seed(3)))
    eye = torch.eye(4, dtype=F64)
    got = O.cayley(a)
    torch.testing.assert_close(got, (eye - a) @ torch.linalg.inv(eye + a))
    torch.testing.assert_close(got.mT @ got, eye.expand(2, 3, 4, 4))


def test_cayley_keeps_the_dtype_and_device_of_its_argument():
    """float32 in, float32 out even under a float64 default dtype; meta in, meta out."""
    a = O.skew(torch.randn(3, 3, generator=torch.Generator().manual_seed(4)))
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert O.cayley(a).dtype == torch.float32
    finally:
        torch.set_default_dtype(previous)
    assert O.cayley(torch.zeros(3, 3, device="meta")).device.type == "meta"


def test_orthogonal_cell_kaiming_is_the_default_input_init():
    """Kaiming (relu) inputs have std sqrt(2 / input_size) = 0.35 for 16 inputs; xavier's would be 0.16."""
    torch.manual_seed(5)
    cell = O.OrthogonalRNNCell(16, 64)
    assert cell.input.weight.std().item() == pytest.approx(math.sqrt(2 / 16), rel=0.1)


# --------------------------------------------------------------------------------------------- rnn
def test_identity_recurrent_matrix():
    """init="identity" is scale I exactly."""
    assert torch.equal(R.recurrent_matrix(3, 0.5, "identity"), 0.5 * torch.eye(3))


def test_recurrent_matrix_draws_from_the_given_generator():
    """Gaussian N(0, scale^2 / n): the generator's own draw, whatever the global RNG state."""
    for state in (1, 2):
        torch.manual_seed(state)
        got = R.recurrent_matrix(4, 0.8, generator=torch.Generator().manual_seed(6))
        torch.testing.assert_close(got, torch.randn(4, 4, generator=torch.Generator().manual_seed(6)) * 0.4)


def test_orthogonal_recurrent_matrix_is_the_qr_factor_with_positive_r_diagonal():
    """W / scale is the unique orthogonal Q with Q^T g upper triangular and of positive diagonal, g the generator's
    Gaussian draw (the sign fix scales Q's columns, not its rows)."""
    g = torch.randn(5, 5, generator=torch.Generator().manual_seed(13), dtype=F64)
    W = R.recurrent_matrix(5, 0.7, "orthogonal", generator=torch.Generator().manual_seed(13), dtype=F64)
    torch.testing.assert_close(W.T @ W, 0.49 * torch.eye(5, dtype=F64))
    r = W.T @ g / 0.7
    torch.testing.assert_close(torch.tril(r, -1), torch.zeros(5, 5, dtype=F64))
    assert bool((torch.diagonal(r) > 0).all())


def test_rnn_cell_initial_weights_written_out():
    """Defaults weight_scale = input_scale = 1: W ~ N(0, 1/n) then U ~ N(0, 1/d), from the global RNG in that order."""
    torch.manual_seed(7)
    cell = R.RNNCell(3, 5)
    torch.manual_seed(7)
    W, U = torch.randn(5, 5) / math.sqrt(5), torch.randn(5, 3) / math.sqrt(3)
    torch.testing.assert_close(cell.weight_hh.detach(), W)
    torch.testing.assert_close(cell.weight_ih.detach(), U)
    assert torch.equal(R.RNNCell(3, 5, weight_scale=0.9, recurrent_init="identity").weight_hh, 0.9 * torch.eye(5))


def test_rnn_cell_without_bias_has_no_bias_parameter():
    """bias=False drops b: two parameters, W and U."""
    cell = R.RNNCell(3, 5, bias=False)
    assert cell.bias is None and [n for n, _ in cell.named_parameters()] == ["weight_hh", "weight_ih"]


def test_rnn_initial_state_in_the_dtype_asked_for():
    """dtype=float64 for a float32 cell gives float64 zeros."""
    assert R.RNNCell(1, 2).initial_state(3, dtype=F64).dtype == F64


# --------------------------------------------------------------------------------------------- spiking
def test_truncated_normal_is_the_inverse_cdf_of_float64_uniforms():
    """scipy's truncnorm.ppf of the generator's float64 uniforms."""
    u = torch.rand(6, generator=torch.Generator().manual_seed(8), dtype=F64).numpy()
    mean, std = 0.1, 0.3 / 7
    expected = stats.truncnorm.ppf(u, -mean / std, mean / std, loc=mean, scale=std)
    got = S.truncated_normal(6, mean, std, torch.Generator().manual_seed(8))
    torch.testing.assert_close(got, torch.tensor(expected, dtype=torch.float32))


@pytest.mark.parametrize("beta_init", ["positive", "symmetric"])
def test_alif_parameters_come_from_the_seed_alone(beta_init):
    """The same seed under two global RNG states gives every parameter equal."""
    cells = []
    for state in (1, 2):
        torch.manual_seed(state)
        cells.append(S.ALIFCell(3, 4, beta_init=beta_init, seed=9))
    for (name, p), q in zip(cells[0].named_parameters(), cells[1].parameters()):
        assert torch.equal(p, q), name


def test_alif_truncated_normals_have_std_three_sevenths_of_the_mean(monkeypatch):
    """Tab. S1: each of tau_y, tau_th, b_th, beta is drawn with std 3 mu / 7, from the cell's seeded generator."""
    seen, draw = [], S.truncated_normal

    def recorded(n, mean, std, generator=None):
        seen.append((n, mean, std, isinstance(generator, torch.Generator)))
        return draw(n, mean, std, generator)

    monkeypatch.setattr(S, "truncated_normal", recorded)
    S.ALIFCell(2, 3, tau_y=0.2, tau_th=50.0, b_th=0.03, beta=1.4, seed=0)
    assert [(n, mean, gen) for n, mean, _, gen in seen] == [
        (3, 0.2, True),
        (3, 50.0, True),
        (3, 0.03, True),
        (3, 1.4, True),
    ]
    assert [std for *_, std, _ in seen] == pytest.approx([0.6 / 7, 150 / 7, 0.09 / 7, 4.2 / 7], rel=1e-12)


def test_spike_derivative_uses_both_dampening_and_sharpness():
    """d spike / dv = dampening / (1 + sharpness |v|)^2: 0.5 / 9 at v = 1 for sharpness 2, 0.5 at v = 0."""
    cell = S.ALIFCell(1, 1, sharpness=2.0, seed=0)
    v = torch.tensor([1.0, 0.0], requires_grad=True)
    (grad,) = torch.autograd.grad(cell.spike(v).sum(), v)
    assert grad.tolist() == pytest.approx([0.5 / 9, 0.5])


def test_alif_output_is_the_spike_of_y_minus_theta():
    """x = H(y - theta): y = 1, theta = 2 does not spike; y = 2, theta = 1 does."""
    cell = S.ALIFCell(1, 2, seed=0)
    assert cell.output(torch.tensor([[1.0, 2.0, 2.0, 1.0]])).tolist() == [[0.0, 1.0]]


def test_alif_step_is_eq_49_with_its_bias():
    """One step against eq. 49 written out, with b_y set to 0.3 (the +b_y term); a 1-D state steps alone too."""
    cell = S.ALIFCell(2, 3, seed=1)
    with torch.no_grad():
        cell.b_y.fill_(0.3)
    g = torch.Generator().manual_seed(10)
    y, th, u = torch.randn(2, 3, generator=g), torch.rand(2, 3, generator=g), torch.randn(2, 2, generator=g)
    with torch.no_grad():
        x = (y - th > 0).float()
        y1 = torch.exp(-1 / cell.tau_y) * y + x @ cell.weight_hh.T + u @ cell.weight_ih.T + 0.3 - th * x
        th1 = torch.exp(-1 / cell.tau_th) * th + cell.b_th + cell.beta * x
        state = torch.cat([y, th], -1)
        torch.testing.assert_close(cell(state, u), torch.cat([y1, th1], -1))
        torch.testing.assert_close(cell(state[1], u[1]), torch.cat([y1, th1], -1)[1])


# --------------------------------------------------------------------------------------------- stacked
def test_stacked_forward_names_the_shape_of_a_wrong_model_count():
    """Inputs for 3 models given to 2: the full message, with the shape passed."""
    models = [R.SequenceModel([R.RNNCell(1, 2)], 1) for _ in range(2)]
    params, buffers = torch.func.stack_module_state(models)
    forward = stacked_forward(models[0])
    message = r"^x must be \(models, batch, T, features\) or \(batch, T, features\), got \(3, 2, 4, 1\)$"
    with pytest.raises(ValueError, match=message):
        forward(params, buffers, torch.zeros(3, 2, 4, 1))


def test_linear_scan_of_a_vector_along_dim_0():
    """A 1-D b is a sequence of scalars along dim 0: h = 1, 0.5 + 2, 0.5 * 2.5 + 3, by hand."""
    got = scan.linear_scan(
        torch.tensor(0.5, dtype=torch.float64), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), dim=0
    )
    torch.testing.assert_close(got, torch.tensor([1.0, 2.5, 4.25], dtype=torch.float64), rtol=0, atol=0)


class _OnGpu(torch.Tensor):
    """A CPU tensor that says it lives on a GPU: enough for linear_scan's choice of backend."""

    @property
    def is_cuda(self):
        return True


@pytest.mark.parametrize(
    "on_gpu, has_triton, want",
    [(False, True, "sequential"), (False, False, "sequential"), (True, True, "triton"), (True, False, "parallel")],
)
def test_linear_scan_auto_backend(monkeypatch, on_gpu, has_triton, want):
    """backend="auto" as documented: the sequential loop on the CPU; on a GPU Triton where installed, else parallel."""
    chosen = []
    fakes = {name: (lambda a, b, h0, dim, name=name: chosen.append(name) or b) for name in scan.BACKENDS}
    monkeypatch.setattr(scan, "BACKENDS", fakes)
    monkeypatch.setattr(scan, "triton_available", lambda: has_triton)
    b = torch.ones(1, 3)
    scan.linear_scan(0.5, b.as_subclass(_OnGpu) if on_gpu else b)
    assert chosen == [want]
