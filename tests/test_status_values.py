"""The status page by value (issue 27): each piece against an answer written out here."""

import pytest
from status_fabricated import Chapter, row

from lscnb import status
from lscnb.experiments import chapter_module, chapters
from lscnb.figures import Figure, Item, declare


class _Provenanced:
    """A fabricated chapter whose committed runs carry chosen devices and dates (or none)."""

    __name__ = "provenanced"

    FIGURES = declare(
        Figure(
            "two",
            Chapter._runs("two", 2),
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
        Figure("bare", Chapter._runs("bare", 2), items=[Item("Fig. 2", "b")]),
        Figure("none", Chapter._runs("none", 1), items=[Item("Fig. 3", "c")]),
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
        "provenance": {},
        "missing": [r.key for r in _Provenanced.FIGURES["none"]("full")],
    }
    half = status.figure_state(_Provenanced, "bare")
    bare = _Provenanced.FIGURES["bare"]("full")
    assert half == {
        "runs": 2,
        "present": 1,
        "devices": ["?"],
        "dates": ["?"],
        "results": None,
        "provenance": {bare[0].key: {}},
        "missing": [bare[1].key],
    }
    done = status.figure_state(_Provenanced, "two")
    assert done["devices"] == ["Dev A", "Dev B"] and done["dates"] == ["2026-01-02", "2026-01-05"]
    assert done["missing"] == [] and done["provenance"][two[0].key]["device_name"] == "Dev B"
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
        row("a", "Fig. 1", "s1", gap="g|1", hardware="H", note="n"),
        row("b", "Tab. 2", "s2"),
        row("a", "F3", "s3"),
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
    part = [row("c", s, "quick scale only", gap=g) for s, g in zip(sources, gaps)]
    assert status._widths(part) == widths


def test_widths_ignore_a_missing_gap_key():
    assert status._widths([{"source": "s"}]) == (14, 56, 18, 12)


_BADGE = (
    '<span class="lscnb-st-badge" style="background:#2e8b57" title="paper scale (2026-01-02)">paper scale</span>'
    '<span class="lscnb-st-sub">2026-01-02</span>'
)


def test_chapter_html_by_value():
    part = [
        row("a", "Fig. 1", "paper scale (2026-01-02)", gap="0.9 vs 1.0"),
        row("a", "Fig. 2", "quick", gap="g" * 80, figure="—", data="", hardware="Intel(R) Xeon(R) (2 cores)"),
        row("a", "Fig. 3", "odd (x) (y)", gap="g" * 81, figure="", data="—"),
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
        '<div class="lscnb-st-bar" role="img" aria-label="1 paper scale, 0 partial, 0 quick only, 0 no run needed, '
        '0 not reproduced">'
        '<span style="width:100.000%;background:#2e8b57" title="paper scale: 1"></span></div>'
    )
    heads = "".join(
        f'<th class="lscnb-st-n" style="width:11%"><span class="lscnb-st-swatch" style="background:{c}"></span>{k}</th>'
        for k, c in [
            ("paper scale", "#2e8b57"),
            ("partial", "#e3a21a"),
            ("quick only", "#7fb2dc"),
            ("no run needed", "#a9cdb5"),
            ("not reproduced", "#c8c8c8"),
        ]
    )
    expected = (
        '<div class="lscnb-status"><table class="lscnb-st lscnb-st-summary"><thead><tr><th style="width:14%">chapter'
        f'</th>{heads}<th class="lscnb-st-n" style="width:8%">total</th><th></th></tr></thead><tbody>'
        f'<tr class=""><td><code>a&amp;b</code></td>{one}{zero}{zero}{zero}{zero}{one}<td>{bar}</td></tr>'
        f'<tr class="lscnb-st-total"><td>all</td>{one}{zero}{zero}{zero}{zero}{one}<td>{bar}</td></tr></tbody>'
        "</table></div>"
    )
    table = [row("a&b", "Fig. 1", "paper scale (2026-01-02)")]
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
    for run in Chapter.FIGURES["done"]("full") + Chapter.FIGURES["half"]("full")[:1]:
        store.save(Result(run.key, dict(run.config), {"value": float(run.config["i"])}, {}, {"date": "2026-01-02"}))
    plan = {
        "figures": [{"chapter": "fab", "figure": f, "est_s": 120.0, "bound": "~"} for f in ("done", "half", "owed")]
    }
    (stores / "results" / "plan-cpu.json").write_text(json.dumps(plan))
    (stores / "results" / "plan-gpu.json").write_text(json.dumps({**plan, "device_name": "G"}))
    monkeypatch.setattr(status, "chapter_module", lambda name: Chapter)
    table = {r["source"]: r for r in status.rows(["fab"])}
    assert table["Fig. 2"]["estimate"] == "full runs est. ~2 min on cpu, plan of ?"  # partial
    assert table["Fig. 3"]["estimate"] == "full runs est. ~2 min on cpu, plan of ?"  # quick only
    assert not {"Fig. 1", "Tab. 1", "Tab. 2"} & {k for k, r in table.items() if "estimate" in r}  # none owed
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
        Figure("all", Chapter._runs("all", 2), items=[Item("Fig. 1", "a")], reads=("one", "later")),
        Figure("one", Chapter._runs("one", 1), items=[Item("Fig. 2", "b")]),
        Figure("later", Chapter._runs("later", 2), items=[Item("Fig. 3", "c")]),
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
        declare(Figure("a", Chapter._runs("a", 1), reads=("nope",)))
    with pytest.raises(ValueError, match="reads must name other figures"):
        Figure("a", Chapter._runs("a", 1), reads=("a",))


def test_the_book_declares_what_its_composite_figures_read():
    """The figures whose plot shows another figure's runs say so (and so are partial until those are committed)."""
    reads = {(ch, f): fig.reads for ch in chapters() for f, fig in chapter_module(ch).FIGURES.items() if fig.reads}
    assert reads[("corelnet", "nhid")] == ("ood", "unseen", "mcurve")
    assert reads[("corelnet", "sensory")] == ("unseen", "games")
    assert reads[("nnrnn", "theta")] == ("psmnist",)
