"""The reproduction status of the book: for every figure and table of every source paper, the chapter figure that
reproduces it, the profile and hardware of its committed result, the data, and the gap to the paper's number.

It reads the figure registry (:mod:`lscnb.figures`): each chapter's ``FIGURES`` and their paper items, the items in
``WITHOUT_RUNS`` that the chapter reproduces without a training run, and those in ``NOT_RUN`` that nothing
reproduces.
"""

from __future__ import annotations

import html
import re

from .experiments import chapter_module, chapters
from .figures import Item, items, needs_no_run
from .results import store_for
from .sweep import Collected


def figure_state(module, figure: str) -> dict:
    """Which committed full-scale runs of ``figure`` exist (``provenance``: each one's, by key), and how they were
    made."""
    runs = module.FIGURES[figure]("full")
    store = store_for("full", runs[0].chapter)
    present = [r for r in runs if store.has(r.key)]
    done = {r.key for r in present}
    state = {"runs": len(runs), "present": len(present), "devices": [], "dates": [], "results": None, "provenance": {}}
    state["missing"] = [r.key for r in runs if r.key not in done]
    if present:
        loaded = [store.load(r.key) for r in present]
        state["provenance"] = {r.key: res.provenance for r, res in zip(present, loaded)}
        state["devices"] = sorted({r.provenance.get("device_name", "?") for r in loaded})
        state["dates"] = sorted({str(r.provenance.get("date", "?"))[:10] for r in loaded})
        if len(present) == len(runs):
            state["results"] = loaded
    return state


def rows(chapter_names=None, plans=("cpu", "cuda")) -> list[dict]:
    """One row per source figure or table of every chapter (its registered paper items); an owed figure's row
    carries its cost from the committed plans ``results/plan-<device>.json`` (:func:`estimates`, for the runs
    missing now), one per device of ``plans`` that has one, joined under ``estimate``."""
    names = chapter_names or sorted(chapters())
    states = {name: {} for name in names}  # each chapter's figure states, read once by chapter_rows
    table = [row for name in names for row in chapter_rows(name, chapter_module(name), states[name])]
    owed = {  # the figures whose own runs are not all committed (one that waits on another's has no cost of its own)
        (r["chapter"], r["figure"])
        for r in table
        if kind(r) in ("quick only", "partial") and states[r["chapter"]].get(r["figure"], {}).get("results") is None
    }
    missing = {(ch, f): states[ch][f]["missing"] for ch, f in owed} if plans else {}
    costs = [estimates(device, missing=missing) for device in plans]
    for row in table:
        key = row["chapter"], row["figure"]
        if key in owed and (found := [c[key] for c in costs if key in c]):
            row["estimate"] = "; ".join(found)
    return table


def estimates(device: str = "cpu", root=None, missing=None) -> dict[tuple[str, str], str]:
    """``{(chapter, figure): "full runs est. ~96 min on <machine>, plan of <date>"}`` from the plan committed as
    ``results/plan-<device>.json`` (``python -m lscnb plan --device D --json``); empty without one. ``missing``
    (``{(chapter, figure): the keys of the runs missing now}``, or their number) rescales a figure's cost to the runs
    still missing where their number changed since the plan (:func:`_rescaled`)."""
    import json
    from pathlib import Path

    from .results import results_root

    path = Path(root or results_root()) / f"plan-{device}.json"
    if not path.exists():
        return {}
    doc = json.loads(path.read_text())
    n = doc.get("threads")  # the torch threads the plan was timed with
    threads = f", {n} torch thread{'s' if n != 1 else ''}" if n else ""
    where = f"{doc.get('device_name', device)}{threads}, plan of {str(doc.get('date', '?'))[:10]}"
    out = {}
    for f in doc.get("figures", []):
        key = f["chapter"], f["figure"]
        est, n, some = _rescaled(f, (missing or {}).get(key))
        what = f"the {n} missing run" + ("s" if n != 1 else "") if some else "full runs"
        if est is None and f.get("bound") == "open":
            text = "cost not estimated (the data set sets the run's length, and it was not at hand to count)"
        elif est is None:
            least = max((c.get("at_least_s") or 0 for c in f.get("calibrations", [])), default=0)
            text = (
                "cost not estimated ("
                + (f"a run outlasted its timing: over {least:.0f} s" if least else "its timing failed")
                + ")"
            )
        else:
            bound = {">=": "at least ", "<=": "at most "}.get(f.get("bound"), "~")
            hours = est / 3600
            cost = f"{bound}{hours:.1f} h" if hours >= 1 else f"{bound}{est / 60:.0f} min"
            text = (
                f"{what} est. {cost} on {where}"
                + _untimed(f)
                + (" (GPU work)" if hours > 1 and device == "cpu" else "")
            )
        out[key] = text
    return out


