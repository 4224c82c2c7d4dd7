"""Every figure's full-profile code path, shrunk to seconds (:func:`lscnb.figures.smoke_runs`): on the CPU here, and
on a GPU when one is present (a GPU window runs this first, so a device bug costs minutes, not a long run)."""

import pytest
import torch

from lscnb.experiments import chapter_module, chapters
from lscnb.figures import run_smoke, smoke_runs

CASES = [(ch, fig) for ch in sorted(chapters()) for fig in chapter_module(ch).FIGURES]


def _smoke(chapter: str, figure: str, device: str) -> None:
    module = chapter_module(chapter)
    full = module.FIGURES[figure]("full")
    assert len({r.key for r in full}) == len(full), "two full runs share a key"
    run_smoke(module, figure, device)


@pytest.mark.parametrize(("chapter", "figure"), CASES)
def test_full_code_path_runs_shrunk_on_the_cpu(chapter, figure):
    _smoke(chapter, figure, "cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the GPU smoke test runs on a GPU machine")
@pytest.mark.parametrize(("chapter", "figure"), CASES)
def test_full_code_path_runs_shrunk_on_the_gpu(chapter, figure):
    _smoke(chapter, figure, "cuda")


def test_smoke_covers_every_figure_of_every_chapter():
    assert len(CASES) == sum(len(chapter_module(ch).FIGURES) for ch in chapters()) >= 70


def test_smoke_runs_apply_the_chapter_and_figure_shrinks():
    from lscnb.experiments import roarnn

    full = roarnn.FIGURES["moons"]("full")
    runs = smoke_runs(roarnn, "moons")
    assert [r.name for r in runs] == [full[0].name, full[-1].name]
    assert all(r.config["width"] == f.config["width"] for r, f in zip(runs, (full[0], full[-1])))  # None keeps it
    assert all(r.config["depth"] == roarnn.SMOKE["depth"] for r in runs)  # the chapter's entry, where the run has it
    assert all(r.config["width"] == 8 for r in smoke_runs(roarnn, "digits"))  # the figure's own entry wins


def test_smoke_command_reports_each_figure(capsys):
    from lscnb.__main__ import main

    assert main(["smoke", "gradients", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert out.count("ok      gradients/") == len(chapter_module("gradients").FIGURES) and "0 failed" in out
    with pytest.raises(SystemExit) as err:
        main(["smoke", "nochapter"])
    assert err.value.code == 2


def test_figures_with_a_batched_twin_smoke_a_group_too():
    from lscnb.experiments import corelnet, memory, roarnn
    from lscnb.figures import smoke_group
    from lscnb.runs import group_key

    for module, figure in ((corelnet, "mcurve"), (memory, "theta0"), (roarnn, "copy")):
        group = smoke_group(module, figure)
        assert len(group) == 2 and group_key(group[0]) == group_key(group[1]) is not None
        assert group[0].key != group[1].key and group[0].config["iters" if module is corelnet else "steps"] <= 20
    assert smoke_group(roarnn, "copy")[0].config["model"] == "roa"  # the first runs, the baselines', train alone
    assert smoke_group(roarnn, "moons") == []
