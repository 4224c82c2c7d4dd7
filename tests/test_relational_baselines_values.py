"""The NTM and MNM baselines (lscnb.models.relational_baselines) against answers they did not compute: Graves et al.'s
addressing worked in plain Python, the MNM write rule by hand, and both networks against plain loops of their
documented steps (issue 27)."""

import math

import pytest
import torch

from lscnb.models import relational_baselines as RB


def _address_by_hand(memory, key, beta, gate, previous, shift, gamma):
    """Graves et al. (2014) eqs. 5, 7, 8, 9 for one sample, in plain Python lists."""
    cos = [
        sum(k * m for k, m in zip(key, row)) / (math.sqrt(sum(k * k for k in key)) * math.sqrt(sum(m * m for m in row)))
        for row in memory
    ]
    e = [math.exp(beta * c) for c in cos]
    w = [v / sum(e) for v in e]
    if previous is not None:
        w = [gate * a + (1 - gate) * b for a, b in zip(w, previous)]
    n = len(w)
    # eq. 8: w~(i) = sum_j w(j) s(i - j), offsets -1, 0, 1 (circular)
    s = {-1: shift[0], 0: shift[1], 1: shift[2]}
    w = [sum(w[j] * s[(i - j + 1) % n - 1] for j in range(n) if (i - j + 1) % n - 1 in s) for i in range(n)]
    w = [v**gamma for v in w]
    return [v / sum(w) for v in w]


def test_ntm_address_by_hand():
    memory = [[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]], [[0.5, 0.5], [1.0, -1.0], [0.0, 2.0], [2.0, 1.0]]]
    keys, betas, gates = [[1.0, 0.0], [0.3, -0.7]], [1.5, 0.5], [0.25, 0.9]
    previous = [[0.0, 1.0, 0.0, 0.0], [0.1, 0.2, 0.3, 0.4]]
    shifts, gammas = [[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], [2.0, 1.5]
    got = RB.ntm_address(
        torch.tensor(memory, dtype=torch.float64),
        torch.tensor(keys, dtype=torch.float64),
        torch.tensor(betas, dtype=torch.float64)[:, None],
        torch.tensor(gates, dtype=torch.float64)[:, None],
        torch.tensor(shifts, dtype=torch.float64),
        torch.tensor(gammas, dtype=torch.float64)[:, None],
        torch.tensor(previous, dtype=torch.float64),
    )
    for b in range(2):
        expected = _address_by_hand(memory[b], keys[b], betas[b], gates[b], previous[b], shifts[b], gammas[b])
        assert got[b].tolist() == pytest.approx(expected, rel=1e-12)
    first = RB.ntm_address(  # the first step: no interpolation
        torch.tensor(memory[:1], dtype=torch.float64),
        torch.tensor(keys[:1], dtype=torch.float64),
        torch.tensor([[betas[0]]], dtype=torch.float64),
        torch.tensor([[0.0]], dtype=torch.float64),
        torch.tensor(shifts[:1], dtype=torch.float64),
        torch.tensor([[gammas[0]]], dtype=torch.float64),
    )
    expected = _address_by_hand(memory[0], keys[0], betas[0], 0.0, None, shifts[0], gammas[0])
    assert first[0].tolist() == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match=r"shift must hold weights of the offsets -1, 0, 1 .* got shape \(2, 2\)"):
        RB.ntm_address(
            torch.zeros(2, 4, 2),
            torch.ones(2, 2),
            torch.ones(2, 1),
            torch.ones(2, 1),
            torch.ones(2, 2),
            torch.ones(2, 1),
        )


def test_ntm_read_and_write_by_hand():
    memory = torch.tensor([[[1.0, 2.0], [3.0, 4.0]]])
    w = torch.tensor([[0.25, 0.75]])
    assert RB.ntm_read(memory, w).tolist() == [[0.25 * 1 + 0.75 * 3, 0.25 * 2 + 0.75 * 4]]
    erase, add = torch.tensor([[1.0, 0.5]]), torch.tensor([[10.0, 20.0]])
    # M_i (1 - w_i e) + w_i a
    assert RB.ntm_write(memory, w, erase, add).tolist() == [
        [[1 * 0.75 + 2.5, 2 * (1 - 0.125) + 5.0], [3 * 0.25 + 7.5, 4 * (1 - 0.375) + 15.0]]
    ]


def test_ntm_head_parameters():
    ntm = RB.NTM(2, 3, dim=4, hidden=6, slots=3, width=2)
    p = torch.arange(12, dtype=torch.float32)[None] / 10 - 0.5  # a write head's 3 W + 6 = 12 outputs
    head = ntm.head(p)
    assert head["key"][0].tolist() == pytest.approx([math.tanh(-0.5), math.tanh(-0.4)], rel=1e-6)
    assert head["strength"].item() == pytest.approx(math.log1p(math.exp(-0.3)), rel=1e-6)
    assert head["gate"].item() == pytest.approx(1 / (1 + math.exp(0.2)), rel=1e-6)
    e = [math.exp(v) for v in (-0.1, 0.0, 0.1)]
    assert head["shift"][0].tolist() == pytest.approx([v / sum(e) for v in e], rel=1e-6)
    assert head["sharpen"].item() == pytest.approx(1 + math.log1p(math.exp(0.2)), rel=1e-6)
    assert head["erase"][0].tolist() == pytest.approx([1 / (1 + math.exp(-0.3)), 1 / (1 + math.exp(-0.4))], rel=1e-6)
    assert head["add"][0].tolist() == pytest.approx([math.tanh(0.5), math.tanh(0.6)], rel=1e-6)
    read = ntm.head(p[:, :8])
    assert sorted(read) == ["gate", "key", "sharpen", "shift", "strength"]


