"""Chapter "Random orthogonal additive filters" (Ceni 2022): sweeps and figures.

Figures: ``ioj`` (Thm 2.1: singular values of a roaFNN's input-output Jacobian against depth, vanilla MLP for
contrast, corrected bounds), ``rnn_ioj`` (Thm 3.1: the same through time for roaRNN), ``moons`` (Fig. 1:
double-moon regression, shallow vs deep vanilla vs deep roaFNN, and an extreme-depth roaFNN) and ``digits``
(Figs. 5 and 6 at proxy scale: permuted sequential digits, roaRNN vs eyeRNN (O = I) vs a vanilla RNN).
"""

from __future__ import annotations

from ...data.synthetic import ADDING_BASELINE
from ...figures import Figure, Item, declare
from .ablation import ablation_final, ablation_runs, gap_ablation, show_ablation
from .common import CHAPTER
from .digits import digits_final, digits_runs, gap_digits, show_digits
from .ioj import explore_figure, ioj_runs, ioj_table, rnn_ioj_runs, rnn_ioj_table, show_ioj
from .moons import moons_cost, moons_run, moons_runs, show_moons
from .psmnist import gap_psmnist, psmnist_run, psmnist_runs, psmnist_table, show_psmnist
from .tasks import (
    adding_run,
    adding_runs,
    backward_memory,
    copy_run,
    copy_runs,
    gap_adding,
    gap_copy,
    show_adding,
    show_copy,
    step_saved_bytes,
    task_table,
)

NOTEBOOK = "book/roarnn.ipynb"

__all__ = [
    "ADDING_BASELINE",
    "CHAPTER",
    "FIGURES",
    "NOTEBOOK",
    "NOT_RUN",
    "ablation_final",
    "adding_run",
    "backward_memory",
    "copy_run",
    "copy_runs",
    "digits_final",
    "explore_figure",
    "ioj_table",
    "moons_cost",
    "moons_run",
    "psmnist_run",
    "psmnist_table",
    "rnn_ioj_table",
    "show_ablation",
    "show_adding",
    "show_copy",
    "show_digits",
    "show_ioj",
    "show_moons",
    "show_psmnist",
    "step_saved_bytes",
    "task_table",
]

# the smoke test's shrink: config entries that make a full-profile run take seconds (lscnb.figures.smoke_runs)
SMOKE = dict(
    depth=12, width=4, seeds=1, length=20, epochs=1, lag=5, steps=3, eval_every=2, batch=4, n_train=200, n_test=100
)

FIGURES = declare(
    Figure(
        "ioj",
        ioj_runs,
        items=[
            Item(
                source="Thm 2.1",
                what="singular values of a deep roaFNN's IOJ within (corrected) bounds",
                data="generated Gaussian inputs",
                note="the printed lower bound is wrong at finite L (counterexample in the chapter)",
            )
        ],
        show=show_ioj,
        table=ioj_table,
    ),
    Figure(
        "rnn_ioj",
        rnn_ioj_runs,
        items=[
            Item(
                source="Thm 3.1",
                what="all singular values of a roaRNN's IOJ over 10^3-10^4 steps",
                data="generated Gaussian inputs",
                note="same erratum",
            )
        ],
        table=rnn_ioj_table,
    ),
    Figure(
        "moons",
        moons_runs,
        smoke=dict(width=None),
        items=[
            Item(
                source="Fig. 1",
                what="double moon: shallow vs deep vanilla vs deep and extreme-depth roaFNN",
                data="Haykin's double moon, generated",
                note="quick: 2,000 layers; full: the paper's 50,000",
            )
        ],
        subset="1 seed; the paper's learning rates are unknown (legend only)",
        show=show_moons,
    ),
    Figure(
        "copy",
        copy_runs,
        items=[
            Item(
                source="Fig. 2",
                what="copy memory task, L = 400, 2,000, 10,000: vanilla RNN vs LSTM vs roaRNN",
                data="copy-memory sequences, generated",
                note="quick: L = 20, 60 at N = 64, 150 iterations; full: the paper's set-up, iterations at L = 10,000 "
                "chosen",
                gap=gap_copy,
            )
        ],
        subset="iterations at L = 10,000 chosen (the figure's axis is lost); "
        "all 5 seeds shown beside the best of 5 the paper plots",
        show=show_copy,
    ),
    Figure(
        "adding",
        adding_runs,
        items=[
            Item(
                source="Fig. 3",
                what="adding problem, T = 200, 1,000, 5,000: vanilla RNN vs LSTM vs roaRNN",
                data="adding problem, generated",
                note="quick: T = 50, N = 32, rho = 1, 600 iterations; full: the paper's set-up, 5,000 iterations "
                "(chosen)",
                gap=gap_adding,
            )
        ],
        subset="iterations chosen (the figure's axis is lost); held-out batch fixed",
        show=show_adding,
    ),
    Figure(
        "psmnist",
        psmnist_runs,
        smoke=dict(source="digits"),
        items=[
            Item(
                source="Fig. 5 and table",
                what="psMNIST test accuracy of roaRNN (N = 178/256/512)",
                data="MNIST (full); quick: permuted scikit-learn 8x8 digits at N = 16/32/64",
                note="full: declared subset, N = 178 and 1 seed, on the real 60k/10k MNIST for the paper's 20 "
                "epochs; the other rows copied from the paper",
                gap=gap_psmnist,
            )
        ],
        subset="N = 178 only (1 of the paper's 3 sizes) and 1 of its 5 seeds; its 60k/10k MNIST, 20 epochs and "
        "learning-rate drop",
        show=show_psmnist,
        table=psmnist_table,
    ),
    Figure(
        "digits",
        digits_runs,
        smoke=dict(width=8),
        items=[
            Item(
                source="Fig. 6",
                what="eyeRNN (O = I) vs roaRNN (and a vanilla RNN) on psMNIST",
                data="proxy: permuted scikit-learn 8x8 digits",
                note="proxy of the psMNIST panel",
                gap=gap_digits,
            )
        ],
        subset="scikit-learn's 8x8 digits as a psMNIST proxy (T = 64)",
        show=show_digits,
    ),
    Figure(
        "ablation",
        ablation_runs,
        items=[
            Item(
                source="Fig. 6",
                what="eyeRNN (O = I) vs roaRNN on copy memory and the adding problem",
                data="copy-memory and adding sequences, generated",
                note="lag, length and learning rates chosen (lost legend); quick: copy only",
                gap=gap_ablation,
            )
        ],
        subset="2 of the paper's 5 seeds; Fig. 6's lag, length, iterations and learning rates are lost: chosen",
        show=show_ablation,
    ),
)


# the paper's figures and tables that no figure here reproduces (illustrations, say)
NOT_RUN = [
    Item(
        source="Fig. 4",
        what="psMNIST illustration (no experiment)",
        data="MNIST",
        note="an illustration, nothing to reproduce",
    )
]
