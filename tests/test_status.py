from html.parser import HTMLParser

import pytest

from lscnb import status
from lscnb.experiments import chapter_module, chapters
from lscnb.figures import Figure, Item, declare, items


@pytest.mark.parametrize("name", sorted(chapters()))
def test_every_chapter_registers_its_figures_by_name(name):
    module = chapter_module(name)
    assert module.FIGURES and all(isinstance(f, Figure) and f.name == k for k, f in module.FIGURES.items())
    assert all(isinstance(i, Item) for i in getattr(module, "NOT_RUN", ()))
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


def _made(cfg, ctx):
    return {"value": float(cfg["i"])}


class _Chapter:
    """A fabricated chapter: figure 'done' has both full runs committed, 'half' one of two, 'owed' none."""

    __name__ = "fabricated"

    @staticmethod
    def _runs(figure, n):
        from lscnb.sweep import Run

        return lambda scale: [Run("fab", figure, f"r{i}", _made, {"i": i, "scale": scale}) for i in range(n)]

    FIGURES = declare(
        Figure(
            "done",
            _runs("done", 2),
            items=[
                Item("Fig. 1", "a", "generated", gap=lambda col: f"{sum(r.metrics['value'] for r in col):.1f} vs 1.5"),
                Item("Fig. 4", "e", "generated", gap=lambda col: 1 / 0),
            ],
        ),
        Figure("half", _runs("half", 2), items=[Item("Fig. 2", "b", "generated")]),
        Figure("owed", _runs("owed", 1), items=[Item("Fig. 3", "c", "generated", gap=lambda col: "never")]),
    )
    NOT_RUN = [Item("Tab. 1", "d", "—")]


def test_status_classifies_each_kind_of_item_by_its_committed_runs(stores, monkeypatch):
    from lscnb import config
    from lscnb.results import Result, Store, provenance

    monkeypatch.setenv("LSCNB_DEVICE", "cpu")
    store = Store(stores / "results" / "fab")
    prov = provenance(config.Profile("full"), seeds=[0], wall_time_s=1.0, scale="full")
    for run in _Chapter.FIGURES["done"]("full") + _Chapter.FIGURES["half"]("full")[:1]:
        store.save(
            Result(run.key, dict(run.config), {"value": float(run.config["i"])}, {}, {**prov, "date": "2026-01-02"})
        )
    table = status.chapter_rows("fab", _Chapter)
    assert [r["source"] for r in table] == ["Fig. 1", "Fig. 4", "Fig. 2", "Fig. 3", "Tab. 1"]
    assert [r["status"] for r in table] == [
        "paper scale (2026-01-02)",
        "paper scale (2026-01-02)",
        "full run partial (1/2 runs); quick in the book",
        "quick scale only (full run owed)",
        "not reproduced",
    ]
    assert [r["gap"] for r in table] == ["1.0 vs 1.5", "(gap not computable: ZeroDivisionError)", "—", "—", "—"]
    assert table[0]["hardware"] == prov["device_name"] and table[3]["hardware"] == table[4]["hardware"] == "—"
    assert status.summary(table) == {"paper scale": 2, "partial": 1, "quick only": 1, "not reproduced": 1}


# The status page's HTML, on a fabricated list of rows shaped as chapter_rows makes them.


def _row(chapter, source, status_text, gap="—", hardware="—", what="w", data="generated", note="", figure="f"):
    return {
        "chapter": chapter,
        "source": source,
        "what": what,
        "data": data,
        "note": note,
        "figure": figure,
        "status": status_text,
        "hardware": hardware,
        "gap": gap,
    }


