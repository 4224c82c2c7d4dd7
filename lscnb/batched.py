"""Batched training: models of one architecture trained together, as :func:`lscnb.train.fit` trains each alone.

Runs of a sweep that differ only in seed, learning rate or initial scale train models of one architecture (the same
parameter names, shapes and dtypes). :func:`fit_batched` stacks their parameters (``torch.func.stack_module_state``),
computes every model's loss on its own batch at once, sums the losses for one backward pass and steps one optimiser
over the stacked tensors. The forward is the model's own under ``torch.vmap`` of ``torch.func.functional_call``, or,
for the models :func:`lscnb.models.stacked.stacked_forward` knows, the same computation in batched matrix products
(``vmap`` costs tens of microseconds per operation, most of a small RNN's time on a CPU). Adam, AdamW, RMSprop and
SGD are elementwise, so one optimiser over stacked tensors takes each model's own step; a model's learning rate
scales its update (the step is taken at the largest rate and each model's change scaled by its rate over that one:
each of these optimisers is linear in the rate, decoupled weight decay included). Clipping uses each model's own
global gradient norm, and a model whose loss or gradient is not finite is recorded as diverged at that step and
frozen, as ``fit`` would stop it, while the others go on. Each model gets the :class:`~lscnb.train.History` that
``fit`` would give it, up to the order of floating-point operations (float64 agrees to ~1e-12).

A sweep's runs whose function has a batched twin (:func:`twin`, which calls ``fit_batched``) are computed together by
:func:`run_group` (both live in :mod:`lscnb.runs`), one :class:`~lscnb.results.Result` per run under its own key,
config and seed; the ``batched`` executor (:mod:`lscnb.executors`) groups a sweep's runs that way.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten
from tqdm.auto import tqdm

from . import checks
from .models.stacked import stacked_forward
from .runs import run_group, twin  # noqa: F401 (part of this module's API: a sweep's runs computed together)
from .train import (
    OPTIMIZERS,
    History,
    _evaluate,
    _save,
    carried,
    flushed_denormals,
    grad_norm,
    make_optimizer,
    random_state,
    set_random_state,
    to_device,
)


class _Bound:
    """A model called with the given parameters: what ``loss_fn`` gets in place of the model under ``vmap``.
    Other attributes are read from the model itself."""

    def __init__(self, base: torch.nn.Module, state: tuple):
        self._base, self._state = base, state

    def __call__(self, *args, **kwargs):
        return torch.func.functional_call(self._base, self._state, args, kwargs)

    def __getattr__(self, name):
        return getattr(self._base, name)


class _Given(_Bound):
    """A model whose outputs on the batch ``x`` are already computed (by a stacked forward)."""

    def __init__(self, base: torch.nn.Module, out: torch.Tensor, x):
        self._base, self._out, self._x = base, out, x

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != 1 or args[0] is not self._x:
            raise ValueError(
                "with a stacked forward, loss_fn must call the model on its batch x only: pass "
                "forward='vmap' for other calls"
            )
        return self._out


def _check_models(models) -> list[torch.nn.Module]:
    if isinstance(models, torch.nn.Module) or not isinstance(models, Sequence) or not models:
        raise ValueError("models must be a non-empty list of torch.nn.Module of one architecture")
    if not all(isinstance(m, torch.nn.Module) for m in models):
        raise TypeError("models must hold torch.nn.Module instances only")
    if len({id(m) for m in models}) != len(models):
        raise ValueError("models must be distinct modules (the same module appears twice)")
    shape = lambda m: [(n, t.shape, t.dtype, t.requires_grad) for n, t in [*m.named_parameters(), *m.named_buffers()]]
    first = shape(models[0])
    for i, m in enumerate(models[1:], 1):
        if type(m) is not type(models[0]) or shape(m) != first:
            raise ValueError(
                f"models must share one architecture: models[{i}] differs from models[0] in class, or in a "
                "parameter's or buffer's name, shape or dtype"
            )
    return list(models)


def _check_lrs(lr, count: int, name: str = "lr") -> list[float]:
    if isinstance(lr, torch.Tensor):
        lr = lr.tolist() if lr.ndim else float(lr)
    if isinstance(lr, Sequence) and not isinstance(lr, str):
        if len(lr) != count:
            raise ValueError(f"{name} must be one number or one per model ({count}), got {len(lr)} values")
        return [checks.positive_float(v, f"{name}[{i}]") for i, v in enumerate(lr)]
    return [checks.positive_float(lr, name)] * count


def _rates(opt, lrs: list[float], trainable: list) -> tuple[list, bool]:
    """Set ``opt`` to the largest of the models' rates ``lrs``; each model's rate over it, shaped for each of the
    ``trainable`` stacked tensors, and whether they are all equal (each optimiser's step is linear in its rate)."""
    top = max(lrs)
    for group in opt.param_groups:
        group["lr"] = top
    scale = torch.tensor([r / top for r in lrs], device=trainable[0].device, dtype=trainable[0].dtype)
    return [scale.view(-1, *([1] * (p.ndim - 1))) for p in trainable], all(r == top for r in lrs)


def _check_in_dims(in_dims) -> tuple:
    ok = (0, None)
    if in_dims in ok and not isinstance(in_dims, bool):
        return (in_dims, in_dims)
    if isinstance(in_dims, tuple) and len(in_dims) == 2 and all(d in ok and not isinstance(d, bool) for d in in_dims):
        return in_dims
    raise ValueError(
        f"in_dims must be 0 (one batch per model, stacked on dim 0), None (one batch shared by every "
        f"model) or a pair of those for (x, y), got {in_dims!r}"
    )


def _stack(parts):
    """Per-model batches (tensors, or tuples/lists/dicts of them) stacked on a new leading dim."""
    spec = tree_flatten(parts[0])[1]
    return tree_unflatten([torch.stack(leaves) for leaves in zip(*[tree_flatten(p)[0] for p in parts])], spec)


def _check_leading(batch, count: int, what: str) -> None:
    for leaf in tree_flatten(batch)[0]:
        if not isinstance(leaf, torch.Tensor) or leaf.ndim == 0 or leaf.shape[0] != count:
            got = tuple(leaf.shape) if isinstance(leaf, torch.Tensor) else type(leaf).__name__
            raise ValueError(
                f"batch_fn(k) must stack one {what} per model on dim 0 (in_dims=0) for {count} models, "
                f"got {got}; pass in_dims=None for a batch shared by every model"
            )


def _resume(path: Path, params: dict, buffers: dict, opt, generators, device) -> tuple[int, list, list]:
    """Load a group's checkpoint into its stacked ``params``, ``buffers``, ``opt`` and ``generators``; the step it
    reached, the models' histories and which of them are still training."""
    state = torch.load(path, weights_only=False, map_location=device)
    with torch.no_grad():
        for name, t in [*params.items(), *buffers.items()]:
            t.copy_((state["params"] if name in params else state["buffers"])[name])
    opt.load_state_dict(state["optimizer"])
    set_random_state(state, generators)
    return state["step"], [History(**h) for h in state["hists"]], list(state["active"])


def _write_back(models, params: dict, buffers: dict) -> None:
    with torch.no_grad():
        for i, model in enumerate(models):
            for name, t in [*model.named_parameters(), *model.named_buffers()]:
                t.copy_((params[name] if name in params else buffers[name])[i])


def _draw(batch_fn, count: int, in_dims: tuple) -> Callable[[int], tuple]:
    """Step k's stacked batch: ``batch_fn`` itself, or a list of per-model ``batch_fn`` s whose batches are stacked."""
    if callable(batch_fn):
        return batch_fn
    if isinstance(batch_fn, Sequence) and len(batch_fn) == count and all(callable(f) for f in batch_fn):
        if in_dims != (0, 0):
            raise ValueError("in_dims must be 0 when batch_fn is a list of per-model batch functions")
        return lambda k: _stack([f(k) for f in batch_fn])
    raise TypeError(f"batch_fn must be callable or a list of {count} callables (one per model)")


def _losses(base: torch.nn.Module, loss_fn: Callable, stacked, in_dims: tuple, randomness: str) -> Callable:
    """``losses(params, buffers, x, y)``: every model's ``loss_fn`` on its batch, one vector. The models run as
    ``base`` under ``vmap`` with their own parameters, or ``stacked`` computes all their outputs at once."""
    (x_dim, y_dim), opts = in_dims, dict(randomness=randomness)
    if stacked is None:
        return torch.vmap(lambda p, b, x, y: loss_fn(_Bound(base, (p, b)), x, y), in_dims=(0, 0, x_dim, y_dim), **opts)
    given = torch.vmap(lambda out, x, y: loss_fn(_Given(base, out, x), x, y), in_dims=(0, x_dim, y_dim), **opts)
    return lambda p, b, x, y: given(stacked(p, b, x), x, y)


def _backward(losses: torch.Tensor, trainable: list, active: list) -> tuple:
    """Backpropagate the sum of the training models' ``losses``; the losses, each stacked tensor's gradient and each
    model's global gradient norm."""
    if losses.shape != (len(active),):
        raise ValueError(f"loss_fn must return a scalar per model, got shape {tuple(losses.shape[1:])}")
    for p in trainable:
        p.grad = None
    mask = torch.tensor(active, device=losses.device)
    torch.where(mask, losses, torch.zeros_like(losses)).sum().backward()
    with torch.no_grad():
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in trainable]
        return losses.detach(), grads, grad_norm(grads, per_model=True)  # scalars too


