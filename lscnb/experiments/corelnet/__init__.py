"""Chapter "Relational inductive biases and CoRelNet" (Kerg et al. 2022; thesis ch. 5, 7): sweeps and figures.

Figures: ``ood`` (Fig. 5.3: out-of-distribution accuracy on the four basic tasks, CoRelNet vs a Transformer),
``ablation`` (Fig. 5.4: relational-only vs relational + sensory, symmetric vs asymmetric similarity) and
``comparison`` (ch. 7: an antisymmetric relation, CoRelNet vs CoRelNet diff). All runs use the thesis's
random-encoder condition: a random, frozen conv encoder embeds the 100 objects once.

One module a figure group: :mod:`.common` (models, training loop, shared tables), :mod:`.illustrations` (Figs. 5.1,
5.2), :mod:`.ood` (Figs. 5.3, 5.4, C.6), :mod:`.unseen` (Figs. 5.5, C.1, C.2), :mod:`.encoders` (Figs. 5.4 right, 5.6,
C.3), :mod:`.games` (Table 5.1), :mod:`.baselines` (Figs. C.13, C.5), :mod:`.curves` (Figs. C.4, C.7-C.11),
:mod:`.sensory` (Fig. C.12) and :mod:`.comparison` (ch. 7); this module declares the chapter's figures.
"""

from __future__ import annotations

from ...data.relational import UNSEEN  # noqa: F401
from ...figures import Figure, Item, declare
from .baselines import (  # noqa: F401
    baseline_runs,
    baseline_table,
    gap_baselines,
    nhid_runs,
    nhid_table,
    show_baselines,
    show_nhid,
)
from .common import (  # noqa: F401
    CAT_PAIRS,
    CHAPTER,
    CURVE_MODELS,
    EXTREME_M,
    accuracy_table,
    build,
    make_model,
    task_run,
)
from .comparison import (  # noqa: F401
    MIX_MODELS,
    SIZE_MODELS,
    comparison_runs,
    gap_mix,
    mix_runs,
    show_comparison,
    show_mix,
    show_sizes,
    sizes_run,
    sizes_runs,
)
from .curves import (  # noqa: F401
    CURVE_LABELS,
    _base_model,
    ablation_average,
    ablation_sources,
    curve_drop,
    curve_rows,
    gap_unseen_encoder,
    mcurve_cat_runs,
    mcurve_encoder_runs,
    mcurve_sym_runs,
    mcurve_unseen_encoder_runs,
    mcurve_unseen_runs,
    separated_runs,
    series_table,
    show_ablation_average,
    show_curves,
)
from .encoders import (  # noqa: F401
    ENCODERS,
    encoder_runs,
    encoder_table,
    show_spurious,
    show_spurious_models,
    spurious_by_model,
    spurious_model_table,
    spurious_runs,
    spurious_table,
)
from .games import (  # noqa: F401
    GAME_MODELS,
    TABLE_5_1,
    _game_model,
    games_run,
    games_runs,
    games_table,
    gap_games,
)
from .illustrations import (  # noqa: F401
    LAYOUT,
    answer_positions,
    draw_trial,
    show_bottleneck,
    show_tasks,
)
from .ood import (  # noqa: F401
    ablation_runs,
    curve_table,
    gap_ood,
    mcurve_runs,
    ood_runs,
    show_mcurve,
    show_ood,
)
from .sensory import (  # noqa: F401
    sensory_runs,
    sensory_table,
    show_sensory,
)
from .unseen import (  # noqa: F401
    show_unseen,
    show_variants,
    unseen_run,
    unseen_runs,
    unseen_table,
    variant_runs,
    variant_table,
)

NOTEBOOK = "book/corelnet.ipynb"

_SUBSET = "m in {0, 50, 85, extreme}, 3 of 10 seeds"


# the smoke test's shrink: config entries that make a full-profile run take seconds (lscnb.figures.smoke_runs)
SMOKE = dict(iters=2, test=10)

