"""Run every benchmark for one device and write their tables to bench/RESULTS-<device>.md.

python bench/run_all.py --device cuda          # on a GPU machine (the issue's shapes)
python bench/run_all.py --device cpu           # CPU sizes (smaller T and channels)
"""

from __future__ import annotations

import argparse
import io
from contextlib import redirect_stdout

import batched
import cells
import encoder
import optimizer_step
import relational
import scan
import spectra
import torch
import twins
from common import HERE

NOTE = """Ratios are measured within one run, against the baseline named in each table, so they are comparable
across machines; absolute times are not. The parallel scan does O(T log T) work: it is a GPU method and is not
expected to win on a few CPU cores."""


TABLES = ("fwd", "fwd+bwd", "spectra", "cells", "batched", "relational", "encoder", "optimizer", "twins")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--tables", default=",".join(TABLES), help=f"comma-separated, of {', '.join(TABLES)} (default all)")
    args = p.parse_args(argv)
    tables = args.tables.split(",")
    if bad := [t for t in tables if t not in TABLES]:
        p.error(f"--tables: unknown {', '.join(bad)} (choose from {', '.join(TABLES)})")
    dev = ["--device", args.device]
    kind = torch.device(args.device).type
    head = f"# Benchmarks on `{kind}`\n\nMade by `python bench/run_all.py --device {args.device}`.\n{NOTE}\n\n"
    benches = {
        "fwd": lambda: scan.main(dev),
        "fwd+bwd": lambda: scan.main(dev + ["--backward"]),
        "spectra": lambda: spectra.main(dev),
        "cells": lambda: cells.main(dev),
        "batched": lambda: batched.main(dev),
        "relational": lambda: relational.main(dev),
        "encoder": lambda: encoder.main(dev),
        "optimizer": lambda: optimizer_step.main(dev),
        "twins": lambda: twins.main(dev),
    }
    buf = io.StringIO()
    for bench in (
        benches[t] for t in TABLES if t in tables
    ):  # the file is rewritten after each table, so a run cut short keeps what finished
        with redirect_stdout(buf):
            bench()
        (HERE / f"RESULTS-{kind}.md").write_text(head + buf.getvalue())
    print(head + buf.getvalue())


if __name__ == "__main__":
    main()
