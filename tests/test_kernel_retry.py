"""The project's conftest.py: a chapter's kernel that dies while starting is started again, and a cell waits longer
than nbval's 5 seconds for the outputs of a cell that has finished."""

import importlib.util
from pathlib import Path

import pytest

nbval_kernel = pytest.importorskip("nbval.kernel")

_spec = importlib.util.spec_from_file_location("project_conftest", Path(__file__).parents[1] / "conftest.py")
project_conftest = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(project_conftest)


def _flaky(failures, result="kernel"):
    """A start that raises RuntimeError ``failures`` times, then returns ``result``; ``calls`` counts the calls."""

    def start(*args, **kwargs):
        start.calls += 1
        if start.calls <= failures:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return result, args, kwargs

    start.calls = 0
    return start


def test_a_start_that_dies_is_retried_with_the_same_arguments():
    start = _flaky(2)
    assert project_conftest.retry_start(start, attempts=3, pause=0)("python", cwd="book") == (
        "kernel",
        ("python",),
        {"cwd": "book"},
    )
    assert start.calls == 3


def test_the_last_failure_is_raised_after_all_attempts():
    start = _flaky(5)
    with pytest.raises(RuntimeError, match="kernel_info"):
        project_conftest.retry_start(start, attempts=3, pause=0)()
    assert start.calls == 3


def test_other_errors_are_not_retried():
    def start():
        start.calls += 1
        raise ValueError("no such kernel")

    start.calls = 0
    with pytest.raises(ValueError):
        project_conftest.retry_start(start, attempts=3, pause=0)()
    assert start.calls == 1


def test_nbval_starts_its_kernels_through_the_retry():
    """The patch is in place in this pytest run, once (loading conftest.py again does not wrap it twice)."""
    start = nbval_kernel.start_new_kernel
    assert start.__wrapped__.__module__ == "nbval.kernel"
    assert not hasattr(start.__wrapped__, "__wrapped__")


def test_a_cell_waits_longer_for_its_outputs():
    class Cell:
        def __init__(self, timeout):
            self.output_timeout = timeout

    Cell.__init__ = project_conftest.wait_longer_for_output(Cell.__init__, seconds=60)
    assert Cell(5).output_timeout == 60 and Cell(90).output_timeout == 90


def test_nbval_cells_wait_through_the_patch():
    init = pytest.importorskip("nbval.plugin").IPyNbCell.__init__
    assert init.__wrapped__.__module__ == "nbval.plugin" and not hasattr(init.__wrapped__, "__wrapped__")
