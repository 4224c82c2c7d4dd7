"""Chapter "The Local Stability Condition" (Herranz-Celotti & Rouat 2024): sweeps and figures.

Figures: ``lemma1`` (expected spectral radius of Gaussian matrices vs the chi-mean formula), ``corollary``
(radii of the transition derivatives of 30-layer FFNs per initialisation and activation), ``deep_gru``
(Fig. 1c, bottom: a 7-layer GRU pre-trained to rho = 1 and rho = 1/2, and its input gradient through time) and
``ffn`` (Fig. 2 at proxy scale: 30-layer FFNs, Glorot vs He vs LSC, accuracy against learning rate) and ``drnn``
(Fig. 3, a declared subset: d-RNNs on spike tasks, no pre-training vs rho = 1 vs rho = 1/2, depth 2 and 5), ``lru``
(Fig. 4: LRU stacks on Penn Treebank, default vs pre-trained initialisations, with and without gradient clipping)
``lru_table`` (Table I's configuration; at quick scale it shares Fig. 4's runs), ``covariance`` (Figs. S2-S3:
the Decaying Covariance of the time-transition norms, default and LSC-pre-trained) and ``lr_grid`` (Fig. S1: the
learning-rate grid search of LSTM and ALIF+ behind Tab. S1's rates).
"""

from __future__ import annotations

from ...figures import Figure, Item, declare
from .common import CHAPTER, input_gradient
from .covariance import covariance_runs, covariance_summary, decaying_covariance, show_covariance
from .deep_gru import deep_gru_runs, explore_figure, gru_claims, show_pascal_and_gru
from .drnn import drnn_runs, drnn_table, drnn_win_rates, early_late, show_drnn
from .ffn import ffn_runs, ffn_summary, show_ffn
from .lemma import corollary_runs, corollary_table, gap_lemma1, lemma1_runs, lemma1_table
from .lr_grid import LR_SUBSET, lr_grid_runs, lr_grid_table, lr_optima, show_lr_grid
from .lru import (
    LRU_SMOKE,
    LRU_SUBSET,
    LRU_TARGETS,
    _ptb,
    collect_lru_table,
    lru_runs,
    lru_summary,
    lru_table,
    lru_table_runs,
    lru_targets,
    show_lru,
)

NOTEBOOK = "book/lsc.ipynb"

__all__ = [
    "CHAPTER",
    "FIGURES",
    "LRU_TARGETS",
    "NOTEBOOK",
    "NOT_RUN",
    "WITHOUT_RUNS",
    "_ptb",
    "corollary_table",
    "covariance_summary",
    "decaying_covariance",
    "drnn_table",
    "drnn_win_rates",
    "early_late",
    "explore_figure",
    "ffn_summary",
    "gru_claims",
    "input_gradient",
    "lemma1_table",
    "lr_grid_runs",
    "lr_grid_table",
    "lr_optima",
    "lru_runs",
    "lru_summary",
    "lru_table",
    "lru_table_runs",
    "lru_targets",
    "show_covariance",
    "show_drnn",
    "show_ffn",
    "show_lr_grid",
    "show_lru",
    "show_pascal_and_gru",
]

