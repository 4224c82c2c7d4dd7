"""Chapter "Mean-field theory of gated RNNs": sweeps and figures (Gilboa et al. 2019).

Figures: ``dynamics`` (Fig. 5: GRU order parameters, theory vs untied and tied networks), ``spectrum`` (Fig. 4:
squared singular values of the peephole LSTM's Jacobian against the corrected moments), ``backprop`` (tied vs
untied gradient decay against 1/2 log m1), ``length`` (Fig. 1: held-out accuracy vs length, standard vs
critical tied peephole LSTM), ``curves`` (Fig. 3: training curves on replicated-pixel and concatenated
digits), ``table2`` (Table 2, MNIST column: pixel-by-pixel test accuracy), ``heatmap`` (Figs. 2 and 6:
trainability of untied and tied GRUs on padded digits against 3 xi and 6 xi) and ``cellstate`` (Fig. 7: the
LSTM's stationary cell state, population dynamics vs network).
"""

from __future__ import annotations

from ...figures import Figure, Item, declare
from .common import CHAPTER  # noqa: F401
from .critical import (  # noqa: F401
    curve_counts,
    curve_runs,
    curves_table,
    gap_curves,
    gap_length,
    gap_table2,
    length_runs,
    length_table,
    longest_trainable,
    show_curves,
    show_length,
    table2_rows,
    table2_runs,
)
from .dynamics import (  # noqa: F401
    GRU_FIG5,
    cellstate_errors,
    cellstate_runs,
    dynamics_errors,
    dynamics_runs,
    explore_figure,
    gru_chi_errata,
    show_cellstate,
    show_dynamics,
)
from .heatmap import (  # noqa: F401
    gap_heatmap,
    heatmap_claims,
    heatmap_runs,
    show_heatmap,
)
from .spectrum import (  # noqa: F401
    backprop_runs,
    backprop_table,
    gap_spectrum,
    show_backprop,
    show_spectrum,
    spectrum_runs,
    spectrum_table,
)

NOTEBOOK = "book/meanfield.ipynb"

# the smoke test's shrink: config entries that make a full-profile run take seconds (lscnb.figures.smoke_runs);
# the MNIST figures run on the 8x8 digits there
SMOKE = dict(width=24, seeds=1, steps=12, samples=500, iters=3)

FIGURES = declare(
    Figure(
        "length",
        length_runs,
        smoke=dict(length=3, source="sklearn", limit=300, held_out=50),
        items=[
            Item(
                source="Fig. 1",
                what="accuracy vs sequence length, standard vs critical peephole LSTM",
                data="quick: scikit-learn digits; full: real MNIST, pooled",
                gap=gap_length,
                note="padded digits as the task (the paper's is unstated); tied weights",
            )
        ],
        subset="padded digits as the task (the paper's Fig. 1 task is not stated); "
        "N = 128 instead of 600; 2,000 Adam iterations instead of 8,000; 1 seed",
        show=show_length,
        table=length_table,
    ),
    Figure(
        "heatmap",
        heatmap_runs,
        smoke=dict(length=3, source="sklearn", limit=200),
        items=[
            Item(
                source="Fig. 2",
                what="trainability heatmaps on padded MNIST against 3ξ and 6ξ",
                data="quick: scikit-learn digits; full: real MNIST, pooled",
                note="GRU-a direction only; LSTM panel not yet",
                gap=gap_heatmap,
            ),
            Item(
                source="Fig. 6",
                what="Fig. 2 with tied weights",
                data="quick: scikit-learn digits; full: real MNIST, pooled",
                note="GRU-a direction only",
            ),
        ],
        subset="the GRU-a direction only (the paper also shows LSTM panels); MNIST 2x2-pooled; 1 seed",
        show=show_heatmap,
    ),
    Figure(
        "curves",
        curve_runs,
        smoke=dict(source="sklearn", limit=300, dim=8, repeat=1, probe=16, every=2),
        data_counts=curve_counts,
        items=[
            Item(
                source="Fig. 3",
                what="training curves, concatenated and pixel-replicated MNIST",
                data="quick: scikit-learn digits; full: real MNIST",
                gap=gap_curves,
                note="tied peephole LSTM, SGD + momentum, clipping 1.0; repetitions and digit counts are our choice; "
                "the paper's very long lengths (standard fails, critical still trains) need the GPU plan",
            )
        ],
        subset="N = 256 (the paper's other LSTMs have 600); repetitions k = 1, 2, 5 and 1, 2, 3 concatenated digits, "
        "T = 70 to 560 (the paper states neither its lengths nor its iterations; Fig. 1's are 8,000); "
        "1,000 iterations; 1 seed",
        show=show_curves,
        table=curves_table,
    ),
    Figure(
        "spectrum",
        spectrum_runs,
        items=[
            Item(
                source="Fig. 4",
                what="squared singular values of the Jacobian, theory mean and std",
                data="generated Gaussian inputs",
                note="",
                gap=gap_spectrum,
            )
        ],
        show=show_spectrum,
        table=spectrum_table,
    ),
    Figure(
        "dynamics",
        dynamics_runs,
        items=[
            Item(
                source="Fig. 5",
                what="GRU mean-field dynamics vs untied and tied networks; Q* vs μ_f",
                data="generated Gaussian inputs",
                note="",
            )
        ],
        show=show_dynamics,
    ),
    Figure(
        "cellstate",
        cellstate_runs,
        items=[
            Item(
                source="Fig. 7",
                what="LSTM stationary cell state, theory vs network",
                data="generated Gaussian inputs",
                note="",
            )
        ],
        show=show_cellstate,
    ),
    Figure(
        "table2",
        table2_runs,
        smoke=dict(source="sklearn", limit=200),
        items=[
            Item(
                source="Table 2",
                what="test accuracy on sequential MNIST and CIFAR-10, standard vs critical",
                data="quick: scikit-learn digits; full: MNIST; CIFAR-10 not available offline",
                gap=gap_table2,
                note="MNIST column only (CIFAR-10 owed: loader ready, data not offline); full run owed",
            )
        ],
        subset="MNIST column only (CIFAR-10 is not available offline); "
        "3,000 Adam iterations (about 6 epochs), not full training; 1 seed",
    ),
    Figure("backprop", backprop_runs, smoke=dict(length=10), show=show_backprop, table=backprop_table),
)
# the paper's figures and tables the chapter reproduces without a training run (closed forms, exact counts,
# drawings of generated trials or of an untrained model): nothing to scale up
WITHOUT_RUNS = [
    Item(
        source="Tables 1, 3",
        what="the gated architectures as special cases of eq. (1)",
        data="none",
        note="rendered from the cell's own expressions (unified.EQUATIONS), checked against the cell (no numbers)",
    )
]
