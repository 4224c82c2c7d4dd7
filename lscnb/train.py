"""The training loop every chapter uses: progress bar, gradient clipping, penalties, evaluation callbacks,
divergence, checkpoint and resume.

``fit`` draws batch ``k`` from ``batch_fn(k)`` (so a resumed run sees the same batches), steps the optimiser (or
several, e.g. one for an orthogonal parameter and one for the rest), records the loss and gradient norm, and stops at
the first non-finite loss or gradient, recording the run as diverged at that step instead of crashing. With
``checkpoint=path`` it saves model, optimisers and history atomically every ``checkpoint_every`` steps and resumes
from the file when it exists. :class:`EpochBatches` turns shuffled passes over a data set into such a ``batch_fn``.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from tqdm.auto import tqdm

from . import checks

OPTIMIZERS = {
    "adam": torch.optim.Adam,
    "sgd": torch.optim.SGD,
    "rmsprop": torch.optim.RMSprop,
    "adamw": torch.optim.AdamW,
}


@dataclass
class History:
    """What a training run leaves behind."""

    step: list = field(default_factory=list)
    loss: list = field(default_factory=list)
    grad_norm: list = field(default_factory=list)
    evals: list = field(default_factory=list)
    diverged: bool = False
    diverged_step: int | None = None
    wall_time_s: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    def final(self, name: str = "loss", window: int = 1):
        """Mean of the last ``window`` recorded values of ``name`` (the training loss, or an eval metric)."""
        values = self.loss if name == "loss" else [e[name] for e in self.evals if name in e]
        if not values:
            raise KeyError(f"no values recorded for {name!r}")
        tail = values[-window:]
        return sum(tail) / len(tail)


def make_optimizer(params, optimizer: str | torch.optim.Optimizer | Callable = "adam", lr: float = 1e-3, **kwargs):
    """An optimiser from a name (``adam``, ``sgd``, ``rmsprop``, ``adamw``), a factory, or an instance (kept). A named
    one uses the multi-tensor (``foreach``) kernels unless ``foreach`` or ``fused`` is given: on a CPU they give the
    per-tensor loop's numbers bit for bit, and Adam steps 1.1-1.6 times as fast (``bench/optimizer_step.py``); on
    CUDA they are PyTorch's default anyway."""
    if isinstance(optimizer, torch.optim.Optimizer):
        return optimizer
    if callable(optimizer):
        return optimizer(params)
    checks.one_of(optimizer, OPTIMIZERS, "optimizer")
    if not kwargs.get("fused"):
        kwargs.setdefault("foreach", True)
    return OPTIMIZERS[optimizer](params, lr=checks.positive_float(lr, "lr"), **kwargs)


def make_optimizers(params, optimizer, lr: float, **kwargs) -> list[torch.optim.Optimizer]:
    """:func:`make_optimizer`, or a list or tuple of optimiser instances kept as they are (all stepped together)."""
    if isinstance(optimizer, (list, tuple)):
        if not optimizer or not all(isinstance(o, torch.optim.Optimizer) for o in optimizer):
            raise TypeError("optimizer: a list must hold one or more torch.optim.Optimizer instances")
        return list(optimizer)
    return [make_optimizer(params, optimizer, lr, **kwargs)]


