"""Sweeps: a figure is a list of runs with stable keys; each finished run is stored and never recomputed.

A :class:`Run` names a module-level function ``fn(config, ctx) -> dict`` and a JSON-able config. Its key is
``figure/name-hash`` where the hash covers the function's import path and the config, so changing either makes
a new run. :func:`gather` is what an experiment calls for a figure: it replays committed full results, or runs
the sweep at the profile's scale, and returns a :class:`Collected` that knows how to caption itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from .config import Profile, device_name, seed_everything
from .results import Result, Store, code_digest, provenance, split_outputs, store_for

SEED_OFFSET = "seed_offset"


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
        return f"{self.fn.__module__}:{self.fn.__qualname__}"

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


class SweepError(RuntimeError):
    """Some runs of a sweep raised; their tracebacks are stored beside the results as ``*.failed.json``."""


def compute(run: Run, profile: Profile, scale: str, checkpoint: Path | None = None, progress: bool = True) -> Result:
    """Run one run and return its result with provenance (nothing is written but the run's own checkpoint)."""
    seed_everything(run.seed)
    ctx = RunContext(profile, profile.device, run.seed, checkpoint, progress)
    start = time.perf_counter()
    outputs = run.fn(dict(run.config), ctx)
    if not isinstance(outputs, Mapping):
        raise TypeError(f"{run.fn_path} must return a dict of outputs, got {type(outputs).__name__}")
    metrics, arrays = split_outputs(dict(outputs))
    prov = provenance(profile, seeds=[run.seed], wall_time_s=time.perf_counter() - start, scale=scale)
    return Result(run.key, dict(run.config), metrics, arrays, prov)


def execute(run: Run, profile: Profile, store: Store, *, scale: str, progress: bool = True) -> Result:
    """Run one run in this process and store its result."""
    result = compute(run, profile, scale, store.checkpoint_path(run.key), progress)
    _finish(store, result)
    return result


def _finish(store: Store, result: Result) -> None:
    store.save(result)
    ckpt = store.checkpoint_path(result.key)
    if ckpt.exists():
        ckpt.unlink()


def run_sweep(
    runs: Iterable[Run],
    profile: Profile,
    *,
    scale: str | None = None,
    force: bool | None = None,
    executor: str = "local",
    progress: bool = True,
    **executor_options,
) -> list[Result]:
    """Run every run of a sweep that is not stored yet; return all results in the order given.

    Every run is shifted to the profile's seed first (:meth:`Run.reseeded`): seed 0 runs the runs as given.

    ``scale`` defaults to the profile's; ``force`` recomputes stored runs (default: quick runs are always
    recomputed unless ``LSCNB_REUSE=1`` and they were made by the code now on disk, full runs never). ``executor`` is
    ``local`` (in this process, one after
    another), ``ray`` or ``submitit`` (see :mod:`lscnb.executors`; options such as ``address`` or
    ``gpus_per_run`` are passed on). Each result is stored as soon as it arrives, so a killed sweep loses no
    finished run. A run that raises is recorded with its traceback and the others go on; a :class:`SweepError`
    is raised at the end if any failed.
    """
    from .executors import make_executor

    runs = [run.reseeded(profile.seed) for run in runs]
    scale = scale or profile.scale
    if force is None:
        force = scale == "quick" and os.environ.get("LSCNB_REUSE") != "1"
    keys = [r.key for r in runs]
    if len(set(keys)) != len(keys):
        dup = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"runs must have distinct keys; repeated: {dup}")
    pool = make_executor(executor, **executor_options)
    results, failures, todo = {}, [], []
    for run in runs:
        store = store_for(scale, run.chapter)
        stored = store.load(run.key) if not force and store.has(run.key) else None
        if stored is not None and (scale == "full" or stored.provenance.get("code") == code_digest()):
            results[run.key] = stored
        else:
            todo.append((run, store))
    stores = {run.key: store for run, store in todo}
    figures = sorted({r.figure for r in runs})
    bar = tqdm(
        total=len(todo),
        desc=f"{','.join(figures)[:30] or 'sweep'} ({scale}, {executor})",
        disable=not progress or not todo,
        leave=False,
    )
    for run, outcome in pool.map(todo, profile, scale, progress=progress):
        if isinstance(outcome, Result):
            _finish(stores[run.key], outcome)
            results[run.key] = outcome
        else:
            stores[run.key].save_failure(run.key, dict(run.config), str(outcome))
            failures.append(run.key)
        bar.update(1)
        bar.set_postfix_str(run.name[:40])
    bar.close()
    if failures:
        raise SweepError(f"{len(failures)} of {len(runs)} runs failed (tracebacks in *.failed.json): {failures}")
    return [results[r.key] for r in runs]


