"""scripts/check_seeds.py: how many runs go at once, and its command-line mistakes."""

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("check_seeds", Path(__file__).parents[1] / "scripts" / "check_seeds.py")
check_seeds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_seeds)


@pytest.mark.parametrize(("threads", "cores", "jobs"), [([1], 2, 2), ([1, 2], 2, 1), ([2], 16, 8), ([4], 2, 1)])
def test_runs_at_once_never_oversubscribe_the_cores(threads, cores, jobs):
    assert check_seeds.default_jobs(threads, cores) == jobs


@pytest.mark.parametrize(
    "argv", [["--seeds", ""], ["--threads", "0"], ["--jobs", "0"], ["--seeds", "a"], ["nochapter"]]
)
def test_a_command_line_mistake_exits_with_status_2(argv, capsys):
    with pytest.raises(SystemExit) as e:
        check_seeds.main(argv)
    assert e.value.code == 2
    assert "error" in capsys.readouterr().err
