"""The deep recurrent networks of the curse of memory (lscnb.models.deep_recurrent) against answers they did not
compute: initial distributions by their moments, forward passes against plain loops, parameter groups written out,
and the signal-propagation statistics against autograd in the test (issue 27)."""

import math

import pytest
import torch

from lscnb.models import deep_recurrent as D
from lscnb.models.gated import GRUCell


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_lecun_moments():
    w = D.lecun_(torch.empty(400, 250), 3.0, generator=_gen())
    assert w.mean().abs().item() < 0.01 and w.std().item() == pytest.approx(3.0 / math.sqrt(250), rel=0.02)
    assert D.lecun_(torch.empty(200, 100), generator=_gen()).std().item() == pytest.approx(0.1, rel=0.02)


@pytest.mark.parametrize("param", ["exp", "default"])
def test_diagonal_recurrence_initial_ring_and_scales(param):
    layer = D.DiagonalRecurrence(64, 4000, nu_min=0.3, nu_max=0.8, max_phase=1.0, param=param, generator=_gen())
    lam = layer.eigenvalues().detach().to(torch.complex128)
    nu, theta = lam.abs(), lam.angle()
    assert nu.min() >= 0.3 - 1e-6 and nu.max() <= 0.8 + 1e-6
    # uniform in area on the ring: E[nu^2] = (nu_min^2 + nu_max^2) / 2, and a quarter of the area lies below
    # sqrt(nu_min^2 + (nu_max^2 - nu_min^2) / 4)
    assert (nu**2).mean().item() == pytest.approx((0.09 + 0.64) / 2, rel=0.02)
    assert (nu < math.sqrt(0.09 + 0.55 / 4)).double().mean().item() == pytest.approx(0.25, abs=0.03)
    assert theta.min() >= 0 and theta.max() <= 1.0 + 1e-6 and theta.mean().item() == pytest.approx(0.5, abs=0.03)
    if param == "exp":
        gamma = torch.exp(layer.w_gamma.detach()).double()
        torch.testing.assert_close(gamma, torch.sqrt(1 - nu**2), rtol=1e-5, atol=1e-6)
    else:
        assert not hasattr(layer, "w_gamma")
    assert layer.B_re.std().item() == pytest.approx(1 / math.sqrt(128), rel=0.02)
    assert layer.B_im.std().item() == pytest.approx(1 / math.sqrt(128), rel=0.02)
    assert layer.C_re.std().item() == pytest.approx(1 / math.sqrt(4000), rel=0.02)
    assert layer.C_im.std().item() == pytest.approx(1 / math.sqrt(4000), rel=0.02)
    assert layer.D.shape == (64,) and layer.D.std().item() == pytest.approx(1.0, rel=0.3)


def test_diagonal_recurrence_default_ring_is_the_networks():
    """At the default nu0 = 0 the network's ring is [0, 1/2], the layer's default."""
    layer = D.DiagonalRecurrence(2, 3000, generator=_gen())
    nu = layer.eigenvalues().detach().abs()
    assert nu.max() <= 0.5 + 1e-6 and (nu**2).mean().item() == pytest.approx(0.125, rel=0.05)
    assert layer.eigenvalues().angle().abs().max() > 3.0  # phases over the whole circle (2 pi)


@pytest.mark.parametrize("param", ["exp", "default"])
def test_diagonal_recurrence_is_the_plain_recurrence(param):
    layer = D.DiagonalRecurrence(3, 5, nu_min=0.2, nu_max=0.9, param=param, generator=_gen(1))
    x = torch.randn(2, 7, 3, generator=_gen(2))
    y = layer(x)
    lam = layer.eigenvalues().detach()
    gamma = torch.exp(layer.w_gamma.detach()) if param == "exp" else torch.ones(5)
    B = torch.complex(layer.B_re, layer.B_im).detach()
    C = torch.complex(layer.C_re, layer.C_im).detach()
    h = torch.zeros(2, 5, dtype=torch.complex64)
    expected = []
    for t in range(7):
        h = lam * h + gamma * (x[:, t].to(torch.complex64) @ B.T)
        expected.append((h @ C.T).real + layer.D.detach() * x[:, t])
    torch.testing.assert_close(y.detach(), torch.stack(expected, 1), rtol=1e-4, atol=1e-5)
    assert layer.last_state.shape == (2, 7, 5)
    torch.testing.assert_close(layer.last_state[:, -1].detach(), h, rtol=1e-4, atol=1e-5)


