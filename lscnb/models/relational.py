"""Relational bottleneck models (thesis ch. 5, 7): CoRelNet and its variants, with the ESBN front end.

Objects are encoded (a conv encoder, Table C.1), normalised over the sequence (temporal context normalisation,
TCN), and CoRelNet's decoder sees only their similarities: ``R = softmax(Z Z^T)`` row-wise. The default is the
authors' code form: a causal softmax over ``j <= i`` and the lower triangle as features (it reproduces every
CoRelNet parameter count of Table C.3); ``causal=False`` is the thesis equation with the full ``T^2`` matrix.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn.utils import parametrize as P

from .. import checks


class ConvEncoder(nn.Module):
    """Table C.1's encoder: three 4x4 stride-2 convolutions (32 channels) and two dense layers, 32x32x3 -> 128.
    ``size``/``layers`` adapt it to other inputs: the Relational Games' 12x12 patches use two convolutions (12 -> 3)."""

    def __init__(self, channels: int = 3, seed: int = 0, size: int = 32, layers: int = 3):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        side = checks.positive_int(size, "size") // 2 ** checks.positive_int(layers, "layers")
        if side < 1:
            raise ValueError(f"size must be at least 2**layers = {2**layers}, got {size}")
        self.convs = nn.ModuleList([nn.Conv2d(channels if i == 0 else 32, 32, 4, 2, 1) for i in range(layers)])
        self.fc = nn.ModuleList([nn.Linear(32 * side * side, 256), nn.Linear(256, 128)])
        for m in list(self.convs) + list(self.fc):
            with torch.no_grad():
                fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * math.sqrt(2 / fan_in))
                m.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for c in self.convs:
            x = torch.relu(c(x))
        x = x.flatten(1)
        for f in self.fc:
            x = torch.relu(f(x))
        return x


def encode_objects(images: torch.Tensor, seed: int = 0) -> torch.Tensor:
    """Embeddings (N, 128) of grey images (N, 32, 32) by a random, frozen encoder (the thesis's random-encoder
    condition; the quick profile's way of making training cheap)."""
    checks.tensor(images, "images", ndim=3)
    with torch.no_grad():
        return ConvEncoder(seed=seed)(images.unsqueeze(1).expand(-1, 3, -1, -1).float())


def encode_colours(palette: torch.Tensor, seed: int = 0, size: int = 32) -> torch.Tensor:
    """Embeddings (K, 128) of plain ``size`` x ``size`` images of the colours ``palette`` (K, 3) by the random, frozen
    encoder of :func:`encode_objects` (same seed, same weights): the colour objects of the separated inputs (Fig.
    C.4)."""
    checks.tensor(palette, "palette", ndim=2)
    if palette.shape[1] != 3:
        raise ValueError(f"palette must have 3 columns (RGB), got shape {tuple(palette.shape)}")
    with torch.no_grad():
        return ConvEncoder(seed=seed, size=size)(palette.float()[:, :, None, None].expand(-1, -1, size, size))


def encode_patches(patches: torch.Tensor, seed: int = 0) -> torch.Tensor:
    """Embeddings (N, 128) of RGB patches (N, 3, 12, 12) (the Relational Games' cells) by a random, frozen two-conv
    encoder (the spec leaves the 12x12 encoder to the implementer)."""
    checks.tensor(patches, "patches", ndim=4)
    with torch.no_grad():
        return torch.cat(
            [ConvEncoder(seed=seed, size=patches.shape[-1], layers=2)(p) for p in patches.float().split(1000)]
        )


