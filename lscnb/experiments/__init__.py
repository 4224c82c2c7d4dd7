"""One module per chapter: its figures' sweeps (``FIGURES``: name -> ``build(scale)``) and figure functions.

``CHAPTERS`` maps a chapter's name (as used by ``python -m lscnb reproduce``) to its module and notebook.
"""
from __future__ import annotations

from importlib import import_module

CHAPTERS = {
    "gradients": ("lscnb.experiments.gradients", "book/gradients.ipynb"),
}


def chapter_module(name: str):
    """The experiments module of chapter ``name``."""
    if name not in CHAPTERS:
        raise ValueError(f"chapter must be one of {sorted(CHAPTERS)}, got {name!r}")
    return import_module(CHAPTERS[name][0])


def all_runs(name: str, scale: str) -> list:
    """Every run of every figure of chapter ``name`` at ``scale``."""
    module = chapter_module(name)
    return [run for build in module.FIGURES.values() for run in build(scale)]
