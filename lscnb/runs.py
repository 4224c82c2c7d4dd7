"""A run: one unit of work of a figure's sweep, with its stable key, its context and its computation.

A :class:`Run` names a module-level function ``fn(config, ctx) -> dict`` and a JSON-able config; its key is
``figure/name-hash`` where the hash covers the function's import path and the config. :func:`compute` calls it
with a :class:`RunContext` and returns the :class:`~lscnb.results.Result` with its provenance. A run function may
have a batched twin (:func:`twin`) that computes several of its runs at once; :func:`run_group` calls it.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .config import Profile, seed_everything
from .results import Result, provenance, split_outputs
from .train import carried_time

SEED_OFFSET = "seed_offset"
GROUPS: dict[Callable, tuple] = {}
"""A run function -> (its batched twin, the key of the configs the twin computes together, the device types on which
that pays or None for all); see :func:`twin`."""


@dataclass(frozen=True, eq=False)
class Run:
    """One unit of work of a sweep: ``fn(config, ctx)`` for ``chapter``'s ``figure``."""

    chapter: str
    figure: str
    name: str
    fn: Callable
    config: Mapping = field(default_factory=dict)

    def __post_init__(self):
        for attr in ("chapter", "figure", "name"):
            value = getattr(self, attr)
            if not isinstance(value, str) or not value:
                raise ValueError(f"Run.{attr} must be a non-empty string, got {value!r}")
        if not callable(self.fn):
            raise TypeError(f"Run.fn must be callable, got {type(self.fn).__name__}")
        try:
            json.dumps(dict(self.config), sort_keys=True)
        except TypeError as err:
            raise TypeError(f"Run.config must be JSON-able (numbers, strings, lists, dicts): {err}") from None

    @property
    def fn_path(self) -> str:
        """``module:function``, where a function inside a chapter package (``lscnb.experiments.memory.teacher``)
        is named by its chapter (``lscnb.experiments.memory``): moving it between a chapter's modules keeps its
        runs' keys, and the package exports it."""
        module = self.fn.__module__
        chapter = f"lscnb.experiments.{self.chapter}"
        if module.startswith(chapter + "."):
            module = chapter
        return f"{module}:{self.fn.__qualname__}"

    @property
    def key(self) -> str:
        blob = json.dumps({"fn": self.fn_path, "config": dict(self.config)}, sort_keys=True)
        digest = hashlib.sha1(blob.encode()).hexdigest()[:10]
        return f"{_slug(self.figure)}/{_slug(self.name)}-{digest}"

    @property
    def seed(self) -> int:
        """The seed the run is seeded with: its config's ``seed`` (default 0) plus its ``seed_offset``."""
        return int(self.config.get("seed", 0)) + int(self.config.get(SEED_OFFSET, 0))

    def reseeded(self, offset: int) -> Run:
        """This run at the reader's seed: ``offset`` (``Profile.seed``) is added to every seed the run draws.

        The offset is stored as the config's ``seed_offset`` (so a result's ``config["seed"]`` keeps naming the
        figure's own seed, 0..n-1, and plot code that selects by it still works) and is part of the key; offset 0
        leaves the run, its config and its key exactly as they are, so committed full results still replay.
        """
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError(f"offset must be a non-negative int (the profile's seed), got {offset!r}")
        if offset == 0:
            return self
        return Run(self.chapter, self.figure, self.name, self.fn, {**dict(self.config), SEED_OFFSET: offset})


def seed_list(seeds) -> str:
    """``[0, 1, 2, 5]`` as ``"0-2, 5"``; ``"?"`` when none is known."""
    spans: list[list[int]] = []
    for seed in sorted({int(s) for s in seeds}):
        if spans and seed == spans[-1][1] + 1:
            spans[-1][1] = seed
        else:
            spans.append([seed, seed])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans) or "?"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=+-]+", "_", text).strip("_") or "run"


@dataclass
class RunContext:
    """What a run's function gets besides its config.

    ``seed`` is the run's seed with the reader's offset applied (:attr:`Run.seed`): every random draw of a run
    derives from it (``ctx.seed + i`` for the i-th of several seeds drawn inside one run). Draws that must stay
    fixed across seeds (a held-out test set, a generator the paper fixes) use a literal seed and say why.
    """

    profile: Profile
    device: str
    seed: int
    checkpoint: Path | None = None
    progress: bool = True


def part_checkpoints(checkpoint: Path | None, names) -> dict:
    """One checkpoint per part of a run that trains several models in turn: ``<run>.<name>.ckpt`` beside the run's
    own ``checkpoint``, or None for each where the run keeps none. :func:`remove_checkpoints` drops them once the
    run is done (a killed run keeps them, to resume)."""
    if checkpoint is None:
        return dict.fromkeys(names)
    base = Path(checkpoint)
    return {name: base.with_name(f"{base.stem}.{name}.ckpt") for name in names}


def remove_checkpoints(paths: dict) -> None:
    """Delete the :func:`part_checkpoints` of a finished run."""
    for path in paths.values():
        if path is not None:
            path.unlink(missing_ok=True)


