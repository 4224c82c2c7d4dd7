"""The random-orthogonal additive networks (lscnb.models.roa) pinned where the by-value tests leave room: documented
defaults, options reaching the cell, the read-out's own draw, devices and dtypes, hidden Jacobians deeper than one map
against autograd, and the paper's baselines against plain loops of nn.RNN / nn.LSTM's equations (issue 27)."""

import math

import pytest
import torch

from lscnb.models import roa


def _plain_mlp(net, x):
    """The plain MLP that alpha = 1 must be: tanh hidden maps, a linear read-out, no filter."""
    h = torch.tanh(x @ net.W_in.T + net.b_in)
    for W, b in zip(net.W_h, net.b_h):
        h = torch.tanh(h @ W.T + b)
    return h @ net.W_out.T + net.b_out


@pytest.mark.parametrize("rho", [None, 4.0])
def test_alpha_one_never_touches_the_filter(rho):
    """alpha = 1 (rho None, or rho = depth - 1) is the plain MLP exactly: an infinite input saturates tanh to a finite
    output, which a filter term 0 * (O x) = 0 * inf would make nan."""
    net = roa.RoaFNN(3, 4, 2, 5, rho=rho, init_std=0.5, seed=2)
    assert net.alpha == 1.0
    x = torch.tensor([[math.inf, 0.5, -1.0], [0.2, -0.3, 0.4]])
    got = net(x).detach()
    assert torch.isfinite(got).all()
    torch.testing.assert_close(got, _plain_mlp(net, x).detach())


