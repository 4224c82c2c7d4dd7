"""The appendix baselines of the CoRelNet chapter (thesis Table C.2, Fig. C.13), as in the ESBN code base: a Relation
Network (Santoro et al. 2017) and a Neural Turing Machine (Graves et al. 2014), both on object embeddings (B, T, 128)
after temporal context normalisation. Both see the embeddings themselves: they are *sensory* models, with no
relational bottleneck.
"""

from __future__ import annotations

import torch
from torch import nn

from .. import checks
from .relational import TCN, lstm_step


class RelationNetwork(nn.Module):
    """Relation Network: ``o = f(sum_{i,j} g([x_i; x_j]))`` over all ``T^2`` ordered pairs (``i = j`` included) of the
    TCN codes, each extended by its position ``t`` (the code's temporal tag, ``tag=False`` drops it). ``g`` is
    Linear(2(d+1), 512), ReLU, Linear(512, 256), ReLU; ``f`` is Linear(256, 256), ReLU, Linear(256, y) (Santoro et al.
    2017, eq. 1; widths of the ESBN code)."""

    def __init__(
        self,
        T: int,
        classes: int,
        *,
        dim: int = 128,
        hidden: int = 512,
        out: int = 256,
        tag: bool = True,
        segments: list | None = None,
    ):
        super().__init__()
        self.T, self.tag = checks.positive_int(T, "T"), bool(tag)
        checks.positive_int(classes, "classes")
        width = checks.positive_int(dim, "dim") + self.tag
        self.tcn = TCN(dim, segments)
        self.g = nn.Sequential(
            nn.Linear(2 * width, checks.positive_int(hidden, "hidden")),
            nn.ReLU(),
            nn.Linear(hidden, checks.positive_int(out, "out")),
            nn.ReLU(),
        )
        self.f = nn.Sequential(nn.Linear(out, out), nn.ReLU(), nn.Linear(out, classes))

    def objects(self, z: torch.Tensor) -> torch.Tensor:
        """The RN's objects: TCN codes (B, T, d), with the position ``t`` appended if ``tag``."""
        x = self.tcn(z)
        if not self.tag:
            return x
        t = torch.arange(x.shape[1], dtype=x.dtype, device=x.device)
        return torch.cat([x, t.expand(x.shape[0], -1)[..., None]], -1)

    def pair_sum(self, x: torch.Tensor) -> torch.Tensor:
        """``sum_{i,j} g([x_i; x_j])`` (B, out) over objects ``x`` (B, T, d'). The first layer of ``g`` acts on the two
        halves separately, ``W [x_i; x_j] = W_1 x_i + W_2 x_j``, so the T^2 pairs cost two (B, T) products."""
        lin, rest = self.g[0], self.g[1:]
        W1, W2 = lin.weight.split(x.shape[-1], dim=1)
        a, b = x @ W1.T, x @ W2.T + lin.bias
        return rest(a[:, :, None] + b[:, None, :]).sum((1, 2))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        checks.tensor(z, "z", ndim=3)
        return self.f(self.pair_sum(self.objects(z)))


# ----------------------------------------------------------------------------------------------------------------- NTM
def ntm_address(
    memory: torch.Tensor,
    key: torch.Tensor,
    strength: torch.Tensor,
    gate: torch.Tensor,
    shift: torch.Tensor,
    sharpen: torch.Tensor,
    previous: torch.Tensor | None = None,
) -> torch.Tensor:
    """A head's weights (B, N) over the N slots of ``memory`` (B, N, W) (Graves et al. 2014, §3.3): content addressing
    ``w^c = softmax(beta cos(k, M_i))`` (eq. 5), interpolation with the ``previous`` weights ``w^g = g w^c + (1-g)
    w_prev`` (eq. 7; none at the first step), a circular shift by ``s`` over the offsets ``-1, 0, 1`` (eq. 8) and
    sharpening ``w_i^gamma / sum_j w_j^gamma`` (eq. 9).

    Shapes: key (B, W); strength, gate and sharpen (B, 1); shift (B, 3)."""
    checks.tensor(memory, "memory", ndim=3)
    if shift.shape[-1] != 3:
        raise ValueError(
            f"shift must hold weights of the offsets -1, 0, 1 (last dimension 3), got shape {tuple(shift.shape)}"
        )
    w = torch.softmax(strength * nn.functional.cosine_similarity(key[:, None], memory, dim=-1), -1)
    if previous is not None:
        w = gate * w + (1 - gate) * previous
    w = sum(s[:, None] * torch.roll(w, k, dims=-1) for k, s in zip((-1, 0, 1), shift.unbind(-1)))
    w = w.clamp_min(1e-30) ** sharpen
    return w / w.sum(-1, keepdim=True)


