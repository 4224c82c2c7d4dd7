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
