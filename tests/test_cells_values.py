"""Cells of the nnRNN and LSC chapters by value (lscnb.models.modrelu_rnn, orthogonal, spiking): sequences against step
loops, initial laws by their moments and supports, Givens products and skew initialisations by their definitions
(issue 27)."""

import math

import pytest
import torch

from lscnb.models import modrelu_rnn as MR
from lscnb.models import orthogonal as O
from lscnb.models import spiking as S


@pytest.mark.parametrize("make", [lambda: MR.FreeRNNCell(3, 4, init="orth"), lambda: MR.EURNNCell(3, 4, capacity=3)])
def test_modrelu_sequence_is_the_step_loop(make):
    cell = make()
    x = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(0))
    h = torch.zeros(2, 4)
    W = cell.weight()
    states = []
    for t in range(5):
        h = cell.phi(h @ W.T + x[:, t] @ cell.U.T)
        states.append(h)
    torch.testing.assert_close(cell.sequence(x), torch.stack(states, 1))
    start = torch.ones(2, 4)
    torch.testing.assert_close(cell.sequence(x[:, :1], start)[:, 0], cell(start, x[:, 0]))
    assert cell.initial_state(3).shape == (3, 4) and cell.initial_state(1, dtype=torch.float64).dtype == torch.float64
    x64 = x.double()
    cell.double()
    assert cell.sequence(x64).dtype == torch.float64


def test_modrelu_input_weights_are_kaiming_for_relu():
    cell = MR.FreeRNNCell(400, 300)
    assert cell.U.std().item() == pytest.approx(math.sqrt(2 / 400), rel=0.02)


def test_free_rnn_initialisations():
    glorot = MR.FreeRNNCell(2, 400, seed=1).W.detach()
    assert glorot.std().item() == pytest.approx(1 / 20, rel=0.02)
    for init in ("orth", "cayley", "henaff"):
        W = MR.FreeRNNCell(2, 6, init=init, seed=1).W.detach()
        torch.testing.assert_close(W @ W.T, torch.eye(6), atol=1e-5, rtol=0)
    a, b = MR.FreeRNNCell(2, 6, init="henaff", seed=1).W, MR.FreeRNNCell(2, 6, init="henaff", seed=2).W
    assert not torch.allclose(a, b)


def _givens(n, i, angle):
    g = torch.eye(n)
    c, s = math.cos(angle), math.sin(angle)
    g[i, i], g[i, i + 1], g[i + 1, i], g[i + 1, i + 1] = c, -s, s, c
    return g


