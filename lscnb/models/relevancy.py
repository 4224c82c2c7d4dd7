"""Self-attentive RNNs with relevancy screening (Kerg et al. 2020; thesis ch. 4, Algorithm 1), in the form of the
authors' code (bhargav104/MemoryNets, ``RelMemRNN`` in RNN.py and ``RelLSTM`` in LSTM.py; golden tests in
tests/test_relevancy.py).

At every step ``h_t = tanh(U x_t + V s_{t-1})`` (``s_{-1} = 0``); ``h_t`` joins the short-term buffer (the last
``nu`` states, FIFO), and the state that leaves the buffer, ``h_{t-nu}``, takes a free long-term slot or replaces
the lowest-scored one of the ``rho`` slots if its relevance score is larger (a streaming top-rho); only then does
the step attend: ``c_t = sum_i alpha_i m_i`` over ``M_t = [h_{t-nu+1}..h_t] + R_t`` with additive alignment
``e_i = v^T tanh(W_a s_{t-1} + U_a m_i)`` (empty slots masked), and ``s_t = (h_t + c_t)/2`` (the code's mean; the
thesis writes the sum). A state's relevance score is the attention it received while in the buffer (detached,
``nu`` steps including its own). Stored states keep their graph, so gradients flow through the skip connections.
The model's output at step t is ``h_t``, which the authors' tasks read out (``macro=True`` gives ``s_t``).
``nu >= T`` with ``rho = 0`` is full self-attention (MemRNN); memory and compute are ``O(nu + rho)`` per step
instead of ``O(t)``. ``cell="lstm"`` is RelLSTM: the LSTM gates read ``s_{t-1}`` in place of ``h_{t-1}``.

Initialisation is lscnb's, not the code's (which uses a Henaff-orthogonal ``V``, Xavier/Kaiming ``U`` and a
Xavier-normal ``v``): here ``V`` is Haar-orthogonal, ``U``, ``W_a``, ``U_a`` PyTorch's default, ``v ~ N(0, 1/n)``.

:class:`Tagger` puts a per-step linear readout on any of the chapter's models (``make_core``): the plain tanh RNN,
the orthogonal RNN, the LSTM, MemRNN, RelRNN and RelLSTM, all returning logits (B, T, classes).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn.utils import parametrize

from .. import checks
from .gated import LSTMCell
from .orthogonal import OrthogonalRNNCell

FULL = 2**62
"""A buffer longer than any sequence: ``nu=FULL, rho=0`` is full self-attention."""


class RelRNN(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, *, nu: int = 5, rho: int = 5, cell: str = "rnn"):
        super().__init__()
        self.n = checks.positive_int(hidden_size, "hidden_size")
        self.nu, self.rho = checks.positive_int(nu, "nu"), checks.positive_int(rho, "rho", allow_zero=True)
        self.cell = checks.one_of(cell, ("rnn", "lstm"), "cell")
        input_size = checks.positive_int(input_size, "input_size")
        if cell == "lstm":
            self.lstm = LSTMCell(input_size, hidden_size)
        else:
            self.U = nn.Linear(input_size, hidden_size)
            self.V = nn.Linear(hidden_size, hidden_size, bias=False)
            nn.init.orthogonal_(self.V.weight)
        self.Wa = nn.Linear(hidden_size, hidden_size, bias=False)
        self.Ua = nn.Linear(hidden_size, hidden_size, bias=False)
        self.va = nn.Parameter(torch.randn(hidden_size) / math.sqrt(hidden_size))
        self.memory_trace: list[int] = []

    @property
    def state_size(self) -> int:
        return self.n

    def _step(self, s, mem_c, x):
        """h_t from s_{t-1} (and the LSTM's cell state)."""
        if self.cell == "lstm":
            out = self.lstm(torch.cat([s, mem_c], -1), x)
            return out[:, : self.n], out[:, self.n :]
        return torch.tanh(self.U(x) + self.V(s)), mem_c

    def forward(
        self,
        x: torch.Tensor,
        return_attention: bool = False,
        *,
        pin: tuple = (),
        attention: bool = True,
        hidden: list | None = None,
        macro: bool = False,
    ):
        """States h_t (B, T, N) for inputs (B, T, D), what the authors' tasks read out (``macro``: the macro-states
        s_t instead); with ``return_attention`` also the list of (memory indices, weights) per step (index -1: an
        empty slot, weight 0). ``pin``: steps whose states are kept in long-term memory whatever their score (an
        oracle screening, for the gradient checks); ``attention=False`` is the plain RNN with the same weights
        (``s_t = h_t``); ``hidden``, if a list, receives every h_t (with retained gradients).
        ``self.memory_trace`` records the number of memory entries (buffer and slots) attended at each step."""
        checks.tensor(x, "x", ndim=3)
        B, T, _ = x.shape
        buf, buf_key = x.new_zeros(B, 0, self.n), x.new_zeros(B, 0, self.n)  # the buffer's states, their keys U_a m_i
        buf_idx = []  # and their steps
        buf_score = x.new_zeros(B, 0)
        slots, slot_key = x.new_zeros(B, self.rho, self.n), x.new_zeros(B, self.rho, self.n)
        slot_idx = torch.full((B, self.rho), -1, dtype=torch.long, device=x.device)
        slot_score = torch.full((B, self.rho), -math.inf, dtype=x.dtype, device=x.device)
        s, cell_c = x.new_zeros(B, self.n), x.new_zeros(B, self.n)
        out, attn, self.memory_trace = [], [], []
        for t in range(T):
            h, cell_c = self._step(s, cell_c, x[:, t])
            if hidden is not None:
                h.retain_grad()
                hidden.append(h)
            if not attention:
                self.memory_trace.append(0)
                s = h
                out.append(h)
                continue
            buf = torch.cat([buf, h[:, None]], 1)  # h_t joins the buffer, the oldest state leaves, then attend
            buf_key = torch.cat([buf_key, self.Ua(h)[:, None]], 1)  # a key is computed once, as its state enters
            buf_idx.append(t)
            buf_score = torch.cat([buf_score, x.new_zeros(B, 1)], 1)
            if len(buf_idx) > self.nu:
                old, old_key, old_i, old_score = buf[:, 0], buf_key[:, 0], buf_idx.pop(0), buf_score[:, 0]
                buf, buf_key, buf_score = buf[:, 1:], buf_key[:, 1:], buf_score[:, 1:]
                if self.rho:
                    if old_i in pin:
                        old_score = torch.full_like(old_score, math.inf)
                    new = self._admit(slots, slot_idx, slot_score, old, old_i, old_score, keys=slot_key, key=old_key)
                    slots, slot_idx, slot_score, slot_key = new
            mem, keys = (torch.cat([buf, slots], 1), torch.cat([buf_key, slot_key], 1)) if self.rho else (buf, buf_key)
            filled = torch.cat([torch.ones(B, len(buf_idx), dtype=torch.bool, device=x.device), slot_idx >= 0], 1)
            e = torch.tanh(self.Wa(s).unsqueeze(1) + keys) @ self.va
            a = torch.softmax(e.masked_fill(~filled, -math.inf), -1)
            c = (a.unsqueeze(-1) * mem).sum(1)
            buf_score = buf_score + a[:, : len(buf_idx)].detach()
            if return_attention:
                idx = torch.tensor(buf_idx, dtype=torch.long, device=x.device).expand(B, -1)
                attn.append((torch.cat([idx, slot_idx], 1), a.detach()))
            self.memory_trace.append(mem.shape[1])
            s = 0.5 * (h + c)
            out.append(s if macro else h)
        states = torch.stack(out, 1)
        return (states, attn) if return_attention else states

    def _admit(self, slots, slot_idx, slot_score, state, index, score, *, keys=None, key=None):
        """Streaming top-rho: the evicted state replaces the lowest-scored slot where its score is larger. With
        ``keys`` (the slots' U_a m_i) and ``key`` (the state's), the keys move with their states and come fourth."""
        lowest = slot_score.argmin(1)
        low = slot_score.gather(1, lowest[:, None])[:, 0]
        take = (score > low) | (low == -math.inf)
        onehot = nn.functional.one_hot(lowest, self.rho).bool() & take[:, None]
        slots = torch.where(onehot[..., None], state[:, None, :], slots)
        slot_idx = torch.where(onehot, torch.full_like(slot_idx, index), slot_idx)
        slot_score = torch.where(onehot, score[:, None].expand_as(slot_score), slot_score)
        if keys is None:
            return slots, slot_idx, slot_score
        return slots, slot_idx, slot_score, torch.where(onehot[..., None], key[:, None, :], keys)


class MemRNN(RelRNN):
    """Full self-attention over every state so far, h_t included (thesis's MemRNN): a RelRNN that never evicts."""

    def __init__(self, input_size: int, hidden_size: int, *, cell: str = "rnn"):
        super().__init__(input_size, hidden_size, nu=FULL, rho=0, cell=cell)


class CellSequence(nn.Module):
    """A recurrent cell of :mod:`lscnb.models` unrolled over (B, T, D); ``hidden`` receives every state."""

    def __init__(self, cell: nn.Module):
        super().__init__()
        self.cell = cell
        self.memory_trace: list[int] = []

    @property
    def state_size(self) -> int:
        return self.cell.hidden_size

    def forward(self, x: torch.Tensor, *, hidden: list | None = None) -> torch.Tensor:
        checks.tensor(x, "x", ndim=3)
        state = self.cell.initial_state(x.shape[0], device=x.device, dtype=x.dtype)
        out = []
        with parametrize.cached():  # an orthogonal matrix is mapped once per sequence, not once per step
            for t in range(x.shape[1]):
                state = self.cell(state, x[:, t])
                if hidden is not None:
                    state.retain_grad()
                    hidden.append(state)
                out.append(self.cell.output(state))
        self.memory_trace = [0] * x.shape[1]
        return torch.stack(out, 1)


MODELS = ("RNN", "orthRNN", "LSTM", "MemRNN", "RelRNN", "RelLSTM")


def make_core(kind: str, input_size: int, hidden_size: int, *, nu: int = 10, rho: int = 10) -> nn.Module:
    """One of :data:`MODELS`. ``RNN`` is the RelRNN's tanh recurrence without attention (same initialisation);
    ``orthRNN`` keeps its recurrent matrix orthogonal (modReLU, expRNN map); ``LSTM`` is the plain-ops LSTM."""
    checks.one_of(kind, MODELS, "kind")
    if kind == "RNN":
        return RelRNN(input_size, hidden_size, nu=1, rho=0)
    if kind == "orthRNN":
        return CellSequence(OrthogonalRNNCell(input_size, hidden_size))
    if kind == "LSTM":
        return CellSequence(LSTMCell(input_size, hidden_size))
    if kind == "MemRNN":
        return MemRNN(input_size, hidden_size)
    return RelRNN(input_size, hidden_size, nu=nu, rho=rho, cell="lstm" if kind == "RelLSTM" else "rnn")


class Tagger(nn.Module):
    """A core model with a linear readout at every step: logits (B, T, classes)."""

    def __init__(self, kind: str, input_size: int, hidden_size: int, classes: int, *, nu: int = 10, rho: int = 10):
        super().__init__()
        self.kind = kind
        self.core = make_core(kind, input_size, hidden_size, nu=nu, rho=rho)
        self.readout = nn.Linear(hidden_size, checks.positive_int(classes, "classes"))
        nn.init.xavier_normal_(self.readout.weight)

    def forward(self, x: torch.Tensor, *, hidden: list | None = None, return_attention: bool = False):
        if isinstance(self.core, RelRNN):
            states = self.core(x, return_attention=return_attention, hidden=hidden, attention=self.kind != "RNN")
            if return_attention:
                states, attn = states
                return self.readout(states), attn
        else:
            states = self.core(x, hidden=hidden)
        return self.readout(states)


class TokenTagger(nn.Module):
    """A :class:`Tagger` reading token ids through an embedding (character-level language modelling):
    logits (B, T, vocab) for tokens (B, T)."""

    def __init__(self, kind: str, vocab: int, embedding: int, hidden_size: int, *, nu: int = 10, rho: int = 10):
        super().__init__()
        self.embed = nn.Embedding(checks.positive_int(vocab, "vocab"), checks.positive_int(embedding, "embedding"))
        self.tagger = Tagger(kind, embedding, hidden_size, vocab, nu=nu, rho=rho)

    @property
    def core(self) -> nn.Module:
        return self.tagger.core

    def forward(self, tokens: torch.Tensor, *, hidden: list | None = None, return_attention: bool = False):
        checks.tensor(tokens, "tokens", ndim=2)
        return self.tagger(self.embed(tokens), hidden=hidden, return_attention=return_attention)


def hidden_gradient_norms(model: Tagger, x: torch.Tensor, y: torch.Tensor, *, last: int | None = None) -> torch.Tensor:
    """``||dL/dh_t||`` for every step t and sequence, shape (B, T): L is the summed cross-entropy of the last
    ``last`` outputs (all outputs when None). For the LSTM the state is ``[h, c]``."""
    checks.tensor(x, "x", ndim=3)
    if last is not None:
        last = checks.positive_int(last, "last")
    hidden: list = []
    logits = model(x, hidden=hidden)
    k = x.shape[1] if last is None else last
    loss = nn.functional.cross_entropy(
        logits[:, -k:].reshape(-1, logits.shape[-1]), y[:, -k:].reshape(-1), reduction="sum"
    )
    model.zero_grad(set_to_none=True)
    loss.backward()
    norms = torch.stack([h.grad.norm(dim=-1) if h.grad is not None else torch.zeros(x.shape[0]) for h in hidden], 1)
    model.zero_grad(set_to_none=True)
    return norms.detach()


def attention_matrix(attn: list, T: int, row: int = 0) -> torch.Tensor:
    """The (T, T) matrix ``alpha[t, i]`` of sequence ``row`` from a RelRNN's per-step attention (zero where a
    state was not attended; rows of steps without memory are zero)."""
    A = torch.zeros(T, T)
    steps = T - len(attn)
    for k, (idx, a) in enumerate(attn):
        keep = idx[row] >= 0
        A[steps + k].index_put_((idx[row][keep],), a[row][keep].float(), accumulate=True)
    return A