@dataclass
class Collected:
    """The results behind one figure, with where they came from."""

    chapter: str
    figure: str
    requested: str
    scale: str
    results: list
    device_name: str
    missing: int = 0
    total: int = 0
    subset: str = ""
    seed: int = 0

    def __iter__(self):
        return iter(self.results)

    def __len__(self):
        return len(self.results)

    def __getitem__(self, index):
        return self.results[index]

    def where(self, **config) -> list:
        """The results whose config has every given ``key=value``."""
        return [r for r in self.results if all(r.config.get(k) == v for k, v in config.items())]

    def one(self, **config) -> Result:
        found = self.where(**config)
        if len(found) != 1:
            raise KeyError(f"expected one result with {config}, found {len(found)}")
        return found[0]

    @property
    def is_paper_scale(self) -> bool:
        return self.scale == "full"

    @property
    def wall_time_s(self) -> float:
        return sum(float(r.provenance.get("wall_time_s", 0.0)) for r in self.results)

    @property
    def seeds(self) -> list[int]:
        """Every seed the runs were seeded with (their provenance's ``seeds``), sorted."""
        return sorted({int(s) for r in self.results for s in r.provenance.get("seeds", [])})

    def _seen(self, key: str, width: int | None = None) -> list[str]:
        """The distinct values of provenance field ``key`` among the runs (cut to ``width`` characters), sorted."""
        return sorted({str(r.provenance.get(key, "?"))[:width] for r in self.results})

    def caption(self, data: str = "") -> str:
        """The provenance line printed under the figure (Markdown)."""
        devices = self._seen("device_name") or [self.device_name]
        commits, dates, torches = self._seen("git_commit", 10), self._seen("date", 10), self._seen("torch") or ["?"]
        facts = (
            f"{len(self.results)} run(s), {self.wall_time_s:.1f} s of compute, on {', '.join(devices)}; "
            f"seeds {seed_list(self.seeds)}; torch {', '.join(torches)}, commit {', '.join(commits)}, "
            f"{', '.join(dates)}"
        )
        data = f" Data: {data}." if data else ""
        if self.scale == "full":
            subset = f" Declared subset of the paper's set-up: {self.subset}." if self.subset else ""
            fixed = (
                f" SEED = {self.seed} does not change committed results: these are the committed seeds."
                if self.requested == "replay" and self.seed
                else ""
            )
            return f"*Made by the **full** profile (paper scale): {facts}.{subset}{fixed}{data}*"
        if self.requested == "replay":
            return (
                f"*⚠ **The full-scale run of this figure has not been committed yet** "
                f"({self.total - self.missing} of {self.total} runs present). What you see is the **quick** "
                f"(toy-scale) version computed while building: {facts}. It is not the paper-scale figure.{data}*"
            )
        return f"*Made by the **quick** profile (toy scale, not paper scale): {facts}.{data}*"


def gather(
    build: Callable[[str], list],
    profile: Profile,
    *,
    subset: str = "",
    progress: bool = True,
    force: bool | None = None,
) -> Collected:
    """The results of one figure for ``profile``.

    ``build(scale)`` returns the figure's runs at ``"quick"`` or ``"full"`` scale. ``replay`` loads the committed
    full runs when all are present, and otherwise computes the quick ones and marks the figure as such.
    ``subset`` states what the full profile leaves out of the paper's set-up (fewer seeds, say).
    """
    if profile.is_replay:
        full_runs = build("full")
        if not full_runs:
            raise ValueError("build('full') returned no runs")
        first = full_runs[0]
        store = store_for("full", first.chapter)
        present = [r for r in full_runs if store.has(r.key)]
        if len(present) == len(full_runs):
            results = [store.load(r.key) for r in full_runs]
            # committed results are replayed as committed: the reader's SEED does not reach them (the caption says so)
            return Collected(
                first.chapter,
                first.figure,
                "replay",
                "full",
                results,
                results[0].provenance.get("device_name", "?"),
                0,
                len(full_runs),
                subset,
                profile.seed,
            )
        quick_runs = build("quick")
        results = run_sweep(quick_runs, profile, scale="quick", force=force, progress=progress)
        return Collected(
            first.chapter,
            first.figure,
            "replay",
            "quick",
            results,
            device_name(profile.device),
            len(full_runs) - len(present),
            len(full_runs),
            subset,
            profile.seed,
        )
    runs = build(profile.scale)
    if not runs:
        raise ValueError(f"build({profile.scale!r}) returned no runs")
    results = run_sweep(runs, profile, force=force, progress=progress)
    return Collected(
        runs[0].chapter,
        runs[0].figure,
        profile.name,
        profile.scale,
        results,
        device_name(profile.device),
        0,
        len(runs),
        subset,
        profile.seed,
    )