def test_ntm_forward_is_its_loop():
    torch.manual_seed(0)
    ntm = RB.NTM(3, 2, dim=4, hidden=5, slots=3, width=2, segments=None)
    z = torch.randn(2, 3, 4)
    x = ntm.tcn(z)
    h = c = torch.zeros(2, 5)
    r = torch.zeros(2, 2)
    memory = ntm.memory0.expand(2, -1, -1)
    w_r = w_w = None
    for t in range(3):
        h, c = ntm.lstm(torch.cat([x[:, t], r], -1), (h, c))
        rd, wr = ntm.head(ntm.read_head(h)), ntm.head(ntm.write_head(h))
        w_r = RB.ntm_address(memory, rd["key"], rd["strength"], rd["gate"], rd["shift"], rd["sharpen"], w_r)
        r = RB.ntm_read(memory, w_r)
        w_w = RB.ntm_address(memory, wr["key"], wr["strength"], wr["gate"], wr["shift"], wr["sharpen"], w_w)
        memory = RB.ntm_write(memory, w_w, wr["erase"], wr["add"])
    h, c = ntm.lstm(torch.cat([torch.zeros(2, 4), r], -1), (h, c))  # the last, blank step
    torch.testing.assert_close(ntm(z), ntm.y(h))


def test_mnm_update_by_hand():
    """One layer, d = 2: W <- W - (2/d) (a - e) (beta key)^T with a = W key (the output layer is linear)."""
    W = torch.tensor([[[1.0, 2.0], [0.0, -1.0]]])
    key, target, gate = torch.tensor([[1.0, 1.0]]), torch.tensor([[0.0, 0.0]]), torch.tensor([[0.5]])
    (new,) = RB.mnm_update([W], key, [target], gate)
    a = [3.0, -1.0]  # W key
    expected = [[1.0 - a[0] * 0.5, 2.0 - a[0] * 0.5], [0.0 - a[1] * 0.5, -1.0 - a[1] * 0.5]]
    assert new[0].flatten().tolist() == pytest.approx([v for row in expected for v in row])
    acts = RB.mnm_activations([W, W], key)
    assert acts[0][0].tolist() == pytest.approx([math.tanh(3.0), math.tanh(-1.0)])
    t3, tm1 = math.tanh(3.0), math.tanh(-1.0)
    assert acts[1][0].tolist() == pytest.approx([t3 + 2 * tm1, -tm1])  # the last layer is linear
    two = RB.mnm_update([W, W], key, [target, target], gate)
    hidden = torch.tensor([[t3, tm1]])
    expected_second = W - 1.0 * (acts[1] - target)[..., :, None] * (0.5 * hidden)[..., None, :]
    torch.testing.assert_close(two[1], expected_second)
    with pytest.raises(ValueError, match=r"targets must hold one target per layer \(2\), got 1"):
        RB.mnm_update([W, W], key, [target], gate)


@pytest.mark.parametrize("layers, seed", [(2, 1), (3, 3)])
def test_mnm_forward_is_its_loop(layers, seed):
    """The documented loop, written out; the read v_t and the reconstruction use the memory's last (linear) layer,
    which with three layers is not the second."""
    torch.manual_seed(seed)
    mnm = RB.MNM(3, 2, dim=4, layers=layers)
    z = torch.randn(2, 3, 4)
    x = mnm.tcn(z)
    h = c = v = torch.zeros(2, 4)
    weights = [mnm.memory0[i].expand(2, -1, -1) for i in range(layers)]
    loss = 0.0
    for t in range(4):
        inp = x[:, t] if t < 3 else torch.zeros(2, 4)
        h, c = mnm.lstm(torch.cat([inp, v], -1), (h, c))
        g, k_w, v_w, k_r = torch.tanh(mnm.heads(h)).split(4, -1)
        weights = RB.mnm_update(weights, k_w, list(mnm.targets(v_w).split(4, -1)), torch.sigmoid(mnm.gate(g)))
        loss = loss + (RB.mnm_activations(weights, k_w)[-1] - v_w).pow(2).mean()
        v = RB.mnm_activations(weights, k_r)[-1]
        out = mnm.read_out(torch.cat([h, v], -1))
    torch.testing.assert_close(mnm(z), mnm.y(out))
    torch.testing.assert_close(mnm.reconstruction, loss / 3)
    assert mnm.memory0.shape == (layers, 4, 4)
