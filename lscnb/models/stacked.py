"""Stacked forwards: many models of one architecture run at once, on their parameters stacked on a leading model dim.

``torch.vmap`` runs any model this way, but each operation under it costs tens of microseconds more than the
operation itself, which is most of the time of a small recurrent model on a CPU. The forwards here do the same
computation with batched matrix products (``bmm``, ``baddbmm``) and no ``vmap``; :func:`lscnb.batched.fit_batched`
uses them where :func:`stacked_forward` knows the model, and ``vmap`` elsewhere. They agree with the model's own
forward up to the order of floating-point additions.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from .rnn import RNNCell, SequenceModel, Stack


def stacked_forward(model: torch.nn.Module) -> Callable | None:
    """``forward(params, buffers, x) -> outputs`` of every model at once for a model like ``model``, or None when
    there is none: ``params`` and ``buffers`` as ``torch.func.stack_module_state`` stacks them, ``x`` one batch per
    model (M, B, T, D) or one shared batch (B, T, D), outputs (M, ...) as the model's own.

    Known: a :class:`~lscnb.models.rnn.SequenceModel` of :class:`~lscnb.models.rnn.RNNCell` layers (exact classes:
    a subclass may change the forward)."""
    if (
        type(model) is SequenceModel
        and type(model.stack) is Stack
        and all(type(c) is RNNCell for c in model.stack.cells)
        and not list(model.buffers())
    ):
        return partial(_rnn_sequence, [c.phi for c in model.stack.cells], model.readout_at)
    return None


def _rnn_sequence(phis: list, readout: str, params: dict, buffers: dict, x: torch.Tensor) -> torch.Tensor:
    """:class:`SequenceModel` of RNN cells: per layer, the input drive of every step in one product, then
    ``h_t = phi(u_t + h_{t-1} W^T)``; the readout of the last state or of every state."""
    count = params["readout.weight"].shape[0]
    if x.ndim == 3:
        x = x.expand(count, *x.shape)
    if x.ndim != 4 or x.shape[0] != count:
        raise ValueError(f"x must be (models, batch, T, features) or (batch, T, features), got {tuple(x.shape)}")
    seq = x
    for l, phi in enumerate(phis):
        w_ih, w_hh = params[f"stack.cells.{l}.weight_ih"], params[f"stack.cells.{l}.weight_hh"]
        bias = params.get(f"stack.cells.{l}.bias")
        m, batch, T, d = seq.shape
        flat = seq.reshape(m, batch * T, d)
        u = torch.bmm(flat, w_ih.mT) if bias is None else torch.baddbmm(bias.unsqueeze(1), flat, w_ih.mT)
        keep = l < len(phis) - 1 or readout == "all"
        h, states, w = u.new_zeros(m, batch, w_hh.shape[-1]), [], w_hh.mT
        for u_t in u.view(m, batch, T, -1).unbind(2):  # unbind: one backward for all steps, not one per step
            h = phi(torch.baddbmm(u_t, h, w))
            if keep:
                states.append(h)
        seq = torch.stack(states, 2) if keep else h
    w, b = params["readout.weight"], params["readout.bias"].unsqueeze(1)
    if readout == "last":
        return torch.baddbmm(b, seq, w.mT)
    m, batch, T, n = seq.shape
    return torch.baddbmm(b, seq.reshape(m, batch * T, n), w.mT).view(m, batch, T, -1)
