"""Finding real data files offline: one search path and checksum check shared by every loader.

A loader asks for a file by its path relative to a data root (``mnist/train-images-idx3-ubyte.gz``) and its
sha256. Roots are searched in order: ``LSCNB_DATA``, the ``shared/data`` folder beside or inside the checkout,
the checkout's git-ignored ``data/`` folder (what a GPU run carries), and the user cache
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
    roots += [checkout.parent / "shared" / "data", checkout / "shared" / "data", checkout / "data", cache_dir()]
    return roots


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
