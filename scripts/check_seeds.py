"""Run chapters in the quick profile at several seeds (papermill, one run per core) and list every failing assert.

Called by scripts/check-seeds.sh; see ``--help``. Each run's executed notebook is kept under ``--out``; the
summary names, for each failing run, the cell's first line and the error (an assert's message or expression).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
NOT_CHAPTERS = {"status", "performance"}


def chapters() -> list[str]:
    return sorted(p.stem for p in BOOK.glob("*.ipynb") if p.stem not in NOT_CHAPTERS)


def default_jobs(threads: list[int], cores: int) -> int:
    """Runs at once that keep every run's threads on cores of their own: ``cores // max(threads)``, at least 1."""
    return max(1, cores // max(threads))


def failure(notebook: Path) -> str:
    """The first error of an executed notebook, as 'cell N (first line): ErrorName: message', or ''."""
    if not notebook.exists():
        return "no executed notebook was written"
    nb = json.loads(notebook.read_text())
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                src = "".join(cell["source"]).strip().splitlines() or [""]
                line = next((ln.strip() for ln in reversed(out.get("traceback", [])) if "assert" in ln), "")
                where = _plain(line).strip() if line else ""
                return f"cell {i} ({src[0][:70]}): {out['ename']}: {out['evalue'][:300]} {where[:200]}".strip()
    return ""


def _plain(text: str) -> str:
    """The last line of a traceback entry, without its ANSI colour codes."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines()[-1] if text else ""


def run_one(chapter: str, seed: int, threads: int, out: Path, timeout: int) -> tuple[str, int, int, str, float]:
    target = out / f"{chapter}.seed{seed}.threads{threads}.ipynb"
    env = {
        **os.environ,
        "LSCNB_PROFILE": "quick",
        "LSCNB_THREADS": str(threads),
        "OMP_NUM_THREADS": str(threads),
        "MPLBACKEND": "Agg",
        "LSCNB_WIDGETS": "0",
        # the kernel runs in book/: make it import this checkout's lscnb, not whichever one is pip-installed
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    cmd = [
        sys.executable,
        "-m",
        "papermill",
        str(BOOK / f"{chapter}.ipynb"),
        str(target),
        "-p",
        "PROFILE",
        "quick",
        "-p",
        "SEED",
        str(seed),
        "--cwd",
        str(BOOK),
        "--no-progress-bar",
        "--execution-timeout",
        str(timeout),
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    why = failure(target) if proc.returncode else ""
    if proc.returncode and not why:
        why = (proc.stderr.strip().splitlines() or ["papermill failed"])[-1][:300]
    return chapter, seed, threads, why, took


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/check-seeds.sh", description=__doc__)
    parser.add_argument("chapters", nargs="*", help=f"chapters to run (default: all: {', '.join(chapters())})")
    parser.add_argument("--seeds", default="1,2,3,4", help="comma-separated seeds (default 1,2,3,4)")
    parser.add_argument("--threads", default="1", help="comma-separated torch thread counts (default 1)")
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="runs at once (default: the cores over the most threads a run uses; more oversubscribes them, and "
        "two 2-thread runs at once on 2 cores took over 6 times as long as one after the other)",
    )
    parser.add_argument("--out", default=str(ROOT / "_build" / "check-seeds"), help="folder for executed notebooks")
    parser.add_argument("--timeout", type=int, default=900, help="seconds a cell may run")
    args = parser.parse_args(argv)
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        threads = [int(t) for t in args.threads.split(",") if t.strip()]
    except ValueError:
        parser.error("--seeds and --threads take comma-separated integers")
    if not seeds or not threads:
        parser.error("--seeds and --threads need at least one value each")
    if any(s < 0 for s in seeds) or any(t < 1 for t in threads) or (args.jobs is not None and args.jobs < 1):
        parser.error("seeds must be >= 0, threads and --jobs >= 1")
    if args.jobs is None:
        args.jobs = default_jobs(threads, os.cpu_count() or 1)
    names = args.chapters or chapters()
    unknown = sorted(set(names) - set(chapters()))
    if unknown:
        parser.error(f"unknown chapter(s) {', '.join(unknown)}; chapters: {', '.join(chapters())}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(c, s, t) for t in threads for s in seeds for c in names]
    failed = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for chapter, seed, nthreads, why, took in pool.map(lambda j: run_one(*j, out, args.timeout), jobs):
            failed += bool(why)
            print(
                f"{'FAIL' if why else 'ok  '} {chapter:<11} seed {seed} threads {nthreads} {took:6.0f} s"
                + (f"  {why}" if why else ""),
                flush=True,
            )
    print(f"check-seeds: {len(jobs) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