def test_chrono_init_by_value():
    cell = D.chrono_init_(GRUCell(50, 300), 4.0, 9.0, scale_x=2.0, scale_h=0.5, generator=_gen())
    n = 300
    bias = cell.bias_ih.detach()
    T = torch.exp(bias[n : 2 * n])
    assert T.min() >= 4.0 - 1e-4 and T.max() <= 9.0 + 1e-4 and T.mean().item() == pytest.approx(6.5, abs=0.25)
    assert torch.all(bias[:n] == 0) and torch.all(bias[2 * n :] == 0) and torch.all(cell.bias_hh == 0)
    assert cell.weight_ih.std().item() == pytest.approx(2.0 / math.sqrt(50), rel=0.02)
    for k in range(3):
        block = cell.weight_hh[k * n : (k + 1) * n].detach().double()
        torch.testing.assert_close(block @ block.T, 0.25 * torch.eye(n, dtype=torch.float64), atol=1e-5, rtol=0)
    blocks = cell.weight_hh.detach()
    assert not torch.allclose(blocks[:n], blocks[n : 2 * n])  # three independent draws


def test_chrono_gru_layer_and_sequence():
    layer = D.ChronoGRU(3, 4, t_min=2.0, t_max=2.0, scale_x=0.5, scale_h=1.5, generator=_gen())
    assert torch.allclose(layer.cell.bias_ih[4:8], torch.full((4,), math.log(2.0)))
    assert layer.cell.weight_ih.std().item() < 0.6  # scale_x reached the cell
    w = layer.cell.weight_hh[:4].detach().double()
    torch.testing.assert_close(w @ w.T, 2.25 * torch.eye(4, dtype=torch.float64), atol=1e-5, rtol=0)
    x = torch.randn(2, 5, 3, generator=_gen(1))
    h = torch.zeros(2, 4)
    states = []
    for t in range(5):
        h = layer.cell(h, x[:, t])
        states.append(h)
    torch.testing.assert_close(layer(x), torch.stack(states, 1))
    assert layer.last_state is not None and layer.last_state.shape == (2, 5, 4)
    h0 = torch.ones(2, 4)
    torch.testing.assert_close(D.gru_sequence(layer.cell, x[:, :1], h0)[:, 0], layer.cell(h0, x[:, 0]))


@pytest.mark.parametrize("kind", ["crnn", "lru", "gru"])
def test_deep_net_initial_memory_follows_nu0(kind):
    net = D.DeepRecurrentNet(3, kind=kind, d_model=400, depth=2, nu0=0.75, seed=0)
    for block in net.blocks:
        if kind == "gru":
            T = torch.exp(block.rec.cell.bias_ih[400:800].detach())
            assert T.min() >= 4.0 - 1e-3 and T.max() <= 8.0 + 1e-3  # [1 / (1 - nu0), 2 / (1 - nu0)]
        else:
            nu = block.rec.eigenvalues().detach().abs()
            assert nu.min() >= 0.75 - 1e-5 and nu.max() <= 0.875 + 1e-5  # [nu0, (1 + nu0) / 2]
            assert hasattr(block.rec, "w_nu") == (kind == "lru")
        assert torch.all(block.glu.bias == 0) and block.glu.weight.std().item() == pytest.approx(0.05, rel=0.05)
    assert torch.all(net.encoder.bias == 0) and torch.all(net.decoder.bias == 0)
    assert net.decoder.weight.std().item() == pytest.approx(1 / 20, rel=0.05)
    assert net.encoder.weight.std().item() == pytest.approx(1 / math.sqrt(3), rel=0.1)


