"""Result files with provenance: atomic save/load, one file pair per run, and a status listing.

A result is a JSON file (config, scalar metrics, provenance) beside an ``.npz`` of arrays. The JSON is written
last and atomically, so its presence marks a finished run: a killed sweep leaves no half-written result, and a
rerun skips every run whose JSON exists.

Committed full-scale results live in ``results/<chapter>/<figure>/`` at the repository root (override with
``LSCNB_RESULTS``); quick results go to a git-ignored cache (``LSCNB_CACHE``, default ``.lscnb_cache/``).
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import os
import platform
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from . import __version__
from .config import Profile, device_name

_PACKAGE_DIR = Path(__file__).resolve().parent
_KEY_PART = re.compile(r"^[A-Za-z0-9._=+-]+$")


def repo_root() -> Path | None:
    """The book's checkout (the folder holding ``_toc.yml``) when lscnb is imported from one, else None."""
    root = _PACKAGE_DIR.parent
    return root if (root / "_toc.yml").exists() else None


def results_root() -> Path:
    """Where committed full-scale results live."""
    env = os.environ.get("LSCNB_RESULTS")
    if env:
        return Path(env)
    root = repo_root()
    return (root if root is not None else Path.cwd()) / "results"


def cache_root() -> Path:
    """Where quick-scale results go (never committed)."""
    env = os.environ.get("LSCNB_CACHE")
    if env:
        return Path(env)
    root = repo_root()
    return (root / ".lscnb_cache") if root is not None else Path.home() / ".cache" / "lscnb"


def store_for(scale: str, chapter: str) -> Store:
    """The store a run of ``scale`` (``quick`` or ``full``) of ``chapter`` reads and writes."""
    if scale == "full":
        return Store(results_root() / chapter)
    if scale == "quick":
        return Store(cache_root() / "quick" / chapter)
    raise ValueError(f"scale must be 'quick' or 'full', got {scale!r}")


def git_commit() -> str:
    """``LSCNB_GIT_COMMIT`` if set (:func:`pin_code`), else the current commit (with ``+dirty`` when a tracked file
    outside ``results/`` has changed: the results a run rewrites say nothing about the code), or ``unknown``."""
    return os.environ.get("LSCNB_GIT_COMMIT") or _git_head()


def _git_head() -> str:
    root = repo_root() or Path.cwd()
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def code_digest() -> str:
    """A short hash of the ``lscnb`` package's source: it tells whether a stored result was made by the code
    now on disk (``git_commit`` cannot, for uncommitted edits); ``LSCNB_CODE_DIGEST`` if set (:func:`pin_code`)."""
    return os.environ.get("LSCNB_CODE_DIGEST") or _source_digest()


def pin_code() -> None:
    """Fix the commit and code digest this process records as they are now, for it and the workers it starts
    (``LSCNB_GIT_COMMIT``, ``LSCNB_CODE_DIGEST``, where not set): a sweep of hours records the code it imported, not
    a commit made while it ran."""
    os.environ.setdefault("LSCNB_GIT_COMMIT", git_commit())
    os.environ.setdefault("LSCNB_CODE_DIGEST", code_digest())


@functools.lru_cache(maxsize=1)
def _source_digest() -> str:
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def provenance(profile: Profile, *, seeds, wall_time_s: float, scale: str | None = None) -> dict:
    """How a result was made: profile, hardware, seeds, library versions, commit, date and wall time (a resumed run's
    counts the training its checkpoints carried from earlier processes: :func:`lscnb.train.carried_time`)."""
    return {
        "profile": profile.name,
        "scale": scale or profile.scale,
        "device": profile.device,
        "device_name": device_name(profile.device),
        "seeds": list(seeds) if isinstance(seeds, (list, tuple)) else [seeds],
        "lscnb": __version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "git_commit": git_commit(),
        "code": code_digest(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_time_s": round(float(wall_time_s), 3),
    }


@dataclass
class Result:
    """One run's result: its config, scalar metrics, arrays and provenance."""

    key: str
    config: dict
    metrics: dict = field(default_factory=dict)
    arrays: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)

    def __getitem__(self, name):
        if name in self.arrays:
            return self.arrays[name]
        if name in self.metrics:
            return self.metrics[name]
        raise KeyError(
            f"result {self.key!r} has no entry {name!r}; it has {sorted(self.arrays) + sorted(self.metrics)}"
        )

    def __contains__(self, name) -> bool:
        return name in self.arrays or name in self.metrics

    def get(self, name, default=None):
        return self[name] if name in self else default  # noqa: SIM401 (this is the mapping's own get)


