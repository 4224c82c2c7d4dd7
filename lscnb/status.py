"""The reproduction status of the book: for every figure and table of every source paper, the chapter figure that
reproduces it, the profile and hardware of its committed result, the data, and the gap to the paper's number.

It reads the figure registry (:mod:`lscnb.figures`): each chapter's ``FIGURES`` and their paper items, and the
items in ``NOT_RUN`` that nothing reproduces.
"""

from __future__ import annotations

from .experiments import chapter_module, chapters
from .figures import Item, items
from .results import store_for
from .sweep import Collected


def figure_state(module, figure: str) -> dict:
    """Which committed full-scale runs of ``figure`` exist, and how they were made."""
    runs = module.FIGURES[figure]("full")
    store = store_for("full", runs[0].chapter)
    present = [r for r in runs if store.has(r.key)]
    state = {"runs": len(runs), "present": len(present), "devices": [], "dates": [], "results": None}
    if present:
        loaded = [store.load(r.key) for r in present]
        state["devices"] = sorted({r.provenance.get("device_name", "?") for r in loaded})
        state["dates"] = sorted({str(r.provenance.get("date", "?"))[:10] for r in loaded})
        if len(present) == len(runs):
            state["results"] = loaded
    return state


def rows(chapter_names=None) -> list[dict]:
    """One row per source figure or table of every chapter (its registered paper items)."""
    return [row for name in chapter_names or sorted(chapters()) for row in chapter_rows(name, chapter_module(name))]


def chapter_rows(name: str, module) -> list[dict]:
    """The rows of one chapter's ``module``: its paper items, each classified by its figure's committed runs."""
    out = []
    for item, figure in items(module):
        row = {"chapter": name, "source": item.source, "what": item.what, "data": item.data, "note": item.note}
        row["figure"] = figure or "—"
        if figure is None:
            row["status"], row["hardware"], row["gap"] = "not reproduced", "—", "—"
        else:
            st = figure_state(module, figure)
            if st["results"] is not None:
                row["status"] = f"paper scale ({st['dates'][-1]})"
            elif st["present"]:
                row["status"] = f"full run partial ({st['present']}/{st['runs']} runs); quick in the book"
            else:
                row["status"] = "quick scale only (full run owed)"
            row["hardware"] = ", ".join(st["devices"]) or "—"
            row["gap"] = _gap(name, figure, item, st)
        out.append(row)
    return out


def _gap(name: str, figure: str, item: Item, st: dict) -> str:
    """The item's gap to the paper, computed from the committed full results (``—`` without them)."""
    if item.gap is None or st["results"] is None:
        return "—"
    first = st["results"][0]
    col = Collected(
        name, figure, "replay", "full", st["results"], first.provenance.get("device_name", "?"), 0, st["runs"]
    )
    try:
        return str(item.gap(col))
    except Exception as err:  # noqa: BLE001 - a status page must not die on one gap
        return f"(gap not computable: {type(err).__name__})"


def summary(table: list[dict]) -> dict:
    """Counts of rows by status class."""
    counts = {"paper scale": 0, "partial": 0, "quick only": 0, "not reproduced": 0}
    for r in table:
        s = r["status"]
        key = (
            "paper scale"
            if s.startswith("paper")
            else "partial"
            if "partial" in s
            else "quick only"
            if s.startswith("quick")
            else "not reproduced"
        )
        counts[key] += 1
    return counts


def markdown(table: list[dict]) -> str:
    """The status table as Markdown, one section per chapter."""
    from .plot import table as md_table

    text, chapters_seen = [], []
    for r in table:
        if r["chapter"] not in chapters_seen:
            chapters_seen.append(r["chapter"])
    for ch in chapters_seen:
        part = [r for r in table if r["chapter"] == ch]
        text.append(
            f"### `{ch}`\n\n"
            + md_table(part, ["source", "what", "figure", "status", "hardware", "data", "gap", "note"])
        )
    return "\n".join(text)
