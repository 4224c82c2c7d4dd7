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


def _made(cfg, ctx):
    return {"value": float(cfg["i"])}


class _Chapter:
    """A fabricated chapter: figure 'done' has both full runs committed, 'half' one of two, 'owed' none."""

    __name__ = "fabricated"

    @staticmethod
    def _runs(figure, n):
        from lscnb.sweep import Run

        return lambda scale: [Run("fab", figure, f"r{i}", _made, {"i": i, "scale": scale}) for i in range(n)]

    FIGURES = {"done": _runs("done", 2), "half": _runs("half", 2), "owed": _runs("owed", 1)}
    REPRODUCES = [
        {
            "source": "Fig. 1",
            "what": "a",
            "figure": "done",
            "data": "generated",
            "gap": lambda col: f"{sum(r.metrics['value'] for r in col):.1f} vs 1.5",
        },
        {"source": "Fig. 2", "what": "b", "figure": "half", "data": "generated"},
        {"source": "Fig. 3", "what": "c", "figure": "owed", "data": "generated", "gap": lambda col: "never"},
        {"source": "Tab. 1", "what": "d", "figure": None, "data": "—"},
        {"source": "Fig. 4", "what": "e", "figure": "done", "data": "generated", "gap": lambda col: 1 / 0},
    ]


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
    assert [r["status"] for r in table] == [
        "paper scale (2026-01-02)",
        "full run partial (1/2 runs); quick in the book",
        "quick scale only (full run owed)",
        "not reproduced",
        "paper scale (2026-01-02)",
    ]
    assert [r["gap"] for r in table] == ["1.0 vs 1.5", "—", "—", "—", "(gap not computable: ZeroDivisionError)"]
    assert table[0]["hardware"] == prov["device_name"] and table[2]["hardware"] == table[3]["hardware"] == "—"
    assert status.summary(table) == {"paper scale": 2, "partial": 1, "quick only": 1, "not reproduced": 1}
