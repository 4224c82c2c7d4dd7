"""The relational models (lscnb.models.relational) pinned where the by-value tests leave room: the encoder's bounds,
defaults and He scale, the colour and patch encoders against the object encoder, rendering and the Encoded front end by
hand, the similarities on batched heads, the decoders' ReLUs written out, the baselines against plain loops, the
Gumbel competition's law, CoRelNet-nhid's width by its definition, and the documented defaults (issue 27)."""

import math

import pytest
import torch

from lscnb.models import relational as M


def _linear(x, layer):
    return x @ layer.weight.T + layer.bias


def _same_parameters(a, b):
    return all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


# ------------------------------------------------------------------------------------------------------- encoders
def test_conv_encoder_bounds_default_seed_and_he_scale():
    """side = size // 2**layers may be 1 (8 -> 4 -> 2 -> 1), not 0 (the message names 2**layers); seed defaults to 0;
    weights are He-normal, std sqrt(2 / fan_in)."""
    small = M.ConvEncoder(size=8, layers=3)
    assert small.fc[0].in_features == 32 and small(torch.randn(2, 3, 8, 8)).shape == (2, 128)
    with pytest.raises(ValueError, match=r"^size must be at least 2\*\*layers = 8, got 4$"):
        M.ConvEncoder(size=4, layers=3)
    enc = M.ConvEncoder()
    assert _same_parameters(enc, M.ConvEncoder(seed=0))
    assert enc.fc[0].weight.std().item() == pytest.approx(math.sqrt(2 / 512), rel=0.02)  # 32 x 4 x 4 inputs
    assert enc.fc[1].weight.std().item() == pytest.approx(math.sqrt(2 / 256), rel=0.02)


def test_grey_colours_encode_as_grey_objects():
    """encode_colours uses encode_objects' encoder (same seed, same weights, 32 x 32): a grey colour (v, v, v) is the
    constant grey image v."""
    levels = torch.tensor([0.2, 0.7, 1.0])
    palette = levels[:, None].expand(-1, 3)
    images = levels[:, None, None].expand(-1, 32, 32)
    torch.testing.assert_close(M.encode_colours(palette), M.encode_objects(images))
    torch.testing.assert_close(M.encode_colours(palette, seed=3), M.encode_objects(images, seed=3))
    assert not torch.allclose(M.encode_colours(palette, seed=3), M.encode_colours(palette))
    assert M.encode_colours(palette, size=16).shape == (3, 128)


