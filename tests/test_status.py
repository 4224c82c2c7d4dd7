from html.parser import HTMLParser

import pytest
from status_fabricated import Chapter, row

from lscnb import status
from lscnb.experiments import chapter_module, chapters
from lscnb.figures import Figure, Item, declare, items


@pytest.mark.parametrize("name", sorted(chapters()))
def test_every_chapter_registers_its_figures_by_name(name):
    module = chapter_module(name)
    assert module.FIGURES and all(isinstance(f, Figure) and f.name == k for k, f in module.FIGURES.items())
    assert all(isinstance(i, Item) for k in ("WITHOUT_RUNS", "NOT_RUN") for i in getattr(module, k, ()))
    assert all(f("quick") and f("full") for f in module.FIGURES.values()), "a figure without runs"


def test_registry_rejects_malformed_declarations():
    runs = lambda scale: []  # noqa: E731
    with pytest.raises(ValueError, match="declared twice"):
        declare(Figure("a", runs), Figure("a", runs))
    with pytest.raises(ValueError, match="identifier"):
        Figure("Fig. 1", runs)
    with pytest.raises(ValueError, match="runs must be callable"):
        Figure("a", "a_runs")
    with pytest.raises(ValueError, match="Item.what"):
        Item("Fig. 1", "")
    with pytest.raises(ValueError, match="items must be Item"):
        Figure("a", runs, items=[{"source": "Fig. 1"}])


def test_registry_counts_the_papers_items():
    """The status page's 102 items: every chapter's registered items, none twice."""
    pairs = [(name, item) for name in chapters() for item, _ in items(chapter_module(name))]
    assert len(pairs) == 102
    assert len({(name, i.source, i.what) for name, i in pairs}) == len(pairs)


def test_rows_and_summary(stores):
    table = status.rows()
    assert len(table) == 102
    counts = status.summary(table)
    assert sum(counts.values()) == len(table)
    assert all(r["status"] for r in table)
    assert "| source |" in status.markdown(table)


def test_status_classifies_each_kind_of_item_by_its_committed_runs(stores, monkeypatch):
    from lscnb import config
    from lscnb.results import Result, Store, provenance

    monkeypatch.setenv("LSCNB_DEVICE", "cpu")
    store = Store(stores / "results" / "fab")
    prov = provenance(config.Profile("full"), seeds=[0], wall_time_s=1.0, scale="full")
    for run in Chapter.FIGURES["done"]("full") + Chapter.FIGURES["half"]("full")[:1]:
        store.save(
            Result(run.key, dict(run.config), {"value": float(run.config["i"])}, {}, {**prov, "date": "2026-01-02"})
        )
    table = status.chapter_rows("fab", Chapter)
    assert [r["source"] for r in table] == ["Fig. 1", "Fig. 4", "Fig. 2", "Fig. 3", "Tab. 2", "Tab. 1"]
    assert [r["status"] for r in table] == [
        "paper scale (2026-01-02)",
        "paper scale (2026-01-02)",
        "full run partial (1/2 runs); quick in the book",
        "quick scale only (full run owed)",
        "no run needed (in the chapter)",
        "not reproduced",
    ]
    assert [r["gap"] for r in table] == ["1.0 vs 1.5", "(gap not computable: ZeroDivisionError)", "—", "—", "—", "—"]
    assert table[0]["hardware"] == prov["device_name"] and {r["hardware"] for r in table[3:]} == {"—"}
    assert status.summary(table) == {
        "paper scale": 2,
        "partial": 1,
        "quick only": 1,
        "no run needed": 1,
        "not reproduced": 1,
    }


def test_items_reproduced_without_runs_are_told_from_those_not_reproduced():
    """A chapter's WITHOUT_RUNS (closed forms, counts, drawings: nothing to scale up) are their own class on the status
    page, and every such item of the book says in its note how the chapter shows it."""
    from lscnb.figures import needs_no_run

    assert needs_no_run(Chapter, Chapter.WITHOUT_RUNS[0]) and not needs_no_run(Chapter, Chapter.NOT_RUN[0])
    assert not needs_no_run(Chapter, Chapter.FIGURES["done"].items[0])
    book = [(name, i) for name in chapters() for i in getattr(chapter_module(name), "WITHOUT_RUNS", ())]
    assert len(book) == 13 and all(i.note for _, i in book)
    counts = status.summary(status.rows())
    assert counts["no run needed"] == 13 and counts["not reproduced"] == 3


# The status page's HTML, on a fabricated list of rows shaped as chapter_rows makes them.

