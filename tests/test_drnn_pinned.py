"""The d-RNNs of the LSC paper's Fig. 3 (lscnb.models.drnn) pinned by answers worked here (issue 27): Keras'
initialisations replayed as plain draws on the seed's own generator, the documented defaults, the ALIF kinds'
adaptation signs, each layer's seed, and full error messages; with the pieces they stand on (run_cell, Stack,
glorot_uniform_, get_activation) checked on toy recurrences and values written out here."""

import math
import re

import pytest
import torch

from lscnb.models import rnn
from lscnb.models.activations import get_activation
from lscnb.models.drnn import DRNN, count_parameters, make_drnn_cell
from lscnb.models.spiking import ALIFCell, glorot_uniform_


def _glorot(shape, g):
    """Keras' Glorot-uniform, plainly: U(-a, a), a = sqrt(6 / (fan_in + fan_out)) (sqrt(3 / n) for a vector)."""
    a = math.sqrt(6.0 / (shape[0] + shape[1])) if len(shape) == 2 else math.sqrt(3.0 / shape[0])
    return torch.rand(shape, generator=g) * 2 * a - a


def _orthogonal(n, blocks, g):
    """``blocks`` stacked (n, n) Q factors of Gaussian draws, columns signed so that R's diagonal is positive."""
    out = []
    for _ in range(blocks):
        q, r = torch.linalg.qr(torch.randn(n, n, generator=g))
        out.append(q @ torch.diag(torch.where(torch.diagonal(r) < 0, -1.0, 1.0)))
    return torch.cat(out)


def _expected_cell(kind, d_in, n, seed):
    """The parameters make_drnn_cell documents (App. H), drawn in order on ``Generator().manual_seed(seed)``."""
    g = torch.Generator().manual_seed(seed)
    gates = {"gru": 3, "lstm": 4}.get(kind, 1)
    w_in = _glorot((gates * n, d_in), g)
    if gates == 1:
        b = _glorot((n,), g)
        return {"weight_ih": w_in, "bias": b, "weight_hh": _orthogonal(n, 1, g)}
    return {"weight_ih": w_in, "weight_hh": _orthogonal(n, gates, g), "bias_ih": torch.zeros(gates * n)}


def _assert_params(cell, expected):
    for name, value in expected.items():
        torch.testing.assert_close(getattr(cell, name).detach(), value, msg=name)


@pytest.mark.parametrize("kind", ["sigma", "relu", "swish", "gru", "lstm"])
def test_drnn_cell_init_is_keras_glorot_and_orthogonal_on_the_seeds_generator(kind):
    """Glorot-uniform W_in (and b for the simple kinds), orthogonal recurrent blocks with positive R diagonal, zero
    gate biases: replayed as plain draws on the seed's generator, whatever the global RNG state."""
    torch.manual_seed(123)
    cell = make_drnn_cell(kind, 3, 4, seed=5)
    _assert_params(cell, _expected_cell(kind, 3, 4, 5))
    blocks = cell.weight_hh.detach().reshape(-1, 4, 4)
    for block in blocks:
        torch.testing.assert_close(block @ block.T, torch.eye(4), atol=1e-5, rtol=0)
    torch.manual_seed(321)
    assert torch.equal(make_drnn_cell(kind, 3, 4, seed=5).weight_hh, cell.weight_hh)
    if kind in ("gru", "lstm"):
        assert not cell.bias_ih.any() and not cell.bias_hh.any()


def test_drnn_cell_and_drnn_default_seed_is_zero():
    """The documented default ``seed=0`` of make_drnn_cell and DRNN."""
    _assert_params(make_drnn_cell("gru", 2, 3), _expected_cell("gru", 2, 3, 0))
    model = DRNN("relu", 2, [3, 4], output_size=2)
    _assert_params(model.stack.cells[0], _expected_cell("relu", 2, 3, 0))
    _assert_params(model.stack.cells[1], _expected_cell("relu", 3, 4, 1000))


@pytest.mark.parametrize(("kind", "beta_init"), [("alif+", "positive"), ("alif-pm", "symmetric")])
def test_drnn_alif_kinds_are_alif_cells_with_their_adaptation_seed_and_options(kind, beta_init):
    """alif+ -> positive (truncated-normal, in [0, 2 beta]) adaptation, alif-pm -> symmetric (some negative);
    the seed and the extra options reach ALIFCell (same draw as ALIFCell itself, under any global RNG state)."""
    torch.manual_seed(1)
    cell = make_drnn_cell(kind, 3, 16, seed=7, tau_th=40.0, beta=1.5)
    assert isinstance(cell, ALIFCell) and cell.beta_init == beta_init
    torch.manual_seed(2)
    ref = ALIFCell(3, 16, beta_init=beta_init, seed=7, tau_th=40.0, beta=1.5)
    for name, value in ref.named_parameters():
        assert torch.equal(getattr(cell, name), value), name
    assert cell.tau_th.min() >= 0 and cell.tau_th.max() <= 80.0  # truncated to [0, 2 * 40], not [0, 200]
    beta = cell.beta.detach()
    if kind == "alif+":
        assert beta.min() >= 0 and beta.max() <= 3.0
    else:
        assert beta.min() < 0 < beta.max()