FIGURES = declare(
    Figure(
        "ood",
        ood_runs,
        items=[
            Item(
                source="Fig. 5.3",
                what="OOD accuracy on the four basic tasks",
                data="ESBN object images (offline glyphs if absent)",
                note="CoRelNet and Transformer only (ESBN, CoRelNet-T in figure mcurve); PrediNet only on the games",
                gap=gap_ood,
            )
        ],
        subset="extreme m only, 3 of 10 seeds, random frozen encoder",
        show=show_ood,
    ),
    Figure(
        "ablation",
        ablation_runs,
        items=[
            Item(
                source="Fig. 5.4",
                what="relational vs relational + sensory; symmetric vs asymmetric",
                data="ESBN object images",
                note="CoRelNet ablations; random vs learned encoder is figure 'encoder'; the "
                "thesis's three-model averages recomputed from the curves' runs at the "
                "extreme split (ablation_average; ESBN and the encoder panel in full)",
            )
        ],
        subset="extreme m only, random frozen encoder",
        reads=("ood", "mcurve", "mcurve_cat", "mcurve_sym", "encoder"),
    ),
    Figure(
        "encoder",
        encoder_runs,
        items=[
            Item(
                source="Fig. 5.4 (right)",
                what="random frozen vs learned conv encoder",
                data="ESBN object images",
                note="quick: same/different, CoRelNet, 100 steps; full: 4 tasks, CoRelNet and CoRelNet-T, ESBN on "
                "same/different only (its other 18 runs, ~4 h of a CPU core, left out)",
            )
        ],
        subset="extreme m only, 3 of 10 seeds, ESBN on same/different only",
        table=encoder_table,
    ),
    Figure(
        "games",
        games_runs,
        items=[
            Item(
                source="Table 5.1, Table C.2",
                what="Relational Games OOD accuracy",
                data="Relational Games re-created (pentominoes; hexominoes and stripes OOD), not DeepMind's files",
                note="quick: row matching and colour/shape, CoRelNet, PrediNet and Transformer, 150 steps; full: 7 "
                "games, CoRelNet, CoRelNet-T, PrediNet and the Transformer (4 of Table 5.1's 5 models: ESBN and Table "
                "C.2's LSTM, RN, NTM and MNM, ~23 h of a CPU core, left out); rankings compare, values do not",
                gap=gap_games,
            )
        ],
        subset="re-created games, random frozen patch encoder, 3 of 10 seeds, 4 of Table 5.1's 5 models (no ESBN), "
        "none of Table C.2's 4 baselines",
        table=games_table,
    ),
    Figure(
        "unseen",
        unseen_runs,
        items=[
            Item(
                source="Fig. 5.5 (left)",
                what="unseen relations (RMTS3, same/diff6, identity rules 4 and 4 missing)",
                data="ESBN object images",
                note="quick: CoRelNet and an MLP at lr 2e-3; full: six models (no PrediNet) at the paper's 5000 steps, "
                "5e-4; "
                "the right panel (random vs learned encoder) is figure mcurve_unseen_encoder",
            )
        ],
        subset="extreme m only, 3 of 10 seeds, random frozen encoder, no PrediNet",
        show=show_unseen,
        table=unseen_table,
    ),
    Figure(
        "spurious",
        spurious_runs,
        items=[
            Item(
                source="Fig. 5.6",
                what="spurious colour features: random vs learned encoder (+ L1)",
                data="ESBN object images on 100 background colours",
                note="quick: dist3, CoRelNet, random encoder vs a learned linear layer on it; full: 4 tasks, CoRelNet "
                "and ESBN, random / learned / learned + L1 conv encoder (made on a CPU)",
            ),
            Item(
                source="Fig. C.3",
                what="spurious colour features per model (Fig. 5.6 per model)",
                data="ESBN object images on 100 background colours",
                note="a per-model view of figure spurious's runs (quick: CoRelNet only; full: CoRelNet and ESBN)",
            ),
        ],
        subset="extreme m only, 3 of 10 seeds, CoRelNet and ESBN",
        show=show_spurious,
        table=spurious_table,
    ),
    Figure(
        "mcurve",
        mcurve_runs,
        items=[
            Item(
                source="Fig. C.6",
                what="accuracy vs m: CoRelNet, CoRelNet-T, ESBN vs Transformer, LSTM, MLP",
                data="ESBN object images",
                note="random frozen encoder; PrediNet not on these tasks; RN and NTM at extreme m in figure baselines",
            )
        ],
        subset="m in {0, 50, 85, extreme}, 3 of 10 seeds, random frozen encoder",
        show=show_mcurve,
    ),
    Figure(
        "baselines",
        baseline_runs,
        items=[
            Item(
                source="Fig. C.13",
                what="appendix baselines (MNM, NTM, LSTM, RN) at extreme m",
                data="ESBN object images",
                note="quick: same/different, RN and NTM, 100 steps; full: the eight tasks (basic and "
                "unseen relations), LSTM, RN and NTM; the MNM left out (24 runs, ~15 h of a CPU core)",
                gap=gap_baselines,
            )
        ],
        subset="extreme m, 3 of 10 seeds, random frozen encoder, no MNM",
        show=show_baselines,
        reads=("ood", "unseen"),
    ),
    Figure(
        "mcurve_encoder",
        mcurve_encoder_runs,
        items=[
            Item(
                source="Fig. C.8",
                what="accuracy vs m behind a random frozen vs a learned encoder (Fig. 5.4 right)",
                data="ESBN object images",
                note="extreme m from figure encoder; quick: same/different, CoRelNet, random encoder, m = 0; full: "
                "4 tasks, CoRelNet and CoRelNet-T, both encoders; ESBN (90 runs, ~30 h of a CPU core) at figure "
                "encoder's same/different point only",
            )
        ],
        subset=_SUBSET + ", CoRelNet and CoRelNet-T (ESBN: the extreme split on same/different)",
        reads=("encoder",),
    ),
    Figure(
        "mcurve_sym",
        mcurve_sym_runs,
        items=[
            Item(
                source="Fig. C.9",
                what="accuracy vs m, asymmetric vs symmetric similarity (Fig. 5.4 middle)",
                data="ESBN object images",
                note="asymmetric CoRelNet and CoRelNet-T and the symmetric Transformer beside figure mcurve's "
                "counterparts; quick: same/different, 60 steps; full: 4 tasks; the thesis's asymmetric ESBN is left "
                "out (48 runs, ~9 h of a CPU core)",
            )
        ],
        subset=_SUBSET + ", random frozen encoder, no asymmetric ESBN",
        reads=("mcurve",),
    ),
    Figure(
        "mcurve_unseen",
        mcurve_unseen_runs,
        items=[
            Item(
                source="Fig. C.10",
                what="accuracy vs m on the unseen-relation tasks (Fig. 5.5 left)",
                data="ESBN object images",
                note="extreme m from figure unseen (all six models); quick: RMTS 3, CoRelNet and MLP at m = 0; full: "
                "4 tasks, m in {0, 50, 85}, CoRelNet, CoRelNet-T, Transformer and MLP; ESBN and LSTM left out below "
                "the extreme split (72 runs, ~11 h of a CPU core); no PrediNet",
            )
        ],
        subset=_SUBSET + ", random frozen encoder, no PrediNet, ESBN and LSTM at the extreme split only",
        reads=("unseen",),
    ),
    Figure(
        "mcurve_unseen_encoder",
        mcurve_unseen_encoder_runs,
        items=[
            Item(
                source="Fig. C.11, Fig. 5.5 (right)",
                what="accuracy vs m on unseen relations, random vs learned encoder",
                data="ESBN object images",
                note="quick: RMTS 3, CoRelNet, random encoder, m in {0, 94}; full: 4 tasks, CoRelNet and "
                "CoRelNet-T, both encoders; ESBN left out (96 runs, ~30 h of a CPU core), so Fig. 5.5 (right) "
                "averages two of its three models",
                gap=gap_unseen_encoder,
            )
        ],
        subset=_SUBSET + ", CoRelNet and CoRelNet-T (no ESBN)",
    ),
    Figure(
        "separated",
        separated_runs,
        items=[
            Item(
                source="Fig. C.4",
                what="same/different with separated inputs (shape, colour, shape, colour) vs m",
                data="ESBN object images and 100 plain colours",
                note="quick: CoRelNet and Transformer at m in {0, 98}, 60 steps; full: ESBN, Transformer, CoRelNet at "
                "m in {0, 50, 85, 98}",
            )
        ],
        subset="m in {0, 50, 85, 98}, 3 of 10 seeds, random frozen encoder",
    ),
    Figure(
        "sensory",
        sensory_runs,
        items=[
            Item(
                source="Fig. C.12",
                what="relational only vs relational + sensory on unseen relations and Relational Games",
                data="ESBN object images; Relational Games re-created",
                note="cat variants of CoRelNet, CoRelNet-T and ESBN beside figures unseen's and games's runs; quick: "
                "CoRelNet on RMTS 3 and row matching; full: the three models, 3 tasks and 7 games; a panel is drawn "
                "where both sides are at one scale",
            )
        ],
        subset="3 of 10 seeds, random frozen encoder",
        show=show_sensory,
        table=sensory_table,
        reads=("unseen", "games"),
    ),
    Figure(
        "mcurve_cat",
        mcurve_cat_runs,
        items=[
            Item(
                source="Fig. C.7",
                what="accuracy vs m, relational only vs relational + sensory (Fig. 5.4 left)",
                data="ESBN object images",
                note="cat variants beside figure mcurve's relational-only curves; quick: CoRelNet and CoRelNet-T, "
                "same/different, m in {0, 98}, 60 steps; full: 4 tasks, ESBN + sensory on same/different only (its "
                "other 36 runs, ~7 h of a CPU core, left out)",
            )
        ],
        subset=_SUBSET + ", random frozen encoder, ESBN + sensory on same/different only",
        reads=("mcurve",),
    ),
    Figure(
        "variants",
        variant_runs,
        items=[
            Item(
                source="Figs. C.1, C.2",
                what="identity rules 4 flipped (+ missing), distribution-of-10 (+ restricted)",
                data="ESBN object images",
                note="quick: CoRelNet on identity rules 4 flipped and restricted distribution-of-10; full: the four "
                "tasks, the models of figure unseen but ESBN",
            )
        ],
        subset="3 of 10 seeds, random frozen encoder, no PrediNet, no ESBN",
        show=show_variants,
    ),
    Figure(
        "nhid",
        nhid_runs,
        items=[
            Item(
                source="Fig. C.5, Table C.3",
                what="CoRelNet-nhid (decoder widened to ESBN's parameter count) at extreme m",
                data="ESBN object images",
                note="widths give Table C.3's CoRelNet-nhid counts on 6 of 7 tasks (unit test, chapter table); quick: "
                "identity rules 4, 100 steps; full: the eight tasks",
            )
        ],
        subset="extreme m, 3 of 10 seeds, random frozen encoder",
        show=show_nhid,
        table=nhid_table,
        reads=("ood", "unseen", "mcurve"),
    ),
    Figure(
        "comparison",
        comparison_runs,
        items=[
            Item(
                source="Figs. 7.1-7.3",
                what="comparison tasks: symmetric similarity fails, differences succeed",
                data="ESBN object images, hidden order",
                note="a hidden-order variant",
            )
        ],
        show=show_comparison,
    ),
    Figure(
        "sizes",
        sizes_runs,
        items=[
            Item(
                source="Figs. 7.1, 7.2",
                what="comparison and transitive comparison of sizes",
                data="ESBN object images at 3 sizes",
                note="CoRelNet, asymmetric CoRelNet, CoRelNet diff (+ ESBN and "
                "asymmetric ESBN in full); CoRelNet_mix not run here",
            )
        ],
        subset="3 of 10 seeds, m = 95 held-out shapes (the thesis does not give m), no CoRelNet-mix",
        show=show_sizes,
    ),
    Figure(
        "mix",
        mix_runs,
        items=[
            Item(
                source="Fig. 7.3",
                what="the four basic tasks with CoRelNet_mix (competition of rules)",
                data="ESBN object images",
                note="CoRelNet diff and CoRelNet_mix (CoRelNet and asymmetric CoRelNet from figures ood, "
                "ablation); quick: 300 steps; ESBN and asymmetric ESBN not run (a GPU's: 3 h of a CPU core)",
                gap=gap_mix,
            )
        ],
        subset="extreme m only, 3 of 10 seeds, random frozen encoder, no ESBN or asymmetric ESBN",
        show=show_mix,
        reads=("ood", "ablation"),
    ),
)
# the paper's figures and tables the chapter reproduces without a training run (closed forms, exact counts,
# drawings of generated trials or of an untrained model): nothing to scale up
WITHOUT_RUNS = [
    Item(
        source="Fig. 5.1",
        what="task illustrations",
        data="ESBN object images, generated trials",
        note="one trial per basic task drawn from the generators (show_tasks), with the index sequences; no training",
    ),
    Item(
        source="Fig. 5.2",
        what="architecture diagram",
        data="ESBN object images",
        note="drawn from an untrained CoRelNet's tensors on one trial: objects, Z after TCN, R, decoder "
        "(show_bottleneck)",
    ),
    Item(
        source="Table C.3",
        what="parameter counts",
        data="none",
        note="CoRelNet rows reproduced exactly (unit test and chapter table)",
    ),
]
