"""The appendix baselines (lscnb.models.relational_baselines) pinned where the by-value tests leave room: the Relation
Network's g and f with their ReLUs written out, segments reaching every TCN (pairs standardise to +-1/sqrt 2), the
documented defaults, the read head's parameters, the MNM's three-layer memory and its reconstruction before any pass,
and devices (issue 27)."""

import math

import pytest
import torch

from lscnb.models import relational_baselines as RB


def _linear(x, layer):
    return x @ layer.weight.T + layer.bias


def test_relation_network_is_eq_1_with_its_relus():
    """o = f(sum_{i,j} g([x_i; x_j])), g = Linear, ReLU, Linear, ReLU and f = Linear, ReLU, Linear, pair by pair."""
    torch.manual_seed(0)
    net = RB.RelationNetwork(3, 2, dim=4, hidden=6, out=5).double()
    z = torch.randn(2, 3, 4, dtype=torch.float64)
    x = net.objects(z)
    g1, g2 = net.g[0], net.g[2]
    f1, f2 = net.f[0], net.f[2]
    total = 0
    for i in range(3):
        for j in range(3):
            pair = torch.cat([x[:, i], x[:, j]], -1)
            total = total + torch.relu(_linear(torch.relu(_linear(pair, g1)), g2))
    torch.testing.assert_close(net(z), _linear(torch.relu(_linear(total, f1)), f2))


@pytest.mark.parametrize(
    "make",
    [
        lambda s: RB.RelationNetwork(4, 2, dim=3, segments=s),
        lambda s: RB.NTM(4, 2, dim=3, hidden=4, slots=2, width=2, segments=s),
        lambda s: RB.MNM(4, 2, dim=3, segments=s),
    ],
)
def test_segments_reach_the_tcn(make):
    """segments=[2, 2] standardises each pair of steps alone: two values a, b become +-(a - b)/2 / (|a - b|/sqrt 2),
    i.e. +-1/sqrt 2 everywhere; over all four steps they do not."""
    z = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(1))
    paired = make([2, 2]).tcn(z).detach()
    torch.testing.assert_close(paired.abs(), torch.full_like(paired, 1 / math.sqrt(2)), atol=1e-5, rtol=0)
    whole = make(None).tcn(z).detach()
    assert not torch.allclose(whole.abs(), torch.full_like(whole, 1 / math.sqrt(2)), atol=1e-3)


def test_relation_network_objects_stay_on_the_input_device():
    """The temporal tag is made on the input's device (the meta device stands in for a GPU)."""
    net = RB.RelationNetwork(3, 2, dim=4).to("meta")
    x = net.objects(torch.empty(2, 3, 4, device="meta"))
    assert x.device.type == "meta" and x.shape == (2, 3, 5)


def test_ntm_defaults_and_read_head():
    """Hidden 512, a 10 x 256 memory (the ESBN code's); the read head emits key, strength, gate, shift (3) and
    sharpening only: W + 6 numbers, no erase or add."""
    ntm = RB.NTM(2, 3)
    assert ntm.lstm.hidden_size == 512 and ntm.memory0.shape == (10, 256)
    small = RB.NTM(2, 3, dim=4, hidden=5, slots=3, width=2)
    assert small.read_head.out_features == 8 and small.write_head.out_features == 12
    assert sorted(small.head(small.read_head(torch.zeros(1, 5)))) == ["gate", "key", "sharpen", "shift", "strength"]


def test_mnm_default_depth_and_reconstruction_before_a_pass():
    """The memory MLP has three layers by default (d -> d -> d -> d); no reconstruction before the first pass."""
    mnm = RB.MNM(2, 2, dim=4)
    assert mnm.memory0.shape == (3, 4, 4) and mnm.targets.out_features == 12
    assert mnm.reconstruction is None