def test_patches_use_a_two_conv_encoder():
    """encode_patches is ConvEncoder(seed, size 12, two convolutions) on the patches; seed defaults to 0."""
    patches = torch.rand(4, 3, 12, 12, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        for seed in (0, 5):
            torch.testing.assert_close(
                M.encode_patches(patches, seed=seed), M.ConvEncoder(seed=seed, size=12, layers=2)(patches)
            )
    torch.testing.assert_close(M.encode_patches(patches), M.encode_patches(patches, seed=0))


def test_render_keeps_a_batch_of_sequences():
    """Index sequences (B, T) render to (B, T, 3, 32, 32): glyph index % N repeated over the channels."""
    images = torch.rand(4, 32, 32)
    index = torch.tensor([[0, 3, 1], [2, 2, 5]])
    x = M.render(images, index)
    assert x.shape == (2, 3, 3, 32, 32)
    for b in range(2):
        for t in range(3):
            for ch in range(3):
                assert torch.equal(x[b, t, ch], images[index[b, t] % 4])


def _rendered_by_hand(images, palette, i):
    n = images.shape[0]
    return images[i % n][None] * palette[i // n][:, None, None]


@pytest.mark.parametrize("learn", [False, True])
def test_encoded_codes_of_coloured_objects(learn):
    """codes(seq) is the encoder on glyph i % N times colour i // N (drawn here), frozen table or learned encoder."""
    images = torch.rand(3, 32, 32, generator=torch.Generator().manual_seed(1))
    palette = torch.tensor([[1.0, 0.2, 0.0], [0.1, 0.5, 0.9]])
    enc = M.Encoded(M.CoRelNet(2, 2), images, palette=palette, learn=learn)
    seq = torch.tensor([[0, 4], [5, 1]])
    with torch.no_grad():
        drawn = torch.stack([_rendered_by_hand(images, palette, int(i)) for i in seq.flatten()])
        expected = M.ConvEncoder(seed=0)(drawn).view(2, 2, -1)
        torch.testing.assert_close(enc.codes(seq), expected)


def test_encoded_linear_layer_and_its_l1():
    """No linear layer by default (l1 = 0, a scalar); with one, codes go through it and l1 = sum |W| + sum |b|."""
    images = torch.rand(3, 32, 32, generator=torch.Generator().manual_seed(2))
    plain = M.Encoded(M.CoRelNet(2, 2), images)
    assert plain.linear is None and plain.l1().shape == () and plain.l1().item() == 0.0
    lin = M.Encoded(M.CoRelNet(2, 2), images, linear=True)
    with torch.no_grad():
        lin.linear.weight.fill_(-0.5)
        lin.linear.bias.fill_(-2.0)
    assert lin.l1().item() == pytest.approx(128 * 128 * 0.5 + 128 * 2.0)
    seq = torch.tensor([[0, 2]])
    with torch.no_grad():
        raw = M.ConvEncoder(seed=0)(images[seq[0]][:, None].expand(-1, 3, -1, -1))
        torch.testing.assert_close(lin.codes(seq)[0], raw @ lin.linear.weight.T + lin.linear.bias)


def test_tcn_default_width():
    """TCN's default width is the encoder's 128."""
    tcn = M.TCN()
    assert tcn.gamma.shape == (128,) and tcn.beta.shape == (128,)


# ---------------------------------------------------------------------------------------------------- similarities
def test_causal_softmax_and_lower_triangle_on_heads():
    """On (B, H, T, T) scores (H != T): row i softmaxed over j <= i by hand, and the entries j <= i row by row."""
    s = torch.randn(2, 5, 3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    got = M.causal_softmax(s)
    tri = M.lower_triangle(s)
    assert got.shape == (2, 5, 3, 3) and tri.shape == (2, 5, 6)
    for i in range(3):
        e = torch.exp(s[..., i, : i + 1])
        torch.testing.assert_close(got[..., i, : i + 1], e / e.sum(-1, keepdim=True))
        assert torch.all(got[..., i, i + 1 :] == 0)
    pairs = [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]
    torch.testing.assert_close(tri, torch.stack([s[..., i, j] for i, j in pairs], -1))


def test_causal_softmax_stays_on_the_input_device():
    """The mask is made on the scores' device (the meta device stands in for a GPU)."""
    assert M.causal_softmax(torch.empty(2, 3, 3, device="meta")).device.type == "meta"


def _row_softmax_by_hand(z):
    """softmax_j(z_i . z_j) for every i, flattened row by row, (B, T*T)."""
    B, T, _ = z.shape
    rows = []
    for b in range(B):
        r = []
        for i in range(T):
            e = [math.exp(float(z[b, i] @ z[b, j])) for j in range(T)]
            r += [v / sum(e) for v in e]
        rows.append(r)
    return torch.tensor(rows, dtype=z.dtype)


def test_full_similarities_are_row_softmaxes():
    """causal=False is softmax over j of z_i . z_j (rows sum to 1), for a batch, and CoRelNet(causal=False) uses it."""
    z = torch.randn(2, 3, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(4)) / 2
    torch.testing.assert_close(M.similarity_features(z, causal=False), _row_softmax_by_hand(z))
    net = M.CoRelNet(3, 2, dim=4, causal=False).double()
    torch.testing.assert_close(net.features(z), _row_softmax_by_hand(net.tcn(z).detach()))
    assert net(z).shape == (2, 2)


# -------------------------------------------------------------------------------------------------------- CoRelNet-T
def test_corelnet_t_positions_and_query_scales():
    """P (T x pos) and the query (pos) start N(0, 1/pos); pos defaults to 8."""
    assert M.CoRelNetT(3, 2).P.shape == (3, 8) and M.CoRelNetT(3, 2).query.shape == (8,)
    torch.manual_seed(5)
    net = M.CoRelNetT(4, 2, dim=4, pos=1024, width=8)
    assert net.P.std().item() == pytest.approx(1 / 32, rel=0.05)
    assert net.query.std().item() == pytest.approx(1 / 32, rel=0.1)


# ---------------------------------------------------------------------------------------------------------- PrediNet
def test_predinet_two_positions_parameters_and_relu():
    """T = 2 positions are 0 and 1; keys, queries and relations have no bias (count by hand); the MLP has its ReLU."""
    assert M.PrediNet(2, 2, dim=4).pos.flatten().tolist() == [0.0, 1.0]
    torch.manual_seed(6)
    T, d, h, r, k, hid, y = 3, 4, 2, 3, 4, 5, 2
    net = M.PrediNet(T, y, dim=d, heads=h, relations=r, key=k, hidden=hid)
    w = d + 1
    count = 2 * d + w * k + T * w * 2 * h * k + w * r + (h * (r + 2) + 1) * hid + (hid + 1) * y
    assert sum(p.numel() for p in net.parameters()) == count
    z = torch.randn(2, T, d)
    props = net.propositions(z).flatten(1)
    torch.testing.assert_close(net(z), _linear(torch.relu(_linear(props, net.mlp[0])), net.mlp[2]))
    with pytest.raises(ValueError, match=r"^z must have 3 dimensions, got shape \(3, 4\)$"):
        net(torch.randn(3, 4))


# ------------------------------------------------------------------------------------------------------- CoRelNetMix
def test_corelnet_mix_defaults_and_key_scale():
    """hidden 256, keys of 16, tau 1; keys start N(0, 1/key)."""
    net = M.CoRelNetMix(2, 3, dim=4)
    assert net.mlp[0].out_features == 256 and net.keys.shape == (2, 16) and net.tau == 1.0
    torch.manual_seed(7)
    assert M.CoRelNetMix(2, 3, dim=4, key=4096).keys.std().item() == pytest.approx(1 / 64, rel=0.05)


def test_corelnet_mix_forward_by_hand():
    """Eval mode: the rule of the larger q . k_r / sqrt(key) wins, its matrix (similarity rows or differences of
    w . z) goes through Linear, ReLU, Linear."""
    torch.manual_seed(8)
    net = M.CoRelNetMix(2, 3, dim=4, hidden=5, key=4).eval()
    z = torch.randn(6, 2, 4)
    zt = net.tcn(z)
    logits = _linear(zt.flatten(1), net.query) @ net.keys.T / 2
    sim = _row_softmax_by_hand(zt.detach().double()).float()
    p = _linear(zt, net.proj)[..., 0]
    diff = (p[:, :, None] - p[:, None, :]).flatten(1)
    chosen = torch.where((logits[:, 0] >= logits[:, 1])[:, None], sim, diff)
    hidden = torch.relu(_linear(chosen, net.mlp[0]))
    torch.testing.assert_close(net(z), _linear(hidden, net.mlp[2]))
    assert net(z).shape == (6, 3)


def test_gumbel_competition_law():
    """Training: the straight-through Gumbel-max picks rule r with probability softmax(logits), logits q . k_r /
    sqrt(key): (8 ln 3 / 4, 0) gives 9/10 for the similarity rule, whatever the temperature."""
    net = M.CoRelNetMix(2, 2, dim=2, key=16, tau=2.0).train()
    with torch.no_grad():
        net.query.weight.zero_()
        net.query.bias.copy_(torch.eye(16)[0])
        net.keys.zero_()
        net.keys[0, 0] = 8 * math.log(3)
    torch.manual_seed(9)
    w = net.choice(torch.zeros(20_000, 2, 2)).detach()
    assert torch.equal(w.sum(1), torch.ones(20_000))
    assert w[:, 0].mean().item() == pytest.approx(0.9, abs=0.01)


def test_gumbel_temperature_sets_the_straight_through_gradient():
    """The one-hot's gradient is the relaxed sample's, d y_0 / d l_0 = y_0 y_1 / tau with y = softmax((l + g) / tau):
    at tau = 100 the sample is nearly (1/2, 1/2), so d y_0 / d q_0 = (1/4) / tau * k_00 / sqrt(key) = 1/1600."""
    net = M.CoRelNetMix(2, 2, dim=2, key=16, tau=100.0).train()
    with torch.no_grad():
        net.query.weight.zero_()
        net.query.bias.zero_()
        net.keys.zero_()
        net.keys[0, 0] = 1.0
    torch.manual_seed(13)
    net.choice(torch.zeros(2_000, 2, 2))[:, 0].sum().backward()
    assert net.query.bias.grad[0].item() / 2_000 == pytest.approx(1 / 1600, rel=0.01)


# ------------------------------------------------------------------------------------------------- sensory baselines
def _lstm_by_hand(lstm, x):
    """PyTorch's LSTM (gates i, f, g, o), batch first, zero initial state: the last h."""
    n = lstm.hidden_size
    h = c = torch.zeros(x.shape[0], n)
    for t in range(x.shape[1]):
        z = x[:, t] @ lstm.weight_ih_l0.T + lstm.bias_ih_l0 + h @ lstm.weight_hh_l0.T + lstm.bias_hh_l0
        i, f, g, o = z.split(n, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
    return h


def test_lstm_baseline_reads_the_last_state():
    """TCN, an LSTM over the steps (batch first; B = 2, T = 4), a linear read-out of the last state; hidden 512."""
    assert M.LSTMBaseline(3, 2, dim=4).lstm.hidden_size == 512
    torch.manual_seed(10)
    net = M.LSTMBaseline(4, 3, dim=4, hidden=5)
    z = torch.randn(2, 4, 4)
    torch.testing.assert_close(net(z), _linear(_lstm_by_hand(net.lstm, net.tcn(z)), net.out))


def test_mlp_baseline_by_hand():
    """TCN, the codes concatenated, Linear, ReLU, Linear; hidden 256."""
    assert M.MLPBaseline(3, 2, dim=4).mlp[0].out_features == 256
    torch.manual_seed(11)
    net = M.MLPBaseline(3, 2, dim=4, hidden=5)
    z = torch.randn(2, 3, 4)
    expected = _linear(torch.relu(_linear(net.tcn(z).flatten(1), net.mlp[0])), net.mlp[2])
    torch.testing.assert_close(net(z), expected)


@pytest.mark.parametrize(
    "make",
    [lambda s: M.LSTMBaseline(4, 2, dim=3, hidden=4, segments=s), lambda s: M.MLPBaseline(4, 2, dim=3, segments=s)],
)
def test_segments_reach_the_baselines_tcn(make):
    """segments=[2, 2] standardises each pair of steps alone: every value becomes +-1/sqrt 2."""
    z = torch.randn(2, 4, 3, generator=torch.Generator().manual_seed(12))
    paired = make([2, 2]).tcn(z).detach()
    torch.testing.assert_close(paired.abs(), torch.full_like(paired, 1 / math.sqrt(2)), atol=1e-5, rtol=0)


def test_esbn_refuses_asym_with_cat():
    """The message names both options and why."""
    with pytest.raises(
        ValueError, match=r"^asym and cat cannot both be set: the authors' code has no asymmetric cat ESBN$"
    ):
        M.ESBN(2, 2, dim=4, asym=True, cat=True)


# ------------------------------------------------------------------------------------------------------ CoRelNet-nhid
@pytest.mark.parametrize(("T", "classes"), [(2, 3), (2, 4), (3, 4)])
def test_nhid_width_is_the_closest_count(T, classes):
    """The width whose CoRelNet count (encoder + TCN + decoder) is closest to ESBN's: no neighbour is closer."""
    encoder = sum(p.numel() for p in M.ConvEncoder().parameters())
    target = M.esbn_count(T, classes)
    w = M.nhid_width(T, classes)

    def gap(width):
        n = T * (T + 1) // 2
        return abs(encoder + 2 * 128 + (n + 1) * width + (width + 1) * classes - target)

    assert gap(w) < gap(w - 1) and gap(w) < gap(w + 1)