_LONG_GAP = "paper: between 3 and 6; ours: " + "x" * 120
_ROWS = [
    row("alpha", "Fig. 1", "paper scale (2026-01-02)", gap="0.91 vs 0.9", hardware="NVIDIA H100 80GB HBM3"),
    row("alpha", "Fig. 2 <b>", "full run partial (1/2 runs); quick in the book", what="a < b & c", note="<script>"),
    row("alpha", "Tab. 1", "not reproduced", figure="—", data="—"),
    row("beta", "Fig. 3", "quick scale only (full run owed)"),
    row("beta", "Fig. 4", "paper scale (2026-01-03)", gap=_LONG_GAP, hardware="AMD EPYC (2 cores), Intel(R) Xeon X"),
    row("beta", "Fig. 5", "paper scale (2026-01-03)", hardware="Intel(R) Xeon(R) Processor (16 cores)"),
]


class _Cells(HTMLParser):
    """The text of every cell, row by row, of each table; and the number of columns its header has."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.heads, self._cell = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
            self.heads.append(0)
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag == "th":
            self.heads[-1] += 1
            self._cell = []
        elif tag == "td":
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            if tag == "td":
                self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def test_kind_is_the_class_summary_counts():
    assert [status.kind(r) for r in _ROWS] == [
        "paper scale",
        "partial",
        "not reproduced",
        "quick only",
        "paper scale",
        "paper scale",
    ]
    for r in _ROWS:
        assert status.summary([r])[status.kind(r)] == 1


def test_chapter_counts_and_the_summary_table():
    assert status.chapter_counts(_ROWS) == {
        "alpha": {"paper scale": 1, "partial": 1, "quick only": 0, "no run needed": 0, "not reproduced": 1},
        "beta": {"paper scale": 2, "partial": 0, "quick only": 1, "no run needed": 0, "not reproduced": 0},
    }
    html_text = status.summary_html(_ROWS)
    assert html_text.startswith("<style>") and "http" not in html_text  # styled inline, nothing loaded
    cells = _Cells(html_text)
    assert len(cells.tables) == 1 and cells.heads == [8]
    body = [row[:-1] for row in cells.tables[0] if row]  # the last cell is the bar
    assert body == [
        ["alpha", "1", "1", "0", "0", "1", "3"],
        ["beta", "2", "0", "1", "0", "0", "3"],
        ["all", "3", "1", "1", "0", "1", "6"],
    ]
    # one bar segment per non-zero count, widths in proportion
    assert html_text.count('title="paper scale: 2"') == 1 and html_text.count('title="paper scale: 3"') == 1
    assert 'width:66.667%;background:#2e8b57" title="paper scale: 2"' in html_text  # beta: 2 of 3
    assert 'width:50.000%;background:#2e8b57" title="paper scale: 3"' in html_text  # all: 3 of 6


def test_chapter_tables_show_every_item_once_escaped_and_narrow():
    html_text = "".join(status.chapter_html(part) for _, part in status.by_chapter(_ROWS))
    cells = _Cells(html_text)
    assert len(cells.tables) == 2 and all(n <= 4 for n in cells.heads)
    first = [row[0] for table in cells.tables for row in table if len(row) == len(status.TABLE_COLUMNS)]
    assert first == [r["source"] for r in _ROWS]  # each item once, in order
    # text is escaped, never markup
    assert "<script>" not in html_text and "&lt;script&gt;" in html_text
    assert "<b>" not in html_text and "Fig. 2 &lt;b&gt;" in html_text and "a &lt; b &amp; c" in html_text
    # status cells: the class, and the date or run count under it
    statuses = [row[2] for table in cells.tables for row in table if len(row) == len(status.TABLE_COLUMNS)]
    assert statuses == [
        "paper scale2026-01-02",
        "partial1/2 runs",
        "not reproduced",
        "quick onlyfull run owed",
        "paper scale2026-01-03",
        "paper scale2026-01-03",
    ]
    # a short gap in its column; a long one whole on its own line under the row; the second line: figure key,
    # hardware shortened, data and note, each only where it says something (Tab. 1 has none, so no second line)
    alpha, beta = ([row for row in table if row] for table in cells.tables)
    assert alpha == [
        ["Fig. 1", "w", "paper scale2026-01-02", "0.91 vs 0.9"],
        ["figure f · ran on H100 · data: generated"],
        ["Fig. 2 <b>", "a < b & c", "partial1/2 runs", "—"],
        ["figure f · data: generated · note: <script>"],
        ["Tab. 1", "w", "not reproduced", "—"],
    ]
    assert beta[2] == ["Fig. 4", "w", "paper scale2026-01-03", "below"]
    assert beta[3] == ["paper vs ours: " + _LONG_GAP]
    assert beta[4] == ["figure f · ran on EPYC, 2 cores; Xeon X · data: generated"]


@pytest.mark.parametrize(
    "name, short",
    [
        ("NVIDIA H100 80GB HBM3", "H100"),
        ("NVIDIA A100-SXM4-40GB", "A100"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("Intel(R) Xeon(R) Processor (16 cores)", "Xeon, 16 cores"),
        ("AMD EPYC (2 cores)", "EPYC, 2 cores"),
        ("Intel(R) Core(TM) i7-9750H CPU @ 2.60GHz", "Core i7-9750H"),
    ],
)
def test_short_device(name, short):
    assert status.short_device(name) == short


def test_short_hardware_splits_devices_and_drops_a_dash():
    assert status.short_hardware("AMD EPYC (2 cores), Intel(R) Xeon(R) Processor (16 cores)") == (
        "EPYC, 2 cores; Xeon, 16 cores"
    )
    assert status.short_hardware("—") == ""


def test_column_widths_fill_the_table():
    for _, part in status.by_chapter(_ROWS):
        widths = status._widths(part)
        assert len(widths) == len(status.TABLE_COLUMNS) and sum(widths) == 100 and min(widths) >= 10


def test_owed_figures_carry_the_committed_plans_estimate(tmp_path):
    """results/plan-cpu.json (the plan's --json) gives each owed figure its cost on the status page, by value."""
    import json

    from lscnb.status import estimates

    assert estimates("cpu", root=tmp_path) == {}
    doc = {
        "device_name": "Test CPU (2 cores)",
        "date": "2026-11-25T10:00",
        "figures": [
            {"chapter": "a", "figure": "f", "est_s": 5400.0, "bound": "~"},
            {"chapter": "a", "figure": "g", "est_s": 90.0, "bound": ">="},
            {"chapter": "b", "figure": "h", "est_s": None, "bound": "open"},
            {"chapter": "b", "figure": "u", "est_s": 600.0, "bound": "<="},
            {"chapter": "b", "figure": "p", "est_s": 600.0, "bound": "~", "models": ["x", "y", "z"], "untimed": ["z"]},
            {"chapter": "b", "figure": "i", "est_s": None, "bound": "?", "calibrations": [{"at_least_s": 20.0}]},
        ],
    }
    (tmp_path / "plan-cpu.json").write_text(json.dumps(doc))
    got = estimates("cpu", root=tmp_path)
    assert got[("a", "f")] == "full runs est. ~1.5 h on Test CPU (2 cores), plan of 2026-11-25 (GPU work)"
    assert got[("a", "g")] == "full runs est. at least 2 min on Test CPU (2 cores), plan of 2026-11-25"
    assert got[("b", "u")] == "full runs est. at most 10 min on Test CPU (2 cores), plan of 2026-11-25"
    assert got[("b", "p")] == (
        "full runs est. ~10 min on Test CPU (2 cores), plan of 2026-11-25; 2 of 3 models timed, the others at a timed "
        "one's cost"
    )
    assert got[("b", "h")] == "cost not estimated (the data set sets the run's length, and it was not at hand to count)"
    assert got[("b", "i")] == "cost not estimated (a run outlasted its timing: over 20 s)"
    # the runs missing now, at the plan's mean cost per run, once some have been committed since the plan
    doc["figures"][0].update(per_run_s=60.0, missing=90)
    (tmp_path / "plan-cpu.json").write_text(json.dumps(doc))
    now = estimates("cpu", root=tmp_path, missing={("a", "f"): 30, ("a", "g"): 4})
    assert now[("a", "f")] == "the 30 missing runs est. ~30 min on Test CPU (2 cores), plan of 2026-11-25"
    assert now[("a", "g")] == got[("a", "g")]  # no cost per run in the plan: its figure's total, as before
    assert estimates("cpu", root=tmp_path, missing={("a", "f"): 90})[("a", "f")] == got[("a", "f")]  # none since
    doc["figures"][0]["runs"] = 100  # 10 of the figure's 100 runs were in before the plan: its cost is the 90's
    (tmp_path / "plan-cpu.json").write_text(json.dumps(doc))
    assert estimates("cpu", root=tmp_path, missing={("a", "f"): 90})[("a", "f")].startswith(
        "the 90 missing runs est. ~1.5 h"
    )
    doc["figures"][0].pop("runs")
    (tmp_path / "plan-cpu.json").write_text(json.dumps({**doc, "threads": 1}))  # the torch threads it was timed with
    assert estimates("cpu", root=tmp_path)[("a", "g")].endswith(
        "on Test CPU (2 cores), 1 torch thread, plan of 2026-11-25"
    )
