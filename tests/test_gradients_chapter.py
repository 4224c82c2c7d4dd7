"""The chapter's run functions on shrunken full-scale configs, so a GPU batch does not fail on a bug."""

import pytest
from seedcheck import assert_seed_reaches

from lscnb import config
from lscnb.experiments import gradients as ex
from lscnb.sweep import Run, RunContext

SMALL = ex.SMOKE  # the chapter's smoke-test shrink (lscnb.experiments.gradients)


@pytest.fixture
def ctx():
    return RunContext(config.resolve("quick"), "cpu", 0, None, False)


def _shrunk(run, **small):
    cfg = dict(run.config)
    cfg.update({k: v for k, v in small.items() if k in cfg})
    return cfg


def test_rate_run_reports_linear_radius_only_for_linear(ctx):
    run = [r for r in ex.rate_runs("quick") if r.config["activation"] == "tanh"][0]
    out = ex.rate_run(_shrunk(run, width=8, length=40, seeds=2, fit_start=2, fit_stop=30), ctx)
    assert out["rates"].shape == (2,) and out["radius_W"].size == 0 and out["profiles"].shape == (2, 40)


@pytest.mark.parametrize("figure", sorted(ex.FIGURES))
def test_the_readers_seed_reaches_every_figure(figure):
    """Every figure draws weights or inputs (none is pure theory): SEED must change it, and only SEED."""
    first = ex.FIGURES[figure]("full")[0]
    assert_seed_reaches(Run(first.chapter, first.figure, first.name, first.fn, _shrunk(first, **dict(SMALL, seeds=2))))