def test_deep_net_forward_is_encoder_blocks_decoder():
    net = D.DeepRecurrentNet(3, kind="lru", d_model=4, depth=2, norm="layer", seed=1)
    x = torch.randn(2, 6, 3, generator=_gen(3))
    h = x @ net.encoder.weight.T + net.encoder.bias
    outs = []
    for block in net.blocks:
        z = torch.nn.functional.layer_norm(h, (4,), block.norm1.norm.weight, block.norm1.norm.bias)
        y = torch.nn.functional.gelu(block.rec(z))
        y = torch.nn.functional.layer_norm(y, (4,), block.norm2.norm.weight, block.norm2.norm.bias)
        a, g = (y @ block.glu.weight.T + block.glu.bias).chunk(2, dim=-1)
        h = h + a * torch.sigmoid(g)
        outs.append(h)
    expected = h @ net.decoder.weight.T + net.decoder.bias
    torch.testing.assert_close(net(x), expected)
    assert len(net.block_outputs) == 2 and torch.allclose(net.block_outputs[0], outs[0])
    assert [s.shape for s in net.states()] == [(2, 6, 4), (2, 6, 4)]


def test_batch_norm_normalises_over_batch_and_time():
    net = D.DeepRecurrentNet(2, kind="crnn", d_model=3, depth=1, norm="batch", seed=0)
    norm = net.blocks[0].norm1
    x = torch.randn(4, 5, 3, generator=_gen()) * 3 + 1
    y = norm(x)
    torch.testing.assert_close(y.mean(dim=(0, 1)), torch.zeros(3), atol=1e-5, rtol=0)
    torch.testing.assert_close(y.var(dim=(0, 1), unbiased=False), torch.ones(3), atol=1e-3, rtol=0)


def _same(got, expected):
    """The same (layer, name) pairs, each once, in any order."""
    return sorted(got, key=str) == sorted(expected, key=str) and len(set(got)) == len(got)


def _pairs(layers, names):
    return [(layer, f"blocks.{layer}.{name}") for layer in layers for name in names]


def test_parameter_groups_written_out():
    ends = [(None, "encoder.weight"), (None, "encoder.bias"), (None, "decoder.weight"), (None, "decoder.bias")]
    rest = ["rec.B_re", "rec.B_im", "rec.C_re", "rec.C_im", "rec.D", "glu.weight", "glu.bias"]
    crnn = D.DeepRecurrentNet(3, kind="crnn", d_model=2, depth=2).groups()
    assert sorted(crnn) == ["lam", "other"]
    assert _same(crnn["lam"], _pairs([0, 1], ["rec.lam_re", "rec.lam_im"]))
    assert _same(crnn["other"], ends + _pairs([0, 1], rest))
    lru = D.DeepRecurrentNet(3, kind="lru", d_model=2, depth=2).groups()
    assert sorted(lru) == ["other", "w_nu", "w_theta"]
    assert lru["w_nu"] == _pairs([0], ["rec.w_nu"]) + _pairs([1], ["rec.w_nu"])
    assert lru["w_theta"] == _pairs([0], ["rec.w_theta"]) + _pairs([1], ["rec.w_theta"])
    assert _same(lru["other"], ends + _pairs([0, 1], ["rec.w_gamma"] + rest))
    gru = D.DeepRecurrentNet(3, kind="gru", d_model=2, depth=2, norm="layer").groups()
    assert sorted(gru) == ["ff", "gru"]
    cell = ["rec.cell.weight_ih", "rec.cell.weight_hh", "rec.cell.bias_ih", "rec.cell.bias_hh"]
    assert _same(gru["gru"], _pairs([0, 1], cell))
    norms = ["norm1.norm.weight", "norm1.norm.bias", "norm2.norm.weight", "norm2.norm.bias"]
    assert _same(gru["ff"], ends + _pairs([0, 1], norms + ["glu.weight", "glu.bias"]))


def test_next_token_loss_by_hand():
    x = torch.tensor([[[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]]])
    pred = torch.tensor([[[1.0, 1.0], [1.0, 1.0], [9.0, 9.0]]])  # the last prediction has no target
    # t=1: (1-2)^2 + (1-1)^2 = 1; t=2: (1-0)^2 + (1-3)^2 = 5; mean 3, half of it 1.5
    assert D.next_token_loss(pred, x).item() == pytest.approx(1.5)