def _rescaled(f: dict, now) -> tuple:
    """A plan's figure ``f`` costed for the runs missing now (``now``: their keys, their number, or None for the
    plan's own count): ``(est_s, runs, some)``, ``some`` true where some of the figure's runs are in. The sum of the
    plan's estimates of those runs (``run_s``), else the plan's mean cost per run times their number."""
    est, n = f.get("est_s"), f.get("missing")
    keys = None if now is None or isinstance(now, int) else list(now)
    now = len(keys) if keys is not None else now
    some = None not in (n, f.get("runs")) and n != f["runs"]  # some of the figure's runs were in before the plan
    run_s = f.get("run_s") or {}
    rate = f.get("per_run_s")
    if rate is None and run_s:
        rate = sum(run_s.values()) / len(run_s)
    if est is None or now is None or now == n or rate is None:
        return est, n, some
    if keys is not None and run_s:  # and some since: the plan's own estimates of the runs still missing
        return sum(run_s.get(k, rate) for k in keys), now, True
    return rate * now, now, True


def _untimed(f: dict) -> str:
    """What a plan's figure ``f`` says of the architectures its calibration did not time (a plan before every
    architecture was timed: their runs are costed at a timed one's rate), or nothing."""
    if not (untimed := f.get("untimed")):
        return ""
    n = len(f.get("models") or untimed)
    return f"; {n - len(untimed)} of {n} models timed, the others at a timed one's cost"


