"""The random-orthogonal additive networks (lscnb.models.roa) against answers they did not compute: semi-orthogonal
matrices by their definitions, forward passes against plain loops of eqs. 12 and 19, initial scales by their
moments (issue 27)."""

import math

import pytest
import torch

from lscnb.models import roa


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("method", ["paper", "haar", "perm", "identity"])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5)])
def test_semi_orthogonal_has_orthonormal_columns_or_rows(method, shape):
    q = roa.semi_orthogonal(*shape, method=method, generator=_gen(), dtype=torch.float64)
    assert q.shape == shape and q.dtype == torch.float64
    small = min(shape)
    gram = q.T @ q if shape[0] >= shape[1] else q @ q.T
    torch.testing.assert_close(gram, torch.eye(small, dtype=torch.float64))


def test_semi_orthogonal_methods_by_their_definitions():
    assert torch.equal(
        roa.semi_orthogonal(4, 3, method="identity", dtype=torch.float64), torch.eye(4, 3, dtype=torch.float64)
    )
    assert torch.equal(roa.semi_orthogonal(3, 4, method="identity"), torch.eye(4, 3).T)
    perm = roa.semi_orthogonal(6, 4, method="perm", generator=_gen(1))
    assert set(perm.unique().tolist()) == {0.0, 1.0} and perm.sum(0).tolist() == [1.0] * 4
    rows = torch.eye(6)[torch.randperm(6, generator=_gen(1))][:, :4]
    assert torch.equal(perm, rows)  # the first four columns of a randomly permuted identity
    # haar: QR of a Gaussian matrix with R's diagonal made positive (Mezzadri 2007)
    raw = torch.randn(6, 4, generator=_gen(2), dtype=torch.float64)
    q, r = torch.linalg.qr(raw)
    haar = roa.semi_orthogonal(6, 4, method="haar", generator=_gen(2), dtype=torch.float64)
    torch.testing.assert_close(haar, q * torch.sign(torch.diagonal(r)))
    assert torch.all(torch.diagonal(haar.T @ raw) > 0)
    # paper: QR of U(-1, 1) entries, no sign fix
    raw = 2 * torch.rand(6, 4, generator=_gen(3), dtype=torch.float64) - 1
    torch.testing.assert_close(
        roa.semi_orthogonal(6, 4, generator=_gen(3), dtype=torch.float64), torch.linalg.qr(raw)[0]
    )


def test_paper_method_draws_signed_entries():
    """U(-1, 1) entries: over many draws the first column of Q takes both signs within a column."""
    mixed = [
        bool((q[:, 0] > 0).any() and (q[:, 0] < 0).any())
        for q in (roa.semi_orthogonal(40, 3, generator=_gen(s)) for s in range(20))
    ]
    assert all(mixed)


def _plain_fnn(net, x):
    """Eq. 12 written out: x_{l+1} = alpha phi(W_l x_l + b_l) + (1 - alpha) O_l x_l, the last map linear."""
    maps = [(net.W_in, net.b_in, net.O_in)] + list(zip(net.W_h, net.b_h, net.O_h))
    for W, b, O in maps:
        x = net.alpha * torch.tanh(x @ W.T + b) + (1 - net.alpha) * x @ O.T
    return net.alpha * (x @ net.W_out.T + net.b_out) + (1 - net.alpha) * x @ net.O_out.T


@pytest.mark.parametrize("depth", [3, 4, 6])
def test_roa_fnn_is_eq_12(depth):
    net = roa.RoaFNN(3, 5, 2, depth, rho=1.5, method="haar", seed=1)
    assert net.alpha == pytest.approx(1.5 / (depth - 1)) and net.W_h.shape == (depth - 3, 5, 5)
    assert net.O_h.shape == (depth - 3, 5, 5) and net.b_h.shape == (depth - 3, 5)
    x = torch.randn(4, 3, generator=_gen(2))
    torch.testing.assert_close(net(x), _plain_fnn(net, x))
    assert torch.all(torch.diagonal(net.O_in.T @ net.O_in) > 0.99)
    paper = roa.RoaFNN(3, 5, 2, depth, rho=1.5, method="paper", seed=1)
    for O, P in zip(net.O_h, paper.O_h):  # haar reached every map: orthogonal, and not the paper's draw
        torch.testing.assert_close(O @ O.T, torch.eye(5), atol=1e-5, rtol=0)
        assert not torch.allclose(O, P)
    assert not torch.allclose(net.O_out, paper.O_out)


