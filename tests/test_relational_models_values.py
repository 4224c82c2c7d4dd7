"""The relational baselines' architecture by value (lscnb.models.relational): sinusoidal positions by hand, the
Transformer's sizes and its symmetric (tied query-key) variant, PrediNet against a plain computation, and
segments reaching every model's TCN (issue 27)."""

import math

import pytest
import torch

from lscnb.models import relational as M


def test_sinusoidal_positions_by_hand():
    model = M.TransformerBaseline(3, 2, dim=8)
    for t in range(3):
        for i in range(4):
            angle = t / 10000 ** (2 * i / 8)
            assert model.pe[t, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert model.pe[t, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_transformer_sizes_and_forward():
    torch.manual_seed(0)
    model = M.TransformerBaseline(4, 3, dim=16).eval()
    layer = model.layer
    assert layer.self_attn.num_heads == 8 and layer.linear1.out_features == 512 and layer.self_attn.batch_first
    assert layer.dropout.p == 0.0 and layer.dropout1.p == 0.0
    first, relu, last = model.out
    assert first.out_features == 256 and isinstance(relu, torch.nn.ReLU) and last.out_features == 3
    z = torch.randn(2, 4, 16)
    h = layer(model.tcn(z) + model.pe).mean(1)
    torch.testing.assert_close(model(z), torch.relu(h @ first.weight.T + first.bias) @ last.weight.T + last.bias)


def test_symmetric_transformer_ties_query_and_key():
    torch.manual_seed(1)
    model = M.TransformerBaseline(4, 2, dim=16, symmetric=True).eval()
    attn = model.layer.self_attn
    w, b = attn.in_proj_weight, attn.in_proj_bias
    assert w.shape == (48, 16) and torch.equal(w[:16], w[16:32]) and torch.equal(b[:16], b[16:32])
    z = torch.randn(5, 16)
    q = z @ w[:16].T + b[:16]
    k = z @ w[16:32].T + b[16:32]
    torch.testing.assert_close(q @ k.T, (q @ k.T).T)  # symmetric scores
    assert sum(p.numel() for p in attn.parameters()) < sum(
        p.numel() for p in M.TransformerBaseline(4, 2, dim=16).layer.self_attn.parameters()
    )  # the key map is not a parameter of its own
    assert model(torch.randn(2, 4, 16)).shape == (2, 2)
    tie = M.TiedQueryKey()
    stacked = torch.arange(6.0)[:, None]
    assert tie(stacked).flatten().tolist() == [0, 1, 2, 0, 1, 2, 3, 4, 5]
    assert tie.right_inverse(torch.arange(9.0)).tolist() == [0, 1, 2, 6, 7, 8]


@pytest.mark.parametrize(
    "make",
    [
        lambda s: M.TransformerBaseline(4, 2, dim=8, segments=s),
        lambda s: M.PrediNet(4, 2, dim=8, segments=s),
        lambda s: M.CoRelNetMix(4, 2, dim=8, segments=s),
    ],
)
def test_segments_reach_the_tcn(make):
    assert make([2, 2]).tcn.segments == [2, 2] and make(None).tcn.segments is None


def test_predinet_positions_sizes_and_forward():
    assert M.PrediNet(3, 2, dim=4).pos.flatten().tolist() == [0.0, 0.5, 1.0]
    assert M.PrediNet(1, 2, dim=4).pos.tolist() == [[0.0]]
    torch.manual_seed(2)
    net = M.PrediNet(3, 5, dim=4, heads=2, relations=3, key=4)
    assert net.mlp[0].out_features == 256 and net.mlp[0].in_features == 2 * (3 + 2)
    z = torch.randn(2, 3, 4)
    L = torch.cat([net.tcn(z), torch.tensor([0.0, 0.5, 1.0])[None, :, None].expand(2, 3, 1)], -1)
    K = L @ net.W_K.weight.T
    Q = (L.flatten(1) @ net.W_Q.weight.T).view(2, 2, 2, 4)
    out = []
    for b in range(2):
        props = []
        for h in range(2):
            e = [torch.softmax(Q[b, h, j] @ K[b].T / 2.0, -1) @ L[b] for j in range(2)]
            d = e[0] @ net.W_S.weight.T - e[1] @ net.W_S.weight.T
            props.append(torch.cat([d, e[0][-1:], e[1][-1:]]))
        out.append(torch.cat(props))
    torch.testing.assert_close(net.propositions(z).flatten(1), torch.stack(out))
    torch.testing.assert_close(net(z), net.mlp(torch.stack(out)))
    with pytest.raises(ValueError, match=r"z must hold T=3 objects, got shape \(2, 4, 4\)"):
        net(torch.randn(2, 4, 4))
