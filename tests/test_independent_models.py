"""Models against answers the code under test did not compute: plain float64 loops of the papers' equations written
here, torch's / scipy's own implementations, float64 finite differences (issue 27)."""

import math

import numpy as np
import pytest
import scipy.linalg
import torch

from lscnb.models.activations import ACTIVATIONS, activation_derivative
from lscnb.models.deep_recurrent import ChronoGRU, DiagonalRecurrence
from lscnb.models.drnn import SingleBiasLSTMCell
from lscnb.models.orthogonal import ModReLU, Orthogonal, OrthogonalRNNCell, cayley, skew, skew_init
from lscnb.models.roa import RoaFNN, RoaRNN, RoaRNNCell, semi_orthogonal

D = torch.float64


# ---------------------------------------------------------------------------------------------------- activations
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_derivative_matches_central_differences(name):
    z = torch.tensor([-2.3, -0.7, -0.1, 0.2, 0.9, 1.7], dtype=D)  # no kink of relu at 0
    eps = 1e-6
    phi = ACTIVATIONS[name]
    fd = (phi(z + eps) - phi(z - eps)) / (2 * eps)
    torch.testing.assert_close(activation_derivative(name, z), fd, atol=1e-8, rtol=0)


# ------------------------------------------------------------------------------------------------ roaFNN / roaRNN
def _roa_fnn_by_hand(net, x, alpha, phi):
    """Ceni (2022) eq. 12: x_{l+1} = alpha phi(W_l x_l + b_l) + (1 - alpha) O_l x_l; the last map is linear."""
    Ws = [net.W_in] + list(net.W_h) + [net.W_out]
    bs = [net.b_in] + list(net.b_h) + [net.b_out]
    Os = [net.O_in] + list(net.O_h) + [net.O_out]
    h = x.numpy()
    for k, (W, b, O) in enumerate(zip(Ws, bs, Os)):
        W, b, O = W.detach().numpy(), b.detach().numpy(), O.numpy()
        pre = h @ W.T + b
        act = pre if k == len(Ws) - 1 else phi(pre)
        h = alpha * act + (1 - alpha) * h @ O.T
    return h