def _stop_diverged(hists: list, active: list, k: int, losses: list, norms: list) -> None:
    """Freeze the models still training whose step-k loss or gradient norm is not finite, recorded as diverged."""
    for i, h in enumerate(hists):
        if active[i] and not (math.isfinite(losses[i]) and math.isfinite(norms[i])):
            active[i] = False
            h.diverged, h.diverged_step = True, k


def _shaped(v: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """A per-model vector ``v`` shaped to broadcast over the stacked tensor ``t``."""
    return v.view(-1, *([1] * (t.ndim - 1)))


@torch.no_grad()
def _step(opt, trainable: list, grads: list, gnorm: torch.Tensor, active: list, clip, scales: list, uniform: bool):
    """One optimiser step over the stacked tensors: each model's gradient clipped by its own norm, frozen models'
    gradients and parameters left as they are, and each model's change scaled by its rate over the optimiser's."""
    all_active = all(active)
    mask = torch.tensor(active, device=trainable[0].device)
    coef = torch.ones_like(gnorm) if clip is None else (clip / (gnorm + 1e-6)).clamp(max=1.0).to(grads[0].dtype)
    for g in grads:
        if clip is not None:
            g.mul_(_shaped(coef, g))
        if not all_active:
            g.copy_(torch.where(_shaped(mask, g), g, torch.zeros_like(g)))
    old = None if uniform and all_active else [p.detach().clone() for p in trainable]
    opt.step()
    if old is not None:
        for p, o, s in zip(trainable, old, scales):
            new = p if uniform else torch.where(s == 1, p, torch.lerp(o, p, s))
            p.copy_(new if all_active else torch.where(_shaped(mask, p), new, o))


def _checkpoint(path: Path, step: int, params: dict, buffers: dict, opt, hists: list, active: list, generators):
    """Save the group's state after ``step`` steps, for :func:`_resume`."""
    state = {"params": params, "buffers": buffers, "optimizer": opt.state_dict(), "step": step}
    state.update(hists=[h.to_dict() for h in hists], active=active, **random_state(generators))
    _save(path, state)


@flushed_denormals()
def fit_batched(
    models: Sequence[torch.nn.Module],
    batch_fn: Callable[[int], tuple] | Sequence[Callable[[int], tuple]],
    loss_fn: Callable,
    *,
    steps: int,
    lr: float | Sequence[float] = 1e-3,
    schedule: Callable[[int], float | Sequence[float]] | None = None,
    optimizer: str = "adam",
    optimizer_kwargs: dict | None = None,
    clip: float | None = None,
    in_dims=0,
    eval_fn: Callable[[torch.nn.Module], dict] | None = None,
    eval_every: int | None = None,
    progress: bool = True,
    desc: str = "train (batched)",
    device=None,
    forward: str | Callable = "auto",
    randomness: str = "error",
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int = 200,
    generators: Sequence[torch.Generator] = (),
) -> list[History]:
    """Train ``models`` (one architecture) together for ``steps`` steps; one :class:`History` per model, as
    :func:`lscnb.train.fit` would record for each alone. Their trained parameters are written back into them.

    ``batch_fn(k)`` returns ``(x, y)`` for step ``k``: with ``in_dims=0`` each stacks one batch per model on dim 0,
    with ``None`` one batch serves every model (a pair sets x and y apart); or ``batch_fn`` is a list of per-model
    ``batch_fn`` s, whose batches are stacked. ``loss_fn(model, x, y)`` sees one model and its batch (under
    ``vmap``: it may call the model, not change it). ``lr`` is one rate or one per model; ``schedule(k)``, if given,
    is step k's rate or rates in its place (what ``fit``'s ``after_step`` sets for each model); ``optimizer`` names
    one of :data:`lscnb.train.OPTIMIZERS`. ``clip`` clips each model's own global gradient norm. ``eval_fn(model)``,
    every ``eval_every`` steps and at the end, runs on each model still training. ``forward`` is ``"auto"`` (a stacked
    forward where one is known, else ``vmap``), ``"vmap"``, or ``forward(params, buffers, x) -> outputs`` of every
    model (then ``loss_fn`` may only call the model on x). ``randomness`` goes to ``torch.vmap`` (the default
    refuses random ops such as dropout, which could not match a solo run). Each History's ``wall_time_s`` is the
    whole group's. ``checkpoint``, ``checkpoint_every`` and ``generators`` are ``fit``'s: the group's state is saved
    every ``checkpoint_every`` steps and a group given an existing file resumes from it.
    """
    models = _check_models(models)
    count = len(models)
    steps = checks.positive_int(steps, "steps")
    lrs = _check_lrs(lr, count)
    if not isinstance(optimizer, str):
        raise TypeError(
            f"optimizer must be a name (one of {sorted(OPTIMIZERS)}) in fit_batched, got "
            f"{type(optimizer).__name__}: per-model rates need to know the optimiser"
        )
    checks.one_of(optimizer, OPTIMIZERS, "optimizer")
    if clip is not None:
        clip = checks.positive_float(clip, "clip")
    if eval_every is not None:
        eval_every = checks.positive_int(eval_every, "eval_every")
    checks.one_of(randomness, ("error", "different", "same"), "randomness")
    checkpoint_every = checks.positive_int(checkpoint_every, "checkpoint_every")
    x_dim, y_dim = _check_in_dims(in_dims)
    draw = _draw(batch_fn, count, (x_dim, y_dim))
    if not callable(loss_fn):
        raise TypeError("loss_fn must be callable as loss_fn(model, x, y)")
    if not callable(forward) and forward not in ("auto", "vmap"):
        raise ValueError(f"forward must be 'auto', 'vmap' or a callable forward(params, buffers, x), got {forward!r}")
    stacked = forward if callable(forward) else stacked_forward(models[0]) if forward == "auto" else None

    if device is not None:
        device = torch.device(device)
        for m in models:
            m.to(device)
    for m in models:
        m.train()
    params, buffers = torch.func.stack_module_state(models)
    trainable = [p for p in params.values() if p.requires_grad]
    if not trainable:
        raise ValueError("models have no trainable parameters")
    if schedule is not None and not callable(schedule):
        raise TypeError("schedule must be callable as schedule(step) -> one learning rate or one per model")
    opt = make_optimizer(list(params.values()), optimizer, max(lrs), **(optimizer_kwargs or {}))
    scales, uniform = _rates(opt, lrs, trainable)
    vloss = _losses(models[0], loss_fn, stacked, (x_dim, y_dim), randomness)

    hists = [History() for _ in models]
    active = [True] * count
    ckpt, start = (Path(checkpoint) if checkpoint is not None else None), 0
    if ckpt is not None and ckpt.exists():
        start, hists, active = _resume(ckpt, params, buffers, opt, generators, device)
        carried(hists[0].wall_time_s)  # the group's seconds so far
    t0 = time.perf_counter() - hists[0].wall_time_s
    bar = tqdm(range(start, steps), desc=desc, disable=not progress, leave=False, initial=start, total=steps)
    for k in bar:
        if schedule is not None:
            scales, uniform = _rates(opt, _check_lrs(schedule(k), count, "schedule"), trainable)
        x, y = draw(k)
        if device is not None:
            x, y = to_device(x, device), to_device(y, device)
        if k == 0:
            for batch, d, what in ((x, x_dim, "x"), (y, y_dim, "y")):
                if d == 0:
                    _check_leading(batch, count, what)
        losses, grads, gnorm = _backward(vloss(params, buffers, x, y), trainable, active)
        values, gvalues = losses.tolist(), gnorm.tolist()
        _stop_diverged(hists, active, k, values, gvalues)
        if not any(active):
            break
        _step(opt, trainable, grads, gnorm, active, clip, scales, uniform)
        for i in range(count):
            if active[i]:
                hists[i].step.append(k)
                hists[i].loss.append(values[i])
                hists[i].grad_norm.append(gvalues[i])
        if eval_fn is not None and eval_every is not None and (k + 1) % eval_every == 0 and k + 1 < steps:
            _write_back(models, params, buffers)
            for i in range(count):
                if active[i]:
                    hists[i].evals.append({"step": k + 1, **_evaluate(models[i], eval_fn)})
        if k % 10 == 0:
            bar.set_postfix(active=sum(active))
        if ckpt is not None and (k + 1) % checkpoint_every == 0:
            for h in hists:
                h.wall_time_s = time.perf_counter() - t0
            _checkpoint(ckpt, k + 1, params, buffers, opt, hists, active, generators)
    _write_back(models, params, buffers)
    if eval_fn is not None:
        for i in range(count):
            if not hists[i].diverged:
                hists[i].evals.append({"step": steps, **_evaluate(models[i], eval_fn)})
    wall = time.perf_counter() - t0
    for h in hists:
        h.wall_time_s = wall
    return hists
