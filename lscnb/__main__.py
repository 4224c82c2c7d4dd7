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
                run_sweep(module.FIGURES[fig](profile.scale), profile, force=args.force or None)
                print(f"[{name}] {fig}: done ({time.perf_counter() - start:.0f} s)", flush=True)
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
    rep.set_defaults(func=_reproduce)
    st = sub.add_parser("status", help="list committed results with their provenance")
    st.add_argument("--root", default=None, help="results folder (default: the checkout's results/)")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=_status)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