@pytest.mark.parametrize("kind", ["gru", "alif-pm"])
def test_drnn_layer_l_is_seeded_seed_plus_1000_l(kind):
    """Layer l of DRNN(seed=s) is make_drnn_cell's layer drawn with seed s + 1000 l; options reach every layer."""
    options = {"tau_th": 30.0} if kind == "alif-pm" else {}
    model = DRNN(kind, 3, [4, 5, 6], output_size=2, seed=7, **options)
    assert model.kind == kind
    for l, (a, b) in enumerate([(3, 4), (4, 5), (5, 6)]):
        cell = model.stack.cells[l]
        if kind == "gru":
            _assert_params(cell, _expected_cell(kind, a, b, 7 + 1000 * l))
        else:
            ref = ALIFCell(a, b, beta_init="symmetric", seed=7 + 1000 * l, tau_th=30.0)
            for name, value in ref.named_parameters():
                assert torch.equal(getattr(cell, name), value), (l, name)


def test_drnn_tied_language_model_has_no_readout_and_names_its_widths():
    """vocab given: an embedding (vocab, input_size), ``readout`` None; a last width unlike input_size is refused
    with the last width and input_size named (widths [7, 8, 5], input_size 6)."""
    lm = DRNN("lstm", 6, [7, 6], vocab=11)
    assert lm.readout is None and lm.embed.weight.shape == (11, 6)
    with pytest.raises(ValueError, match=r"^a tied language model needs widths\[-1\] == input_size, got 5 and 6$"):
        DRNN("lstm", 6, [7, 8, 5], vocab=11)


@pytest.mark.parametrize(
    ("widths", "extra", "message"),
    [
        ([], {"output_size": 2}, r"^widths must hold at least one width$"),
        ([3], {}, r"^give exactly one of output_size \(classification\) and vocab \(tied language model\)$"),
        ([3], {"output_size": 2, "vocab": 5}, r"^give exactly one of output_size \(classification\) and vocab "),
    ],
)
def test_drnn_refuses_no_widths_and_both_or_neither_head(widths, extra, message):
    """The full messages for an empty ``widths`` and for neither or both of output_size and vocab."""
    with pytest.raises(ValueError, match=message):
        DRNN("gru", 3, widths, **extra)


@pytest.mark.parametrize(
    ("kind", "phi"),
    [
        ("sigma", lambda a: 1 / (1 + torch.exp(-a))),
        ("relu", lambda a: torch.where(a > 0, a, 0.0)),
        ("swish", lambda a: a / (1 + torch.exp(-a))),
    ],
)
def test_drnn_simple_cells_step_is_phi_of_the_affine_map(kind, phi):
    """h' = phi(W_rec h + W_in u + b) with phi the logistic sigmoid, ReLU or swish a sigma(a), written out here."""
    cell = make_drnn_cell(kind, 3, 4, seed=2)
    assert cell.activation == {"sigma": "sigmoid", "relu": "relu", "swish": "swish"}[kind]
    g = torch.Generator().manual_seed(9)
    h, u = torch.randn(5, 4, generator=g), torch.randn(5, 3, generator=g)
    with torch.no_grad():
        a = h @ cell.weight_hh.T + u @ cell.weight_ih.T + cell.bias
        torch.testing.assert_close(cell(h, u), phi(a))
        assert (a < 0).any() and (a > 0).any()


def test_count_parameters_counts_trainable_scalars_by_hand():
    """A one-bias LSTM 2 -> 3 has 12*2 + 12*3 + 12 = 72 trainable scalars (bias_hh is a buffer), its readout
    3*2 + 2 = 8; a frozen readout drops those 8."""
    model = DRNN("lstm", 2, [3], output_size=2)
    assert count_parameters(model) == 80
    model.readout.requires_grad_(False)
    assert count_parameters(model) == 72


# --------------------------------------------------------------------------------------------- rnn.run_cell, Stack
class _HalfCell(torch.nn.Module):
    """s' = s / 2 + sum(x) (in every state unit), output 10 s: a recurrence simple enough to write out; it records
    the device and dtype its initial state is asked for."""

    def __init__(self, width):
        super().__init__()
        self.state_size, self.asked = width, []

    def initial_state(self, batch, device=None, dtype=None):
        self.asked.append((device, dtype))
        return torch.full((batch, self.state_size), 1.0, dtype=dtype)

    def forward(self, state, x):
        return state / 2 + x.sum(-1, keepdim=True)

    def output(self, state):
        return 10 * state


