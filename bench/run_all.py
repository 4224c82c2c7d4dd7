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
import scan
import spectra
import torch
from common import HERE

NOTE = """Ratios are measured within one run, against the baseline named in each table, so they are comparable
across machines; absolute times are not. The parallel scan does O(T log T) work: it is a GPU method and is not
expected to win on a few CPU cores."""


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = p.parse_args(argv)
    dev = ["--device", args.device]
    buf = io.StringIO()
    with redirect_stdout(buf):
        scan.main(dev)
        scan.main(dev + ["--backward"])
        spectra.main(dev)
        cells.main(dev)
        batched.main(dev)
    kind = torch.device(args.device).type
    text = (
        f"# Benchmarks on `{kind}`\n\nMade by `python bench/run_all.py --device {args.device}`.\n"
        f"{NOTE}\n\n{buf.getvalue()}"
    )
    (HERE / f"RESULTS-{kind}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