class EpochBatches:
    """``batch_fn`` of shuffled passes over ``n`` examples: batch ``k`` holds the indices of batch ``k mod m`` of epoch
    ``k // m`` (``m`` batches an epoch; the last one short, or dropped with ``drop_last``). Each epoch draws a fresh
    permutation from one generator seeded with ``seed``, in order, so the batches are those of a loop that calls
    ``torch.randperm(n, generator=g)`` at the start of every epoch; a resumed run replays the draws it missed."""

    def __init__(self, n: int, batch_size: int, seed: int, drop_last: bool = False):
        self.n = checks.positive_int(n, "n")
        self.batch_size = checks.positive_int(batch_size, "batch_size")
        self.per_epoch = n // batch_size if drop_last else -(-n // batch_size)
        if self.per_epoch == 0:
            raise ValueError(f"batch_size: {batch_size} exceeds the {n} examples and drop_last drops the only batch")
        self.seed = int(seed)
        self._epoch, self._order, self._gen = -1, None, None

    def epochs(self, steps: int) -> int:
        """How many epochs ``steps`` batches span (the last one possibly partial)."""
        return -(-steps // self.per_epoch)

    def __call__(self, k: int) -> torch.Tensor:
        epoch, i = divmod(k, self.per_epoch)
        if epoch < self._epoch or self._gen is None:
            self._gen, self._epoch = torch.Generator().manual_seed(self.seed), -1
        while self._epoch < epoch:
            self._order, self._epoch = torch.randperm(self.n, generator=self._gen), self._epoch + 1
        return self._order[i * self.batch_size : (i + 1) * self.batch_size]

    def over(self, *tensors: torch.Tensor) -> Callable[[int], tuple]:
        """The ``batch_fn`` whose batch ``k`` is ``tuple(t[self(k)] for t in tensors)``."""
        if any(len(t) != self.n for t in tensors):
            raise ValueError(f"tensors: every tensor must hold the {self.n} examples along its first dim")

        def batch(k: int) -> tuple:
            idx = self(k)
            return tuple(t[idx] for t in tensors)

        return batch


def classification_loss(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of ``model(x)`` (logits) against the labels ``y``: the ``loss_fn`` of a classifier."""
    return torch.nn.functional.cross_entropy(model(x), y)


@torch.no_grad()
def accuracy(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of ``x`` that ``model`` (logits) labels as ``y``."""
    return float((model(x).argmax(-1) == y).float().mean())


def fit_classifier(
    model: torch.nn.Module,
    train: tuple,
    test: tuple,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
    chance: float,
) -> tuple[list[float], History]:
    """Adam on shuffled epochs of ``train = (x, y)`` (:class:`EpochBatches` seeded with ``seed``), cross-entropy;
    the test accuracy after every epoch, ``chance`` for the epochs a diverged run did not reach, and the History."""
    batches = EpochBatches(len(train[1]), batch_size, seed)
    hist = fit(
        model,
        batches.over(*train),
        classification_loss,
        steps=checks.positive_int(epochs, "epochs") * batches.per_epoch,
        lr=lr,
        eval_fn=lambda m: {"accuracy": accuracy(m, *test)},
        eval_every=batches.per_epoch,
        progress=False,
    )
    curve = [e["accuracy"] for e in hist.evals]
    return curve + [chance] * (epochs - len(curve)), hist


def random_state(generators: Sequence[torch.Generator] = ()) -> dict:
    """The global CPU and CUDA generators' states and ``generators``', as a checkpoint keeps them."""
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    return {"rng": torch.get_rng_state(), "generators": [g.get_state() for g in generators], "cuda_rng": cuda}


def set_random_state(state: dict, generators: Sequence[torch.Generator] = ()) -> None:
    """Restore what :func:`random_state` saved in ``state`` (a checkpoint) into the generators."""
    torch.set_rng_state(state["rng"].cpu())
    if state.get("cuda_rng") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([r.cpu() for r in state["cuda_rng"]])
    for gen, saved in zip(generators, state.get("generators", [])):
        gen.set_state(saved.cpu())


def _save(path: Path, state: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(state, tmp)
    os.replace(tmp, path)


_CARRIED: contextvars.ContextVar[list | None] = contextvars.ContextVar("lscnb_carried_s", default=None)


@contextlib.contextmanager
def carried_time():
    """Collects, in the list it yields, the training seconds that the checkpoints resumed within the block had
    spent in earlier processes (their History's ``wall_time_s``): a resumed run's wall time is all its parts'."""
    seconds: list[float] = []
    token = _CARRIED.set(seconds)
    try:
        yield seconds
    finally:
        _CARRIED.reset(token)


def carried(seconds: float) -> None:
    """Record ``seconds`` of training a checkpoint brings back, for :func:`carried_time`."""
    if (into := _CARRIED.get()) is not None:
        into.append(float(seconds))


_FLUSHING = [0]  # how many flushed_denormals blocks are open (fit inside fit keeps it on)


@contextlib.contextmanager
def flushed_denormals():
    """Flush subnormal floats (below 1.2e-38 in float32) to zero on the CPU inside the block, then back to the
    default (off). On x86 an operation on a subnormal costs up to ~100 normal ones, and a network whose gradients
    vanish makes many: the quick tied LSTMs of the mean-field chapter's Fig. 1 (64 steps) trained 2.6 times faster,
    with the same accuracies. An update that small is below the rounding of any weight, so training loses nothing;
    measurements of tiny gradients (:mod:`lscnb.jacobian`) run outside a training loop and keep them."""
    _FLUSHING[0] += 1
    if _FLUSHING[0] == 1:
        torch.set_flush_denormal(True)
    try:
        yield
    finally:
        _FLUSHING[0] -= 1
        if _FLUSHING[0] == 0:
            torch.set_flush_denormal(False)


def _resume(path: Path, model: torch.nn.Module, opts: list, generators, extra, device) -> tuple[History, int]:
    """Load a run's checkpoint into ``model``, its optimisers, ``generators`` and ``extra``; its History and step."""
    state = torch.load(path, weights_only=False, map_location=device)
    model.load_state_dict(state["model"])
    for opt, saved in zip(opts, state.get("optimizers") or [state["optimizer"]]):  # "optimizer": older files
        opt.load_state_dict(saved)
    set_random_state(state, generators)
    if extra is not None and state.get("extra") is not None:
        extra.load_state_dict(state["extra"])
    return History(**state["history"]), state["step"]


def _checkpoint(path: Path, step: int, model: torch.nn.Module, opts: list, hist: History, generators, extra) -> None:
    """Save a run's state after ``step`` steps, for :func:`_resume`."""
    state = {"model": model.state_dict(), "optimizers": [opt.state_dict() for opt in opts], "history": hist.to_dict()}
    state.update(step=step, **random_state(generators), extra=None if extra is None else extra.state_dict())
    _save(path, state)


@flushed_denormals()
def fit(
    model: torch.nn.Module,
    batch_fn: Callable[[int], tuple],
    loss_fn: Callable,
    *,
    steps: int,
    lr: float = 1e-3,
    optimizer="adam",
    optimizer_kwargs: dict | None = None,
    clip: float | None = None,
    penalty: Callable[[torch.nn.Module], torch.Tensor] | None = None,
    eval_fn: Callable[[torch.nn.Module], dict] | None = None,
    eval_every: int | None = None,
    checkpoint: str | os.PathLike | None = None,
    checkpoint_every: int = 200,
    progress: bool = True,
    desc: str = "train",
    after_step: Callable | None = None,
    device=None,
    generators: Sequence[torch.Generator] = (),
    extra=None,
) -> History:
    """Train ``model`` for ``steps`` steps of ``loss_fn(model, x, y)`` on ``batch_fn(step)``; return its History.

    ``optimizer`` is a name (with ``lr`` and ``optimizer_kwargs``), a factory of the parameters, an instance, or a list
    of instances stepped together. ``penalty(model)`` is added to the loss that is differentiated but not to the
    loss recorded. ``clip`` clips the global gradient norm; ``eval_fn(model)`` returns metrics recorded every
    ``eval_every`` steps and at the end; ``after_step(model, step)`` runs after each optimiser step (e.g. a projection).
    ``device`` moves the model there and every batch (tensors, or tuples/lists/dicts of them) with it; an
    ``eval_fn`` finds the device as ``next(model.parameters()).device``. ``checkpoint`` saves every
    ``checkpoint_every`` steps and resumes from the file if it exists; ``generators`` (those ``batch_fn`` draws from)
    are saved and restored with it, so a resumed run sees the batches an uninterrupted one would; so is ``extra``, the
    caller's own training state (a best model, schedulers, a carried state): an object with ``state_dict()`` and
    ``load_state_dict(saved)``.
    """
    steps = checks.positive_int(steps, "steps")
    if clip is not None:
        clip = checks.positive_float(clip, "clip")
    if eval_every is not None:
        eval_every = checks.positive_int(eval_every, "eval_every")
    checkpoint_every = checks.positive_int(checkpoint_every, "checkpoint_every")
    if extra is not None and not (
        callable(getattr(extra, "state_dict", None)) and callable(getattr(extra, "load_state_dict", None))
    ):
        raise TypeError(f"extra must have state_dict() and load_state_dict(), got {type(extra).__name__}")
    if device is not None:
        device = torch.device(device)
        model.to(device)
    opts = make_optimizers(model.parameters(), optimizer, lr, **(optimizer_kwargs or {}))
    hist, start = History(), 0
    ckpt = Path(checkpoint) if checkpoint is not None else None
    if ckpt is not None and ckpt.exists():
        hist, start = _resume(ckpt, model, opts, generators, extra, device)
        carried(hist.wall_time_s)
    params = [p for p in model.parameters() if p.requires_grad]
    t0 = time.perf_counter() - hist.wall_time_s
    bar = tqdm(range(start, steps), desc=desc, disable=not progress, leave=False, initial=start, total=steps)
    for k in bar:
        if hist.diverged:
            break
        model.train()
        x, y = batch_fn(k)
        if device is not None:
            x, y = to_device(x, device), to_device(y, device)
        loss = loss_fn(model, x, y)
        for opt in opts:
            opt.zero_grad(set_to_none=True)
        value = float(loss.detach())
        if math.isfinite(value):
            (loss if penalty is None else loss + penalty(model)).backward()
            grads = [p.grad for p in params if p.grad is not None]
            gnorm = float(grad_norm(grads)) if grads else 0.0
        else:
            gnorm = float("nan")
        if not (math.isfinite(value) and math.isfinite(gnorm)):
            hist.diverged, hist.diverged_step = True, k
            break
        if clip is not None and (scale := clip / (gnorm + 1e-6)) < 1.0:  # torch's clip_grad_norm_, on the wide norm
            for g in grads:
                g.mul_(scale)
        for opt in opts:
            opt.step()
        if after_step is not None:
            after_step(model, k)
        hist.step.append(k)
        hist.loss.append(value)
        hist.grad_norm.append(gnorm)
        if eval_fn is not None and eval_every is not None and (k + 1) % eval_every == 0 and k + 1 < steps:
            hist.evals.append({"step": k + 1, **_evaluate(model, eval_fn)})
        if k % 10 == 0:
            bar.set_postfix(loss=f"{value:.4g}")
        if ckpt is not None and (k + 1) % checkpoint_every == 0:
            hist.wall_time_s = time.perf_counter() - t0
            _checkpoint(ckpt, k + 1, model, opts, hist, generators, extra)
    if eval_fn is not None and not hist.diverged:
        hist.evals.append({"step": steps, **_evaluate(model, eval_fn)})
    hist.wall_time_s = time.perf_counter() - t0
    return hist


def wide(device: torch.device) -> torch.dtype:
    """The dtype a gradient's norm is taken in: float64 (float32 squares overflow above 1.8e19, so a finite,
    exploding gradient's norm would read inf, a divergence), float32 where float64 is missing (MPS)."""
    return torch.float32 if device.type == "mps" else torch.float64


def grad_norm(grads: Sequence[torch.Tensor], per_model: bool = False) -> torch.Tensor:
    """The 2-norm of all of ``grads`` together in :func:`wide` precision; ``per_model``: one norm per leading index (a
    model of a stack), each gradient flattened past it."""
    dtype = wide(grads[0].device)
    if not per_model:
        return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, dtype=dtype) for g in grads]))
    norms = [torch.linalg.vector_norm(g.reshape(len(g), -1), dim=1, dtype=dtype) for g in grads]
    return torch.linalg.vector_norm(torch.stack(norms, dim=1), dim=1)


def to_device(batch, device):
    """``batch`` (a tensor, or a tuple/list/dict of them; anything else is left alone) moved to ``device``."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, (tuple, list)):
        return type(batch)(to_device(b, device) for b in batch)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    return batch


def _evaluate(model, eval_fn) -> dict:
    model.eval()
    with torch.no_grad():
        out = eval_fn(model)
    model.train()
    return {k: float(v) for k, v in out.items()}
