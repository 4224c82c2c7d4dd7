"""Every committed full result is still a run of its figure: a refactoring that changes a run's key (its function's
chapter and name, or its configuration) would orphan committed results and turn paper-scale figures quick-only."""

import pytest

from lscnb.experiments import chapter_module, chapters
from lscnb.results import store_for


@pytest.mark.parametrize("name", sorted(chapters()))
def test_every_committed_result_is_a_run_of_its_figure(name):
    module = chapter_module(name)
    expected = {run.key for fig in module.FIGURES.values() for run in fig("full")}
    committed = set(store_for("full", name).keys())
    orphans = sorted(committed - expected)
    assert not orphans, f"{len(orphans)} committed results no figure makes any more, e.g. {orphans[:3]}"


def test_a_function_keeps_its_key_when_it_moves_inside_its_chapter():
    from lscnb.sweep import Run

    def fn(cfg, ctx):
        return {}

    fn.__module__ = "lscnb.experiments.memory.teacher"
    moved = Run("memory", "teacher", "r", fn, {"a": 1}).key
    fn.__module__ = "lscnb.experiments.memory"
    assert Run("memory", "teacher", "r", fn, {"a": 1}).key == moved
    fn.__module__ = "lscnb.experiments.memoryx.teacher"
    assert Run("memory", "teacher", "r", fn, {"a": 1}).key != moved