FIGURES = declare(
    Figure(
        "deep_gru",
        deep_gru_runs,
        smoke=dict(depth=2, width=6, length=12, steps=2),
        items=[
            Item(
                source="Fig. 1c (bottom)",
                what="LSC-pre-trained deep GRU: rho = 1 explodes additively, 1/2 does not",
                data="synthetic spike trains (SHD not offline)",
                note="width 32 quick, 117 full",
            )
        ],
        subset="synthetic spike trains instead of SHD (not available offline)",
    ),
    Figure(
        "lemma1",
        lemma1_runs,
        smoke=dict(n=8, samples=4),
        items=[
            Item(
                source="Lemma 1",
                what="expected eigenvalue modulus of Gaussian matrices",
                data="generated",
                note="the 'vanishing variance' claim is wrong (Var → 1/2)",
                gap=gap_lemma1,
            )
        ],
        table=lemma1_table,
    ),
    Figure(
        "corollary",
        corollary_runs,
        smoke=dict(width=8, depth=4, seeds=1),
        items=[
            Item(
                source="Corollary 1",
                what="Glorot/He/orthogonal satisfy the LSC with rho = 1",
                data="generated Gaussian inputs",
                note="",
            )
        ],
        table=corollary_table,
    ),
    Figure(
        "ffn",
        ffn_runs,
        smoke=dict(width=8, depth=4, epochs=1, pre_steps=2, lrs=[1e-3]),
        items=[
            Item(
                source="Fig. 2",
                what="30-layer FFNs: accuracy vs learning rate for Glorot, He, LSC",
                data="proxy: scikit-learn digits (MNIST/CIFAR not run yet)",
                note="fewer learning rates and seeds",
            )
        ],
        subset="scikit-learn digits instead of MNIST/CIFAR; fewer learning rates and seeds",
        show=show_ffn,
    ),
    Figure(
        "drnn",
        drnn_runs,
        smoke=dict(width=6, pre_steps=2, steps=2, batch=4, limit=40),
        items=[
            Item(
                source="Fig. 3",
                what="6 d-RNNs x 3 tasks x depth 2/5: none vs rho 1 vs rho 1/2",
                data="sl-MNIST and an SHD stand-in (full, owed); sl-digits (quick)",
                note="declared subset: no PTB, 2 seeds, Adam with fixed steps; the paper gives only win rates",
            )
        ],
        subset="sl-MNIST and a synthetic stand-in for SHD (PTB not run); 2 seeds; "
        "Adam for a fixed number of steps instead of AdaBelief + Lookahead with early stopping",
        show=show_drnn,
        table=drnn_table,
    ),
    Figure(
        "lru",
        lru_runs,
        smoke=LRU_SMOKE,
        items=[
            Item(
                source="Fig. 4",
                what="LRU on PTB: default vs rho 1 / 1/2 / rho-bar 1/2, with and without clipping",
                data="Penn Treebank, word level (full, owed); a character-level slice (quick)",
                note="Adam at a constant rate instead of AdaBelief + Lookahead + SWA; untied readout",
            )
        ],
        subset=LRU_SUBSET,
        show=show_lru,
        table=lru_table,
    ),
    Figure(
        "lru_table",
        lru_table_runs,
        smoke=LRU_SMOKE,
        items=[
            Item(
                source="Table I",
                what="LRU on PTB after the authors' hyper-parameter search",
                data="Penn Treebank, word level (full, owed); quick shares Fig. 4's runs",
                note="no cosine decay, MLM corruption or early stopping; the paper's numbers are shown beside ours",
            )
        ],
        collector=collect_lru_table,
    ),
    Figure(
        "lr_grid",
        lr_grid_runs,
        smoke=dict(width=6, steps=2, batch=4, limit=40),
        items=[
            Item(
                source="Fig. S1",
                what="learning-rate grid search for LSTM and ALIF",
                data="sl-MNIST and an SHD stand-in (full, owed); sl-digits, 3 rates, 50 steps (quick)",
                note="PTB not run; 1 seed; Adam with fixed steps; Tab. S1's optima shown beside ours",
            )
        ],
        subset=LR_SUBSET,
        show=show_lr_grid,
        table=lr_grid_table,
    ),
    Figure(
        "covariance",
        covariance_runs,
        smoke=dict(width=6, pre_steps=2, batch=8, limit=40),
        items=[
            Item(
                source="Figs. S2-S3",
                what="decaying covariance of a_k, default init and after LSC pre-training",
                data="sl-digits at 1 ms (quick); sl-MNIST and an SHD stand-in (full, on a CPU)",
                note="LSTM only in quick; PTB not run; ALIF pre-training does not converge (one run diverges)",
            )
        ],
        subset="sl-MNIST and the synthetic SHD stand-in; PTB not run",
        show=show_covariance,
    ),
)


# the paper's figures and tables the chapter reproduces without a training run (closed forms, exact counts,
# drawings of generated trials or of an untrained model): nothing to scale up
WITHOUT_RUNS = [
    Item(
        source="Fig. 1b",
        what="path counts: polynomial vs exponential growth",
        data="closed form",
        note="computed exactly in the chapter text (no sweep)",
    ),
    Item(
        source="Fig. 1c (top)",
        what="PascalRNN gradient, rho = 1 vs 1/2",
        data="closed form",
        note="closed form, checked against a recursion in the tests",
    ),
    Item(
        source="Tab. S1",
        what="parameter counts of the depth-2 d-RNNs",
        data="none",
        note="reproduced exactly in the tests (ALIF on sl-MNIST/SHD: the paper's counts have 2 unexplained extra)",
    ),
]

# the paper's figures and tables that nothing here reproduces (illustrations, say)
NOT_RUN = [
    Item(
        source="Fig. 1a",
        what="the time-depth grid of transition derivatives",
        data="none",
        note="a schematic; the chapter draws its path counts (Fig. 1b)",
    ),
]
