#!/usr/bin/env bash
# Execute each chapter's explorer cell headless, N times per engine (papermill, nbclient), one run at a time, each
# with a wall-clock limit, and count the runs that finished: a headless run must never wait on a widget.
# The small notebook per chapter holds the chapter's parameters cell, the statements of earlier cells that the
# explorer cell needs (imports and definitions, found by name from the chapter itself) and the explorer cell.
#   scripts/check-explorers.sh                      # every chapter with an explorer, 30 runs per engine
#   scripts/check-explorers.sh -n 5 --timeout 60 roarnn
#   scripts/check-explorers.sh --engines papermill /tmp/old/roarnn.ipynb   # any notebook with an explorer cell
# The kernels import this checkout's lscnb (PYTHONPATH). LSCNB_WIDGETS is left as it is (unset: detection alone).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-env.sh
export PYTHONPATH="$(pwd)${PYTHONPATH:+:$PYTHONPATH}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" LSCNB_THREADS="${LSCNB_THREADS:-1}"
exec python - "$@" <<'PY'
"""check-explorers: build, then execute headless, a small notebook per chapter explorer."""
import argparse
import ast
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager

ROOT = Path.cwd()
BOOK = ROOT / "book"
MARKERS = ("explore.explorer(", "widgets.interact(")  # the second finds the explorers of older checkouts
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
NBCLIENT = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
try:
    NotebookClient(nb, timeout=int(sys.argv[4]), kernel_name="python3",
                   resources={"metadata": {"path": sys.argv[3]}}).execute()
finally:
    nbformat.write(nb, sys.argv[2])
"""


def names(node):
    """(defined, used) names of a top-level statement; over-approximate, never under."""
    defined, used = set(), set()
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}, set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        defined.add(node.name)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (defined if isinstance(sub.ctx, ast.Store) else used).add(sub.id)
    return defined, used


def statements(source):
    code = TransformerManager().transform_cell(source)
    tree = ast.parse(code)
    return [(ast.get_source_segment(code, s), *names(s)) for s in tree.body]


def explorer_notebook(path: Path):
    """The chapter's parameters cell, the earlier statements the explorer cell needs, and the explorer cell."""
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    at = [i for i, c in enumerate(code) if any(m in c.source for m in MARKERS)]
    if not at:
        return None
    cell = code[at[-1]]
    params = next((c for c in code if "parameters" in c.metadata.get("tags", [])), None)
    given = set().union(*(d for _, d, _ in statements(params.source))) if params else set()
    needed = set().union(*(u for _, _, u in statements(cell.source))) - given
    for _, d, u in statements(cell.source):
        needed -= d
    picked = []
    for c in reversed(code[:at[-1]]):
        if c is params:
            continue
        for src, defined, used in reversed(statements(c.source)):
            if defined & needed:
                picked.append(src)
                needed = (needed - defined) | (used - given)
    out = nbformat.v4.new_notebook(metadata=nb.metadata)
    if params:
        out.cells.append(nbformat.v4.new_code_cell(params.source, metadata={"tags": ["parameters"]}))
    out.cells.append(nbformat.v4.new_code_cell("\n".join(reversed(picked))))
    out.cells.append(nbformat.v4.new_code_cell(cell.source))
    return out


def run(cmd, limit):
    """Run ``cmd`` in its own process group, killed after ``limit`` s; (finished, seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return False, time.perf_counter() - start, f"still running after {limit} s (killed)"
    why = "" if proc.returncode == 0 else (err.strip().splitlines() or ["failed"])[-1][:200]
    return proc.returncode == 0, time.perf_counter() - start, why


def widgets_in(path: Path) -> int:
    nb = nbformat.read(path, as_version=4)
    return sum(WIDGET_MIME in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)


def main():
    parser = argparse.ArgumentParser(prog="scripts/check-explorers.sh", description=__doc__)
    parser.add_argument("targets", nargs="*", help="chapters or notebook paths (default: every book/ notebook "
                                                   "with an explorer cell)")
    parser.add_argument("-n", "--runs", type=int, default=30, help="runs per chapter and engine (default 30)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds one run may take (default 120)")
    parser.add_argument("--engines", default="papermill,nbclient", help="comma-separated: papermill, nbclient")
    parser.add_argument("--out", default=str(ROOT / "_build" / "check-explorers"), help="folder for notebooks")
    args = parser.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if args.runs < 1 or args.timeout < 1:
        parser.error("--runs and --timeout must be positive")
    if not engines or set(engines) - {"papermill", "nbclient"}:
        parser.error(f"--engines takes papermill and/or nbclient, got {args.engines!r}")
    paths = [Path(t) if t.endswith(".ipynb") else BOOK / f"{t}.ipynb" for t in args.targets] \
        or sorted(BOOK.glob("*.ipynb"))
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    total = failed = 0
    for path in paths:
        nb = explorer_notebook(path)
        if nb is None:
            if args.targets:
                parser.error(f"{path} has no explorer cell")
            continue
        small = out / f"{path.stem}.explorer.ipynb"
        nbformat.write(nb, small)
        line = [f"{path.stem:<11}"]
        for engine in engines:
            ok, times, whys = 0, [], []
            for i in range(1, args.runs + 1):
                done = out / f"{path.stem}.{engine}.{i}.ipynb"
                if engine == "papermill":
                    cmd = [sys.executable, "-m", "papermill", str(small), str(done), "-p", "SEED", str(i),
                           "--cwd", str(path.parent), "--no-progress-bar", "--execution-timeout",
                           str(args.timeout), "--kernel", "python3"]
                else:
                    cmd = [sys.executable, "-c", NBCLIENT, str(small), str(done), str(path.parent),
                           str(args.timeout)]
                finished, took, why = run(cmd, args.timeout)
                if finished and widgets_in(done):
                    finished, why = False, "a widget was created"
                ok += finished
                times.append(took)
                if why:
                    whys.append(f"run {i}: {why}")
                if finished:
                    done.unlink()  # keep only the runs that did not finish
            total += args.runs
            failed += args.runs - ok
            line.append(f"{engine} {ok}/{args.runs} finished (median {statistics.median(times):.1f} s, "
                        f"max {max(times):.1f} s)")
            for why in whys[:3]:
                line.append(f"\n    {engine} {why}")
        print("  ".join(line), flush=True)
    print(f"check-explorers: {total - failed} of {total} runs finished, {failed} did not")
    return 1 if failed else 0


sys.exit(main())
PY