def test_run_cell_stacks_every_step_from_the_cells_initial_state():
    """Starting from initial_state (asked with x's device and dtype), s_t = s_{t-1} / 2 + sum x_t: (1, 3, 1) steps."""
    cell = _HalfCell(2)
    x = torch.tensor([[[1.0, 0.0], [2.0, 2.0], [0.0, -1.0]]], dtype=torch.float64)
    got = rnn.run_cell(cell, x)
    expected = torch.tensor([[[1.5] * 2, [4.75] * 2, [1.375] * 2]], dtype=torch.float64)
    assert got.dtype == torch.float64 and cell.asked == [(torch.device("cpu"), torch.float64)]
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(
        rnn.run_cell(cell, x, torch.zeros(1, 2, dtype=torch.float64))[:, 0], torch.ones(1, 2, dtype=torch.float64)
    )


def test_run_cell_step_replaces_the_cell_and_must_be_callable():
    """``step`` is the one-step function used instead of the cell; a non-callable step is refused by name."""
    cell = _HalfCell(1)
    got = rnn.run_cell(cell, torch.ones(2, 2, 1), step=lambda s, x: s * 3 + x)
    torch.testing.assert_close(got, torch.tensor([[[4.0], [13.0]]] * 2))
    with pytest.raises(TypeError, match=r"^step must be callable as step\(state, x_t\)$"):
        rnn.run_cell(cell, torch.ones(2, 2, 1), step=3)
    with pytest.raises(ValueError, match=r"^x must have 3 dimensions, got shape \(2, 1\)$"):
        rnn.run_cell(cell, torch.ones(2, 1))


def test_stack_feeds_each_layers_output_up_and_starts_from_given_states():
    """Layer 1 reads 10 s of layer 0 at the same step; ``states[l]`` starts layer l; no cells is refused."""
    stack = rnn.Stack([_HalfCell(1), _HalfCell(1)])
    assert len(stack) == 2
    x = torch.tensor([[[2.0], [4.0]]])
    low, high = stack(x, [torch.zeros(1, 1), torch.full((1, 1), 4.0)])
    torch.testing.assert_close(low, torch.tensor([[[2.0], [5.0]]]))
    torch.testing.assert_close(high, torch.tensor([[[22.0], [61.0]]]))  # 4/2 + 20, 22/2 + 50
    low, high = stack(x)  # initial states 1
    torch.testing.assert_close(high, torch.tensor([[[25.5], [65.25]]]))  # 1/2 + 25, 25.5/2 + 52.5
    with pytest.raises(ValueError, match=r"^cells must hold at least one cell$"):
        rnn.Stack([])


# --------------------------------------------------------------------------------------------- glorot, activations
@pytest.mark.parametrize(("shape", "a"), [((3, 5), math.sqrt(6 / 8)), ((4,), math.sqrt(3 / 4))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_glorot_uniform_is_u_minus_a_a_drawn_in_the_weights_dtype(shape, a, dtype):
    """U(-a, a) with a = sqrt(6 / (fan_in + fan_out)) (3 / n for a vector), drawn in the weight's dtype on the given
    generator whatever the global RNG state; the weight itself is filled and returned."""
    weight = torch.empty(shape, dtype=dtype)
    torch.manual_seed(5)
    got = glorot_uniform_(weight, torch.Generator().manual_seed(3))
    expected = torch.rand(shape, generator=torch.Generator().manual_seed(3), dtype=dtype) * 2 * a - a
    assert got is weight and got.dtype == dtype
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-15 if dtype == torch.float64 else 1e-7)
    assert got.abs().max() < a


def test_get_activation_by_name_and_its_error():
    """Each name maps to the function of that name (values at -1, 0.5 written out); an unknown name is refused."""
    z = torch.tensor([-1.0, 0.5])
    expected = {
        "linear": z,
        "tanh": torch.tensor([-0.7615941559557649, 0.46211715726000974]),
        "relu": torch.tensor([0.0, 0.5]),
        "sigmoid": torch.tensor([0.2689414213699951, 0.6224593312018546]),
        "sin": torch.tensor([-0.8414709848078965, 0.479425538604203]),
        "cos": torch.tensor([0.5403023058681398, 0.8775825618903728]),
        "softplus": torch.tensor([0.31326168751822286, 0.9740769841801067]),
        "gelu": torch.tensor([-0.15865525393145707, 0.34573123063700656]),
    }
    for name, value in expected.items():
        torch.testing.assert_close(get_activation(name)(z), value, msg=name)
    message = (
        "activation must be one of ['cos', 'gelu', 'linear', 'relu', 'sigmoid', 'sin', 'softplus', 'tanh'], got 'elu'"
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        get_activation("elu")
