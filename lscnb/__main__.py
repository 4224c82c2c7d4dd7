"""Command line: ``python -m lscnb reproduce CHAPTER --profile full``, ``python -m lscnb status``,
``python -m lscnb smoke [--device cuda]`` and ``python -m lscnb plan [--device cuda] [--budget 40m]``."""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import re
import sys
import time
from pathlib import Path

PROG = "python -m lscnb"
PROFILES = ("replay", "quick", "full")  # config.PROFILES, without importing torch before the arguments are checked
SEED_HELP = (
    "offset added to every run's seed: 0 reproduces the committed results; another value makes new runs "
    "(new keys) and changes every trained or sampled figure; replay ignores it (committed results show "
    "their own seeds)"
)
# options that belong to one executor (or two), and the packages an executor or the notebook path needs
EXECUTOR_OPTIONS = {
    "workers": ("processes", "batched"),
    "threads_per_run": ("processes", "batched"),
    "address": ("ray",),
    "cpus_per_run": ("ray",),
    "gpus_per_run": ("ray", "submitit"),
    "submitit_folder": ("submitit",),
    "submitit_cluster": ("submitit",),
    "slurm_partition": ("submitit",),
    "timeout_min": ("submitit",),
}
DEFAULTS = {
    "workers": 2,
    ("batched", "workers"): 1,  # the groups one after another, in this process
    "threads_per_run": 1,
    "cpus_per_run": 1.0,
    "gpus_per_run": 0.0,
    "submitit_folder": "_build/submitit",
}
PACKAGES = {"ray": "ray", "submitit": "submitit"}


class UsageError(Exception):
    """A mistake on the command line: reported as one line and exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, with every error (of any subcommand) as one line ``python -m lscnb: error: ...``, status 2."""

    def error(self, message):
        self.exit(2, f"{PROG}: error: {message}\n")