def test_hidden_jacobians_of_every_hidden_map_by_autograd():
    """Eq. 14 at each of three hidden maps, against autograd through eq. 12 written here (the state moves on)."""
    net = roa.RoaFNN(3, 4, 1, 6, rho=2.0, init_std=0.7, seed=1).double()
    a = net.alpha
    x = torch.randn(3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    h = a * torch.tanh(net.W_in @ x + net.b_in) + (1 - a) * net.O_in @ x
    jacs = net.hidden_jacobians(x).detach()
    assert jacs.shape == (3, 4, 4)
    for l in range(3):
        W, b, O = net.W_h[l].detach(), net.b_h[l].detach(), net.O_h[l]

        def step(v, W=W, b=b, O=O):
            return a * torch.tanh(W @ v + b) + (1 - a) * O @ v

        h = h.detach()
        torch.testing.assert_close(jacs[l], torch.autograd.functional.jacobian(step, h))
        h = step(h)


def test_documented_default_seeds_and_init_std():
    """seed defaults to 0 (RoaFNN, RoaRNNCell, RoaRNN) and the cell's init_std to 1.0."""
    fnn, fnn0 = roa.RoaFNN(3, 4, 2, 6), roa.RoaFNN(3, 4, 2, 6, seed=0)
    assert all(torch.equal(p, q) for p, q in zip(fnn.parameters(), fnn0.parameters()))
    cell, cell0 = roa.RoaRNNCell(3, 4, alpha=0.5), roa.RoaRNNCell(3, 4, alpha=0.5, seed=0, init_std=1.0)
    assert all(torch.equal(p, q) for p, q in zip(cell.parameters(), cell0.parameters()))
    rnn, rnn0 = roa.RoaRNN(3, 4, 2, alpha=0.5), roa.RoaRNN(3, 4, 2, alpha=0.5, seed=0)
    assert all(torch.equal(p, q) for p, q in zip(rnn.parameters(), rnn0.parameters()))


def test_cell_init_std_scales_the_input_weights():
    """init_std scales W_i as it scales W_h: the same draw, twice the std, exactly twice the weights."""
    one = roa.RoaRNNCell(4, 3, alpha=0.5, init_std=1.0, seed=5)
    two = roa.RoaRNNCell(4, 3, alpha=0.5, init_std=2.0, seed=5)
    torch.testing.assert_close(two.weight_ih, 2 * one.weight_ih)
    torch.testing.assert_close(two.weight_hh, 2 * one.weight_hh)


def test_options_reach_the_cell():
    """method, activation and seed given to RoaRNN are its cell's: identity filter, tanh, the cell of that seed."""
    cell = roa.RoaRNNCell(2, 3, alpha=0.5, method="identity")
    assert torch.equal(cell.O, torch.eye(3))
    net = roa.RoaRNN(2, 3, 1, alpha=0.5, method="identity", activation="tanh", seed=3)
    assert torch.equal(net.cell.O, torch.eye(3))
    assert net.cell.phi(torch.tensor(-1.0)).item() == pytest.approx(math.tanh(-1.0))
    same = roa.RoaRNNCell(2, 3, alpha=0.5, method="identity", seed=3)
    assert torch.equal(net.cell.weight_hh, same.weight_hh) and torch.equal(net.cell.weight_ih, same.weight_ih)


@pytest.mark.parametrize("seed", [0, 4])
def test_readout_draws_from_its_own_generator(seed):
    """The read-out is N(0, init_std^2): weight then bias from a generator seeded seed + 1 (the cell's is seed)."""
    net = roa.RoaRNN(2, 3, 4, alpha=0.5, init_std=0.5, seed=seed)
    g = torch.Generator().manual_seed(seed + 1)
    torch.testing.assert_close(net.readout.weight.detach(), torch.randn(4, 3, generator=g) * 0.5)
    torch.testing.assert_close(net.readout.bias.detach(), torch.randn(4, generator=g) * 0.5)


def test_initial_state_device_and_dtype():
    """initial_state honours device and dtype, and falls back to the weights' dtype."""
    cell = roa.RoaRNNCell(2, 3, alpha=0.5)
    assert cell.initial_state(2, device="meta").device.type == "meta"
    assert cell.initial_state(2, dtype=torch.float64).dtype == torch.float64
    assert cell.double().initial_state(2).dtype == torch.float64


def test_states_stay_on_the_input_device():
    """The recurrence starts on the input's device (the meta device stands in for a GPU)."""
    net = roa.RoaRNN(2, 3, 1, alpha=0.5).to("meta")
    x = torch.empty(2, 4, 2, device="meta")
    assert net.states(x).shape == (2, 4, 3) and net.states(x).device.type == "meta"
    assert net.last_state(x).shape == (2, 3) and net.last_state(x).device.type == "meta"


def _lstm_by_hand(lstm, x):
    """PyTorch's LSTM equations, gates i, f, g, o, batch first, zero initial state: every h_t."""
    B, T, _ = x.shape
    n = lstm.hidden_size
    h = c = torch.zeros(B, n)
    out = []
    for t in range(T):
        z = x[:, t] @ lstm.weight_ih_l0.T + lstm.bias_ih_l0 + h @ lstm.weight_hh_l0.T + lstm.bias_hh_l0
        i, f, g, o = z.split(n, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        out.append(h)
    return torch.stack(out, 1)


def _relu_rnn_by_hand(rnn, x):
    """h_t = relu(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh), batch first, zero initial state: every h_t."""
    h = torch.zeros(x.shape[0], rnn.hidden_size)
    out = []
    for t in range(x.shape[1]):
        h = torch.relu(x[:, t] @ rnn.weight_ih_l0.T + rnn.bias_ih_l0 + h @ rnn.weight_hh_l0.T + rnn.bias_hh_l0)
        out.append(h)
    return torch.stack(out, 1)


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
@pytest.mark.parametrize("readout", ["all", "last"])
def test_paper_baselines_are_relu_rnn_and_lstm(kind, readout):
    """kind "rnn" is a ReLU Elman RNN, "lstm" an LSTM, both batch first (B != T here), read out at every step or
    the last."""
    torch.manual_seed(0)
    net = roa.PaperBaseline(kind, 3, 4, 2, readout=readout)
    x = torch.randn(2, 5, 3)
    h = (_relu_rnn_by_hand if kind == "rnn" else _lstm_by_hand)(net.core, x)
    h = h[:, -1] if readout == "last" else h
    torch.testing.assert_close(net(x), h @ net.readout.weight.T + net.readout.bias)
