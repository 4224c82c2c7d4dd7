"""lscnb.results and lscnb.status pinned against answers they do not compute: the checkout's results folder from any
working directory, the temporary an atomic write makes, and status HTML and rows checked by their exact text (issue
27)."""

import re
from pathlib import Path

from lscnb import results, status
from lscnb.figures import Item


# --------------------------------------------------------------------------------------------- results
def test_results_root_is_the_checkouts_from_any_working_directory(tmp_path, monkeypatch):
    """Inside a checkout (a folder with _toc.yml) results live in <checkout>/results, not under the cwd."""
    monkeypatch.delenv("LSCNB_RESULTS", raising=False)
    monkeypatch.chdir(tmp_path)
    checkout = Path(results.__file__).resolve().parent.parent
    assert (checkout / "_toc.yml").exists()
    assert results.results_root() == checkout / "results"


def test_atomic_write_goes_through_a_hidden_temporary_beside_the_target(tmp_path):
    """While writing, the only file is .<name>.<random>.tmp in the target's own folder; then only the target."""
    target = tmp_path / "fig" / "run.json"
    during = []

    def write(fh):
        during.extend(p.name for p in target.parent.iterdir())
        fh.write(b"{}")

    results._atomic_write(target, write)
    assert len(during) == 1 and re.fullmatch(r"\.run\.json\.[A-Za-z0-9_]+\.tmp", during[0]), during
    assert [p.name for p in target.parent.iterdir()] == ["run.json"] and target.read_bytes() == b"{}"


# --------------------------------------------------------------------------------------------- status
def test_rows_without_a_plan_read_no_plan(monkeypatch):
    """plan=None: no estimate is looked up at all."""

    def no_plan(*args, **kwargs):
        raise AssertionError("estimates read")

    row = {"chapter": "c", "figure": "f", "status": "quick scale only (full run owed)"}
    monkeypatch.setattr(status, "estimates", no_plan)
    monkeypatch.setattr(status, "chapter_module", lambda name: None)
    monkeypatch.setattr(status, "chapter_rows", lambda name, module: [dict(row)])
    assert status.rows(["c"], plan=None) == [row]


class _Result:
    provenance: dict = {}


def test_gap_sees_a_question_mark_for_an_unrecorded_device():
    """A result without a device_name in its provenance gives the gap's collection the device "?"."""
    item = Item("Fig. 1", "w", "generated", gap=lambda col: f"on {col.device_name}")
    assert status._gap("ch", "fig", item, {"results": [_Result()], "runs": 1}) == "on ?"


def _row(chapter, gap="—", figure="f", source="S"):
    return {
        "chapter": chapter,
        "source": source,
        "what": "w",
        "data": "—",
        "note": "",
        "figure": figure,
        "status": "not reproduced",
        "hardware": "—",
        "gap": gap,
    }


def test_summary_rows_follow_each_other_directly():
    """Chapter a's line ends and chapter b's begins with nothing in between."""
    html = status.summary_html([_row("a"), _row("b")], style=False)
    assert "<td><code>a</code></td>" in html and '</tr><tr class=""><td><code>b</code></td>' in html


def test_widths_without_any_reference():
    """No reference text at all (every source a dash): the narrow reference column, no gap column to speak of."""
    assert status._widths([_row("c", source="—"), _row("c", source="")]) == (14, 56, 18, 12)


def test_an_empty_gap_shows_a_dash():
    """gap "" renders as the dimmed dash, as "—" does."""
    html = status.chapter_html([_row("c", gap="", figure="—")])
    assert '<td><span class="lscnb-st-none">—</span></td></tr></tbody>' in html


def test_a_long_gap_line_and_the_more_line_follow_each_other_directly():
    """A long gap's own line, then the figure's line, with nothing in between."""
    html = status.chapter_html([_row("c", gap="g" * 81)])
    assert (
        f'<tr class="lscnb-st-gap"><td colspan="3"><em>paper vs ours:</em> {"g" * 81}</td></tr>'
        '<tr class="lscnb-st-more"><td colspan="3">figure <code>f</code></td></tr></tbody>'
    ) in html