def ntm_read(memory: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The read vector ``r = sum_i w_i M_i`` (eq. 2), (B, W)."""
    return (w[..., None] * memory).sum(1)


def ntm_write(memory: torch.Tensor, w: torch.Tensor, erase: torch.Tensor, add: torch.Tensor) -> torch.Tensor:
    """Erase then add (eqs. 3, 4): ``M_i (1 - w_i e) + w_i a``."""
    w = w[..., None]
    return memory * (1 - w * erase[:, None]) + w * add[:, None]


class NTM(nn.Module):
    """A compact Neural Turing Machine as in the ESBN code: an LSTM controller (hidden 512) reads ``[z_t; r_{t-1}]``;
    one read and one write head address a memory of ``slots`` x ``width`` (10 x 256, a learned initial state) by
    :func:`ntm_address`; the write head erases and adds (:func:`ntm_write`). Per step the head parameters are linear
    maps of the controller state: key (tanh), strength (softplus), gate (sigmoid), shift (softmax over -1, 0, 1),
    sharpening ``1 + softplus``, erase (sigmoid), add (tanh). ``T + 1`` steps (a zero input last); the prediction is
    a linear read-out of the last controller state."""

    def __init__(
        self,
        T: int,
        classes: int,
        *,
        dim: int = 128,
        hidden: int = 512,
        slots: int = 10,
        width: int = 256,
        segments: list | None = None,
    ):
        super().__init__()
        self.T, self.dim = checks.positive_int(T, "T"), checks.positive_int(dim, "dim")
        self.slots, self.width = checks.positive_int(slots, "slots"), checks.positive_int(width, "width")
        self.tcn = TCN(dim, segments)
        self.lstm = nn.LSTMCell(dim + width, checks.positive_int(hidden, "hidden"))
        self.read_head = nn.Linear(hidden, width + 6)
        self.write_head = nn.Linear(hidden, 3 * width + 6)
        self.y = nn.Linear(hidden, checks.positive_int(classes, "classes"))
        self.memory0 = nn.Parameter(nn.init.xavier_normal_(torch.empty(slots, width)))

    def head(self, p: torch.Tensor) -> dict:
        """Split a head's raw output into its named, squashed parameters."""
        W = self.width
        out = dict(
            key=torch.tanh(p[:, :W]),
            strength=nn.functional.softplus(p[:, W : W + 1]),
            gate=torch.sigmoid(p[:, W + 1 : W + 2]),
            shift=torch.softmax(p[:, W + 2 : W + 5], -1),
            sharpen=1 + nn.functional.softplus(p[:, W + 5 : W + 6]),
        )
        if p.shape[1] > W + 6:
            out["erase"], out["add"] = torch.sigmoid(p[:, W + 6 : 2 * W + 6]), torch.tanh(p[:, 2 * W + 6 :])
        return out

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        checks.tensor(z, "z", ndim=3)
        z = self.tcn(z)
        B, T, _ = z.shape
        h = c = z.new_zeros(B, self.lstm.hidden_size)
        r = z.new_zeros(B, self.width)
        memory = self.memory0.expand(B, -1, -1)
        w_r = w_w = None
        for t in range(T + 1):
            x = z[:, t] if t < T else z.new_zeros(B, self.dim)
            h, c = lstm_step(self.lstm, torch.cat([x, r], -1), (h, c))
            if t == T:
                return self.y(h)
            rd, wr = self.head(self.read_head(h)), self.head(self.write_head(h))
            w_r = ntm_address(memory, rd["key"], rd["strength"], rd["gate"], rd["shift"], rd["sharpen"], w_r)
            r = ntm_read(memory, w_r)
            w_w = ntm_address(memory, wr["key"], wr["strength"], wr["gate"], wr["shift"], wr["sharpen"], w_w)
            memory = ntm_write(memory, w_w, wr["erase"], wr["add"])


# ----------------------------------------------------------------------------------------------------------------- MNM
def mnm_activations(weights: list, x: torch.Tensor) -> list:
    """The activations of a memory MLP with per-sample weights ``weights`` (each (B, out, in)) on ``x`` (B, in): tanh
    hidden layers, a linear output, no biases."""
    acts, h = [], x
    for i, W in enumerate(weights):
        h = (W @ h[..., None])[..., 0]
        h = torch.tanh(h) if i < len(weights) - 1 else h
        acts.append(h)
    return acts


def mnm_update(weights: list, key: torch.Tensor, targets: list, gate: torch.Tensor) -> list:
    """One write into the memory MLP (Munkhdalai et al. 2019, the local update rule of the ESBN code): every layer moves
    its activation ``a_l`` on ``key`` towards its target ``e_l``, ``W_l <- W_l - (2/d) (a_l - e_l) (beta a_{l-1})^T``,
    ``beta`` (B, 1) the write gate, ``a_0 = key``."""
    if len(targets) != len(weights):
        raise ValueError(f"targets must hold one target per layer ({len(weights)}), got {len(targets)}")
    acts = mnm_activations(weights, key)
    return [
        W - (2 / a.shape[-1]) * (a - e)[..., :, None] * (gate * h)[..., None, :]
        for W, a, h, e in zip(weights, acts, [key] + acts[:-1], targets)
    ]


class MNM(nn.Module):
    """Metalearned Neural Memory (Munkhdalai et al. 2019), compact, as in the ESBN code: the memory is a three-layer
    MLP (d -> d -> d -> d, tanh, no biases) whose weights are *fast weights*, per sample, starting from a fixed random
    draw. An LSTM controller (hidden d) reads ``[z_t; v_{t-1}]``; a tanh layer gives a write key ``k^w``, a write value
    ``v^w``, a read key ``k^r`` and the write gate ``beta = sigma(w^T .)``; a learned map sends ``v^w`` to one target
    per layer and :func:`mnm_update` writes; the read ``v_t`` is the memory's output on ``k^r``; the step's output is
    Linear([h_t; v_t]). ``T + 1`` steps (a zero input last); the prediction is a linear read-out of the last output.
    ``reconstruction`` holds the meta-objective of the last forward pass, the mean squared error of the updated memory
    on ``(k^w, v^w)`` averaged over the steps, which training adds to the loss."""

    def __init__(self, T: int, classes: int, *, dim: int = 128, layers: int = 3, segments: list | None = None):
        super().__init__()
        self.T, self.dim = checks.positive_int(T, "T"), checks.positive_int(dim, "dim")
        self.tcn = TCN(dim, segments)
        self.lstm = nn.LSTMCell(2 * dim, dim)
        self.heads = nn.Linear(dim, 4 * dim)
        self.gate = nn.Linear(dim, 1)
        self.targets = nn.Linear(dim, checks.positive_int(layers, "layers") * dim)
        self.read_out = nn.Linear(2 * dim, dim)
        self.y = nn.Linear(dim, checks.positive_int(classes, "classes"))
        self.register_buffer(
            "memory0", torch.stack([nn.Linear(dim, dim, bias=False).weight.detach() for _ in range(layers)])
        )
        self.reconstruction = None

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        checks.tensor(z, "z", ndim=3)
        z = self.tcn(z)
        B, T, d = z.shape
        h = c = v = z.new_zeros(B, d)
        weights = list(self.memory0.unsqueeze(1).expand(-1, B, -1, -1).unbind(0))
        loss = z.new_zeros(())
        for t in range(T + 1):
            x = z[:, t] if t < T else z.new_zeros(B, d)
            h, c = self.lstm(torch.cat([x, v], -1), (h, c))
            g, k_w, v_w, k_r = torch.tanh(self.heads(h)).split(d, -1)
            weights = mnm_update(weights, k_w, list(self.targets(v_w).split(d, -1)), torch.sigmoid(self.gate(g)))
            loss = loss + (mnm_activations(weights, k_w)[-1] - v_w).pow(2).mean()
            v = mnm_activations(weights, k_r)[-1]
            out = self.read_out(torch.cat([h, v], -1))
        self.reconstruction = loss / T
        return self.y(out)