_LONG_GAP = "paper: between 3 and 6; ours: " + "x" * 120
_ROWS = [
    _row("alpha", "Fig. 1", "paper scale (2026-01-02)", gap="0.91 vs 0.9", hardware="NVIDIA H100 80GB HBM3"),
    _row("alpha", "Fig. 2 <b>", "full run partial (1/2 runs); quick in the book", what="a < b & c", note="<script>"),
    _row("alpha", "Tab. 1", "not reproduced", figure="—", data="—"),
    _row("beta", "Fig. 3", "quick scale only (full run owed)"),
    _row("beta", "Fig. 4", "paper scale (2026-01-03)", gap=_LONG_GAP, hardware="AMD EPYC (2 cores), Intel(R) Xeon X"),
    _row("beta", "Fig. 5", "paper scale (2026-01-03)", hardware="Intel(R) Xeon(R) Processor (16 cores)"),
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
        "alpha": {"paper scale": 1, "partial": 1, "quick only": 0, "not reproduced": 1},
        "beta": {"paper scale": 2, "partial": 0, "quick only": 1, "not reproduced": 0},
    }
    html_text = status.summary_html(_ROWS)
    assert html_text.startswith("<style>") and "http" not in html_text  # styled inline, nothing loaded
    cells = _Cells(html_text)
    assert len(cells.tables) == 1 and cells.heads == [7]
    body = [row[:-1] for row in cells.tables[0] if row]  # the last cell is the bar
    assert body == [
        ["alpha", "1", "1", "0", "1", "3"],
        ["beta", "2", "0", "1", "0", "3"],
        ["all", "3", "1", "1", "1", "6"],
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


# By value (issue 27): each piece of the status page against an answer written out here.


class _Provenanced:
    """A fabricated chapter whose committed runs carry chosen devices and dates (or none)."""

    __name__ = "provenanced"

    FIGURES = declare(
        Figure(
            "two",
            _Chapter._runs("two", 2),
            items=[
                Item(
                    "Fig. 1",
                    "a",
                    "generated",
                    "a note",
                    gap=lambda c: (
                        f"{c.chapter}|{c.figure}|{c.requested}|{c.scale}|{c.device_name}|{c.missing}|{c.total}|{len(c)}"
                    ),
                )
            ],
        ),
        Figure("bare", _Chapter._runs("bare", 2), items=[Item("Fig. 2", "b")]),
        Figure("none", _Chapter._runs("none", 1), items=[Item("Fig. 3", "c")]),
    )
    NOT_RUN = [Item("Tab. 1", "d", "—", "not run")]


def test_figure_state_and_rows_by_value(stores):
    from lscnb.results import Result, Store

    store = Store(stores / "results" / "fab")
    two = _Provenanced.FIGURES["two"]("full")
    store.save(Result(two[0].key, {}, {}, {}, {"device_name": "Dev B", "date": "2026-01-05T03:04:05+00:00"}))
    store.save(Result(two[1].key, {}, {}, {}, {"device_name": "Dev A", "date": "2026-01-02T00:00:00+00:00"}))
    store.save(Result(_Provenanced.FIGURES["bare"]("full")[0].key, {}))  # no provenance at all
    assert status.figure_state(_Provenanced, "none") == {
        "runs": 1,
        "present": 0,
        "devices": [],
        "dates": [],
        "results": None,
    }
    half = status.figure_state(_Provenanced, "bare")
    assert half == {"runs": 2, "present": 1, "devices": ["?"], "dates": ["?"], "results": None}
    done = status.figure_state(_Provenanced, "two")
    assert done["devices"] == ["Dev A", "Dev B"] and done["dates"] == ["2026-01-02", "2026-01-05"]
    assert [r.key for r in done["results"]] == [r.key for r in two]
    table = status.chapter_rows("fab", _Provenanced)
    common = {"chapter": "fab"}
    assert table == [
        {
            **common,
            "source": "Fig. 1",
            "what": "a",
            "data": "generated",
            "note": "a note",
            "figure": "two",
            "status": "paper scale (2026-01-05)",
            "hardware": "Dev A, Dev B",
            "gap": "fab|two|replay|full|Dev B|0|2|2",
        },
        {
            **common,
            "source": "Fig. 2",
            "what": "b",
            "data": "",
            "note": "",
            "figure": "bare",
            "status": "full run partial (1/2 runs); quick in the book",
            "hardware": "?",
            "gap": "—",
        },
        {
            **common,
            "source": "Fig. 3",
            "what": "c",
            "data": "",
            "note": "",
            "figure": "none",
            "status": "quick scale only (full run owed)",
            "hardware": "—",
            "gap": "—",
        },
        {
            **common,
            "source": "Tab. 1",
            "what": "d",
            "data": "—",
            "note": "not run",
            "figure": "—",
            "status": "not reproduced",
            "hardware": "—",
            "gap": "—",
        },
    ]


def test_markdown_by_value():
    rows = [
        _row("a", "Fig. 1", "s1", gap="g|1", hardware="H", note="n"),
        _row("b", "Tab. 2", "s2"),
        _row("a", "F3", "s3"),
    ]
    head = "| source | what | figure | status | hardware | data | gap | note |\n|---|---|---|---|---|---|---|---|\n"
    assert status.markdown(rows) == (
        "### `a`\n\n"
        + head
        + "| Fig. 1 | w | f | s1 | H | generated | g\\|1 | n |\n| F3 | w | f | s3 | — | generated | — |  |\n"
        "\n### `b`\n\n" + head + "| Tab. 2 | w | f | s2 | — | generated | — |  |\n"
    )


@pytest.mark.parametrize(
    "sources, gaps, widths",
    [
        (["x" * 32], ["—"], (14, 56, 18, 12)),  # no gap: the gap column narrow
        (["x" * 33], [""], (20, 50, 18, 12)),  # a long reference: the reference column wider
        (["s"], ["g" * 60], (14, 46, 18, 22)),  # short gaps (at most 60 characters)
        (["s"], ["g" * 61], (14, 38, 18, 30)),  # longer gaps in most rows: the widest gap column
        (["s"], ["g" * 80], (14, 38, 18, 30)),  # 80 characters still fit the column
        (["s"], ["g" * 81], (14, 56, 18, 12)),  # 81 go on their own line: the column has none left
        (["s"] * 3, ["g" * 61, "—", "—"], (14, 38, 18, 30)),  # a third of the rows with gaps: still many
        (["s"] * 4, ["g" * 61, "—", "—", "—"], (14, 46, 18, 22)),  # under a third: a narrower column
        (["s"] * 3, ["g" * 61, "g" * 61, "—"], (14, 38, 18, 30)),
    ],
)
def test_column_widths_by_value(sources, gaps, widths):
    part = [_row("c", s, "quick scale only", gap=g) for s, g in zip(sources, gaps)]
    assert status._widths(part) == widths


def test_widths_ignore_a_missing_gap_key():
    assert status._widths([{"source": "s"}]) == (14, 56, 18, 12)


_BADGE = (
    '<span class="lscnb-st-badge" style="background:#2e8b57" title="paper scale (2026-01-02)">paper scale</span>'
    '<span class="lscnb-st-sub">2026-01-02</span>'
)


def test_chapter_html_by_value():
    part = [
        _row("a", "Fig. 1", "paper scale (2026-01-02)", gap="0.9 vs 1.0"),
        _row("a", "Fig. 2", "quick", gap="g" * 80, figure="—", data="", hardware="Intel(R) Xeon(R) (2 cores)"),
        _row("a", "Fig. 3", "odd (x) (y)", gap="g" * 81, figure="", data="—"),
    ]
    got = status.chapter_html(part)
    expected = (
        '<div class="lscnb-status"><table class="lscnb-st lscnb-st-chapter"><colgroup><col style="width:14%">'
        '<col style="width:38%"><col style="width:18%"><col style="width:30%"></colgroup><thead><tr><th>paper</th>'
        "<th>what</th><th>status</th><th>paper vs ours</th></tr></thead>"
        f'<tbody><tr><td rowspan="2">Fig. 1</td><td>w</td><td>{_BADGE}</td><td>0.9 vs 1.0</td></tr>'
        '<tr class="lscnb-st-more"><td colspan="3">figure <code>f</code> · <em>data:</em> generated</td></tr></tbody>'
        '<tbody><tr><td rowspan="2">Fig. 2</td><td>w</td><td><span class="lscnb-st-badge" style="background:#7fb2dc"'
        f' title="quick">quick only</span></td><td>{"g" * 80}</td></tr>'
        '<tr class="lscnb-st-more"><td colspan="3"><em>ran on</em> Xeon, 2 cores</td></tr></tbody>'
        '<tbody><tr><td rowspan="2">Fig. 3</td><td>w</td><td><span class="lscnb-st-badge" style="background:#c8c8c8"'
        ' title="odd (x) (y)">not reproduced</span><span class="lscnb-st-sub">x; y</span></td>'
        '<td><span class="lscnb-st-none">below</span></td></tr>'
        f'<tr class="lscnb-st-gap"><td colspan="3"><em>paper vs ours:</em> {"g" * 81}</td></tr></tbody>'
        "</table></div>"
    )
    assert got == expected
    assert status.chapter_html(part, style=True) == status.STYLE + expected
    bare = status.chapter_html([{"source": "S", "what": "W", "status": "not reproduced"}])
    assert '<td><span class="lscnb-st-none">—</span></td></tr></tbody>' in bare  # no gap, no second line
    assert 'rowspan="1"' in bare


def test_more_line_by_value():
    row = {"figure": "fig", "hardware": "NVIDIA H100 80GB HBM3", "data": " MNIST ", "note": "—", "estimate": "~2 h"}
    assert (
        status._more(row)
        == "figure <code>fig</code> · <em>ran on</em> H100 · <em>data:</em> MNIST · <em>cost:</em> ~2 h"
    )
    assert status._more({}) == ""
    assert status._more({"figure": "", "hardware": "", "data": '"q"'}) == "<em>data:</em> &quot;q&quot;"


def test_summary_html_by_value():
    zero = '<td class="lscnb-st-n"><span class="lscnb-st-none">0</span></td>'
    one = '<td class="lscnb-st-n">1</td>'
    bar = (
        '<div class="lscnb-st-bar" role="img" aria-label="1 paper scale, 0 partial, 0 quick only, 0 not reproduced">'
        '<span style="width:100.000%;background:#2e8b57" title="paper scale: 1"></span></div>'
    )
    heads = "".join(
        f'<th class="lscnb-st-n" style="width:13%"><span class="lscnb-st-swatch" style="background:{c}"></span>{k}</th>'
        for k, c in [
            ("paper scale", "#2e8b57"),
            ("partial", "#e3a21a"),
            ("quick only", "#7fb2dc"),
            ("not reproduced", "#c8c8c8"),
        ]
    )
    expected = (
        '<div class="lscnb-status"><table class="lscnb-st lscnb-st-summary"><thead><tr><th style="width:14%">chapter'
        f'</th>{heads}<th class="lscnb-st-n" style="width:8%">total</th><th></th></tr></thead><tbody>'
        f'<tr class=""><td><code>a&amp;b</code></td>{one}{zero}{zero}{zero}{one}<td>{bar}</td></tr>'
        f'<tr class="lscnb-st-total"><td>all</td>{one}{zero}{zero}{zero}{one}<td>{bar}</td></tr></tbody></table></div>'
    )
    table = [_row("a&b", "Fig. 1", "paper scale (2026-01-02)")]
    assert status.summary_html(table, style=False) == expected
    assert status.summary_html(table) == status.STYLE + expected


def test_bar_by_value():
    assert status._bar({"x": 0}) == '<div class="lscnb-st-bar"></div>'
    assert status._bar({"odd <k>": 1, "partial": 3}) == (
        '<div class="lscnb-st-bar" role="img" aria-label="1 odd &lt;k&gt;, 3 partial">'
        '<span style="width:25.000%;background:#999" title="odd &lt;k&gt;: 1"></span>'
        '<span style="width:75.000%;background:#e3a21a" title="partial: 3"></span></div>'
    )
    assert status._swatch("odd") == '<span class="lscnb-st-swatch" style="background:#999"></span>'
    assert status._esc("\"'<&>") == "&quot;&#x27;&lt;&amp;&gt;"


@pytest.mark.parametrize(
    "name, short",
    [
        ("Intel(r) Xeon(tm) Processor (4 CORES)", "Xeon, 4 cores"),  # marks and cores in any case
        ("X  \t Y", "X Y"),
        ("NVIDIA", "NVIDIA"),  # nothing left: the name as given
    ],
)
def test_short_device_edge_cases(name, short):
    assert status.short_device(name) == short


def test_rows_attach_the_plans_estimate_to_owed_rows_only(stores, monkeypatch):
    import json

    from lscnb.results import Result, Store

    store = Store(stores / "results" / "fab")
    for run in _Chapter.FIGURES["done"]("full") + _Chapter.FIGURES["half"]("full")[:1]:
        store.save(Result(run.key, dict(run.config), {"value": float(run.config["i"])}, {}, {"date": "2026-01-02"}))
    plan = {
        "figures": [{"chapter": "fab", "figure": f, "est_s": 120.0, "bound": "~"} for f in ("done", "half", "owed")]
    }
    (stores / "results" / "plan-cpu.json").write_text(json.dumps(plan))
    (stores / "results" / "plan-gpu.json").write_text(json.dumps({**plan, "device_name": "G"}))
    monkeypatch.setattr(status, "chapter_module", lambda name: _Chapter)
    table = {r["source"]: r for r in status.rows(["fab"])}
    assert table["Fig. 2"]["estimate"] == "full runs est. ~2 min on cpu, plan of ?"  # partial
    assert table["Fig. 3"]["estimate"] == "full runs est. ~2 min on cpu, plan of ?"  # quick only
    assert "estimate" not in table["Fig. 1"] and "estimate" not in table["Tab. 1"]  # paper scale, not reproduced
    assert all(r["chapter"] == "fab" for r in table.values())
    assert status.rows(["fab"], plans=["gpu"])[2]["estimate"] == "full runs est. ~2 min on G, plan of ?"
    both = status.rows(["fab"], plans=["cpu", "gpu"])[2]["estimate"]  # each device's cost, in the order asked
    assert both == "full runs est. ~2 min on cpu, plan of ?; full runs est. ~2 min on G, plan of ?"
    assert all("estimate" not in r for r in status.rows(["fab"], plans=[]))
    (stores / "results" / "plan-cpu.json").unlink()  # a figure in one plan only gets that plan's cost
    assert status.rows(["fab"], plans=["cpu", "gpu"])[2]["estimate"] == "full runs est. ~2 min on G, plan of ?"
    # a plan made when both of figure half's runs were missing: one is committed since, so half the cost is left
    plan["figures"][1].update(per_run_s=600.0, est_s=1200.0, missing=2)
    (stores / "results" / "plan-gpu.json").write_text(json.dumps({**plan, "device_name": "G"}))
    table = {r["source"]: r for r in status.rows(["fab"], plans=["gpu"])}
    assert table["Fig. 2"]["estimate"] == "the 1 missing run est. ~10 min on G, plan of ?"


def test_estimates_edges(tmp_path):
    import json

    from lscnb.status import estimates

    (tmp_path / "plan-cpu.json").write_text("{}")
    assert estimates(root=tmp_path) == {}
    doc = {
        "date": "2026-11-25T10:00",
        "figures": [
            {"chapter": "a", "figure": "hour", "est_s": 3600.0, "bound": "~"},
            {"chapter": "a", "figure": "long", "est_s": 3700.0, "bound": "~"},
        ],
    }
    (tmp_path / "plan-cpu.json").write_text(json.dumps(doc))
    got = estimates(root=tmp_path)
    assert got[("a", "hour")] == "full runs est. ~1.0 h on cpu, plan of 2026-11-25"  # one hour: not yet GPU work
    assert got[("a", "long")] == "full runs est. ~1.0 h on cpu, plan of 2026-11-25 (GPU work)"
    (tmp_path / "plan-cuda.json").write_text(json.dumps(doc))
    assert "(GPU work)" not in estimates("cuda", root=tmp_path)[("a", "long")]


class _Reading:
    """A fabricated chapter whose figure "all" shows the runs of figures "one" and "later" beside its own."""

    __name__ = "reading"

    FIGURES = declare(
        Figure("all", _Chapter._runs("all", 2), items=[Item("Fig. 1", "a")], reads=("one", "later")),
        Figure("one", _Chapter._runs("one", 1), items=[Item("Fig. 2", "b")]),
        Figure("later", _Chapter._runs("later", 2), items=[Item("Fig. 3", "c")]),
    )


def test_a_figure_is_at_paper_scale_only_when_the_figures_it_reads_are(stores):
    from lscnb.results import Result, Store

    store = Store(stores / "results" / "fab")
    for name in ("all", "one"):
        for run in _Reading.FIGURES[name]("full"):
            store.save(Result(run.key, {}, {}, {}, {"device_name": "D", "date": "2026-01-02T00:00:00+00:00"}))
    by_source = lambda: {r["source"]: r["status"] for r in status.chapter_rows("fab", _Reading)}  # noqa: E731
    assert by_source() == {
        "Fig. 1": "full run partial (all 2 of its runs; figure later, shown beside them, owed)",
        "Fig. 2": "paper scale (2026-01-02)",
        "Fig. 3": "quick scale only (full run owed)",
    }
    assert status.kind({"status": by_source()["Fig. 1"]}) == "partial"
    store.save(Result(_Reading.FIGURES["later"]("full")[0].key, {}))
    assert by_source()["Fig. 1"].startswith("full run partial")  # half of "later" is not enough
    store.save(Result(_Reading.FIGURES["later"]("full")[1].key, {}))
    assert by_source()["Fig. 1"] == "paper scale (2026-01-02)"


def test_a_figure_reads_only_declared_other_figures():
    with pytest.raises(ValueError, match="not declared: \\['nope'\\]"):
        declare(Figure("a", _Chapter._runs("a", 1), reads=("nope",)))
    with pytest.raises(ValueError, match="reads must name other figures"):
        Figure("a", _Chapter._runs("a", 1), reads=("a",))


def test_the_book_declares_what_its_composite_figures_read():
    """The figures whose plot shows another figure's runs say so (and so are partial until those are committed)."""
    reads = {(ch, f): fig.reads for ch in chapters() for f, fig in chapter_module(ch).FIGURES.items() if fig.reads}
    assert reads[("corelnet", "nhid")] == ("ood", "unseen", "mcurve")
    assert reads[("corelnet", "sensory")] == ("unseen", "games")
    assert reads[("nnrnn", "theta")] == ("psmnist",)
