"""One module per chapter: its figures' sweeps and figure functions.

A chapter module defines ``NOTEBOOK`` (its notebook's path from the repository root) and ``FIGURES``
(figure name -> :class:`lscnb.figures.Figure`, whose ``runs(scale)`` are that figure's runs). Chapters are
discovered from those attributes, so adding a chapter touches no shared file here.
"""

from __future__ import annotations

import pkgutil
from functools import lru_cache
from importlib import import_module


@lru_cache(maxsize=1)
def chapters() -> dict:
    """Chapter name -> notebook path, for every module of this package that defines ``NOTEBOOK``."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = import_module(f"{__name__}.{info.name}")
        if hasattr(module, "NOTEBOOK") and hasattr(module, "FIGURES"):
            found[info.name] = module.NOTEBOOK
    return found


def chapter_module(name: str):
    """The experiments module of chapter ``name``."""
    if name not in chapters():
        raise ValueError(f"chapter must be one of {sorted(chapters())}, got {name!r}")
    return import_module(f"{__name__}.{name}")