def test_roa_fnn_method_reaches_every_map():
    net = roa.RoaFNN(3, 4, 2, 5, rho=2.0, method="identity")
    assert torch.equal(net.O_in, torch.eye(4, 3)) and torch.equal(net.O_out, torch.eye(4, 2).T)
    assert all(torch.equal(O, torch.eye(4)) for O in net.O_h)


def test_roa_fnn_defaults_and_scales():
    net = roa.RoaFNN(50, 400, 3, 6, seed=0)  # rho 5 over 5 maps: alpha 1, the plain MLP
    assert net.alpha == 1.0 and net.depth == 6
    assert net.W_h.std().item() == pytest.approx(1.0, rel=0.02) and net.b_h.std().item() == pytest.approx(1.0, rel=0.1)
    lecun = roa.RoaFNN(50, 400, 3, 6, init_std=None, seed=0)
    assert lecun.W_in.std().item() == pytest.approx(1 / math.sqrt(50), rel=0.05)
    assert lecun.W_h.std().item() == pytest.approx(1 / 20, rel=0.02)
    assert lecun.W_out.std().item() == pytest.approx(1 / 20, rel=0.1)
    assert roa.RoaFNN(2, 3, 1, 11).alpha == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"rho must be at most depth - 1 = 2 \(alpha <= 1\), got 2.5"):
        roa.RoaFNN(2, 3, 1, 3, rho=2.5)
    assert roa.RoaFNN(2, 3, 1, 3, rho=2.0).alpha == 1.0


def test_roa_rnn_cell_and_network_are_eq_19():
    net = roa.RoaRNN(3, 6, 2, alpha=0.3, method="haar", seed=4)
    c = net.cell
    x = torch.randn(2, 5, 3, generator=_gen(5))
    h = torch.zeros(2, 6)
    hs = []
    for t in range(5):
        h = 0.3 * torch.relu(h @ c.weight_hh.T + c.bias + x[:, t] @ c.weight_ih.T) + 0.7 * h @ c.O.T
        hs.append(h)
    torch.testing.assert_close(net.states(x), torch.stack(hs, 1))
    torch.testing.assert_close(net.last_state(x), h)
    torch.testing.assert_close(c(torch.zeros(2, 6), x[:, 0]), hs[0])
    torch.testing.assert_close(net(x), torch.stack(hs, 1) @ net.readout.weight.T + net.readout.bias)
    last = roa.RoaRNN(3, 6, 2, alpha=0.3, method="haar", seed=4, readout="last")
    torch.testing.assert_close(last(x), h @ last.readout.weight.T + last.readout.bias)
    torch.testing.assert_close(c.O @ c.O.T, torch.eye(6), atol=1e-5, rtol=0)
    assert c.initial_state(3).shape == (3, 6) and c.state_size == 6 and torch.equal(c.output(h), h)


def test_roa_rnn_scales():
    net = roa.RoaRNN(40, 300, 20, alpha=1.0, seed=0)
    c = net.cell
    assert c.weight_hh.std().item() == pytest.approx(1.0, rel=0.02) and c.bias.std().item() == pytest.approx(
        1.0, rel=0.15
    )
    assert net.readout.weight.std().item() == pytest.approx(1.0, rel=0.05)
    lecun = roa.RoaRNN(40, 300, 20, alpha=1.0, init_std=None, seed=0)
    assert lecun.cell.weight_hh.std().item() == pytest.approx(1 / math.sqrt(300), rel=0.02)
    assert lecun.cell.weight_ih.std().item() == pytest.approx(1 / math.sqrt(40), rel=0.03)
    assert torch.all(lecun.cell.bias == 0)
    assert lecun.readout.weight.std().item() == pytest.approx(1 / math.sqrt(300), rel=0.05)
    assert not torch.equal(net.readout.weight[:, :20], c.weight_ih[:20, :20].T)  # the read-out has its own stream
    with pytest.raises(ValueError, match=r"alpha must lie in \(0, 1\], got 1.5"):
        roa.RoaRNNCell(2, 3, alpha=1.5)


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_paper_baseline_hidden_blocks_are_orthogonal(kind):
    net = roa.PaperBaseline(kind, 3, 8, 2, readout="last")
    for block in net.core.weight_hh_l0.detach().split(8):
        torch.testing.assert_close(block @ block.T, torch.eye(8), atol=1e-5, rtol=0)
    x = torch.randn(2, 4, 3, generator=_gen())
    out, _ = net.core(x)
    torch.testing.assert_close(net(x), net.readout(out[:, -1]))
    every = roa.PaperBaseline(kind, 3, 8, 2)
    assert every(x).shape == (2, 4, 2)