def _count(minimum: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {'>= 0' if minimum == 0 else 'positive'}, got {value}")
        return value

    return parse


def _amount(allow_zero: bool):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            raise argparse.ArgumentTypeError(f"must be {'>= 0' if allow_zero else 'positive'}, got {text}")
        return value

    return parse


def _duration(text: str) -> float:
    from .plan import parse_duration  # no torch: a mistake is reported at once

    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _device(text: str) -> str:
    if not re.fullmatch(r"cpu|cuda(:\d+)?", text):
        raise argparse.ArgumentTypeError(f"must be cpu or cuda, got {text!r}")
    return text


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


def _check_reproduce(args) -> None:
    """Every mistake that can be seen before any work starts, as a :class:`UsageError`."""
    if args.profile == "replay":
        raise UsageError("reproduce computes results: use --profile quick or --profile full (replay only plots)")
    if args.executor != "local" and not args.no_notebook:
        raise UsageError(f"--executor {args.executor} runs sweeps directly: add --no-notebook")
    for name, executors in EXECUTOR_OPTIONS.items():
        if getattr(args, name) is not None and args.executor not in executors:
            raise UsageError(
                f"{_option(name)} is an option of --executor {' or '.join(executors)}, "
                f"not of --executor {args.executor}"
            )
        if getattr(args, name) is None:
            setattr(args, name, DEFAULTS.get((args.executor, name), DEFAULTS.get(name)))
    if args.executor == "submitit" and args.gpus_per_run != int(args.gpus_per_run):
        raise UsageError(f"--gpus-per-run must be a whole number with --executor submitit, got {args.gpus_per_run}")
    if args.owed and not args.no_notebook:
        raise UsageError("--owed needs --no-notebook (a notebook runs all its figures)")
    if args.figure and not args.no_notebook:
        raise UsageError("--figure needs --no-notebook (a notebook runs all its figures)")
    if args.output and args.no_notebook:
        raise UsageError("--output is the folder of the executed notebook: it does nothing with --no-notebook")
    if args.figure and args.chapter == "all":
        raise UsageError("--figure needs one chapter, not all")
    if args.run and not args.no_notebook:
        raise UsageError("--run needs --no-notebook (a notebook runs all its figures)")
    if args.run and args.chapter == "all":
        raise UsageError("--run needs one chapter, not all (a pattern that matched no run would stop the sweep midway)")
    needed = PACKAGES.get(args.executor) or (None if args.no_notebook else "papermill")
    if needed and importlib.util.find_spec(needed) is None:
        why, alt = (
            (f"--executor {args.executor}", "")
            if args.no_notebook
            else ("running the notebook", ", or add --no-notebook")
        )
        raise UsageError(f"{why} needs the {needed} package, which is not installed (pip install {needed}{alt})")
    from .experiments import chapter_module, chapters

    known = chapters()
    if args.chapter != "all" and args.chapter not in known:
        raise UsageError(f"unknown chapter {args.chapter!r}; chapters: {', '.join(sorted(known))}, or all")
    if args.figure:
        figures = chapter_module(args.chapter).FIGURES
        for fig in args.figure:
            if fig not in figures:
                raise UsageError(f"chapter {args.chapter!r} has no figure {fig!r}; figures: {', '.join(figures)}")


def _matching(runs: list, patterns: list[str]) -> list:
    """The runs whose name (``LSTM-T100-s0``) matches one of the shell patterns ``patterns``, in their order; a
    pattern that matches none is a :class:`UsageError`."""
    from fnmatch import fnmatchcase

    for pat in patterns:
        if not any(fnmatchcase(r.name, pat) for r in runs):
            names = ", ".join(r.name for r in runs[:6]) + (", ..." if len(runs) > 6 else "")
            raise UsageError(f"--run {pat!r} matches no run of these figures; their runs: {names}")
    return [r for r in runs if any(fnmatchcase(r.name, pat) for pat in patterns)]


def _reproduce(args) -> int:
    _check_reproduce(args)
    from . import config, results
    from .experiments import chapter_module, chapters

    try:
        profile = config.resolve(args.profile, device=args.device, seed=args.seed)
    except (ValueError, TypeError) as err:
        raise UsageError(str(err)) from err
    results.pin_code()  # the code imported now, whatever is committed while the runs go on
    known = chapters()
    names = sorted(known) if args.chapter == "all" else [args.chapter]
    for name in names:
        start = time.perf_counter()
        if args.no_notebook:
            from .sweep import run_sweep

            module = chapter_module(name)
            figures = args.figure or list(module.FIGURES)
            if args.owed:  # what a replay build computes at quick scale: figures without all their full results
                from .status import figure_state

                figures = [f for f in figures if figure_state(module, f)["results"] is None]
                if not figures:
                    print(f"[{name}] every figure has its full results committed: nothing owed", flush=True)
                    continue
            # one sweep over every figure, in the module's order: an executor sees all missing runs at once
            runs = [run for fig in figures for run in module.FIGURES[fig](profile.scale)]
            runs = list({run.key: run for run in runs}.values())  # figures may share runs (lsc's Table I and Fig. 4)
            if args.run:
                runs = _matching(runs, args.run)
            run_sweep(runs, profile, force=args.force or None, executor=args.executor, **_executor_options(args))
            print(f"[{name}] {len(runs)} runs of {', '.join(figures)}: done", flush=True)
        else:
            import papermill

            root = results.repo_root() or Path.cwd()
            notebook = root / known[name]
            out_dir = Path(args.output or root / "_build" / "reproduce")
            out_dir.mkdir(parents=True, exist_ok=True)
            out = out_dir / f"{Path(notebook).stem}.{profile.name}.ipynb"
            os.environ["LSCNB_WIDGETS"] = "0"  # headless: explorers build no widget (lscnb.explore)
            papermill.execute_notebook(
                str(notebook),
                str(out),
                cwd=str(notebook.parent),
                parameters={"PROFILE": profile.name, "DEVICE": profile.device, "SEED": profile.seed},
                progress_bar=False,
            )
            print(f"[{name}] executed notebook kept at {out}")
        print(f"[{name}] finished in {time.perf_counter() - start:.0f} s", flush=True)
    return 0


def _executor_options(args) -> dict:
    if args.executor == "ray":
        opts = {"address": args.address, "cpus_per_run": args.cpus_per_run, "gpus_per_run": args.gpus_per_run}
        return opts
    if args.executor in ("processes", "batched"):
        return {"workers": args.workers, "threads_per_run": args.threads_per_run}
    if args.executor == "submitit":
        opts = {"folder": args.submitit_folder, "cluster": args.submitit_cluster}
        if args.slurm_partition:
            opts["slurm_partition"] = args.slurm_partition
        if args.gpus_per_run:
            opts["gpus_per_node"] = int(args.gpus_per_run)
        if args.timeout_min:
            opts["timeout_min"] = args.timeout_min
        return opts
    return {}


def _status(args) -> int:
    if args.root is not None and not Path(args.root).is_dir():
        raise UsageError(f"--root {args.root}: {'not a folder' if Path(args.root).exists() else 'no such folder'}")
    from . import results
    from .status import short_device

    rows = results.status(args.root)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    root = args.root or results.results_root()
    if not rows:
        print(f"no committed results under {root}")
        return 0
    print(f"committed results under {root}\n")
    head = (
        f"{'chapter':<14}{'figure':<16}{'runs':>5}{'failed':>7}  {'profile':<8}{'hardware':<32}{'last run':<21}commit"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        hardware = "; ".join(short_device(d) for d in r["devices"])  # every device of a figure's runs, each short
        print(
            f"{r['chapter']:<14}{r['figure']:<16}{r['runs']:>5}{r['failed']:>7}  {','.join(r['profiles']):<8}"
            f"{hardware:<31} {r['last'][:19]:<21}{','.join(r['commits'])}"
        )
    return 0


def _smoke(args) -> int:
    """Each figure's smoke runs, one line each with its time; exit 1 if any failed."""
    import traceback

    import torch

    from .experiments import chapter_module, chapters
    from .figures import run_smoke

    names = args.chapter or sorted(chapters())
    unknown = [n for n in names if n not in chapters()]
    if unknown:
        raise UsageError(f"unknown chapter {unknown[0]!r} (chapters: {', '.join(sorted(chapters()))})")
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    failed, total = [], 0.0
    for name in names:
        module = chapter_module(name)
        for figure in module.FIGURES:
            try:
                seconds = run_smoke(module, figure, device)
                total += seconds
                print(f"ok      {name}/{figure}  {seconds:.1f} s", flush=True)
            except Exception:  # noqa: BLE001 - report every figure, then fail
                failed.append(f"{name}/{figure}")
                print(f"FAILED  {name}/{figure}\n{traceback.format_exc()}", flush=True)
    print(f"{len(failed)} failed, {total:.0f} s on {device}" + (f": {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


def _plan(args) -> int:
    if args.json and args.items:
        raise UsageError("--json and --items are two outputs: choose one")
    if args.reread:
        try:
            json.loads(Path(args.reread).read_text())
        except (OSError, ValueError) as err:
            raise UsageError(f"--reread {args.reread}: not a readable plan ({type(err).__name__})") from None
    if args.chapter:
        from .experiments import chapters

        unknown = [n for n in args.chapter if n not in chapters()]
        if unknown:
            raise UsageError(f"unknown chapter {unknown[0]!r} (chapters: {', '.join(sorted(chapters()))})")
    import torch

    from . import plan

    if args.device and args.device.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError(f"--device {args.device}: no CUDA GPU is visible here (use --device cpu)")
    return plan.main(args)


def _add_reproduce(sub) -> None:
    """``reproduce``: run a chapter's experiments."""
    rep = sub.add_parser("reproduce", help="run a chapter's experiments (with papermill, or --no-notebook)")
    rep.add_argument("chapter", help="a chapter (module name under lscnb/experiments), or 'all'")
    rep.add_argument("--profile", default="full", choices=PROFILES)
    rep.add_argument("--device", default=None, help="torch device, e.g. cuda or cpu (default: cuda if present)")
    rep.add_argument("--seed", type=_count(0), default=0, help=SEED_HELP)
    rep.add_argument("--no-notebook", action="store_true", help="run the sweeps directly, without papermill")
    rep.add_argument("--figure", action="append", help="with --no-notebook: only these figures (repeatable)")
    rep.add_argument(
        "--run",
        action="append",
        metavar="PATTERN",
        help="with --no-notebook: only the runs whose name matches this shell pattern, e.g. 'LSTM-T*-s0' (repeatable)",
    )
    rep.add_argument("--force", action="store_true", help="recompute runs that are already stored")
    rep.add_argument(
        "--owed",
        action="store_true",
        help="with --no-notebook: only the figures whose full results are not all committed (those a replay "
        "build computes at quick scale: --profile quick --owed precomputes them in parallel)",
    )
    rep.add_argument("--output", default=None, help="folder for the executed notebook (default: _build/reproduce)")
    ex = rep.add_argument_group("executors (with --no-notebook)")
    ex.add_argument(
        "--executor",
        default="local",
        choices=("local", "batched", "processes", "ray", "submitit"),
        help="where runs execute: this process, this process with the runs that can train together batched "
        "(lscnb.batched), a pool of local processes, a Ray instance/cluster, or SLURM jobs via submitit",
    )
    ex.add_argument(
        "--workers",
        type=_count(1),
        help="processes: how many worker processes (default 2); batched: how many groups at once, each in a process "
        "of its own (default 1: one after another, in this process)",
    )
    ex.add_argument(
        "--threads-per-run", type=_count(1), help="processes, batched: torch threads per worker process (default 1)"
    )
    ex.add_argument(
        "--address", help="Ray: cluster address ('auto', 'ray://host:10001'); default starts a local instance"
    )
    ex.add_argument("--cpus-per-run", type=_amount(False), help="Ray: CPUs per run (default 1)")
    ex.add_argument(
        "--gpus-per-run",
        type=_amount(True),
        help="Ray: GPUs per run (fractions share a GPU); submitit: GPUs per job (default 0)",
    )
    ex.add_argument("--submitit-folder", help="submitit: logs and pickles (default _build/submitit)")
    ex.add_argument(
        "--submitit-cluster",
        choices=("slurm", "local", "debug"),
        help="submitit: where jobs run (default: SLURM when available)",
    )
    ex.add_argument("--slurm-partition", help="submitit: the SLURM partition")
    ex.add_argument("--timeout-min", type=_count(1), help="submitit: job time limit in minutes")
    rep.set_defaults(func=_reproduce)


def _add_status(sub) -> None:
    """``status``: the committed results and their provenance."""
    st = sub.add_parser("status", help="list committed results with their provenance")
    st.add_argument("--root", default=None, help="results folder (default: the checkout's results/)")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=_status)


def _add_smoke(sub) -> None:
    """``smoke``: every figure's full-profile code path, shrunk."""
    sm = sub.add_parser("smoke", help="run every figure's full-profile code path shrunk to seconds (a GPU's first job)")
    sm.add_argument("chapter", nargs="*", help="chapters (default: all)")
    sm.add_argument("--device", default=None, help="torch device (default: cuda if present)")
    sm.set_defaults(func=_smoke)


def _add_plan(sub) -> None:
    """``plan``: the owed figures, timed here, as commands."""
    pl = sub.add_parser(
        "plan",
        help="the figures still owing full runs, timed on this device, cheapest per paper item first, as commands",
    )
    pl.add_argument("chapter", nargs="*", help="chapters (default: all)")
    pl.add_argument("--device", type=_device, default=None, help="cpu or cuda (default: cuda if present)")
    pl.add_argument("--budget", type=_duration, default=None, help="plan at most this long, e.g. 40m, 1h30m, 90s")
    pl.add_argument("--chunk", type=_duration, default=540.0, help="longest command (default 9m)")
    pl.add_argument(
        "--cpu-limit", type=_duration, default=3600.0, help="on the CPU, longer figures are marked GPU (default 1h)"
    )
    pl.add_argument(
        "--max-calibration-s", type=_amount(False), default=5.0, help="seconds of timing per figure (default 5)"
    )
    pl.add_argument(
        "--recalibrate",
        action="store_true",
        help="time again instead of reading the cache (needed after a change of --max-calibration-s)",
    )
    pl.add_argument("--cache", default=None, help="calibration cache (default _build/plan-calibration-DEVICE.json)")
    pl.add_argument(
        "--reread",
        metavar="PLAN_JSON",
        default=None,
        help="re-read the timings of a committed plan made on this machine (results/plan-cpu.json) instead of timing "
        "the shapes it timed",
    )
    pl.add_argument("--json", action="store_true")
    pl.add_argument(
        "--items", action="store_true", help="print only the planned items, CHAPTER:FIG,FIG@DEVICE, for gpu-full.sh"
    )
    pl.set_defaults(func=_plan)


def main(argv=None) -> int:
    parser = _Parser(prog=PROG, description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_reproduce, _add_status, _add_smoke, _add_plan):
        add(sub)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as err:
        parser.error(str(err).splitlines()[0] if str(err) else "invalid arguments")


if __name__ == "__main__":
    sys.exit(main())
