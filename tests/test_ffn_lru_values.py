"""The feed-forward network, the LRU layer and the LSC pre-training of a feed-forward network by value: layer sizes
and initial laws by their moments, the LRU's ring and scales, which weights pre-training scales (issue 27)."""

import math

import pytest
import torch

from lscnb.models.ffn import DeepFFN
from lscnb.models.lru import LRU
from lscnb.pretrain import pretrain_ffn


def test_ffn_sizes_and_zero_biases():
    net = DeepFFN(3, 5, 4, 2)
    assert [tuple(layer.weight.shape) for layer in net.layers] == [(5, 3), (5, 5), (5, 5), (5, 5)]
    assert all(torch.all(layer.bias == 0) for layer in net.layers) and net.readout.out_features == 2


@pytest.mark.parametrize("init", ["glorot", "he", "orthogonal"])
def test_ffn_initial_laws(init):
    net = DeepFFN(300, 200, 2, 1, init=init, seed=3)
    w0, w1 = (layer.weight.detach() for layer in net.layers)
    if init == "glorot":
        bound = math.sqrt(6 / 500)
        assert w0.abs().max() <= bound and w0.abs().max() > 0.99 * bound
        assert w0.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.02)
    elif init == "he":
        assert w0.std().item() == pytest.approx(math.sqrt(2 / 300), rel=0.02)
        assert w1.std().item() == pytest.approx(math.sqrt(2 / 200), rel=0.02)
    else:
        torch.testing.assert_close(w0 @ w0.T, torch.eye(200), atol=1e-4, rtol=0)  # orthonormal rows (200 < 300)
        torch.testing.assert_close(w1 @ w1.T, torch.eye(200), atol=1e-4, rtol=0)
    again = DeepFFN(300, 200, 2, 1, init=init, seed=3)
    other = DeepFFN(300, 200, 2, 1, init=init, seed=4)
    assert torch.equal(again.layers[1].weight, w1) and not torch.equal(other.layers[1].weight, w1)
    assert torch.equal(
        DeepFFN(4, 3, 2, 1, init=init).layers[0].weight, DeepFFN(4, 3, 2, 1, init=init, seed=0).layers[0].weight
    )


def test_ffn_orthogonal_columns_when_widening():
    net = DeepFFN(3, 8, 1, 1, init="orthogonal")
    w = net.layers[0].weight.detach()
    torch.testing.assert_close(w.T @ w, torch.eye(3), atol=1e-5, rtol=0)


def test_lru_ring_phases_and_scales():
    torch.manual_seed(0)
    layer = LRU(64, 20_000, r_min=0.4, r_max=0.9, max_phase=1.0)
    lam = layer.eigenvalues().detach().to(torch.complex128)
    r = lam.abs()
    assert r.min() >= 0.4 - 1e-5 and r.max() <= 0.9 + 1e-5
    assert (r**2).mean().item() == pytest.approx((0.16 + 0.81) / 2, rel=0.01)  # uniform in area
    theta = torch.exp(layer.theta_log.detach())
    assert theta.min() >= 0 and theta.max() <= 1.0 and theta.mean().item() == pytest.approx(0.5, abs=0.01)
    torch.testing.assert_close(layer.gamma().detach().double(), torch.sqrt(1 - r**2), atol=1e-5, rtol=0)
    assert layer.B_re.std().item() == pytest.approx(1 / math.sqrt(128), rel=0.02)
    assert LRU(2, 3, normalize=False).gamma_log.requires_grad is False
    for bad in ((0.5, 0.5), (-0.1, 0.5), (0.2, 1.1)):
        with pytest.raises(ValueError, match="need 0 <= r_min < r_max <= 1"):
            LRU(2, 3, r_min=bad[0], r_max=bad[1])


def test_pretrain_ffn_scales_every_layer_but_the_first(monkeypatch):
    import lscnb.pretrain as P

    seen = {}

    def fake(transitions, groups, **kw):
        seen.update(groups=groups, kw=kw, jacs=transitions(0))
        return "history"

    monkeypatch.setattr(P, "pretrain", fake)
    net = DeepFFN(3, 4, 3, 1)
    x = torch.randn(5, 3)
    assert pretrain_ffn(net, lambda step: x, lr=0.1) == "history"
    assert list(seen["groups"]) == ["layer1", "layer2"]
    assert seen["groups"]["layer1"][0] is net.layers[1].weight and seen["groups"]["layer2"][0] is net.layers[2].weight
    assert seen["kw"] == {"target": 1.0, "steps": 200, "lr": 0.1}
    mats = net.transition_derivatives(x)
    torch.testing.assert_close(seen["jacs"]["layer1"], mats[0])
    torch.testing.assert_close(seen["jacs"]["layer2"], mats[1])
    pretrain_ffn(net, lambda step: x, target=0.5, steps=7)
    assert seen["kw"] == {"target": 0.5, "steps": 7}
