"""Curvature of a loss over a module's parameters, and what Adam makes of it (Zucchet & Orvieto 2024, Sec. 4.3).

- :func:`loss_hessian`: the full Hessian of ``loss_fn(model(inputs))`` over all parameters, flattened in
  ``named_parameters`` order, by ``torch.func.hessian`` on a functional call;
- :func:`gauss_newton`: ``J^T J / N`` for the outputs ``model(inputs)`` (eq. 11: at a zero-residual optimum of the
  mean squared error ``1/(2N) sum (f - y)^2`` the Hessian equals it);
- :func:`participation` / :func:`group_mass`: how many coordinates an eigenvector occupies (``1 / sum v_k^4``)
  and how much of its mass each parameter group holds;
- :func:`adam_effective_lr`: Adam's per-coordinate step size ``lr / (sqrt(v_hat) + eps)`` read from
  ``exp_avg_sq`` (the "preconditioner"; the paper feeds a vector of ones to Optax instead, which also mixes in
  the momentum).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.func import functional_call, hessian, jacfwd


def _flat(model: nn.Module):
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    if not names:
        raise ValueError("model has no trainable parameters")
    params = dict(model.named_parameters())
    shapes = [params[n].shape for n in names]
    sizes = [params[n].numel() for n in names]
    theta = torch.cat([params[n].detach().reshape(-1) for n in names])

    def unflatten(vec):
        return {n: v.reshape(s) for n, v, s in zip(names, torch.split(vec, sizes), shapes)}

    return names, sizes, theta, unflatten


def parameter_groups(model: nn.Module) -> dict[str, slice]:
    """``{name: slice}`` of each parameter tensor in the flat vector used by :func:`loss_hessian`."""
    names, sizes, _, _ = _flat(model)
    out, start = {}, 0
    for n, s in zip(names, sizes):
        out[n] = slice(start, start + s)
        start += s
    return out


def loss_hessian(model: nn.Module, inputs, loss_fn: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """Hessian (P, P) of the scalar ``loss_fn(model(inputs))`` over the flattened trainable parameters (forward
    over reverse mode through ``torch.func.functional_call``; use float64 parameters for sharp losses)."""
    _, _, theta, unflatten = _flat(model)
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}")

    def loss(vec):
        return loss_fn(functional_call(model, unflatten(vec), (inputs,)))

    return hessian(loss)(theta)


def gauss_newton(model: nn.Module, inputs) -> torch.Tensor:
    """``J^T J / N`` with ``J`` the Jacobian of the N outputs of ``model(inputs)`` over the parameters (eq. 11):
    the Hessian of ``1/(2N) sum (model(inputs) - y)^2`` at a zero-residual optimum."""
    _, _, theta, unflatten = _flat(model)

    def outputs(vec):
        return functional_call(model, unflatten(vec), (inputs,)).reshape(-1)

    J = jacfwd(outputs)(theta)
    return J.T @ J / J.shape[0]


def spectrum(H: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Eigenvalues (descending) and eigenvectors (columns, same order) of the symmetrised ``H``."""
    if H.ndim != 2 or H.shape[0] != H.shape[1]:
        raise ValueError(f"H must be a square matrix, got shape {tuple(H.shape)}")
    vals, vecs = torch.linalg.eigh(0.5 * (H + H.T))
    return vals.flip(0), vecs.flip(1)


def participation(v: torch.Tensor) -> torch.Tensor:
    """Effective number of coordinates of each unit column of ``v``: ``1 / sum_k v_k^4`` (1 on an axis, P when
    spread evenly over P coordinates)."""
    v = v / torch.linalg.vector_norm(v, dim=0, keepdim=True)
    return 1 / v.pow(4).sum(0)


def group_mass(v: torch.Tensor, groups: dict[str, slice]) -> dict[str, torch.Tensor]:
    """Share of each column's squared norm held by each parameter group."""
    v = v / torch.linalg.vector_norm(v, dim=0, keepdim=True)
    return {name: v[s].pow(2).sum(0) for name, s in groups.items()}


def adam_effective_lr(optimizer: torch.optim.Optimizer, model: nn.Module) -> dict[str, torch.Tensor]:
    """Adam's per-coordinate step size ``lr / (sqrt(v_t / (1 - beta2^t)) + eps)`` for each named parameter
    (the preconditioner of ``torch.optim.Adam``/``AdamW``; parameters never stepped are left out)."""
    if not isinstance(optimizer, (torch.optim.Adam, torch.optim.AdamW)):
        raise TypeError(f"optimizer must be torch.optim.Adam or AdamW, got {type(optimizer).__name__}")
    names = {id(p): n for n, p in model.named_parameters()}
    out = {}
    for group in optimizer.param_groups:
        beta2, eps, lr = group["betas"][1], group["eps"], group["lr"]
        for p in group["params"]:
            state = optimizer.state.get(p)
            if not state or id(p) not in names:
                continue
            step = float(state["step"])
            v_hat = state["exp_avg_sq"] / (1 - beta2**step)
            out[names[id(p)]] = (lr / (v_hat.sqrt() + eps)).detach()
    return out