def chapter_rows(name: str, module, states: dict | None = None) -> list[dict]:
    """The rows of one chapter's ``module``: its paper items, each classified by its figure's committed runs (and
    those of the figures it ``reads``: a figure whose own runs are all committed is partial while they are not).
    ``states`` (a dict), if given, receives each figure's :func:`figure_state`, read once however many items the
    figure reproduces."""
    states = {} if states is None else states
    out = []
    for item, figure in items(module):
        row = {"chapter": name, "source": item.source, "what": item.what, "data": item.data, "note": item.note}
        row["figure"] = figure or "—"
        if figure is None:
            row["status"] = "no run needed (in the chapter)" if needs_no_run(module, item) else "not reproduced"
            row["hardware"], row["gap"] = "—", "—"
        else:
            reads = module.FIGURES[figure].reads
            for f in (figure, *reads):
                if f not in states:
                    states[f] = figure_state(module, f)
            st = states[figure]
            waiting = [f for f in reads if states[f]["results"] is None]
            if st["results"] is not None and waiting:  # its own runs done, but it shows others' at quick scale
                own = "its one run" if st["runs"] == 1 else f"all {st['runs']} of its runs"
                others = ("figure " if len(waiting) == 1 else "figures ") + ", ".join(waiting)
                beside = "it" if st["runs"] == 1 else "them"
                row["status"] = f"full run partial ({own}; {others}, shown beside {beside}, owed)"
            elif st["results"] is not None:
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
    counts = {"paper scale": 0, "partial": 0, "quick only": 0, "no run needed": 0, "not reproduced": 0}
    for r in table:
        s = r["status"]
        key = (
            "paper scale"
            if s.startswith("paper")
            else "partial"
            if "partial" in s
            else "quick only"
            if s.startswith("quick")
            else "no run needed"
            if s.startswith("no run needed")
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


# The status page in HTML: a summary per chapter with a stacked bar, then one narrow table per chapter (reference,
# what, status, paper vs ours) whose long text (figure key, hardware, data, note) goes on a smaller line under the row.
# The style sheet travels with the HTML (one <style> element), so the page reads the same in the built book, in
# Jupyter and offline; every text is escaped.

COLOURS = {  # by summary's classes; another class gets grey
    "paper scale": "#2e8b57",
    "partial": "#e3a21a",
    "quick only": "#7fb2dc",
    "no run needed": "#a9cdb5",
    "not reproduced": "#c8c8c8",
}
TABLE_COLUMNS = ("paper", "what", "status", "paper vs ours")
LONG_GAP = 80  # characters: a longer gap text gets a line of its own under its row, across the table

STYLE = """<style>
div.lscnb-status { font-size: 0.85rem; line-height: 1.35; max-width: 100%; }
div.lscnb-status table.lscnb-st { width: 100%; table-layout: fixed; border-collapse: collapse; margin: 0.3rem 0 1rem;
  font-size: 0.85rem; }
div.lscnb-status table.lscnb-st th, div.lscnb-status table.lscnb-st td { padding: 0.2rem 0.4rem; text-align: left;
  vertical-align: top; overflow-wrap: break-word; border: none; white-space: normal; }
div.lscnb-status table.lscnb-st thead th { border-bottom: 2px solid #999; font-weight: 600;
  overflow-wrap: normal; vertical-align: bottom; }
div.lscnb-status table.lscnb-st tbody { border-bottom: 1px solid #ddd; }
div.lscnb-status table.lscnb-st tbody:nth-of-type(even) { background: rgba(127, 127, 127, 0.07); }
div.lscnb-status table.lscnb-st tr.lscnb-st-gap td { padding-top: 0; }
div.lscnb-status table.lscnb-st tr.lscnb-st-more td { padding-top: 0; color: #666; font-size: 0.78rem; }
div.lscnb-status table.lscnb-st td.lscnb-st-n, div.lscnb-status table.lscnb-st th.lscnb-st-n { text-align: right;
  font-variant-numeric: tabular-nums; }
div.lscnb-status table.lscnb-st-summary thead th { font-size: 0.78rem; }
div.lscnb-status table.lscnb-st tr.lscnb-st-total td { border-top: 2px solid #999; font-weight: 600; }
div.lscnb-status .lscnb-st-sub { display: block; color: #666; font-size: 0.78rem; }
div.lscnb-status .lscnb-st-none { color: #999; }
div.lscnb-status .lscnb-st-badge { display: inline-block; padding: 0 0.3rem; border-radius: 0.6rem; color: #111;
  font-size: 0.78rem; max-width: 100%; }
div.lscnb-status .lscnb-st-bar { display: flex; height: 0.9rem; margin-top: 0.15rem; border-radius: 2px;
  overflow: hidden; background: #eee; }
div.lscnb-status .lscnb-st-bar span { display: block; height: 100%; }
div.lscnb-status .lscnb-st-swatch { display: inline-block; width: 0.8rem; height: 0.8rem; margin: 0 0.25rem -0.1rem 0;
  border-radius: 2px; }
div.lscnb-status code { font-size: 0.95em; }
</style>"""


def kind(row: dict) -> str:
    """The row's class, exactly as :func:`summary` counts it."""
    return next(k for k, v in summary([row]).items() if v)


_VENDOR_WORDS = r"\b(NVIDIA|GeForce|Tesla|Intel|AMD|Apple|Processor|CPU|\d+\s*[GM]B|HBM\d*e?|PCIe|SXM\d*)\b"


def short_device(name: str) -> str:
    """A device name short enough for a table cell: ``NVIDIA H100 80GB HBM3`` -> ``H100``,
    ``Intel(R) Xeon(R) Processor (16 cores)`` -> ``Xeon, 16 cores``."""
    name = name.strip()
    cores = re.search(r"\((\d+) cores?\)", name, flags=re.I)
    text = re.sub(r"\((R|TM|C)\)|\(\d+ cores?\)|@.*$", "", name, flags=re.I)
    text = re.sub(_VENDOR_WORDS, "", text)
    text = re.sub(r"\s+", " ", text).strip(" ,-") or name
    return f"{text}, {cores.group(1)} cores" if cores else text


def short_hardware(hardware: str) -> str:
    """:func:`short_device` of each device in a row's ``hardware`` (comma-separated); ``""`` for ``—``."""
    if hardware.strip() in ("", "—"):
        return ""
    return "; ".join(short_device(d) for d in re.split(r",\s*(?![^()]*\))", hardware) if d.strip())


def by_chapter(table: list[dict]) -> list[tuple[str, list[dict]]]:
    """The rows grouped by chapter, chapters in order of first appearance."""
    groups: dict[str, list[dict]] = {}
    for r in table:
        groups.setdefault(r["chapter"], []).append(r)
    return list(groups.items())


def chapter_counts(table: list[dict]) -> dict[str, dict]:
    """:func:`summary` of each chapter's rows, chapters in order of first appearance."""
    return {ch: summary(part) for ch, part in by_chapter(table)}


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


def _bar(counts: dict) -> str:
    total = sum(counts.values())
    if not total:
        return '<div class="lscnb-st-bar"></div>'
    spans = "".join(
        f'<span style="width:{100 * n / total:.3f}%;background:{COLOURS.get(k, "#999")}" title="{_esc(k)}: {n}"></span>'
        for k, n in counts.items()
        if n
    )
    return f'<div class="lscnb-st-bar" role="img" aria-label="{_esc(_counts_text(counts))}">{spans}</div>'


def _counts_text(counts: dict) -> str:
    return ", ".join(f"{n} {k}" for k, n in counts.items())


def _swatch(k: str) -> str:
    return f'<span class="lscnb-st-swatch" style="background:{COLOURS.get(k, "#999")}"></span>'


def summary_html(table: list[dict], style: bool = True) -> str:
    """A table of the counts by class per chapter and in total, each with a stacked bar; the column heads carry the
    bars' colours (``style``: with the style sheet)."""
    classes = list(summary([]))
    per = chapter_counts(table)
    total = summary(table)
    head = (
        '<tr><th style="width:14%">chapter</th>'
        + "".join(f'<th class="lscnb-st-n" style="width:11%">{_swatch(k)}{_esc(k)}</th>' for k in classes)
        + '<th class="lscnb-st-n" style="width:8%">total</th><th></th></tr>'
    )

    def line(name: str, counts: dict, cls: str = "") -> str:
        zero = '<span class="lscnb-st-none">0</span>'
        cells = "".join(f'<td class="lscnb-st-n">{n or zero}</td>' for n in counts.values())
        return (
            f'<tr class="{cls}"><td>{name}</td>{cells}<td class="lscnb-st-n">{sum(counts.values())}</td>'
            f"<td>{_bar(counts)}</td></tr>"
        )

    body = "".join(line(f"<code>{_esc(ch)}</code>", c) for ch, c in per.items())
    body += line("all", total, "lscnb-st-total")
    return (
        (STYLE if style else "")
        + '<div class="lscnb-status">'
        + f'<table class="lscnb-st lscnb-st-summary"><thead>{head}</thead><tbody>{body}</tbody></table></div>'
    )


def _status_cell(row: dict) -> str:
    k = kind(row)
    sub = "; ".join(re.findall(r"\(([^)]*)\)", row["status"]))
    return (
        f'<span class="lscnb-st-badge" style="background:{COLOURS.get(k, "#999")}" title="{_esc(row["status"])}">'
        f"{_esc(k)}</span>" + (f'<span class="lscnb-st-sub">{_esc(sub)}</span>' if sub else "")
    )


def _more(row: dict) -> str:
    """The row's second line: its figure key and the hardware its full runs ran on, data and note (those that say
    something)."""
    parts = []
    if row.get("figure", "—") not in ("", "—"):
        parts.append(f"figure <code>{_esc(row['figure'])}</code>")
    if hardware := short_hardware(row.get("hardware", "—")):
        parts.append(f"<em>ran on</em> {_esc(hardware)}")
    for label, key in (("data", "data"), ("note", "note"), ("cost", "estimate")):
        text = str(row.get(key, "")).strip()
        if text and text != "—":
            parts.append(f"<em>{label}:</em> {_esc(text)}")
    return " · ".join(parts)


def _widths(part: list[dict]) -> tuple[int, ...]:
    """Column widths in percent for :data:`TABLE_COLUMNS`: the reference column is wider where a reference is long
    (an author and year), the gap column narrow without gaps and widest where many rows have long ones."""

    def texts(key: str) -> list[str]:
        return [t for r in part if (t := str(r.get(key, "")).strip()) not in ("", "—")]

    def longest(key: str) -> int:
        return max(map(len, texts(key)), default=0)

    gaps = sum(len(t) <= LONG_GAP for t in texts("gap"))
    source = 20 if longest("source") > 32 else 14
    short_gaps = [t for t in texts("gap") if len(t) <= LONG_GAP]
    gap = 12 if not short_gaps else 22 if 3 * gaps < len(part) or max(map(len, short_gaps)) <= 60 else 30
    return source, 100 - source - 18 - gap, 18, gap


def chapter_html(part: list[dict], style: bool = False) -> str:
    """One chapter's rows as a table of :data:`TABLE_COLUMNS` that fits the page width (fixed layout, text wraps).
    Under each row, across the what, status and gap columns: a gap text longer than :data:`LONG_GAP` characters on
    a line of its own, then the figure key, data and note in a smaller font."""
    cols = "".join(f'<col style="width:{w}%">' for w in _widths(part))
    head = "".join(f"<th>{_esc(c)}</th>" for c in TABLE_COLUMNS)
    span = len(TABLE_COLUMNS) - 1
    body = []
    for r in part:
        gap = str(r.get("gap", "—")).strip()
        extra = []
        if gap in ("", "—"):
            gap_cell = '<span class="lscnb-st-none">—</span>'
        elif len(gap) > LONG_GAP:
            gap_cell = '<span class="lscnb-st-none">below</span>'
            extra.append(f'<tr class="lscnb-st-gap"><td colspan="{span}"><em>paper vs ours:</em> {_esc(gap)}</td></tr>')
        else:
            gap_cell = _esc(gap)
        if more := _more(r):
            extra.append(f'<tr class="lscnb-st-more"><td colspan="{span}">{more}</td></tr>')
        body.append(
            f'<tbody><tr><td rowspan="{1 + len(extra)}">{_esc(r["source"])}</td><td>{_esc(r["what"])}</td>'
            f"<td>{_status_cell(r)}</td><td>{gap_cell}</td></tr>{''.join(extra)}</tbody>"
        )
    return (
        (STYLE if style else "")
        + f'<div class="lscnb-status"><table class="lscnb-st lscnb-st-chapter"><colgroup>{cols}</colgroup>'
        + f"<thead><tr>{head}</tr></thead>{''.join(body)}</table></div>"
    )