def render(images: torch.Tensor, index: torch.Tensor, palette: torch.Tensor | None = None) -> torch.Tensor:
    """RGB images (..., 3, 32, 32) of objects ``index``: grey glyphs ``images`` (N, 32, 32) repeated over 3 channels,
    or, with a ``palette`` (K, 3), glyph ``index % N`` multiplied channel-wise by colour ``index // N`` (dark lines on a
    coloured background, the spurious-feature tasks)."""
    n = images.shape[0]
    x = images[index % n].unsqueeze(-3)
    if palette is None:
        return x.expand(*x.shape[:-3], 3, *x.shape[-2:])
    return x * palette[index // n][..., :, None, None]


class Encoded(nn.Module):
    """A relational model behind an image encoder: ``forward(seq)`` renders the objects of the index sequences
    ``seq`` (B, T), encodes them and calls ``model`` on the (B, T, 128) codes. ``learn=False`` is the thesis's random
    encoder (frozen; the whole object table is encoded once), ``learn=True`` trains the conv encoder with the model.
    ``linear`` adds the thesis's extra Linear(128, 128) after the encoder, whose weights :meth:`l1` penalises (Fig.
    5.6)."""

    def __init__(
        self,
        model: nn.Module,
        images: torch.Tensor,
        *,
        palette: torch.Tensor | None = None,
        learn: bool = False,
        linear: bool = False,
        seed: int = 0,
    ):
        super().__init__()
        checks.tensor(images, "images", ndim=3)
        self.model, self.learn = model, bool(learn)
        self.register_buffer("images", images.float())
        self.register_buffer("palette", None if palette is None else checks.tensor(palette, "palette", ndim=2).float())
        self.encoder = ConvEncoder(seed=seed)
        self.linear = nn.Linear(128, 128) if linear else None
        if not self.learn:
            self.encoder.requires_grad_(False)
            k = 1 if palette is None else palette.shape[0]
            with torch.no_grad():
                table = torch.cat(
                    [
                        self.encoder(render(self.images, i, self.palette))
                        for i in torch.arange(k * images.shape[0]).split(1000)
                    ]
                )
            self.register_buffer("table", table)

    def codes(self, seq: torch.Tensor) -> torch.Tensor:
        """The (B, T, 128) encoder outputs (after the linear layer if any) of the objects ``seq``. A learned encoder
        encodes each distinct object of the batch once: the codes and gradients of encoding every image (the encoder
        keeps no batch statistics), 4-50x faster a step on a CPU, the more the fewer objects fill a batch
        (``bench/encoder.py``; ``torch.unique``, which ``vmap`` refuses)."""
        if self.learn:
            objects, where = torch.unique(seq, return_inverse=True)
            z = self.encoder(render(self.images, objects, self.palette))[where]
        else:
            z = self.table[seq]
        return z if self.linear is None else self.linear(z)

    def forward(self, seq: torch.Tensor) -> torch.Tensor:
        return self.model(self.codes(seq))

    def l1(self) -> torch.Tensor:
        """Sum of absolute weights and biases of the linear layer (0 without one)."""
        if self.linear is None:
            return self.images.new_zeros(())
        return self.linear.weight.abs().sum() + self.linear.bias.abs().sum()


class TCN(nn.Module):
    """Temporal context normalisation: each feature standardised over the sequence (unbiased variance + 1e-8),
    then scaled and shifted; ``segments`` normalises groups of steps separately (RMTS: pairs)."""

    def __init__(self, dim: int = 128, segments: list | None = None):
        super().__init__()
        self.gamma, self.beta = nn.Parameter(torch.ones(dim)), nn.Parameter(torch.zeros(dim))
        self.segments = segments

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        parts = [z] if not self.segments else list(z.split(self.segments, dim=1))
        return torch.cat([self._standardise(p) for p in parts], 1) * self.gamma + self.beta

    @staticmethod
    def _standardise(p: torch.Tensor) -> torch.Tensor:
        """``(p - mean) / sqrt(unbiased var + 1e-8)`` over the steps (written out: ``Tensor.var`` over a middle
        dimension is ~15x slower on the CPU)."""
        c = p - p.mean(1, keepdim=True)
        return c / torch.sqrt((c * c).sum(1, keepdim=True) / (p.shape[1] - 1) + 1e-8)


def causal_softmax(s: torch.Tensor) -> torch.Tensor:
    """Row ``i`` of the scores ``s`` (..., T, T) softmaxed over ``j <= i``, zeros above the diagonal (eq. corelnet, the
    authors' code form)."""
    T = s.shape[-1]
    mask = torch.ones(T, T, dtype=torch.bool, device=s.device).tril()
    return torch.softmax(s.masked_fill(~mask, float("-inf")), -1)


def lower_triangle(r: torch.Tensor) -> torch.Tensor:
    """The entries ``j <= i`` of ``r`` (..., T, T), row by row: (..., T(T+1)/2)."""
    T = r.shape[-1]
    i, j = torch.tril_indices(T, T, device=r.device)
    return r[..., i, j]


def asymmetric_scores(tcn: TCN, W1: nn.Module, W2: nn.Module, z: torch.Tensor) -> torch.Tensor:
    """The asymmetric similarities ``S_ij = TCN(W1 z_i)^T TCN(W2 z_j)`` (..., T, T) of raw embeddings ``z`` (thesis
    §7.2): each projection is normalised over the sequence by the one ``tcn`` (shared ``gamma``, ``beta``), as in the
    authors' ``CoRelNet_asym1.py`` and ``CoRelNet_qtsf_asym.py``."""
    return tcn(W1(z)) @ tcn(W2(z)).transpose(-1, -2)


def similarity_features(z: torch.Tensor, *, causal: bool = True) -> torch.Tensor:
    """CoRelNet's relations: causal softmax rows of ``Z Z^T`` restricted to ``j <= i`` (the code) or the full
    row-wise softmax (the thesis), flattened."""
    s = z @ z.transpose(-1, -2)
    if not causal:
        return torch.softmax(s, -1).flatten(-2)
    return lower_triangle(causal_softmax(s))


class CoRelNet(nn.Module):
    """CoRelNet on object embeddings (B, T, 128): TCN, similarities, MLP(256). ``variant``: ``"plain"``,
    ``"cat"`` (relations and the embeddings), ``"asym"`` (``TCN(W1 z) TCN(W2 z)^T``: the norm after each projection,
    one shared ``gamma``, ``beta``, as the authors' ``CoRelNet_asym1.py``) or ``"diff"`` (differences of a learned
    scalar projection, ch. 7)."""

    def __init__(
        self,
        T: int,
        classes: int,
        *,
        dim: int = 128,
        hidden: int = 256,
        variant: str = "plain",
        causal: bool = True,
        segments: list | None = None,
    ):
        super().__init__()
        self.T, self.variant, self.causal = (
            checks.positive_int(T, "T"),
            checks.one_of(variant, ("plain", "cat", "asym", "diff"), "variant"),
            causal,
        )
        self.tcn = TCN(dim, segments)
        if variant == "asym":
            self.W1, self.W2 = nn.Linear(dim, dim), nn.Linear(dim, dim)
        if variant == "diff":
            self.proj = nn.Linear(dim, 1)
        n_feat = T * T if (variant == "diff" or not causal) else T * (T + 1) // 2
        if variant == "cat":
            n_feat += T * dim
        self.mlp = nn.Sequential(nn.Linear(n_feat, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def features(self, z: torch.Tensor) -> torch.Tensor:
        if self.variant == "asym":
            return lower_triangle(causal_softmax(asymmetric_scores(self.tcn, self.W1, self.W2, z)))
        z = self.tcn(z)
        if self.variant == "diff":
            p = self.proj(z)  # (B, T, 1)
            return (p - p.transpose(-1, -2)).flatten(-2)
        f = similarity_features(z, causal=self.causal)
        return torch.cat([f, z.flatten(1)], -1) if self.variant == "cat" else f

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        checks.tensor(z, "z", ndim=3)
        return self.mlp(self.features(z))


class TiedQueryKey(nn.Module):
    """A parametrization of ``nn.MultiheadAttention``'s in-projection (weight (3d, d) or bias (3d,)) by a tensor
    ``[W_Q; W_V]`` of 2d rows: the key map is the query map, so the scores ``(W_Q z_i)^T (W_Q z_j)`` are symmetric."""

    def forward(self, w: torch.Tensor) -> torch.Tensor:
        d = w.shape[0] // 2
        return torch.cat([w[:d], w[:d], w[d:]])

    def right_inverse(self, w: torch.Tensor) -> torch.Tensor:
        d = w.shape[0] // 3
        return torch.cat([w[:d], w[2 * d :]])


class TransformerBaseline(nn.Module):
    """The sensory baseline: TCN, sinusoidal positions, one encoder layer (8 heads, feed-forward 512), mean
    pooling, MLP(256). ``symmetric=True`` is the thesis's *symmetric Transformer* (Fig. C.9): ``(Qz)^T(Kz)`` becomes
    ``(Qz)^T(Qz)`` (the key projection tied to the query one, :class:`TiedQueryKey`; the key bias too)."""

    def __init__(self, T: int, classes: int, *, dim: int = 128, segments: list | None = None, symmetric: bool = False):
        super().__init__()
        self.symmetric = bool(symmetric)
        self.tcn = TCN(dim, segments)
        pos = torch.arange(T)[:, None] / (10000 ** (torch.arange(0, dim, 2) / dim))
        pe = torch.zeros(T, dim)
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos), torch.cos(pos)
        self.register_buffer("pe", pe)
        self.layer = nn.TransformerEncoderLayer(dim, 8, 512, dropout=0.0, batch_first=True)
        if self.symmetric:
            attn = self.layer.self_attn
            P.register_parametrization(attn, "in_proj_weight", TiedQueryKey(), unsafe=True)
            P.register_parametrization(attn, "in_proj_bias", TiedQueryKey(), unsafe=True)
        self.out = nn.Sequential(nn.Linear(dim, 256), nn.ReLU(), nn.Linear(256, classes))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.out(self.layer(self.tcn(z) + self.pe).mean(1))


class CoRelNetT(nn.Module):
    """CoRelNet-T as the authors' code has it (``CoRelNet_qtsf``): tokens ``U = R P`` (causal similarity rows mixed
    by learned positions ``P`` in R^{T x 8}); one learned query cross-attends to them (8 heads, key/value width 512,
    residual + LayerNorm, feed-forward 8 -> 128 -> 8); output MLP 8 -> 256 -> y. The thesis instead describes the
    rows themselves as tokens of a one-layer Transformer. ``cat=True`` is the relational + sensory ablation (Figs. 5.4
    left, C.7, C.12): each token carries its object's normalised embedding too, ``[R P, z]`` (8 + 128). ``asym=True``
    is the asymmetric ablation (Figs. 5.4 middle, C.9): ``R`` from :func:`asymmetric_scores` as in the asymmetric
    CoRelNet (``CoRelNet_qtsf_asym.py``)."""

    def __init__(
        self,
        T: int,
        classes: int,
        *,
        dim: int = 128,
        segments: list | None = None,
        width: int = 512,
        pos: int = 8,
        heads: int = 8,
        cat: bool = False,
        asym: bool = False,
    ):
        super().__init__()
        self.T, self.heads, self.cat = checks.positive_int(T, "T"), heads, bool(cat)
        self.tcn = TCN(dim, segments)
        self.P = nn.Parameter(torch.randn(T, pos) / math.sqrt(pos))
        self.query = nn.Parameter(torch.randn(pos) / math.sqrt(pos))
        token = pos + dim * self.cat
        self.q, self.k, self.v = nn.Linear(pos, width), nn.Linear(token, width), nn.Linear(token, width)
        self.o = nn.Linear(width, pos)
        self.norm1, self.norm2 = nn.LayerNorm(pos), nn.LayerNorm(pos)
        self.ff = nn.Sequential(nn.Linear(pos, 128), nn.ReLU(), nn.Linear(128, pos))
        self.out = nn.Sequential(nn.Linear(pos, 256), nn.ReLU(), nn.Linear(256, classes))
        self.asym = bool(asym)
        if self.asym:
            self.W1, self.W2 = nn.Linear(dim, dim), nn.Linear(dim, dim)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        checks.tensor(z, "z", ndim=3)
        B, T = z.shape[:2]
        zn = self.tcn(z)
        R = causal_softmax(asymmetric_scores(self.tcn, self.W1, self.W2, z) if self.asym else zn @ zn.transpose(-1, -2))
        U = R @ self.P  # (B, T, 8)
        if self.cat:
            U = torch.cat([U, zn], -1)  # (B, T, 8 + 128)
        h = self.heads
        q = self.q(self.query).view(1, h, 1, -1).expand(B, -1, -1, -1)
        k, v = (f(U).view(B, T, h, -1).transpose(1, 2) for f in (self.k, self.v))
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(k.shape[-1]), -1) @ v  # (B, h, 1, d_h)
        x = self.norm1(self.query + self.o(a.transpose(1, 2).reshape(B, -1)))
        return self.out(self.norm2(x + self.ff(x)))


class PrediNet(nn.Module):
    """PrediNet (Shanahan et al. 2019) on a sequence of object embeddings (B, T, 128), after TCN. Each object's code is
    extended by its position ``t / (T - 1)``: ``L`` (T, 129). Shared keys ``K = L W_K``; each of ``heads`` heads forms
    two queries from the whole flattened input, ``q_{1,2} = W_{Q1,2} flatten(L)``, attends to two objects,
    ``e_{1,2} = softmax(q_{1,2} K^T / sqrt(d_k)) L``, and compares them on ``relations`` learned scalar features shared
    by the heads, ``d = (e_1 - e_2) W_S``; the head's proposition is ``[d, pos(e_1), pos(e_2)]``. The propositions of
    all heads, concatenated, go to an MLP(256). Widths (32 heads, 16 relations, keys of 16) are our choice."""

    def __init__(
        self,
        T: int,
        classes: int,
        *,
        dim: int = 128,
        heads: int = 32,
        relations: int = 16,
        key: int = 16,
        hidden: int = 256,
        segments: list | None = None,
    ):
        super().__init__()
        self.T, self.heads, self.key = (
            checks.positive_int(T, "T"),
            checks.positive_int(heads, "heads"),
            checks.positive_int(key, "key"),
        )
        self.tcn = TCN(dim, segments)
        self.register_buffer("pos", torch.linspace(0, 1, T)[:, None] if T > 1 else torch.zeros(1, 1))
        width = dim + 1
        self.W_K = nn.Linear(width, key, bias=False)
        self.W_Q = nn.Linear(T * width, 2 * heads * key, bias=False)
        self.W_S = nn.Linear(width, checks.positive_int(relations, "relations"), bias=False)
        self.mlp = nn.Sequential(nn.Linear(heads * (relations + 2), hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def attend(self, z: torch.Tensor) -> torch.Tensor:
        """The two objects each head attends to, ``e`` (B, heads, 2, T) attention weights. The 2 x heads queries go
        through one batched product with the shared keys (B, 2h, key) @ (B, key, T), not a broadcast over heads,
        which would copy the keys once per head (and sum them back in the backward pass): the same sums, about twice
        as fast."""
        L = torch.cat([self.tcn(z), self.pos.expand(z.shape[0], -1, -1)], -1)  # (B, T, 129)
        K = self.W_K(L)  # (B, T, key)
        Q = self.W_Q(L.flatten(1)).view(z.shape[0], 2 * self.heads, self.key)  # (B, 2h, key): head-major, as (h, 2)
        att = torch.softmax(Q @ K.transpose(1, 2) / math.sqrt(self.key), -1)  # (B, 2h, T)
        return att.view(z.shape[0], self.heads, 2, -1), L

    def propositions(self, z: torch.Tensor) -> torch.Tensor:
        """Each head's ``[d, pos(e_1), pos(e_2)]``, (B, heads, relations + 2)."""
        att, L = self.attend(z)
        B, h, _, T = att.shape
        E = (att.reshape(B, 2 * h, T) @ L).view(B, h, 2, -1)  # (B, h, 2, 129): one batched product, as in attend
        d = self.W_S(E[:, :, 0]) - self.W_S(E[:, :, 1])
        return torch.cat([d, E[..., -1]], -1)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        checks.tensor(z, "z", ndim=3)
        if z.shape[1] != self.T:
            raise ValueError(f"z must hold T={self.T} objects, got shape {tuple(z.shape)}")
        return self.mlp(self.propositions(z).flatten(1))


class CoRelNetMix(nn.Module):
    """CoRelNet_mix (thesis §7.3): two rules computed in parallel on the TCN codes, the similarity matrix
    ``softmax(z_i^T z_j)`` (full rows) and the difference matrix ``D_ij = w^T (z_i - z_j)``; a competition picks
    one. Keys are learned rule signatures ``k_r`` (R^16); the query is a linear map of the encoded inputs, ``q = W_q
    flatten(z)``; the choice is a Gumbel-softmax of ``q^T k_r / 4`` (temperature ``tau``, straight-through one-hot
    while training, the arg max in eval mode). The winner's flattened matrix feeds the MLP(256). Gumbel temperature,
    straight-through and the query's input are our choices: the thesis gives no more detail."""

    RULES = ("similarity", "difference")

    def __init__(
        self,
        T: int,
        classes: int,
        *,
        dim: int = 128,
        hidden: int = 256,
        key: int = 16,
        tau: float = 1.0,
        segments: list | None = None,
    ):
        super().__init__()
        self.T, self.tau = checks.positive_int(T, "T"), checks.positive_float(tau, "tau")
        self.tcn = TCN(dim, segments)
        self.proj = nn.Linear(dim, 1)
        self.keys = nn.Parameter(torch.randn(len(self.RULES), key) / math.sqrt(key))
        self.query = nn.Linear(T * dim, key)
        self.mlp = nn.Sequential(nn.Linear(T * T, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def matrices(self, z: torch.Tensor) -> torch.Tensor:
        """The two rules' flattened matrices (B, 2, T^2) of TCN codes ``z``."""
        p = self.proj(z)
        return torch.stack([similarity_features(z, causal=False), (p - p.transpose(-1, -2)).flatten(-2)], 1)

    def choice(self, z: torch.Tensor) -> torch.Tensor:
        """Weights (B, 2) of the two rules: one-hot (straight-through Gumbel while training, arg max in eval)."""
        logits = self.query(z.flatten(1)) @ self.keys.T / math.sqrt(self.keys.shape[1])
        if self.training:
            return nn.functional.gumbel_softmax(logits, tau=self.tau, hard=True)
        return nn.functional.one_hot(logits.argmax(-1), len(self.RULES)).to(z.dtype)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        checks.tensor(z, "z", ndim=3)
        z = self.tcn(z)
        return self.mlp((self.choice(z)[:, :, None] * self.matrices(z)).sum(1))


def lstm_gates(x, h, c, w_ih, w_hh, b_ih, b_hh) -> tuple[torch.Tensor, torch.Tensor]:
    """One step of torch's LSTM cell in plain matrix products: gates ``[i, f, g, o] = W_ih x + b_ih + W_hh h + b_hh``,
    ``c' = sigma(f) c + sigma(i) tanh(g)``, ``h' = sigma(o) tanh(c')``. ``torch.vmap`` batches these (it has no rule
    for ``aten::lstm_cell`` or ``aten::lstm``), so models that use it train batched (:mod:`lscnb.batched`)."""
    i, f, g, o = (nn.functional.linear(x, w_ih, b_ih) + nn.functional.linear(h, w_hh, b_hh)).chunk(4, -1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def lstm_step(cell: nn.LSTMCell, x: torch.Tensor, state: tuple) -> tuple[torch.Tensor, torch.Tensor]:
    """``cell(x, state)`` by :func:`lstm_gates` on the cell's own weights."""
    return lstm_gates(x, *state, cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)


class LSTMBaseline(nn.Module):
    """A sensory baseline of the ESBN code base: TCN, an LSTM (hidden 512) over the embeddings, a linear read-out of
    its last state."""

    def __init__(self, T: int, classes: int, *, dim: int = 128, hidden: int = 512, segments: list | None = None):
        super().__init__()
        self.tcn = TCN(dim, segments)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, classes)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        checks.tensor(z, "z", ndim=3)
        z, lstm = self.tcn(z), self.lstm  # its one layer stepped by lstm_gates: the same sums, and vmap batches them
        h = c = z.new_zeros(z.shape[0], lstm.hidden_size)
        for t in range(z.shape[1]):
            h, c = lstm_gates(z[:, t], h, c, lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0)
        return self.out(h)


class MLPBaseline(nn.Module):
    """The plainest sensory baseline: TCN, the embeddings concatenated, MLP(256). It sees everything CoRelNet's
    decoder sees, and more (the relations are a function of its input), but with no bias towards relations."""

    def __init__(self, T: int, classes: int, *, dim: int = 128, hidden: int = 256, segments: list | None = None):
        super().__init__()
        self.tcn = TCN(dim, segments)
        self.mlp = nn.Sequential(nn.Linear(T * dim, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        checks.tensor(z, "z", ndim=3)
        return self.mlp(self.tcn(z).flatten(1))


class ESBN(nn.Module):
    """Emergent symbol binding network (Webb et al. 2021), as in its code. An LSTM controller (hidden 512) never
    sees an embedding: at step ``t`` it reads the key ``k^r_t``, emits a write key ``k^w_t = ReLU(W_k h_t)`` (256),
    a gate ``g_t = sigma(w_g^T h_t)`` and logits ``W_y h_t``. Reading compares ``z_t`` with the stored values,
    ``w = softmax_i(z_t^T M^v_i)``, ``c_i = sigma(gamma z_t^T M^v_i + beta)``, ``k^r = g_t sum_i w_i [M^k_i; c_i]``;
    writing appends ``(k^w_t, z_t)``. ``T + 1`` steps; the prediction is read at the last. ``asym=True`` is the
    thesis's *asymmetric ESBN* (§7.2), as the authors' ``ESBN_asym1.py``: two learned Linear(128, 128) maps, each
    followed by the TCN (one shared ``gamma``, ``beta``); the memory stores ``TCN(W_1 z)`` and reads with the query
    ``TCN(W_2 z_t)``, so the similarity is :func:`asymmetric_scores`'s. ``cat=True`` is the relational + sensory
    ablation (Figs. 5.4 left, C.7, C.12): the controller also
    reads the embedding, ``[k^r_t; z_t]`` at step ``t + 1`` (zeros for ``z`` at the first step)."""

    def __init__(
        self,
        T: int,
        classes: int,
        *,
        dim: int = 128,
        hidden: int = 512,
        key: int = 256,
        segments: list | None = None,
        asym: bool = False,
        cat: bool = False,
    ):
        super().__init__()
        self.T, self.key_size, self.cat = checks.positive_int(T, "T"), key, bool(cat)
        self.tcn = TCN(dim, segments)
        self.lstm = nn.LSTMCell(key + 1 + dim * self.cat, hidden)
        self.key_w, self.gate, self.y = nn.Linear(hidden, key), nn.Linear(hidden, 1), nn.Linear(hidden, classes)
        self.gain, self.bias = nn.Parameter(torch.ones(1)), nn.Parameter(torch.zeros(1))
        self.asym = bool(asym)
        if self.asym and self.cat:
            raise ValueError("asym and cat cannot both be set: the authors' code has no asymmetric cat ESBN")
        if self.asym:
            self.W1, self.W2 = nn.Linear(dim, dim), nn.Linear(dim, dim)

    def codes(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The stored values and the queries (each (B, T, d)) of raw embeddings ``z``: both ``TCN(z)`` (symmetric), or
        ``TCN(W_1 z)`` and ``TCN(W_2 z)`` (asymmetric)."""
        if self.asym:
            return self.tcn(self.W1(z)), self.tcn(self.W2(z))
        z = self.tcn(z)
        return z, z

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        checks.tensor(z, "z", ndim=3)
        z, query = self.codes(z)
        B, T, _ = z.shape
        h = c = z.new_zeros(B, self.lstm.hidden_size)
        key_r = z.new_zeros(B, self.key_size + 1)
        seen = z.new_zeros(B, z.shape[2])  # z_{t-1} for ``cat``
        Mk, Mv = [], []
        for t in range(T + 1):
            h, c = lstm_step(self.lstm, torch.cat([key_r, seen], 1) if self.cat else key_r, (h, c))
            if t == T:
                return self.y(h)
            g = torch.sigmoid(self.gate(h))
            Mk.append(torch.relu(self.key_w(h)))
            if t > 0:
                mk, mv = torch.stack(Mk[:-1], 1), torch.stack(Mv, 1)  # (B, t, key), (B, t, dim)
                sim = mv @ query[:, t, :, None]  # (B, t, 1)
                w, conf = torch.softmax(sim, 1), torch.sigmoid(self.gain * sim + self.bias)
                key_r = g * (torch.cat([mk, conf], 2) * w).sum(1)
            Mv.append(z[:, t])
            seen = z[:, t]


def table_c3_count(T: int, classes: int) -> int:
    """CoRelNet's parameter count as in Table C.3: encoder + TCN + Linear(T(T+1)/2 -> 256) + Linear(256 -> y)."""
    enc = sum(p.numel() for p in ConvEncoder().parameters())
    dec = sum(p.numel() for p in CoRelNet(T, classes).parameters())
    return enc + dec


def nhid_width(T: int, classes: int) -> int:
    """CoRelNet-nhid's decoder width (thesis App. C.7, Table C.3): the hidden width that brings CoRelNet's count
    (:func:`table_c3_count`) closest to ESBN's (:func:`esbn_count`), halves rounded up. It gives Table C.3's
    CoRelNet-nhid counts exactly for
    six of its seven tasks; same/diff 6's printed count (6 more) is reached by no integer width."""
    T, classes = checks.positive_int(T, "T"), checks.positive_int(classes, "classes")
    base = table_c3_count(T, classes) - (T * (T + 1) // 2 + 1) * 256 - 257 * classes  # encoder + TCN
    return math.floor((esbn_count(T, classes) - base - classes) / (T * (T + 1) // 2 + 1 + classes) + 0.5)


def nhid_count(T: int, classes: int) -> int:
    """CoRelNet-nhid's parameter count as in Table C.3: encoder + TCN + decoder of width :func:`nhid_width`."""
    return sum(p.numel() for p in ConvEncoder().parameters()) + sum(
        p.numel() for p in CoRelNet(T, classes, hidden=nhid_width(T, classes)).parameters()
    )


def esbn_count(T: int, classes: int) -> int:
    """ESBN's parameter count as in Table C.3: encoder + TCN + LSTM(257 -> 512) + key, gate, output layers + 2."""
    return sum(p.numel() for p in ConvEncoder().parameters()) + sum(p.numel() for p in ESBN(T, classes).parameters())
