"""Fig. C.12: relational-only models against their relational + sensory versions on the unseen-relation tasks and
the Relational Games (figure ``sensory``)."""

from __future__ import annotations

import numpy as np

from ... import plot
from ...data.relational_games import GAMES
from ...sweep import Run, at_scale_of
from .common import CAT_PAIRS, CHAPTER, CURVE_MODELS, UNSEEN_M
from .games import GAMES_SIZES, TABLE_5_1, games_run
from .unseen import UNSEEN_SIZES, unseen_run

# --------------------------------------------------------------------------------------------- Fig. C.12
SENSORY_SIZES = {
    "quick": dict(unseen=["rmts3"], games=["row_matching"], models=["cat"], seeds=[0]),
    "full": dict(
        unseen=["same_diff6", "rmts3", "identity_rules4"],
        games=list(GAMES),
        models=list(CAT_PAIRS.values()),
        seeds=[0, 1, 2],
    ),
}
"""Fig. C.12: the relational + sensory versions of CoRelNet, CoRelNet-T and ESBN (:data:`CAT_PAIRS`) on the
unseen-relation tasks (left) and the 7 Relational Games (right), each run with the set-up of figure ``unseen`` or
``games`` (steps, learning rate, test size of the profile), whose runs of the three models are the relational-only
side. Quick: CoRelNet on RMTS 3 and row matching (CoRelNet-T and ESBN are not in those figures' quick runs)."""


def sensory_runs(scale: str) -> list[Run]:
    s, u, g = SENSORY_SIZES[scale], UNSEEN_SIZES[scale], GAMES_SIZES[scale]
    it = u["iters"]["corelnet"]
    return [
        Run(
            CHAPTER,
            "sensory",
            f"{task}-{model}-s{seed}",
            unseen_run,
            dict(
                task=task,
                model=model,
                m=UNSEEN_M[task],
                iters=min(it, u["cap"].get(task, it)),
                lr=u["lr"],
                test=u["test"],
                seed=seed,
            ),
        )
        for task in s["unseen"]
        for model in s["models"]
        for seed in s["seeds"]
    ] + [
        Run(
            CHAPTER,
            "sensory",
            f"game-{task}-{model}-s{seed}",
            games_run,
            dict(task=task, model=model, iters=g["iters"], lr=g["lr"], test=g["test"], seed=seed),
        )
        for task in s["games"]
        for model in s["models"]
        for seed in s["seeds"]
    ]


def _game_acc(r) -> float:
    """Fig. C.12's score of a game run: the mean of hexominoes and stripes where the thesis reports both."""
    return (
        float(np.mean([r["hexominoes"], r["stripes"]]))
        if (r.config["task"], "stripes") in TABLE_5_1
        else r["hexominoes"]
    )


def _panels(sens, un, gm) -> tuple[list, list]:
    """Fig. C.12's panels, as (name, relational-only results) pairs: those whose relational-only side (figure
    ``unseen`` or ``games``) is at the scale of ``sens``, and the others. Full relational + sensory runs against
    quick relational-only ones (a replay while one side's full runs are owed) would compare two set-ups, not two
    models."""
    kept = [id(c) for c in at_scale_of(sens, un, gm)]
    both = [("unseen relations", un), ("Relational Games", gm)]
    return [p for p in both if id(p[1]) in kept], [p for p in both if id(p[1]) not in kept]


def sensory_table(sens, un, gm) -> list[dict]:
    """Fig. C.12: one row per panel, the mean OOD accuracy of the relational-only models (figures ``unseen`` and
    ``games``) and of their relational + sensory versions (figure ``sensory``), over the (model, task) pairs of
    :data:`CAT_PAIRS` that both sides have, each averaged over seeds first; a panel whose relational-only side is at
    another scale than ``sens`` is left out (:func:`_panels`)."""
    rows = []
    for panel, base in _panels(sens, un, gm)[0]:
        game = panel == "Relational Games"
        score = _game_acc if game else (lambda r: r["ood"])
        acc = {}
        for r in [r for r in base if r.config["model"] in CAT_PAIRS] + [r for r in sens if ("hexominoes" in r) == game]:
            acc.setdefault(r.config["model"], {}).setdefault(r.config["task"], []).append(score(r))
        cells = [(m, c, t) for m, c in CAT_PAIRS.items() for t in sorted(set(acc.get(m, {})) & set(acc.get(c, {})))]
        if cells:
            rows.append(
                {
                    "panel": panel,
                    "models": ", ".join(dict.fromkeys(CURVE_MODELS[m] for m, _, _ in cells)),
                    "tasks": ", ".join(dict.fromkeys(t for _, _, t in cells)),
                    "relational only": float(np.mean([np.mean(acc[m][t]) for m, _, t in cells])),
                    "relational + sensory": float(np.mean([np.mean(acc[c][t]) for _, c, t in cells])),
                }
            )
    return rows


def show_sensory(sens, un, gm) -> None:
    rows = sensory_table(sens, un, gm)
    if not rows:
        raise ValueError("no panel of Fig. C.12 has both sides at one scale: run figures unseen and games at it")
    fig, ax = plot.figure(len(rows), 1, width=3.4 * len(rows) + 1, height=3.2)
    for a, r in zip(ax[0], rows):
        a.bar([0, 1], [r["relational only"], r["relational + sensory"]], 0.6, color=["C0", "C2"])
        a.set_xticks([0, 1], ["relational only", "relational\n+ sensory"])
        a.set(title=f"{r['panel']} (Fig. C.12)", ylim=(0, 1.05))
    ax[0, 0].set_ylabel("mean OOD test accuracy")
    plot.show(
        fig,
        sens,
        un,
        gm,
        data="ESBN object images; Relational Games re-created; random frozen encoders",
        note="Averaged over " + "; ".join(f"{r['panel']}: {r['models']}" for r in rows) + ". Fig. C.12 of the "
        "thesis averages ESBN, CoRelNet and CoRelNet-T and prints bars only: relational only above "
        "relational + sensory on both panels."
        + "".join(
            f" Left out here: {name}, whose relational-only runs are at {col.scale} scale and the relational + "
            f"sensory ones at {sens.scale} scale."
            for name, col in _panels(sens, un, gm)[1]
        ),
    )
