"""Self-attentive RNNs with relevancy screening (Kerg et al. 2020; thesis ch. 4, Algorithm 1, code form).

At every step ``h_t = tanh(U x_t + V s_{t-1})``; the memory holds the last ``nu`` states (a FIFO buffer) and up to
``rho`` long-term *relevant* states; additive attention ``e_i = v^T tanh(W_a s_{t-1} + U_a m_i)`` over the memory
gives ``c_t``, and ``s_t = (h_t + c_t)/2``. A state's relevance score is the attention it received while in the
buffer (detached); when it leaves the buffer it takes a free long-term slot, or replaces the lowest-scored one
if its score is larger (a streaming top-rho). Stored states keep their graph, so gradients flow through the
skip connections. ``nu >= T`` with ``rho = 0`` is full self-attention (MemRNN); memory and compute are
``O(nu + rho)`` per step instead of ``O(t)``.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .. import checks


class RelRNN(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, *, nu: int = 5, rho: int = 5):
        super().__init__()
        self.n = checks.positive_int(hidden_size, "hidden_size")
        self.nu, self.rho = checks.positive_int(nu, "nu"), checks.positive_int(rho, "rho", allow_zero=True)
        self.U = nn.Linear(checks.positive_int(input_size, "input_size"), hidden_size)
        self.V = nn.Linear(hidden_size, hidden_size, bias=False)
        nn.init.orthogonal_(self.V.weight)
        self.Wa = nn.Linear(hidden_size, hidden_size, bias=False)
        self.Ua = nn.Linear(hidden_size, hidden_size, bias=False)
        self.va = nn.Parameter(torch.randn(hidden_size) / math.sqrt(hidden_size))

    def forward(self, x: torch.Tensor, return_attention: bool = False, *, pin: tuple = (), attention: bool = True,
                hidden: list | None = None):
        """Macro-states s_t (B, T, N) for inputs (B, T, D); with ``return_attention`` also the list of
        (memory indices, weights) per step. ``pin``: steps whose states are kept in long-term memory whatever
        their score (an oracle screening, for the gradient checks); ``attention=False`` is the plain RNN with the
        same weights; ``hidden``, if a list, receives every h_t (with retained gradients)."""
        checks.tensor(x, "x", ndim=3)
        B, T, _ = x.shape
        buf, buf_idx, buf_score = [], [], []
        slots = x.new_zeros(B, self.rho, self.n)
        slot_idx = torch.full((B, self.rho), -1, dtype=torch.long)
        slot_score = torch.full((B, self.rho), -math.inf, dtype=x.dtype)
        s = x.new_zeros(B, self.n)
        out, attn = [], []
        for t in range(T):
            h = torch.tanh(self.U(x[:, t]) + self.V(s))
            if hidden is not None:
                h.retain_grad()
                hidden.append(h)
            if attention and (buf or self.rho and bool((slot_idx >= 0).any())):
                mem = torch.cat([torch.stack(buf, 1) if buf else x.new_zeros(B, 0, self.n), slots], 1)
                filled = torch.cat([torch.ones(B, len(buf), dtype=torch.bool), slot_idx >= 0], 1)
                e = torch.tanh(self.Wa(s).unsqueeze(1) + self.Ua(mem)) @ self.va
                a = torch.softmax(e.masked_fill(~filled, -math.inf), -1)
                c = (a.unsqueeze(-1) * mem).sum(1)
                for j in range(len(buf)):
                    buf_score[j] = buf_score[j] + a[:, j].detach()
                if return_attention:
                    attn.append((torch.cat([torch.tensor(buf_idx, dtype=torch.long).expand(B, -1), slot_idx], 1), a.detach()))
                s = 0.5 * (h + c)
            else:
                s = h
            out.append(s)
            buf.append(h)
            buf_idx.append(t)
            buf_score.append(torch.zeros(B, dtype=x.dtype))
            if len(buf) > self.nu:
                old, old_i, old_score = buf.pop(0), buf_idx.pop(0), buf_score.pop(0)
                if self.rho:
                    if old_i in pin:
                        old_score = torch.full_like(old_score, math.inf)
                    slots, slot_idx, slot_score = self._admit(slots, slot_idx, slot_score, old, old_i, old_score)
        states = torch.stack(out, 1)
        return (states, attn) if return_attention else states

    def _admit(self, slots, slot_idx, slot_score, state, index, score):
        """Streaming top-rho: the evicted state replaces the lowest-scored slot where its score is larger."""
        lowest = slot_score.argmin(1)
        take = (score > slot_score.gather(1, lowest[:, None])[:, 0]) | (slot_score.gather(1, lowest[:, None])[:, 0] == -math.inf)
        onehot = nn.functional.one_hot(lowest, self.rho).bool() & take[:, None]
        slots = torch.where(onehot[..., None], state[:, None, :], slots)
        slot_idx = torch.where(onehot, torch.full_like(slot_idx, index), slot_idx)
        slot_score = torch.where(onehot, score[:, None].expand_as(slot_score), slot_score)
        return slots, slot_idx, slot_score
