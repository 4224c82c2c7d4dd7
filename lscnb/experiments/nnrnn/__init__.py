"""Chapter "Non-normal recurrent networks" (Kerg et al. 2019; thesis ch. 3): sweeps and figures.

Figures: ``transients`` (Fig. 3.1b: transient amplification by feed-forward coupling of Schur modes), ``fmc``
(Fig. 3.1c and Table A.5: the Fisher memory curve and its sum), ``copy`` (Fig. 3.2, left: the copy task,
nnRNN vs expRNN vs vanilla RNN vs LSTM at equal width), ``psmnist`` (Fig. 3.2 right, Fig. A.1 right), ``theta``
(Fig. 3.3, A.2: the learned Schur factors), ``ptb`` (Tables 3.1, A.3: character-level Penn Treebank, BPC and
accuracy at T = 150 and 300) and ``gamma`` (Table A.6, Fig. A.3: gamma clamped, gradient propagation).
Tables A.1, A.2 and A.4 are rendered from the configurations the code trains with by :func:`hyper_table`.
"""

from __future__ import annotations

from ...figures import Figure, Item, declare
from .activations import show_activations
from .common import CHAPTER, _CellModel, _LSTMModel, effective_parameters, make_copy_model, make_model
from .copy_task import copy_final, copy_runs, gap_copy, show_copy
from .dynamics import CONFIGS, explore_figure, fmc_runs, gap_fmc, show_transients_fmc, table_a5, transients_runs
from .gamma import GAMMA_SUBSET, _gamma_variants, gamma_runs, gap_gamma, show_gamma, table_a6
from .hyper import THESIS_HYPER, hyper_table, quick_hyper_note
from .psmnist import (
    PSMNIST_HYPER,
    PSMNIST_MATCHED,
    PSMNIST_SUBSET,
    gap_psmnist,
    psmnist_data,
    psmnist_final,
    psmnist_runs,
    show_psmnist,
)
from .ptb import (
    PTB_HYPER,
    PTB_SUBSET,
    backprop_norms,
    gap_ptb,
    is_real_ptb,
    make_lm,
    ptb_counts,
    ptb_runs,
    show_ptb,
    table_3_1,
    unigram_bits,
)
from .theta import gap_theta, ptb_theta_stats, show_theta, show_theta_ptb, theta_results, theta_runs, theta_stats

NOTEBOOK = "book/nnrnn.ipynb"

__all__ = [
    "CHAPTER",
    "CONFIGS",
    "FIGURES",
    "NOTEBOOK",
    "WITHOUT_RUNS",
    "PSMNIST_HYPER",
    "PSMNIST_MATCHED",
    "PTB_HYPER",
    "THESIS_HYPER",
    "_CellModel",
    "_LSTMModel",
    "_gamma_variants",
    "backprop_norms",
    "copy_final",
    "effective_parameters",
    "explore_figure",
    "hyper_table",
    "is_real_ptb",
    "make_copy_model",
    "make_lm",
    "make_model",
    "psmnist_data",
    "psmnist_final",
    "ptb_theta_stats",
    "quick_hyper_note",
    "show_activations",
    "show_copy",
    "show_gamma",
    "show_psmnist",
    "show_ptb",
    "show_theta",
    "show_theta_ptb",
    "show_transients_fmc",
    "table_3_1",
    "table_a5",
    "table_a6",
    "theta_results",
    "theta_stats",
    "unigram_bits",
]

# the smoke test's shrink: config entries that make a full-profile run take seconds (lscnb.figures.smoke_runs)
SMOKE = dict(
    iters=3,
    width=8,
    T=5,
    samples=10,
    steps=20,
    pool=7,
    n_train=20,
    n_eval=10,
    epochs=1,
    batch=10,
    length=3,
    emb=4,
    eval_batch=2,
)

FIGURES = declare(
    Figure(
        "transients",
        transients_runs,
        items=[
            Item(
                source="Fig. 3.1b",
                what="transient amplification by feed-forward Schur coupling",
                data="closed-form linear dynamics",
                note="",
            )
        ],
    ),
    Figure(
        "fmc",
        fmc_runs,
        items=[
            Item(
                source="Fig. 3.1c, Table A.5",
                what="Fisher memory curves and their sums",
                data="closed form",
                note="d = 0.2 rows are ill-conditioned in float64 (120-digit references shown)",
                gap=gap_fmc,
            )
        ],
    ),
    Figure(
        "copy",
        copy_runs,
        items=[
            Item(
                source="Fig. 3.2 (left), Fig. A.1",
                what="copy task: nnRNN vs orthogonal RNNs vs RNN vs LSTM",
                data="copy task, generated",
                note="equal width only",
                gap=gap_copy,
            )
        ],
        subset="3 seeds; equal width only (the matched-parameter Fig. A.1 not yet)",
        show=show_copy,
    ),
    Figure(
        "psmnist",
        psmnist_runs,
        items=[
            Item(
                source="Fig. 3.2 (right), Fig. A.1 (right)",
                what="psMNIST validation accuracy, equal width and equal parameters",
                data="MNIST (real)",
                note=PSMNIST_SUBSET,
                gap=gap_psmnist,
            )
        ],
        subset=PSMNIST_SUBSET,
        show=show_psmnist,
    ),
    Figure(
        "ptb",
        ptb_runs,
        items=[
            Item(
                source="Table 3.1, Table A.3",
                what="PTB character-level BPC and accuracy",
                data="PTB (characters, real)",
                note=PTB_SUBSET,
                gap=gap_ptb,
            )
        ],
        subset=PTB_SUBSET,
        show=show_ptb,
        data_counts=ptb_counts,
    ),
    Figure(
        "theta",
        theta_runs,
        items=[
            Item(
                source="Fig. 3.3, Fig. A.2",
                what="learned Theta decomposed into Lambda and T",
                data="copy task, MNIST",
                note="copy panel here; psMNIST panel (Fig. A.2) from the psmnist runs; PTB panel (3.3b) not yet",
                gap=gap_theta,
            )
        ],
        subset="one seed per task; the PTB panels are drawn from Table 3.1's runs",
        show=show_theta,
        reads=("psmnist",),
    ),
    Figure(
        "gamma",
        gamma_runs,
        items=[
            Item(
                source="Table A.6, Fig. A.3",
                what="gamma clamped; gradient propagation on PTB",
                data="PTB (characters, real)",
                note=GAMMA_SUBSET,
                gap=gap_gamma,
            )
        ],
        subset=GAMMA_SUBSET,
        show=show_gamma,
        reads=("ptb",),
        data_counts=ptb_counts,
    ),
)


# the paper's figures and tables the chapter reproduces without a training run (closed forms, exact counts,
# drawings of generated trials or of an untrained model): nothing to scale up
WITHOUT_RUNS = [
    Item(
        source="Fig. 2.1",
        what="activation functions (and modReLU)",
        data="none",
        note="closed forms, drawn in the chapter (show_activations)",
    ),
    Item(
        source="Tables A.1, A.2, A.4",
        what="hyper-parameters",
        data="",
        note="rendered from the configurations the code uses (hyper_table), thesis differences stated",
    ),
]
