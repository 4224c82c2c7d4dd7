"""Sweeps: a figure is a list of runs with stable keys; each finished run is stored and never recomputed.

A :class:`Run` names a module-level function ``fn(config, ctx) -> dict`` and a JSON-able config. Its key is
``figure/name-hash`` where the hash covers the function's import path and the config, so changing either makes
a new run. :func:`gather` is what an experiment calls for a figure: it replays committed full results, or runs
the sweep at the profile's scale, and returns a :class:`Collected` that knows how to caption itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tqdm.auto import tqdm

from .config import Profile, device_name
from .results import Result, Store, code_digest, store_for

# a run, its context and computing it live in .runs (which executors import too: no import circle)
from .runs import SEED_OFFSET, Run, RunContext, compute, seed_list  # noqa: F401 (part of this module's API)


class SweepError(RuntimeError):
    """Some runs of a sweep raised; their tracebacks are stored beside the results as ``*.failed.json``."""


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
    is raised at the end if any failed. Then the checkpoints of the runs' chapters that nothing will resume from are
    removed (:meth:`~lscnb.results.Store.orphaned_checkpoints`).
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
    for chapter in {r.chapter for r in runs}:
        for orphan in store_for(scale, chapter).orphaned_checkpoints():
            orphan.unlink(missing_ok=True)
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


def at_scale_of(first, *others) -> list:
    """The collections of ``others`` at the scale of ``first`` (:attr:`Collected.scale`): the runs of other figures
    that a figure may pool with its own or set beside them without mixing training budgets (in a replay, a figure
    whose full runs are owed comes at quick scale). Where ``first`` or another has no scale (a plain list of
    results), it passes."""
    scale = getattr(first, "scale", None)
    return [c for c in others if scale is None or getattr(c, "scale", scale) == scale]


def pool(cols, cell: Callable) -> dict:
    """``{cell(r): [r, ...]}`` over the results of the collections ``cols`` (a result whose ``cell`` is None is left
    out). A cell whose runs come from collections at two scales raises: a mean of quick and full runs is neither
    (:func:`at_scale_of` keeps the collections at one scale)."""
    out, scales = {}, {}
    for col in cols:
        for r in col:
            if (key := cell(r)) is not None:
                out.setdefault(key, []).append(r)
                scales.setdefault(key, set()).add(getattr(col, "scale", None))
    if mixed := [key for key, seen in scales.items() if len(seen - {None}) > 1]:
        raise ValueError(f"{len(mixed)} cell(s) would pool quick and full runs, e.g. {mixed[0]!r}")
    return out


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

    def collected(runs, scale: str, results: list, device: str, missing: int = 0) -> Collected:
        """``results`` at ``scale`` for ``runs`` (the figure's runs at the profile's scale, or its full ones)."""
        first = runs[0]
        return Collected(
            first.chapter, first.figure, profile.name, scale, results, device, missing, len(runs), subset, profile.seed
        )

    if profile.is_replay:
        full_runs = build("full")
        if not full_runs:
            raise ValueError("build('full') returned no runs")
        store = store_for("full", full_runs[0].chapter)
        present = [r for r in full_runs if store.has(r.key)]
        if len(present) == len(full_runs):
            results = [store.load(r.key) for r in full_runs]
            # committed results are replayed as committed: the reader's SEED does not reach them (the caption says so)
            return collected(full_runs, "full", results, results[0].provenance.get("device_name", "?"))
        results = run_sweep(build("quick"), profile, scale="quick", force=force, progress=progress)
        missing = len(full_runs) - len(present)
        return collected(full_runs, "quick", results, device_name(profile.device), missing)
    runs = build(profile.scale)
    if not runs:
        raise ValueError(f"build({profile.scale!r}) returned no runs")
    results = run_sweep(runs, profile, force=force, progress=progress)
    return collected(runs, profile.scale, results, device_name(profile.device))
