"""The package installs like a library: a lean core, the rest in extras, and no package index named anywhere."""

import re
import subprocess
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
CORE = {"torch", "numpy", "scipy", "matplotlib", "tqdm", "ipywidgets", "scikit-learn"}
EXTRAS_ONLY = ("ray", "submitit", "playwright", "triton", "jupyter_book", "pytest", "papermill", "mlxtend", "nbval")


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower()


def test_core_dependencies_are_the_lean_set_and_extras_carry_the_rest():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert {_name(r) for r in project["dependencies"]} == CORE
    extras = project["optional-dependencies"]
    assert set(extras) >= {"book", "test", "browser", "cluster", "gpu", "data"}
    assert not CORE & {_name(r) for reqs in extras.values() for r in reqs}
    lines = [
        ln.strip()
        for ln in (ROOT / "requirements.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert lines == ["-e .[" + ",".join(["book", "test", "browser", "cluster", "gpu", "data"]) + "]"]


def test_importing_lscnb_and_every_chapter_needs_no_extra():
    """Block every extra's import: lscnb, its chapters' modules and the CLI's help must still load."""
    blocked = ",".join(repr(m) for m in EXTRAS_ONLY)
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        f"    def find_spec(self, name, path, target=None):\n"
        f"        if name.split('.')[0] in ({blocked},):\n"
        "            raise ImportError('blocked extra: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import lscnb, lscnb.status\n"
        "from lscnb.experiments import chapter_module, chapters\n"
        "for name in chapters(): chapter_module(name)\n"
        "from lscnb.__main__ import main\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_no_package_index_is_named_in_the_tree():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    if not tracked:
        import pytest

        pytest.skip("not a git checkout")
    pattern = re.compile(
        r"index-url|pypi\.org|pythonhosted|download\.pytorch\.org|/simple/?\b|--find-links", re.IGNORECASE
    )
    offenders = []
    for rel in tracked:
        path = ROOT / rel
        if rel == "tests/test_packaging.py" or path.suffix in {".npz", ".png", ".gz"} or not path.is_file():
            continue
        text = path.read_text(errors="ignore")
        offenders += [f"{rel}: {m.group(0)}" for m in pattern.finditer(text)]
    assert not offenders, offenders