def compute(run: Run, profile: Profile, scale: str, checkpoint: Path | None = None, progress: bool = True) -> Result:
    """Run one run and return its result with provenance (nothing is written but the run's own checkpoint).
    ``checkpoint`` may come as a string (the process and Ray executors send one); the run gets a Path."""
    seed_everything(run.seed)
    checkpoint = Path(checkpoint) if checkpoint is not None else None
    ctx = RunContext(profile, profile.device, run.seed, checkpoint, progress)
    start = time.perf_counter()
    with carried_time() as before:  # a resumed run's seconds in earlier processes count too
        outputs = run.fn(dict(run.config), ctx)
    if not isinstance(outputs, Mapping):
        raise TypeError(f"{run.fn_path} must return a dict of outputs, got {type(outputs).__name__}")
    metrics, arrays = split_outputs(dict(outputs))
    wall = time.perf_counter() - start + sum(before)
    prov = provenance(profile, seeds=[run.seed], wall_time_s=wall, scale=scale)
    return Result(run.key, dict(run.config), metrics, arrays, prov)


def twin(run_fn: Callable, key: Callable[[dict], object], devices=None):
    """Register the decorated ``group_fn(configs, ctxs) -> [outputs]`` as the batched twin of ``run_fn``: given the
    configs and contexts of runs of ``run_fn`` whose ``key(config)`` (JSON-able) agree, it returns what ``run_fn``
    returns for each, up to floating-point rounding (training them together with
    :func:`lscnb.batched.fit_batched`, say). ``devices`` (device types, such as ``("cuda",)``, or a function of a
    config that returns them; default all) are those on which training together pays: elsewhere the runs are
    computed one by one (:func:`group_key`)."""
    if not callable(run_fn) or not callable(key):
        raise TypeError("twin(run_fn, key) takes the run function and a function of its config")
    pays = devices if callable(devices) else _device_types(devices)

    def register(group_fn: Callable) -> Callable:
        GROUPS[run_fn] = (group_fn, key, pays)
        return group_fn

    return register


def _device_types(devices) -> tuple[str, ...] | None:
    """``devices`` checked: None (all) or a tuple of device types."""
    if devices is not None and (isinstance(devices, str) or not all(isinstance(d, str) for d in devices)):
        raise TypeError(f"devices must be a tuple of device types such as ('cuda',), got {devices!r}")
    return None if devices is None else tuple(devices)


def group_key(run: Run, device: str | None = None) -> tuple | None:
    """What ``run`` must share with the runs it is computed with (its function, its twin's key), or None (no twin, or
    none that pays on ``device``, a device name such as ``"cuda:0"``; None: any device)."""
    entry = GROUPS.get(run.fn)
    if entry is None:
        return None
    if device is not None:
        pays = _device_types(entry[2](dict(run.config))) if callable(entry[2]) else entry[2]
        if pays is not None and device.split(":")[0] not in pays:
            return None
    return run.fn_path, json.dumps(entry[1](dict(run.config)), sort_keys=True, default=str)


def twin_groups(runs, device: str | None = None) -> dict:
    """``runs`` that can train together, by :func:`group_key` (``{key: [run, ...]}`` in the runs' order); a run with
    no twin (or none that pays on ``device``) is left out."""
    groups: dict = {}
    for run in runs:
        if (key := group_key(run, device)) is not None:
            groups.setdefault(key, []).append(run)
    return groups


def run_group(runs, profile: Profile, scale: str, progress: bool = False, checkpoint=None) -> list[Result]:
    """Compute ``runs`` together through their function's twin; one result per run, as :func:`compute` would give
    it: the run's key, config and seed (with the reader's offset: pass the runs as :func:`lscnb.sweep.run_sweep`
    hands them to an executor), and provenance with the group's wall time shared out and ``batched``, the group's
    size. ``checkpoint`` (the group's, if its twin keeps one) reaches the twin as the first run's context's.
    Raises unless the runs share a function with a twin and the twin's key."""
    runs = list(runs)
    if not runs or not all(isinstance(r, Run) for r in runs):
        raise ValueError("runs must be a non-empty list of Run")
    keys = {group_key(r) for r in runs}
    if None in keys:
        bare = sorted({r.fn_path for r in runs if group_key(r) is None})
        raise ValueError(f"runs must have a batched twin (lscnb.runs.twin); these have none: {bare}")
    if len(keys) > 1:
        raise ValueError(f"runs must share their function and their twin's key, got {len(keys)} groups: {sorted(keys)}")
    if len({r.key for r in runs}) != len(runs):
        raise ValueError("runs must have distinct keys")
    group_fn = GROUPS[runs[0].fn][0]
    seed_everything(runs[0].seed)
    ckpt = None if checkpoint is None else Path(checkpoint)
    ctxs = [RunContext(profile, profile.device, r.seed, ckpt if i == 0 else None, progress) for i, r in enumerate(runs)]
    start = time.perf_counter()
    with carried_time() as before:
        outputs = group_fn([dict(r.config) for r in runs], ctxs)
    if not isinstance(outputs, list) or len(outputs) != len(runs) or not all(isinstance(o, Mapping) for o in outputs):
        raise TypeError(f"the twin of {runs[0].fn_path} must return a list of {len(runs)} dicts, one per run")
    wall = (time.perf_counter() - start + sum(before)) / len(runs)
    results = []
    for run, out in zip(runs, outputs):
        metrics, arrays = split_outputs(dict(out))
        prov = {**provenance(profile, seeds=[run.seed], wall_time_s=wall, scale=scale), "batched": len(runs)}
        results.append(Result(run.key, dict(run.config), metrics, arrays, prov))
    return results
