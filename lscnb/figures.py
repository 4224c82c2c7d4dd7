"""The figure registry: every figure of every chapter declared once, in one shape.

A :class:`Figure` holds what the paper shows (its :class:`Item` s: the paper's figures and tables it reproduces),
its sweep (``runs(scale)`` for ``"quick"`` and ``"full"``), what the full profile leaves out of the paper's set-up,
the functions that plot and tabulate it, and how to shrink its full runs to seconds (``smoke``: a smoke test runs
every figure's full-profile code path that way, on the CPU in CI and on a GPU before a GPU window's long runs).
A chapter lists its figures with :func:`declare`; the notebooks (``ex.FIGURES["copy"].collect(P)``), the status
page, the CLI and the GPU plan all read that list.
Paper items the chapter reproduces without a training run (closed forms, exact counts, drawings) are :class:`Item` s
in its ``WITHOUT_RUNS``; those that nothing reproduces (illustrations, say), in its ``NOT_RUN``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .config import Profile
from .sweep import Collected, gather


@dataclass(frozen=True)
class Item:
    """A figure or table of the source paper: its reference, what it shows, the data, a note and the gap.

    ``gap(col)`` turns the figure's committed full results into a sentence with the paper's number beside ours."""

    source: str
    what: str
    data: str = ""
    note: str = ""
    gap: Callable[[Collected], str] | None = None

    def __post_init__(self):
        for name in ("source", "what"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"Item.{name} must be a non-empty string, got {getattr(self, name)!r}")


@dataclass(frozen=True)
class Figure:
    """One figure of a chapter: the paper items it reproduces, its sweep, its subset note, its plot and table."""

    name: str
    runs: Callable[[str], list]
    items: tuple[Item, ...] = ()
    subset: str = ""
    show: Callable | None = None
    table: Callable | None = None
    smoke: dict = field(default_factory=dict)
    collector: Callable[..., Collected] | None = field(default=None, repr=False)
    reads: tuple[str, ...] = ()  # the chapter's other figures whose runs this one shows beside its own
    # config -> the counts its full data set sets (a whole data set's size, the steps of a run counted in epochs),
    # for the plan (lscnb.plan), which cannot time a run whose length it does not know
    data_counts: Callable[[dict], dict] | None = field(default=None, repr=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"Figure.name must be an identifier, got {self.name!r}")
        if not callable(self.runs):
            raise ValueError(f"Figure {self.name!r}: runs must be callable (scale -> runs)")
        object.__setattr__(self, "items", tuple(self.items))
        object.__setattr__(self, "reads", tuple(self.reads))
        if not all(isinstance(r, str) and r != self.name for r in self.reads):
            raise ValueError(f"Figure {self.name!r}: reads must name other figures, got {self.reads!r}")
        if not all(isinstance(i, Item) for i in self.items):
            raise ValueError(f"Figure {self.name!r}: items must be Item instances")
        if self.data_counts is not None and not callable(self.data_counts):
            raise ValueError(f"Figure {self.name!r}: data_counts must be callable (config -> counts) or None")

    def __call__(self, scale: str) -> list:
        """The figure's runs at ``scale`` (``"quick"`` or ``"full"``)."""
        return self.runs(scale)

    def collect(self, profile: Profile, **options) -> Collected:
        """The figure's results for ``profile``: replayed, loaded or computed (:func:`lscnb.sweep.gather`)."""
        if self.collector is not None:
            return self.collector(profile, **options)
        return gather(self.runs, profile, subset=self.subset, **options)


def declare(*figures: Figure) -> dict[str, Figure]:
    """A chapter's figures by name, checking that each name is declared once."""
    out = {}
    for fig in figures:
        if not isinstance(fig, Figure):
            raise ValueError(f"declare takes Figure instances, got {type(fig).__name__}")
        if fig.name in out:
            raise ValueError(f"figure {fig.name!r} is declared twice")
        out[fig.name] = fig
    for fig in out.values():
        if unknown := [r for r in fig.reads if r not in out]:
            raise ValueError(f"figure {fig.name!r} reads figures that are not declared: {unknown}")
    return out


