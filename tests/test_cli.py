"""python -m lscnb: every command-line mistake is one line on stderr, ``python -m lscnb: error: ...``, exit status 2."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    "OMP_NUM_THREADS": "1",
    "LSCNB_THREADS": "1",
}
NB = ["--no-notebook"]

CASES = {  # name: (arguments, a piece of the message)
    "no command": ([], "required: command"),
    "unknown command": (["nosuch"], "invalid choice: 'nosuch'"),
    "no chapter": (["reproduce"], "required: chapter"),
    "unknown chapter": (["reproduce", "nosuch", "--profile", "quick"], "unknown chapter 'nosuch'"),
    "unknown figure": (["reproduce", "lsc", "--profile", "quick", *NB, "--figure", "nope"], "has no figure 'nope'"),
    "replay": (["reproduce", "lsc", "--profile", "replay"], "use --profile quick or --profile full"),
    "bad profile": (["reproduce", "lsc", "--profile", "bogus"], "invalid choice: 'bogus'"),
    "bad device": (["reproduce", "lsc", "--profile", "quick", *NB, "--device", "warp9"], "torch device"),
    "negative seed": (["reproduce", "lsc", "--seed", "-5"], "--seed: must be >= 0, got -5"),
    "seed not a number": (["reproduce", "lsc", "--seed", "x"], "--seed: must be an integer"),
    "zero workers": (["reproduce", "lsc", *NB, "--executor", "processes", "--workers", "0"], "--workers: must be pos"),
    "zero batched workers": (["reproduce", "lsc", *NB, "--executor", "batched", "--workers", "0"], "--workers: must"),
    "zero threads": (["reproduce", "lsc", *NB, "--executor", "processes", "--threads-per-run", "0"], "--threads-per"),
    "zero cpus": (["reproduce", "lsc", *NB, "--executor", "ray", "--cpus-per-run", "0"], "--cpus-per-run: must be"),
    "negative gpus": (["reproduce", "lsc", *NB, "--executor", "ray", "--gpus-per-run", "-1"], "must be >= 0"),
    "fractional gpus, submitit": (
        ["reproduce", "lsc", *NB, "--executor", "submitit", "--gpus-per-run", "0.5"],
        "whole number",
    ),
    "zero timeout": (["reproduce", "lsc", *NB, "--executor", "submitit", "--timeout-min", "0"], "--timeout-min: must"),
    "bad cluster": (["reproduce", "lsc", *NB, "--executor", "submitit", "--submitit-cluster", "x"], "invalid choice"),
    "executor without --no-notebook": (["reproduce", "lsc", "--executor", "ray"], "add --no-notebook"),
    "option of another executor": (
        ["reproduce", "lsc", *NB, "--executor", "ray", "--workers", "3"],
        "--workers is an option of --executor processes",
    ),
    "executor option with local": (["reproduce", "lsc", *NB, "--address", "auto"], "--address is an option"),
    "figure without --no-notebook": (["reproduce", "lsc", "--figure", "lemma1"], "--figure needs --no-notebook"),
    "figure with all": (["reproduce", "all", *NB, "--figure", "lemma1"], "--figure needs one chapter"),
    "output with --no-notebook": (["reproduce", "lsc", *NB, "--output", "x"], "--output"),
    "owed without --no-notebook": (["reproduce", "lsc", "--owed"], "--owed needs --no-notebook"),
    "run without --no-notebook": (["reproduce", "lsc", "--run", "x"], "--run needs --no-notebook"),
    "run with all": (["reproduce", "all", *NB, "--run", "x"], "--run needs one chapter"),
    "run matching nothing": (
        ["reproduce", "gradients", "--profile", "quick", *NB, "--figure", "rates", "--run", "linear-g9*"],
        "--run 'linear-g9*' matches no run of these figures; their runs: linear-g0.6,",
    ),
    "smoke of an unknown chapter": (["smoke", "chapter9"], "unknown chapter 'chapter9'"),
    "missing root": (["status", "--root", "/nonexistent/results"], "no such folder"),
    "root is a file": (["status", "--root", __file__], "not a folder"),
    "unknown option": (["status", "--bogus"], "unrecognized arguments"),
}


def _cli(args, *, block=None):
    """Run the command line in a fresh interpreter (``block``: a package made unimportable there)."""
    code = "import sys\n"
    if block:
        code += f"sys.modules[{block!r}] = None\n"
    code += "from lscnb.__main__ import main\nsys.exit(main(sys.argv[1:]))\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=300, check=False
    )


def _assert_usage_error(proc, piece):
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert len(lines) == 1 and lines[0].startswith("python -m lscnb: error: "), proc.stderr
    assert piece in lines[0], lines[0]


@pytest.mark.parametrize("name", list(CASES))
def test_usage_error(name):
    args, piece = CASES[name]
    _assert_usage_error(_cli(args), piece)


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is visible")
def test_cuda_without_gpu():
    _assert_usage_error(_cli(["reproduce", "lsc", "--profile", "quick", *NB, "--device", "cuda"]), "no CUDA GPU")


@pytest.mark.parametrize(
    "package,args",
    [("ray", [*NB, "--executor", "ray"]), ("submitit", [*NB, "--executor", "submitit"]), ("papermill", [])],
)
def test_missing_package(package, args):
    proc = _cli(["reproduce", "lsc", "--profile", "quick", *args], block=package)
    _assert_usage_error(proc, f"needs the {package} package, which is not installed")


def test_help():
    proc = subprocess.run(
        [sys.executable, "-m", "lscnb", "reproduce", "--help"],
        capture_output=True,
        text=True,
        env=ENV,
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0 and not proc.stderr
    assert "0 reproduces the committed results" in " ".join(proc.stdout.split())


def test_profiles_match_config():
    from lscnb import __main__ as cli
    from lscnb import config

    assert cli.PROFILES == config.PROFILES


def test_owed_runs_only_the_figures_without_their_full_results(tmp_path):
    """gradients has every full result committed (nothing owed); with an empty results folder every figure is owed."""
    env = dict(ENV, LSCNB_CACHE=str(tmp_path / "cache"))
    args = ["reproduce", "gradients", "--profile", "quick", *NB, "--owed", "--figure", "rates"]
    proc = subprocess.run(
        [sys.executable, "-m", "lscnb", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert proc.returncode == 0 and "nothing owed" in proc.stdout, proc.stdout + proc.stderr
    empty = dict(env, LSCNB_RESULTS=str(tmp_path / "results"))
    proc = subprocess.run(
        [sys.executable, "-m", "lscnb", *args], capture_output=True, text=True, env=empty, cwd=ROOT, timeout=300
    )
    assert proc.returncode == 0 and "runs of rates: done" in proc.stdout, proc.stdout + proc.stderr


def test_run_trains_only_the_runs_it_names(tmp_path):
    """With an empty results folder, --run trains the runs whose names match and stores only those."""
    env = dict(ENV, LSCNB_CACHE=str(tmp_path / "cache"), LSCNB_RESULTS=str(tmp_path / "results"))
    args = ["reproduce", "gradients", "--profile", "quick", *NB, "--figure", "rates", "--run", "tanh-g1.?"]
    proc = subprocess.run(
        [sys.executable, "-m", "lscnb", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert proc.returncode == 0 and "3 runs of rates: done" in proc.stdout, proc.stdout + proc.stderr
    stored = sorted(p.name.split("-", 2)[1] for p in tmp_path.rglob("tanh-*.json"))
    assert stored == ["g1.0", "g1.2", "g1.5"] and not list(tmp_path.rglob("linear-*.json")), stored