def test_roa_fnn_forward_is_eq12():
    net = RoaFNN(3, 4, 2, 6, rho=2.0, init_std=None, seed=1).double()
    x = torch.randn(5, 3, dtype=D, generator=torch.Generator().manual_seed(0))
    assert net.alpha == pytest.approx(2.0 / 5)
    expected = _roa_fnn_by_hand(net, x, 2.0 / 5, np.tanh)
    np.testing.assert_allclose(net(x).detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    plain = RoaFNN(3, 4, 2, 6, rho=None, activation="relu", init_std=None, seed=1).double()  # alpha = 1: the MLP
    np.testing.assert_allclose(
        plain(x).detach().numpy(), _roa_fnn_by_hand(plain, x, 1.0, lambda v: np.maximum(v, 0)), rtol=1e-12
    )


def test_roa_rnn_cell_and_model_are_eq19_and_eq20():
    """x' = alpha relu(W_h x + b + W_i u) + (1 - alpha) O x (eq. 19), z = W_o x + b_o (eq. 20), a loop written here."""
    torch.manual_seed(0)
    alpha = 0.3
    model = RoaRNN(2, 4, 3, alpha=alpha, init_std=None, seed=2).double()
    c = model.cell
    Wh, Wi, b, O = (t.detach().numpy() for t in (c.weight_hh, c.weight_ih, c.bias, c.O))
    Wo, bo = model.readout.weight.detach().numpy(), model.readout.bias.detach().numpy()
    x = torch.randn(3, 7, 2, dtype=D)
    h = np.zeros((3, 4))
    states = []
    for t in range(7):
        h = alpha * np.maximum(h @ Wh.T + b + x[:, t].numpy() @ Wi.T, 0) + (1 - alpha) * h @ O.T
        states.append(h)
    states = np.stack(states, 1)
    np.testing.assert_allclose(model.states(x).detach().numpy(), states, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model(x).detach().numpy(), states @ Wo.T + bo, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.last_state(x).detach().numpy(), states[:, -1], rtol=1e-12, atol=1e-12)
    last = RoaRNN(2, 4, 3, alpha=alpha, init_std=None, seed=2, readout="last").double()
    np.testing.assert_allclose(last(x).detach().numpy(), states[:, -1] @ Wo.T + bo, rtol=1e-12, atol=1e-12)
    one = c(torch.tensor(states[:, 2]), x[:, 3]).detach().numpy()
    np.testing.assert_allclose(one, states[:, 3], rtol=1e-12, atol=1e-12)
    # O is a fixed buffer, not trained
    assert "O" in dict(c.named_buffers()) and all(p is not c.O for p in c.parameters())


def test_roa_cell_alpha_one_is_the_elman_rnn():
    cell = RoaRNNCell(2, 3, alpha=1.0, activation="tanh", seed=0).double()
    h, u = torch.randn(4, 3, dtype=D), torch.randn(4, 2, dtype=D)
    expected = torch.tanh(h @ cell.weight_hh.T + cell.bias + u @ cell.weight_ih.T)
    torch.testing.assert_close(cell(h, u), expected, rtol=1e-14, atol=1e-14)


def test_semi_orthogonal_identity_and_permutation_structure():
    assert torch.equal(semi_orthogonal(3, 2, method="identity", dtype=D), torch.eye(3, 2, dtype=D))
    assert torch.equal(semi_orthogonal(2, 3, method="identity", dtype=D), torch.eye(2, 3, dtype=D))
    p = semi_orthogonal(5, 5, method="perm", generator=torch.Generator().manual_seed(0), dtype=D)
    assert torch.equal(p.sum(0), torch.ones(5, dtype=D)) and torch.equal(p.sum(1), torch.ones(5, dtype=D))
    assert set(p.unique().tolist()) == {0.0, 1.0}
    h = semi_orthogonal(4, 4, method="haar", generator=torch.Generator().manual_seed(0), dtype=D)
    raw = torch.randn(4, 4, generator=torch.Generator().manual_seed(0), dtype=D)
    # Mezzadri's sign fix: Q R = raw with R's diagonal positive, i.e. R = Q^T raw is upper triangular, diag > 0
    r = h.T @ raw
    torch.testing.assert_close(r.tril(-1), torch.zeros(4, 4, dtype=D), atol=1e-12, rtol=0)
    assert bool((r.diagonal() > 0).all())


# ------------------------------------------------------------------------------------------------------ orthogonal
def test_skew_cayley_exp_and_modrelu_by_hand():
    a = torch.tensor([[9.0, 1.0, 2.0], [5.0, 9.0, 3.0], [7.0, 8.0, 9.0]], dtype=D)
    expected_skew = torch.tensor([[0.0, 1.0, 2.0], [-1.0, 0.0, 3.0], [-2.0, -3.0, 0.0]], dtype=D)
    assert torch.equal(skew(a), expected_skew)  # only the strict upper triangle of a counts
    s = expected_skew.numpy()
    eye = np.eye(3)
    np.testing.assert_allclose(cayley(expected_skew).numpy(), np.linalg.inv(eye + s) @ (eye - s), rtol=1e-13)
    np.testing.assert_allclose(Orthogonal("exp")(a).detach().numpy(), scipy.linalg.expm(s), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(Orthogonal("cayley")(a).detach().numpy(), np.linalg.inv(eye + s) @ (eye - s), rtol=1e-13)
    # a 2x2 rotation: exp([[0, t], [-t, 0]]) = [[cos t, sin t], [-sin t, cos t]]; Cayley gives angle 2 atan t
    t = 0.4
    rot = torch.tensor([[0.0, t], [-t, 0.0]], dtype=D)
    c, sn = math.cos(t), math.sin(t)
    torch.testing.assert_close(Orthogonal("exp")(rot), torch.tensor([[c, sn], [-sn, c]], dtype=D))
    phi = 2 * math.atan(t)
    torch.testing.assert_close(
        cayley(rot), torch.tensor([[math.cos(phi), -math.sin(phi)], [math.sin(phi), math.cos(phi)]], dtype=D)
    )
    m = ModReLU(4).double()
    with torch.no_grad():
        m.bias.copy_(torch.tensor([0.5, -0.5, -1.0, 0.2], dtype=D))
    z = torch.tensor([[-2.0, 0.3, -0.4, 0.0]], dtype=D)
    # sign(z) relu(|z| + b): -2.5, 0, 0 (|z| + b < 0), 0 (sign 0)
    assert m(z).tolist() == [[-2.5, 0.0, -0.0, 0.0]]


def test_skew_init_gives_the_documented_rotation_angles():
    gen = torch.Generator().manual_seed(0)
    a = skew_init(6, "henaff", generator=gen, dtype=D)
    s = -math.pi * torch.rand(3, generator=torch.Generator().manual_seed(0), dtype=D)
    for k in range(3):
        assert a[2 * k, 2 * k + 1] == s[k]
    assert int((a != 0).sum()) == 3
    angles = np.sort(np.abs(np.angle(np.linalg.eigvals(scipy.linalg.expm(skew(a).numpy())))))
    np.testing.assert_allclose(angles, np.sort(np.repeat(np.abs(s.numpy()), 2)), atol=1e-12)
    c = skew_init(4, "cayley", generator=torch.Generator().manual_seed(1), dtype=D)
    u = torch.rand(2, generator=torch.Generator().manual_seed(1), dtype=D)
    torch.testing.assert_close(c[[0, 2], [1, 3]], -torch.tan(0.5 * (math.pi / 2) * u))


def test_orthogonal_rnn_cell_forward_by_hand():
    torch.manual_seed(0)
    cell = OrthogonalRNNCell(3, 4, map="exp", init="random").double()
    a = cell.recurrent.parametrizations.weight.original.detach().numpy()
    W = scipy.linalg.expm(np.triu(a, 1) - np.triu(a, 1).T)
    U, b, mb = (t.detach().numpy() for t in (cell.input.weight, cell.input.bias, cell.phi.bias))
    h, x = torch.randn(2, 4, dtype=D), torch.randn(2, 3, dtype=D)
    z = h.numpy() @ W.T + x.numpy() @ U.T + b
    expected = np.sign(z) * np.maximum(np.abs(z) + mb, 0)
    np.testing.assert_allclose(cell(h, x).detach().numpy(), expected, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------------------- gated cells, deep layers
def test_single_bias_lstm_is_torch_lstm_with_zero_hidden_bias():
    torch.manual_seed(0)
    ours = SingleBiasLSTMCell(3, 4).double()
    assert "bias_hh" not in dict(ours.named_parameters())
    assert sum(p.numel() for p in ours.parameters()) == 4 * 4 * (3 + 4) + 4 * 4  # one bias per gate (Keras)
    ref = torch.nn.LSTMCell(3, 4).double()
    with torch.no_grad():
        ref.weight_ih.copy_(ours.weight_ih)
        ref.weight_hh.copy_(ours.weight_hh)
        ref.bias_ih.copy_(ours.bias_ih)
        ref.bias_hh.zero_()
    x, h, c = torch.randn(2, 3, dtype=D), torch.randn(2, 4, dtype=D), torch.randn(2, 4, dtype=D)
    h2, c2 = ref(x, (h, c))
    torch.testing.assert_close(ours(torch.cat([h, c], -1), x), torch.cat([h2, c2], -1))


@pytest.mark.parametrize("param", ["exp", "default"])
def test_diagonal_recurrence_is_a_complex_diagonal_loop(param):
    """h_t = lambda h_{t-1} + gamma B x_t, y_t = Re(C h_t) + D x_t (LRU paper eq. 1 with gamma = sqrt(1 - |lambda|^2)
    under ``exp``), with lambda = exp(-exp(w_nu) + i exp(w_theta)), written here as a loop."""
    layer = DiagonalRecurrence(2, 3, nu_min=0.5, nu_max=0.9, param=param, generator=torch.Generator().manual_seed(0))
    layer = layer.double()
    if param == "exp":
        lam = torch.exp(-torch.exp(layer.w_nu) + 1j * torch.exp(layer.w_theta)).detach()
        gamma = torch.exp(layer.w_gamma).detach()
        torch.testing.assert_close(gamma, torch.sqrt(1 - lam.abs() ** 2))  # the initial normalisation
    else:
        lam = torch.complex(layer.lam_re, layer.lam_im).detach()
        gamma = torch.ones(3, dtype=D)
    assert bool(((lam.abs() >= 0.5 - 1e-6) & (lam.abs() <= 0.9 + 1e-6)).all())
    B = torch.complex(layer.B_re, layer.B_im).detach()
    C = torch.complex(layer.C_re, layer.C_im).detach()
    x = torch.randn(2, 6, 2, dtype=D, generator=torch.Generator().manual_seed(1))
    h = torch.zeros(2, 3, dtype=torch.complex128)
    ys = []
    for t in range(6):
        h = lam * h + gamma * (x[:, t].to(torch.complex128) @ B.T)
        ys.append((h @ C.T).real + x[:, t] * layer.D.detach())
    torch.testing.assert_close(layer(x).detach(), torch.stack(ys, 1), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(layer.last_state[:, -1].detach(), h, rtol=1e-12, atol=1e-12)


def test_chrono_gru_initialisation_and_sequence_by_hand():
    """Chrono init (Tallec & Ollivier 2018): b_z = log T with T in [t_min, t_max], other biases 0, each hidden
    block orthogonal times scale_h; the layer runs the GRU equations, written here."""
    layer = ChronoGRU(2, 3, t_min=2.0, t_max=5.0, scale_h=0.5, generator=torch.Generator().manual_seed(0)).double()
    c = layer.cell
    n = 3
    bz = c.bias_ih[n : 2 * n].detach()
    assert bool(((bz >= math.log(2.0) - 1e-6) & (bz <= math.log(5.0) + 1e-6)).all())
    assert float((c.bias_ih[:n].abs().sum() + c.bias_ih[2 * n :].abs().sum() + c.bias_hh.abs().sum()).detach()) == 0.0
    for k in range(3):
        blk = c.weight_hh[k * n : (k + 1) * n].detach()
        torch.testing.assert_close(blk @ blk.T, 0.25 * torch.eye(n, dtype=D), atol=1e-6, rtol=0)
    x = torch.randn(2, 5, 2, dtype=D, generator=torch.Generator().manual_seed(2))
    Wi, Wh, bi, bh = (t.detach() for t in (c.weight_ih, c.weight_hh, c.bias_ih, c.bias_hh))
    h = torch.zeros(2, n, dtype=D)
    for t in range(5):
        gi, gh = x[:, t] @ Wi.T + bi, h @ Wh.T + bh
        r = torch.sigmoid(gi[:, :n] + gh[:, :n])
        z = torch.sigmoid(gi[:, n : 2 * n] + gh[:, n : 2 * n])
        cand = torch.tanh(gi[:, 2 * n :] + r * gh[:, 2 * n :])
        h = (1 - z) * cand + z * h
    torch.testing.assert_close(layer(x)[:, -1].detach(), h, rtol=1e-12, atol=1e-12)
