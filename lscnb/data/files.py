"""Finding real data files offline: one search path and checksum check shared by every loader.

A loader asks for a file by its path relative to a data root (``mnist/train-images-idx3-ubyte.gz``) and its
sha256. Roots are searched in order: ``LSCNB_DATA``, the ``shared/data`` folder beside or inside the checkout
(for a ``git worktree``, also beside the main checkout), the checkout's git-ignored ``data/`` folder (what a GPU run
carries), and the user cache
(``~/.cache/lscnb``, where downloads land). A file whose checksum does not match is an error, not a silent miss.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def data_roots() -> list[Path]:
    """Folders searched for data files, first match wins."""
    roots = []
    env = os.environ.get("LSCNB_DATA")
    if env:
        roots.append(Path(env))
    checkout = _PACKAGE_DIR.parent
    roots += [checkout.parent / "shared" / "data", checkout / "shared" / "data"]
    main = main_checkout(checkout)
    if main is not None and main != checkout:
        roots.append(main.parent / "shared" / "data")
    roots += [checkout / "data", cache_dir()]
    return roots


def main_checkout(checkout: Path) -> Path | None:
    """The main working tree of the repository that ``checkout`` belongs to, read from a worktree's ``.git``
    file (``gitdir: <main>/.git/worktrees/<name>``); ``checkout`` itself for a plain clone, None outside git."""
    dot_git = checkout / ".git"
    if dot_git.is_dir():
        return checkout
    try:
        line = dot_git.read_text().strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    gitdir = Path(line.split(":", 1)[1].strip())
    if not gitdir.is_absolute():
        gitdir = (checkout / gitdir).resolve()
    if gitdir.parent.name == "worktrees" and gitdir.parent.parent.name == ".git":
        return gitdir.parent.parent.parent
    return None


def cache_dir() -> Path:
    """Where downloaded data is kept."""
    return Path(os.environ.get("LSCNB_DATA_CACHE", Path.home() / ".cache" / "lscnb"))


def sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ChecksumError(RuntimeError):
    """A data file exists but is not the file its loader expects."""


def find(relpath: str, sha: str | None = None) -> Path | None:
    """The first ``root/relpath`` that exists (checked against ``sha`` when given), or None."""
    for root in data_roots():
        path = root / relpath
        if path.is_file():
            if sha is not None and sha256(path) != sha:
                raise ChecksumError(f"{path} has sha256 {sha256(path)}, expected {sha}: remove or replace it")
            return path
    return None


def shown(path: str | os.PathLike) -> str:
    """``path`` as a caption or a stored result names it: under the data root it was found in, that root as a reader
    knows it (``shared/data/mnist``, ``data/esbn_objects``, ``$LSCNB_DATA/...``, ``~/.cache/lscnb/...``), so no
    machine's absolute path reaches the book."""
    path = Path(path)
    for root in data_roots():
        if path.is_relative_to(root):
            rel = path.relative_to(root).as_posix()
            return f"{_root_name(root)}/{rel}" if rel != "." else _root_name(root)
    return path.name


def _root_name(root: Path) -> str:
    env = os.environ.get("LSCNB_DATA")
    if env and root == Path(env):
        return "$LSCNB_DATA"
    if root.parts[-2:] == ("shared", "data"):
        return "shared/data"
    if root == _PACKAGE_DIR.parent / "data":
        return "data"
    if root == cache_dir():
        home = Path.home()
        return "~/" + root.relative_to(home).as_posix() if root.is_relative_to(home) else "$LSCNB_DATA_CACHE"
    return root.name
