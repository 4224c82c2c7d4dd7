import pytest

from lscnb import status
from lscnb.experiments import chapter_module, chapters


@pytest.mark.parametrize("name", sorted(chapters()))
def test_every_chapter_declares_well_formed_reproductions(name):
    module = chapter_module(name)
    status.check_entries(module)


def test_check_entries_rejects_unknown_figure():
    class Fake:
        __name__ = "fake"
        FIGURES = {"a": lambda scale: []}
        REPRODUCES = [{"source": "Fig. 1", "what": "x", "figure": "b", "data": "generated"}]
    with pytest.raises(ValueError, match="not in FIGURES"):
        status.check_entries(Fake)


def test_rows_and_summary(stores):
    table = status.rows()
    assert table, "no chapter declares REPRODUCES"
    counts = status.summary(table)
    assert sum(counts.values()) == len(table)
    assert all(r["status"] for r in table)
    assert "| source |" in status.markdown(table)