def split_outputs(outputs: dict) -> tuple[dict, dict]:
    """Split a run's outputs into JSON metrics and numpy arrays (tensors become arrays)."""
    metrics, arrays = {}, {}
    for name, value in outputs.items():
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().numpy()
        if isinstance(value, np.ndarray):
            arrays[name] = value
        elif isinstance(value, np.generic):
            metrics[name] = value.item()
        else:
            metrics[name] = value
    json.dumps(metrics, default=_json_default)  # fail early, at the run, on what cannot be stored
    return metrics, arrays


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, tuple)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(
        f"cannot store {type(value).__name__} in a result's JSON: return numbers, strings, lists, dicts or arrays"
    )


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class Store:
    """A folder of results keyed by ``figure/run-name-hash`` strings."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    def _base(self, key: str) -> Path:
        parts = key.split("/")
        if not key or any(not _KEY_PART.match(p) or p in (".", "..") for p in parts):
            raise ValueError(f"key must be '/'-separated parts of letters, digits and ._=+-, got {key!r}")
        return self.root.joinpath(*parts)

    def _path(self, key: str, suffix: str) -> Path:
        base = self._base(key)
        return base.with_name(base.name + suffix)  # not with_suffix: run names hold dots ("g1.5")

    def json_path(self, key: str) -> Path:
        return self._path(key, ".json")

    def npz_path(self, key: str) -> Path:
        return self._path(key, ".npz")

    def checkpoint_path(self, key: str) -> Path:
        """Where a long run keeps its checkpoint (git-ignored; removed when the run finishes)."""
        return self._path(key, ".ckpt")

    def orphaned_checkpoints(self) -> list[Path]:
        """Checkpoints nothing will resume from: a run's whose run is stored, and a group's
        (``<first run>.group-<hash>.ckpt``, :func:`lscnb.executors.group_checkpoint`) whose first run is stored, as a
        sweep forms its groups from missing runs only (a group cut short whose runs then ran another way)."""
        if not self.root.is_dir():
            return []
        return [
            p
            for p in self.root.rglob("*.ckpt")
            if p.with_name(p.name.removesuffix(".ckpt").split(".group-")[0] + ".json").exists()
        ]

    def has(self, key: str) -> bool:
        return self.json_path(key).exists()

    def save(self, result: Result) -> Path:
        """Write the arrays, then the JSON (the marker of a finished run), each atomically."""
        if result.arrays:
            arrays = {k: np.asarray(v) for k, v in result.arrays.items()}
            _atomic_write(self.npz_path(result.key), lambda fh: np.savez_compressed(fh, **arrays))
        doc = {
            "key": result.key,
            "config": result.config,
            "metrics": result.metrics,
            "arrays": sorted(result.arrays),
            "provenance": result.provenance,
        }
        text = json.dumps(doc, indent=1, sort_keys=True, default=_json_default).encode()
        _atomic_write(self.json_path(result.key), lambda fh: fh.write(text))
        failed = self.failure_path(result.key)
        if failed.exists():
            failed.unlink()
        return self.json_path(result.key)

    def load(self, key: str) -> Result:
        path = self.json_path(key)
        if not path.exists():
            raise FileNotFoundError(f"no result {key!r} in {self.root}")
        doc = json.loads(path.read_text())
        arrays = {}
        if doc.get("arrays"):
            with np.load(self.npz_path(key)) as npz:
                arrays = {name: npz[name] for name in npz.files}
        return Result(doc["key"], doc["config"], doc.get("metrics", {}), arrays, doc.get("provenance", {}))

    def failure_path(self, key: str) -> Path:
        return self._path(key, ".failed.json")

    def save_failure(self, key: str, config: dict, error: str) -> None:
        """Record a run that raised, with its traceback; a rerun tries it again."""
        doc = {
            "key": key,
            "config": config,
            "error": error,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        text = json.dumps(doc, indent=1, default=_json_default).encode()
        _atomic_write(self.failure_path(key), lambda fh: fh.write(text))

    def keys(self) -> Iterator[str]:
        """Every finished run's key under this store."""
        if not self.root.exists():
            return
        for path in sorted(self.root.rglob("*.json")):
            if path.name.endswith(".failed.json"):
                continue
            yield path.relative_to(self.root).as_posix()[: -len(".json")]


def _empty_row(chapter: str, figure: str) -> dict:
    return {
        "chapter": chapter,
        "figure": figure,
        "runs": 0,
        "profiles": set(),
        "devices": set(),
        "commits": set(),
        "dates": [],
        "wall_time_s": 0.0,
        "failed": 0,
    }


def status(root: str | os.PathLike | None = None) -> list[dict]:
    """One row per (chapter, figure) of committed results: runs, profiles, hardware, dates and commits."""
    root = Path(root) if root is not None else results_root()
    rows: dict[tuple, dict] = {}
    if not root.exists():
        return []
    for chapter_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        store = Store(chapter_dir)
        for key in store.keys():
            figure = key.split("/")[0]
            prov = json.loads(store.json_path(key).read_text()).get("provenance", {})
            row = rows.setdefault((chapter_dir.name, figure), _empty_row(chapter_dir.name, figure))
            row["runs"] += 1
            row["profiles"].add(prov.get("profile", "?"))
            row["devices"].add(prov.get("device_name", "?"))
            row["commits"].add(str(prov.get("git_commit", "?"))[:12])
            row["dates"].append(prov.get("date", "?"))
            row["wall_time_s"] += float(prov.get("wall_time_s", 0.0))
        for failed in chapter_dir.rglob("*.failed.json"):
            figure = failed.relative_to(chapter_dir).parts[0]
            row = rows.setdefault((chapter_dir.name, figure), _empty_row(chapter_dir.name, figure))
            row["failed"] += 1
    out = []
    for row in rows.values():
        dates = sorted(d for d in row.pop("dates") if d != "?")
        row["first"] = dates[0] if dates else "?"
        row["last"] = dates[-1] if dates else "?"
        for name in ("profiles", "devices", "commits"):
            row[name] = sorted(row[name])
        out.append(row)
    return out