def items(module) -> list[tuple[Item, str | None]]:
    """Every paper item of a chapter ``module`` with the figure that reproduces it (None: no figure's runs do; the
    chapter's ``WITHOUT_RUNS`` and ``NOT_RUN``, :func:`needs_no_run` tells them apart), in the order the chapter
    declares them."""
    pairs = [(item, fig.name) for fig in module.FIGURES.values() for item in fig.items]
    return pairs + [(item, None) for name in ("WITHOUT_RUNS", "NOT_RUN") for item in getattr(module, name, ())]


def needs_no_run(module, item: Item) -> bool:
    """Whether chapter ``module`` reproduces ``item`` without a training run (it is in the chapter's
    ``WITHOUT_RUNS``: a closed form, an exact count, a drawing), so that there is nothing to scale up."""
    return any(item is i for i in getattr(module, "WITHOUT_RUNS", ()))


def smoke_runs(module, name: str) -> list:
    """Figure ``name``'s first and last full-profile runs, shrunk to seconds: the chapter's ``SMOKE`` overrides the
    config entries a run has, then the figure's own ``smoke`` sets its entries (``None`` keeps the full value)."""
    runs = module.FIGURES[name]("full")
    return [_shrunk(module, name, run) for run in dict.fromkeys([runs[0], runs[-1]])]


def _shrunk(module, name: str, run):
    """Full-profile ``run`` of figure ``name`` with its :func:`smoke_entries` applied."""
    from .runs import Run

    config = {**dict(run.config), **smoke_entries(module, name, run.config)}
    return Run(run.chapter, run.figure, run.name, run.fn, config)


def smoke_group(module, name: str) -> list:
    """Two full-profile runs of figure ``name`` that train together (the first run that shares its batched twin's key,
    :func:`lscnb.runs.group_key`, with a later one, and that one), shrunk as :func:`smoke_runs` shrinks them; none
    when no two do: the ``--executor batched`` path of the figure."""
    from .runs import twin_groups

    mates = next((rs[:2] for rs in twin_groups(module.FIGURES[name]("full")).values() if len(rs) >= 2), [])
    return [_shrunk(module, name, r) for r in mates]


def smoke_entries(module, name: str, config) -> dict:
    """The entries the smoke shrink of figure ``name`` sets in a full-profile run's ``config``: the chapter's
    ``SMOKE`` values of the entries the config has, then the figure's own ``smoke`` (``None`` keeps the full value).
    """
    out = {k: v for k, v in getattr(module, "SMOKE", {}).items() if k in config}
    out.update({k: (config[k] if v is None else v) for k, v in module.FIGURES[name].smoke.items()})
    return out


def data_counts(module, name: str, config) -> dict:
    """The counts that the data set sets in a full-profile ``config`` of figure ``name`` (its ``data_counts``):
    what a count of ``None`` (the whole data set) or a step count left to the epochs comes to; ``{}`` where the
    figure declares none, or its data set is not at hand (the plan leaves such a run's cost open)."""
    fn = module.FIGURES[name].data_counts
    if fn is None:
        return {}
    try:
        return dict(fn(dict(config)))
    except FileNotFoundError:
        return {}


def run_smoke(module, name: str, device: str = "cpu") -> float:
    """Run figure ``name``'s :func:`smoke_runs` on ``device``, and its :func:`smoke_group` together; the seconds they
    took. Raises on a run that fails, returns nothing, or returns only NaN/infinite floats (one NaN may be a recorded
    divergence)."""
    import time

    import numpy as np
    import torch

    from .config import Profile
    from .runs import RunContext, run_group

    start = time.perf_counter()
    ctx = lambda run: RunContext(Profile("full", device), device, run.seed, None, False)
    alone = [(run, run.fn(dict(run.config), ctx(run))) for run in smoke_runs(module, name)]
    group = smoke_group(module, name)
    results = run_group(group, Profile("full", device), "full") if group else []
    for run, out in [*alone, *zip(group, [{**r.metrics, **r.arrays} for r in results])]:
        if not isinstance(out, dict) or not out:
            raise RuntimeError(f"{run.chapter}/{run.figure}/{run.name}: the run returned nothing")
        floats = [np.asarray(v.detach().cpu() if isinstance(v, torch.Tensor) else v) for v in out.values()]
        floats = [a for a in floats if a.dtype.kind == "f"]
        if floats and not any(np.all(np.isfinite(a)) for a in floats):
            raise RuntimeError(f"{run.chapter}/{run.figure}/{run.name}: every float output is NaN or infinite")
    return time.perf_counter() - start
