"""Command line: ``python -m lscnb reproduce CHAPTER --profile full`` and ``python -m lscnb status``."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import config, results
from .experiments import chapter_module, chapters


def _reproduce(args) -> int:
    profile = config.resolve(args.profile, device=args.device, seed=args.seed)
    if args.profile == "replay":
        raise SystemExit("reproduce computes results: use --profile quick or --profile full")
    if args.executor != "local" and not args.no_notebook:
        raise SystemExit("--executor ray/submitit runs sweeps directly: add --no-notebook")
    known = chapters()
    names = sorted(known) if args.chapter == "all" else [args.chapter]
    for name in names:
        if name not in known:
            raise SystemExit(f"unknown chapter {name!r}; chapters: {', '.join(sorted(known))}")
    for name in names:
        start = time.perf_counter()
        if args.no_notebook:
            from .sweep import run_sweep
            module = chapter_module(name)
            figures = args.figure or list(module.FIGURES)
            for fig in figures:
                if fig not in module.FIGURES:
                    raise SystemExit(f"chapter {name!r} has no figure {fig!r}; figures: {', '.join(module.FIGURES)}")
            # one sweep over every figure, in the module's order: an executor sees all missing runs at once
            runs = [run for fig in figures for run in module.FIGURES[fig](profile.scale)]
            run_sweep(runs, profile, force=args.force or None, executor=args.executor, **_executor_options(args))
            print(f"[{name}] {len(runs)} runs of {', '.join(figures)}: done", flush=True)
        else:
            import papermill

            root = results.repo_root() or Path.cwd()
            notebook = root / known[name]
            out_dir = Path(args.output or root / "_build" / "reproduce")
            out_dir.mkdir(parents=True, exist_ok=True)
            out = out_dir / f"{Path(notebook).stem}.{profile.name}.ipynb"
            papermill.execute_notebook(str(notebook), str(out), cwd=str(notebook.parent),
                                       parameters={"PROFILE": profile.name, "DEVICE": profile.device,
                                                   "SEED": profile.seed}, progress_bar=False)
            print(f"[{name}] executed notebook kept at {out}")
        print(f"[{name}] finished in {time.perf_counter() - start:.0f} s", flush=True)
    return 0


def _executor_options(args) -> dict:
    if args.executor == "ray":
        opts = {"address": args.address, "cpus_per_run": args.cpus_per_run, "gpus_per_run": args.gpus_per_run}
        return opts
    if args.executor == "processes":
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
    rows = results.status(args.root)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    root = args.root or results.results_root()
    if not rows:
        print(f"no committed results under {root}")
        return 0
    print(f"committed results under {root}\n")
    head = f"{'chapter':<14}{'figure':<16}{'runs':>5}{'failed':>7}  {'profile':<8}{'hardware':<32}{'last run':<21}commit"
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['chapter']:<14}{r['figure']:<16}{r['runs']:>5}{r['failed']:>7}  {','.join(r['profiles']):<8}"
              f"{'; '.join(r['devices'])[:31]:<32}{r['last'][:19]:<21}{','.join(r['commits'])}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lscnb", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("reproduce", help="run a chapter's experiments (with papermill, or --no-notebook)")
    rep.add_argument("chapter", help="a chapter (module name under lscnb/experiments), or 'all'")
    rep.add_argument("--profile", default="full", choices=config.PROFILES)
    rep.add_argument("--device", default=None, help="torch device, e.g. cuda or cpu (default: cuda if present)")
    rep.add_argument("--seed", type=int, default=0)
    rep.add_argument("--no-notebook", action="store_true", help="run the sweeps directly, without papermill")
    rep.add_argument("--figure", action="append", help="with --no-notebook: only these figures (repeatable)")
    rep.add_argument("--force", action="store_true", help="recompute runs that are already stored")
    rep.add_argument("--output", default=None, help="folder for the executed notebook")
    ex = rep.add_argument_group("executors (with --no-notebook)")
    ex.add_argument("--executor", default="local", choices=("local", "processes", "ray", "submitit"),
                    help="where runs execute: this process, a pool of local processes, a Ray instance/cluster, "
                         "or SLURM jobs via submitit")
    ex.add_argument("--workers", type=int, default=2, help="processes: how many worker processes")
    ex.add_argument("--threads-per-run", type=int, default=1, help="processes: torch threads per worker")
    ex.add_argument("--address", default=None, help="Ray: cluster address ('auto', 'ray://host:10001'); "
                                                    "default starts a local instance")
    ex.add_argument("--cpus-per-run", type=float, default=1, help="Ray: CPUs per run")
    ex.add_argument("--gpus-per-run", type=float, default=0, help="Ray: GPUs per run (fractions share a GPU); "
                                                                  "submitit: GPUs per job")
    ex.add_argument("--submitit-folder", default="_build/submitit", help="submitit: logs and pickles")
    ex.add_argument("--submitit-cluster", default=None, help="submitit: None (auto: SLURM), 'local' or 'debug'")
    ex.add_argument("--slurm-partition", default=None)
    ex.add_argument("--timeout-min", type=int, default=None, help="submitit: job time limit")
    rep.set_defaults(func=_reproduce)
    st = sub.add_parser("status", help="list committed results with their provenance")
    st.add_argument("--root", default=None, help="results folder (default: the checkout's results/)")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=_status)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