@pytest.mark.parametrize("kind", ["lru", "gru"])
def test_signal_propagation_against_autograd_here(kind):
    net = D.DeepRecurrentNet(2, kind=kind, d_model=3, depth=2, seed=4)
    x = torch.randn(3, 5, 2, generator=_gen(5))
    out = D.signal_propagation(net, x)
    params = dict(net.named_parameters())
    loss = 0.5 * (net(x)[:, :-1] - x[:, 1:]).pow(2).sum(-1).mean()
    grads = dict(zip(params, torch.autograd.grad(loss, list(params.values()))))
    assert out["loss"] == pytest.approx(loss.item(), rel=1e-6)
    every = torch.cat([g.flatten() for g in grads.values()])
    assert out["grad2"]["all"] == (pytest.approx(every.pow(2).mean().item(), rel=1e-5), [])
    for group, members in net.groups().items():
        flat = torch.cat([grads[n].flatten() for _, n in members])
        total, per_layer = out["grad2"][group]
        assert total == pytest.approx(flat.pow(2).mean().item(), rel=1e-5)
        for layer in range(2):
            names = [n for lay, n in members if lay == layer]
            if names:
                mine = torch.cat([grads[n].flatten() for n in names]).pow(2).mean().item()
                assert per_layer[layer] == pytest.approx(mine, rel=1e-5)
            else:
                assert math.isnan(per_layer[layer])
    states = [b.rec.last_state.detach() for b in net.blocks]
    assert out["h2"] == pytest.approx([s.abs().pow(2).mean().item() for s in states], rel=1e-5)
    assert out["out2"] == pytest.approx([o.detach().pow(2).mean().item() for o in net.block_outputs], rel=1e-5)
    assert all(p.grad is None for p in net.parameters())  # the model is left without gradients
    with pytest.raises(TypeError, match="model must be a DeepRecurrentNet, got Linear"):
        D.signal_propagation(torch.nn.Linear(2, 2), x)


@pytest.mark.parametrize("gates", ["constant", "input", "hidden"])
def test_simplified_gru_init_and_final_state(gates):
    model = D.SimplifiedGRU(30, 200, networks=2, gates=gates, t_min=3.0, t_max=5.0, scale_h=0.5, generator=_gen())
    assert model.W_in.shape == (2, 200, 30) and model.W_in.std().item() == pytest.approx(1 / math.sqrt(30), rel=0.03)
    if gates == "constant":
        assert torch.all(model.W_fx == 0)
    else:
        assert model.W_fx.std().item() == pytest.approx(1 / math.sqrt(30), rel=0.03)
    if gates == "hidden":
        w = model.W_fh[1].detach().double()
        torch.testing.assert_close(w @ w.T, 0.25 * torch.eye(200, dtype=torch.float64), atol=1e-5, rtol=0)
    else:
        assert torch.all(model.W_fh == 0)
    T = torch.exp(model.b_f.detach())
    assert T.shape == (2, 200) and T.min() >= 3.0 - 1e-4 and T.max() <= 5.0 + 1e-4
    assert T.mean().item() == pytest.approx(4.0, abs=0.1)
    x = torch.randn(2, 6, 30, generator=_gen(1))
    h = torch.zeros(2, 200)
    for t in range(6):
        f = torch.sigmoid(
            torch.stack([model.W_fx[k] @ x[k, t] + model.W_fh[k] @ h[k] + model.b_f[k] for k in range(2)])
        )
        n = torch.stack([model.W_in[k] @ x[k, t] for k in range(2)])
        h = f * h + (1 - f) * n
    torch.testing.assert_close(model.final_state(x), h, rtol=1e-4, atol=1e-5)
    b = torch.zeros(2, 200)
    assert not torch.allclose(model.final_state(x, b), h)  # a given bias replaces the model's


@pytest.mark.parametrize("gates", ["constant", "input", "hidden"])
def test_bias_sensitivity_is_jacfwd(gates):
    model = D.SimplifiedGRU(2, 3, networks=2, gates=gates, t_min=1.0, t_max=8.0, generator=_gen(2))
    x = torch.randn(2, 5, 2, generator=_gen(3))
    h, s = model.bias_sensitivity(x)
    torch.testing.assert_close(h, model.final_state(x).detach())
    for k in range(2):

        def one(b, k=k):
            full = model.b_f.detach().clone()
            full[k] = b
            return model.final_state(x, full)[k]

        jac = torch.func.jacfwd(one)(model.b_f.detach()[k].clone())
        torch.testing.assert_close(s[k], torch.diagonal(jac), rtol=1e-4, atol=1e-6)
