"""Stacked forwards: many models of one architecture run at once, on their parameters stacked on a leading model dim.

``torch.vmap`` runs any model this way, but each operation under it costs tens of microseconds more than the
operation itself, which is most of the time of a small recurrent model on a CPU. The forwards here do the same
computation with batched matrix products (``bmm``, ``baddbmm``) and no ``vmap``, and run a recurrence's backward by
hand (:class:`_Recurrence`); :func:`lscnb.batched.fit_batched` uses them where :func:`stacked_forward` knows the
model, and ``vmap`` elsewhere. They agree with the model's own forward and its autograd gradients up to the order of
floating-point additions.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
from torch.autograd.function import once_differentiable

from .activations import activation_derivative, get_activation
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
        return partial(_rnn_sequence, [c.activation for c in model.stack.cells], model.readout_at)
    return None


# activations applied in place, and g * phi'(pre) from the output y = phi(pre) as autograd takes it; the others
# keep their pre-activations and use phi'(pre)
_aten = torch.ops.aten
_FROM_OUTPUT = {
    "tanh": (torch.Tensor.tanh_, _aten.tanh_backward),
    "sigmoid": (torch.Tensor.sigmoid_, _aten.sigmoid_backward),
    "relu": (torch.Tensor.relu_, lambda g, y: _aten.threshold_backward(g, y, 0)),
    "linear": (lambda h: h, lambda g, y: g),
}


class _Recurrence(torch.autograd.Function):
    """``h_t = phi(u_t + h_{t-1} W^T)`` from ``h_{-1} = 0`` for M stacked models: ``u`` (M, T, B, H), ``w``
    (M, H, H). Returns every state (M, T, B, H) and the last. The backward runs the recurrence back by hand, three
    operations a step, and forms the weight gradient in one product over all steps (autograd takes a product per
    step, each with its bookkeeping). Each step's state is a tensor of its own, stacked once at the end: no copy
    per step, and the layout (M, T, B, H) makes every model's steps one matrix for the products."""

    @staticmethod
    def forward(ctx, u, w, name):
        inplace, _ = _FROM_OUTPUT.get(name, (None, None))
        phi, states, pres = get_activation(name), [], []
        h, wt = u.new_zeros(u.shape[0], *u.shape[2:]), w.mT
        for t in range(u.shape[1]):
            a = torch.baddbmm(u[:, t], h, wt)
            if inplace is None:
                pres.append(a)
                h = phi(a)
            else:
                h = inplace(a)
            states.append(h)
        out = torch.stack(states, 1)
        ctx.save_for_backward(w, out, torch.stack(pres, 1) if pres else None)
        ctx.name = name
        ctx.set_materialize_grads(False)
        return out, out[:, -1].clone()  # the last state, as a tensor of its own

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_all, grad_last):
        w, out, pre = ctx.saved_tensors
        back = _FROM_OUTPUT.get(ctx.name, (None, None))[1]
        dh = torch.zeros_like(out[:, 0]) if grad_last is None else grad_last
        das = []
        for t in reversed(range(out.shape[1])):
            g = dh if grad_all is None else dh + grad_all[:, t]
            da = back(g, out[:, t]) if back else g * activation_derivative(ctx.name, pre[:, t])
            das.append(da)
            dh = torch.bmm(da, w)
        da = torch.stack(das[::-1], 1)
        m, n = out.shape[0], out.shape[-1]  # W's gradient: the sum over t >= 1 and the batch of da_t^T h_{t-1}
        return da, torch.bmm(da[:, 1:].reshape(m, -1, n).mT, out[:, :-1].reshape(m, -1, n)), None


def _rnn_sequence(names: list, readout: str, params: dict, buffers: dict, x: torch.Tensor) -> torch.Tensor:
    """:class:`SequenceModel` of RNN cells: per layer, the input drive of every step in one product, then the
    recurrence (:class:`_Recurrence`); the readout of the last state or of every state."""
    count = params["readout.weight"].shape[0]
    if x.ndim == 3:
        x = x.expand(count, *x.shape)
    if x.ndim != 4 or x.shape[0] != count:
        raise ValueError(f"x must be (models, batch, T, features) or (batch, T, features), got {tuple(x.shape)}")
    seq = x.transpose(1, 2)  # (M, T, B, D): every model's steps in a row
    for l, name in enumerate(names):
        w_ih, w_hh = params[f"stack.cells.{l}.weight_ih"], params[f"stack.cells.{l}.weight_hh"]
        bias = params.get(f"stack.cells.{l}.bias")
        m, T, batch, d = seq.shape
        flat = seq.reshape(m, T * batch, d)
        u = torch.bmm(flat, w_ih.mT) if bias is None else torch.baddbmm(bias.unsqueeze(1), flat, w_ih.mT)
        seq, last = _Recurrence.apply(u.view(m, T, batch, -1), w_hh, name)
    w, b = params["readout.weight"], params["readout.bias"].unsqueeze(1)
    if readout == "last":
        return torch.baddbmm(b, last, w.mT)
    m, T, batch, n = seq.shape
    return torch.baddbmm(b, seq.reshape(m, T * batch, n), w.mT).view(m, T, batch, -1).transpose(1, 2)
