"""A fabricated chapter and status-page rows for the status tests (tests/test_status.py and
tests/test_status_values.py)."""

from lscnb.figures import Figure, Item, declare


def made(cfg, ctx):
    return {"value": float(cfg["i"])}


class Chapter:
    """A fabricated chapter: figure 'done' has both full runs committed, 'half' one of two, 'owed' none; Tab. 2 is
    reproduced without runs, Tab. 1 not at all."""

    __name__ = "fabricated"

    @staticmethod
    def _runs(figure, n):
        from lscnb.sweep import Run

        return lambda scale: [Run("fab", figure, f"r{i}", made, {"i": i, "scale": scale}) for i in range(n)]

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
    WITHOUT_RUNS = [Item("Tab. 2", "f", "closed form")]
    NOT_RUN = [Item("Tab. 1", "d", "—")]


def row(chapter, source, status_text, gap="—", hardware="—", what="w", data="generated", note="", figure="f"):
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
