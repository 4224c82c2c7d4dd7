"""Print the mutation score per module from mutmut's records (mutants/**/*.py.meta), for scripts/mutation.sh.

Score = caught / (caught + survived + no tests), where caught = killed by a test, or a timeout or crash (a test run that
hangs or dies fails CI just the same); mutants not checked yet and those listed as equivalent in tests/MUTANTS.md
(one line each: `- mutant.name__mutmut_N: why`) are left out, and so are whole modules listed there as not checkable
on this machine (`- module lscnb.name: why`) and mutants that only a GPU can show (`- gpu mutant.name__mutmut_N: the
CUDA-only test that kills it`), counted apart until a GPU run checks them. A GPU-only mutant that a GPU window ran its
test against (`- gpu-killed mutant.name__mutmut_N: the test, where and when`) counts as killed.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KILLED = {1, 3, 37, 36, 24, -24, 152, 255, -9, -11}  # killed, type check, timeouts, crashes


def _listed() -> str:
    path = ROOT / "tests" / "MUTANTS.md"
    return path.read_text() if path.exists() else ""


def equivalent() -> set[str]:
    return set(re.findall(r"^- `?([\w.ǁ]+__mutmut_\d+)`?:", _listed(), flags=re.MULTILINE))


def gpu_only() -> set[str]:
    return set(re.findall(r"^- gpu `?([\w.ǁ]+__mutmut_\d+)`?:", _listed(), flags=re.MULTILINE))


def gpu_killed() -> set[str]:
    return set(re.findall(r"^- gpu-killed `?([\w.ǁ]+__mutmut_\d+)`?:", _listed(), flags=re.MULTILINE))


def excluded_modules() -> set[str]:
    return set(re.findall(r"^- module `?([\w.]+)`?:", _listed(), flags=re.MULTILINE))


def main(prefix: str = "") -> int:
    skip, gpu, excluded, gpu_dead = equivalent(), gpu_only(), excluded_modules(), gpu_killed()
    by_module: dict[str, Counter] = defaultdict(Counter)
    for meta in sorted((ROOT / "mutants").rglob("*.py.meta")):
        module = str(meta.relative_to(ROOT / "mutants"))[: -len(".py.meta")].replace("/", ".")
        if not module.startswith(prefix) or module in excluded:
            continue
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            kind = (
                "equivalent"
                if name in skip
                else "killed"
                if name in gpu_dead
                else "gpu"
                if name in gpu and code not in KILLED
                else "unchecked"
                if code is None
                else "killed"
                if code in KILLED
                else "survived"
            )
            by_module[module][kind] += 1
    if not by_module:
        print("no mutmut records yet: run scripts/mutation.sh")
        return 1
    total = Counter()
    print(f"{'module':<40}{'killed':>8}{'survived':>10}{'equiv.':>8}{'GPU':>5}{'unchecked':>11}{'score':>8}")
    for module, c in sorted(by_module.items()):
        total.update(c)
        print(f"{module:<40}{_row(c)}")
    print(f"{'all':<40}{_row(total)}")
    return 0


def _row(c: Counter) -> str:
    return f"{c['killed']:>8}{c['survived']:>10}{c['equivalent']:>8}{c['gpu']:>5}{c['unchecked']:>11}{_score(c):>8}"


def _score(c: Counter) -> str:
    done = c["killed"] + c["survived"]
    return f"{100 * c['killed'] / done:.1f}%" if done else "—"


if __name__ == "__main__":
    sys.exit(main(*(sys.argv[1:2])))