def test_eurnn_weight_is_the_product_of_givens_layers():
    cell = MR.EURNNCell(2, 5, capacity=3, seed=3)
    assert cell.angles_even.shape == (2, 2) and cell.angles_odd.shape == (1, 2)
    assert cell.angles_even.abs().max() <= math.pi and cell.angles_odd.abs().max() <= math.pi
    W = torch.eye(5)
    for layer in range(3):
        angles = (cell.angles_even if layer % 2 == 0 else cell.angles_odd)[layer // 2].detach()
        R = torch.eye(5)
        for k, i in enumerate(range(layer % 2, 4, 2)):
            R = _givens(5, i, float(angles[k])) @ R
        W = R @ W
    torch.testing.assert_close(cell.weight().detach(), W, atol=1e-6, rtol=0)
    assert cell.effective_parameters() == 6 + 5 * 2 + 5  # angles, U, modReLU biases
    assert MR.EURNNCell(2, 4).capacity == 2
    with pytest.raises(ValueError, match="hidden_size must be at least 2, got 1"):
        MR.EURNNCell(2, 1)


def test_skew_and_cayley_by_hand():
    a = torch.tensor([[[5.0, 1.0, 2.0], [7.0, 5.0, 3.0], [8.0, 9.0, 5.0]]])  # a batch of one
    assert O.skew(a)[0].tolist() == [[0.0, 1.0, 2.0], [-1.0, 0.0, 3.0], [-2.0, -3.0, 0.0]]
    s = torch.tensor([[0.0, 0.5], [-0.5, 0.0]], dtype=torch.float64)
    # (I + S)^-1 (I - S) for S = [[0, t], [-t, 0]] is a rotation by 2 atan t
    angle = 2 * math.atan(0.5)
    expected = torch.tensor(
        [[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]], dtype=torch.float64
    )
    c = O.cayley(s)
    torch.testing.assert_close(c, expected)
    assert c.dtype == torch.float64
    assert O.Orthogonal().map == "exp" and O.Orthogonal("cayley").map == "cayley"
    torch.testing.assert_close(O.Orthogonal("cayley")(s), expected)
    torch.testing.assert_close(O.Orthogonal()(s), torch.matrix_exp(O.skew(s)))


def test_skew_init_kinds():
    g = torch.Generator().manual_seed(0)
    assert torch.equal(O.skew_init(4, "zero"), torch.zeros(4, 4))
    random = O.skew_init(300, "random", generator=g)
    assert random.shape == (300, 300) and random.std().item() == pytest.approx(1 / math.sqrt(300), rel=0.02)
    henaff = O.skew_init(400, generator=torch.Generator().manual_seed(1))
    s = henaff[torch.arange(200) * 2, torch.arange(200) * 2 + 1]
    assert s.max() <= 0 and s.min() >= -math.pi and s.mean().item() == pytest.approx(-math.pi / 2, abs=0.15)
    assert torch.count_nonzero(henaff) == 200  # every other super-diagonal entry only
    cay = O.skew_init(400, "cayley", generator=torch.Generator().manual_seed(1))
    c = cay[torch.arange(200) * 2, torch.arange(200) * 2 + 1]
    assert c.max() <= 0 and c.min() >= -1.0 - 1e-6  # -tan(t/2), t in [0, pi/2]
    assert torch.equal(
        O.skew_init(6, "random", generator=torch.Generator().manual_seed(2)),
        O.skew_init(6, "random", generator=torch.Generator().manual_seed(2)),
    )
    assert O.skew_init(4, "random", dtype=torch.float64).dtype == torch.float64


def test_truncated_normal_support_and_moments():
    x = S.truncated_normal(50_000, 0.1, 3 * 0.1 / 7, torch.Generator().manual_seed(0))
    assert x.dtype == torch.float32 and x.min() >= 0 and x.max() <= 0.2 + 1e-7
    assert x.mean().item() == pytest.approx(0.1, abs=0.001)
    # N(mean, sd) truncated at +-7/3 sd: the standard deviation shrinks by sqrt(1 - 2 a phi(a) / (2 Phi(a) - 1))
    a = 7 / 3
    phi, Phi = math.exp(-a * a / 2) / math.sqrt(2 * math.pi), 0.5 * (1 + math.erf(a / math.sqrt(2)))
    shrink = math.sqrt(1 - 2 * a * phi / (2 * Phi - 1))
    assert x.std().item() == pytest.approx(3 * 0.1 / 7 * shrink, rel=0.02)


def test_alif_initial_laws_and_seeds():
    cell = S.ALIFCell(40, 3000, seed=1)
    for name, mean in (("tau_y", 0.1), ("tau_th", 100.0), ("b_th", 0.01), ("beta", 1.8)):
        p = getattr(cell, name).detach()
        assert p.mean().item() == pytest.approx(mean, rel=0.03), name
        assert p.min() >= 0 and p.max() <= 2 * mean * (1 + 1e-6), name
    bound = math.sqrt(6 / (40 + 3000))
    assert cell.weight_ih.abs().max() <= bound and cell.weight_ih.abs().max() > 0.99 * bound
    assert cell.sharpness == 1.0 and cell.dampening == 0.5 and torch.all(cell.b_y == 0)
    sym = S.ALIFCell(40, 3000, beta_init="symmetric", seed=1)
    assert sym.beta.mean().item() == pytest.approx(0.0, abs=0.005)
    assert sym.beta.std().item() == pytest.approx(1.8 / 40, rel=0.05)
    same = [S.ALIFCell(3, 4, seed=5), S.ALIFCell(3, 4, seed=5), S.ALIFCell(3, 4, seed=6)]
    assert torch.equal(same[0].weight_hh, same[1].weight_hh) and torch.equal(same[0].tau_y, same[1].tau_y)
    assert not torch.equal(same[0].weight_hh, same[2].weight_hh) and not torch.equal(same[0].tau_th, same[2].tau_th)
    assert not torch.equal(S.ALIFCell(3, 4).weight_hh, S.ALIFCell(3, 4).weight_hh)  # no seed: fresh draws
    assert (
        same[0].initial_state(2).shape == (2, 8)
        and same[0].initial_state(1, dtype=torch.float64).dtype == torch.float64
    )


@pytest.mark.parametrize("activation, phi", [("tanh", torch.tanh), ("relu", torch.relu), ("linear", lambda z: z)])
def test_orthogonal_cell_activations_and_inits(activation, phi):
    torch.manual_seed(0)
    cell = O.OrthogonalRNNCell(3, 4, activation=activation, init="cayley", input_init="xavier")
    W = cell.recurrent.weight.detach()
    base = cell.recurrent.parametrizations.weight.original.detach()
    assert -1.0 <= base[0, 1] <= 0 and -1.0 <= base[2, 3] <= 0 and torch.count_nonzero(base) <= 2  # cayley's -tan(t/2)
    torch.testing.assert_close(W, torch.matrix_exp(O.skew(base)))
    h, x = torch.randn(2, 4), torch.randn(2, 3)
    expected = phi(h @ W.T + x @ cell.input.weight.T + cell.input.bias)
    torch.testing.assert_close(cell(h, x), expected)
    assert cell.recurrent.parametrizations.weight.original.shape == (4, 4)
    assert cell.initial_state(2, dtype=torch.float64).dtype == torch.float64 and cell.initial_state(3).shape == (3, 4)
    assert cell.initial_state(1, device="meta").device.type == "meta"


def test_orthogonal_cell_default_init_and_input_scale():
    torch.manual_seed(1)
    cell = O.OrthogonalRNNCell(300, 6)  # henaff skew init under the exp map, kaiming (relu) inputs
    base = cell.recurrent.parametrizations.weight.original.detach()
    s = base[torch.arange(3) * 2, torch.arange(3) * 2 + 1]
    assert torch.all(s <= 0) and torch.all(s >= -math.pi) and torch.count_nonzero(base) == 3
    assert cell.input.weight.std().item() == pytest.approx(math.sqrt(2 / 300), rel=0.15)
    assert isinstance(cell.phi, O.ModReLU)
    plain = O.OrthogonalRNNCell(3, 4, input_bias=False)
    assert plain.input.bias is None and plain.recurrent.bias is None


def test_modrelu_bias_init_range():
    torch.manual_seed(2)
    m = O.ModReLU(5000)
    assert m.bias.min() >= -0.01 and m.bias.max() <= 0.01 and m.bias.min() < -0.009
