"""Every figure's full-profile code path, shrunk to seconds (:func:`lscnb.figures.smoke_runs`): on the CPU here, and
on a GPU when one is present (a GPU window runs this first, so a device bug costs minutes, not a long run)."""

import numpy as np
import pytest
import torch

from lscnb import config
from lscnb.experiments import chapter_module, chapters
from lscnb.figures import smoke_runs
from lscnb.sweep import RunContext

CASES = [(ch, fig) for ch in sorted(chapters()) for fig in chapter_module(ch).FIGURES]


def _finite(out: dict) -> list:
    """The names of float outputs that hold a NaN or an infinity."""
    bad = []
    for k, v in out.items():
        a = np.asarray(v.detach().cpu() if isinstance(v, torch.Tensor) else v)
        if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
            bad.append(k)
    return bad


def _smoke(chapter: str, figure: str, device: str) -> None:
    module = chapter_module(chapter)
    full = module.FIGURES[figure]("full")
    assert len({r.key for r in full}) == len(full), "two full runs share a key"
    for run in smoke_runs(module, figure):
        out = run.fn(dict(run.config), RunContext(config.Profile("full", device), device, run.seed, None, False))
        assert isinstance(out, dict) and out, f"{run.name} returned nothing"
        # a run may record a NaN on purpose (a diverged model, an undefined ratio): flag only all-NaN outputs
        assert len(_finite(out)) < len(out), f"{run.name}: every output is NaN or infinite"


@pytest.mark.parametrize(("chapter", "figure"), CASES)
def test_full_code_path_runs_shrunk_on_the_cpu(chapter, figure):
    _smoke(chapter, figure, "cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the GPU smoke test runs on a GPU machine")
@pytest.mark.parametrize(("chapter", "figure"), CASES)
def test_full_code_path_runs_shrunk_on_the_gpu(chapter, figure):
    _smoke(chapter, figure, "cuda")


def test_smoke_covers_every_figure_of_every_chapter():
    assert len(CASES) == sum(len(chapter_module(ch).FIGURES) for ch in chapters()) >= 70
