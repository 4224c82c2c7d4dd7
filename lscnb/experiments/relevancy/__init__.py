"""Chapter "Recurrence and self-attention: relevancy screening" (Kerg et al. 2020; thesis ch. 4).

Figures: ``propagation`` (Thms 4.4.2 and 4.4.3 in the scalar linearised model: no attention, uniform, sparse and
windowed attention), ``reach`` (the gradient reaching a stored relevant state in a nonlinear RelRNN, against
the plain RNN with the same weights, as the sequence grows), ``copy`` (trainings on copy: Tables 4.1 and B.2),
``denoise`` (trainings on denoise: Table 4.2, Fig. 4.2 left; with copy's, Fig. 4.1 and Figs. B.2, B.3) and ``memory``
(activation memory and stored states vs T: Fig. 4.2 centre).

One module a figure group: :mod:`.common` (task sizes and batches, shared helpers), :mod:`.propagation` (figures
``propagation``, ``reach``, ``screening``), :mod:`.tasks` (``copy``, ``denoise``), :mod:`.attention` (Fig. 4.1,
``buffer``), :mod:`.memory` and :mod:`.dense`; this module declares the chapter's figures.
"""

from __future__ import annotations

from ...figures import Figure, Item, declare
from .attention import (  # noqa: F401
    buffer_runs,
    heatmap_of,
    outside_buffer_mass,
    show_heatmaps,
    symbol_attention_ratio,
)
from .common import (  # noqa: F401
    CHAPTER,
    COPY_SUBSET,
    DENOISE_SUBSET,
    FULL_SUBSET,
    smoothed,
    task_batch,
)
from .dense import (  # noqa: F401
    DENSE_NOTE,
    DENSE_SIZES,
    TABLE_4_3,
    block_mean,
    dense_counts,
    dense_data_note,
    dense_rows,
    dense_run,
    dense_runs,
    dense_scores,
    show_dense_attention,
    show_dense_curves,
)
from .memory import (  # noqa: F401
    loglog_slope,
    memory_runs,
    memory_table,
    show_memory,
)
from .propagation import (  # noqa: F401
    SCREENING_NOTE,
    event_gradients,
    explore_figure,
    propagation_runs,
    reach_runs,
    screening_runs,
    show_propagation,
    show_reach,
    show_screening,
)
from .tasks import (  # noqa: F401
    TABLE_4_2,
    TABLE_4_2_T,
    TABLE_B_2,
    TABLE_B_2_T,
    UNDERFLOW,
    accuracy,
    copy_rows,
    copy_runs,
    denoise_rows,
    denoise_runs,
    gap_copy,
    gap_denoise,
    gradient_profiles,
    paper_table,
    show_curves,
    show_gradients,
    train_run,
    transfer_rows,
    underflow_distance,
    updates_to,
)

NOTEBOOK = "book/relevancy.ipynb"


# the smoke test's shrink: config entries that make a full-profile run take seconds (lscnb.figures.smoke_runs)
SMOKE = dict(
    seeds=1,
    width=8,
    length=20,
    steps=5,
    lams=[0.5],
    T=6,
    L=2,
    batch=4,
    eval_batch=8,
    grad_T=12,
    grad_batch=2,
    transfer=[1, 2],
    train_tokens=3000,
    valid_tokens=400,
    test_tokens=400,
    bptt=12,
    embedding=4,
    n_train=64,
    n_valid=32,
    n_test=32,
    real_only=False,
)

FIGURES = declare(
    Figure(
        "propagation",
        propagation_runs,
        items=[
            Item(
                source="Thm 4.4.2, Thm 4.4.3",
                what="gradient propagation: uniform Omega(1/T), sparse Omega(1/kappa^d)",
                data="closed form",
                note="scalar linearised model of the theorems",
            )
        ],
        show=show_propagation,
    ),
    Figure(
        "reach",
        reach_runs,
        items=[
            Item(
                source="§4.5 (relevancy screening)",
                what="gradients reach stored relevant states at any length",
                data="generated",
                note="untrained networks, oracle screening",
            )
        ],
        show=show_reach,
    ),
    Figure(
        "copy",
        copy_runs,
        items=[
            Item(
                source="Table 4.1, Table B.2",
                what="transfer copy and copy accuracy",
                data="copy task, generated",
                note="quick: T = 10, 4 symbols; full: declared subset (T <= 500, 5k steps; MemRNN at T = 100 and "
                "RelLSTM at T <= 200 only)",
                gap=gap_copy,
            ),
        ],
        subset=COPY_SUBSET,
    ),
    Figure(
        "denoise",
        denoise_runs,
        items=[
            Item(
                source="Table 4.2, Fig. 4.2 (left)",
                what="denoise accuracy; gradient norms after training",
                data="denoise task, generated",
                note="quick: T = 10, gradients at T = 100; full: declared subset (T = 100, 300, 500, 5k steps; MemRNN "
                "at T = 100 and RelLSTM at T <= 300 only), gradients at T = 1,000",
                gap=gap_denoise,
            ),
            Item(
                source="Fig. 4.1",
                what="attention weights after training on copy and denoise",
                data="copy and denoise tasks, generated",
                note="quick shows RelRNN (MemRNN in full); symbol-focused attention not reproduced at toy scale",
            ),
            Item(
                source="Figs. B.2, B.3",
                what="training curves on copy and denoise (B.3: the LSTM's)",
                data="copy and denoise tasks, generated",
                note="the copy/denoise runs' loss histories; GORU (Fig. B.4) not implemented",
            ),
        ],
        subset=DENOISE_SUBSET,
        reads=("copy",),
    ),
    Figure(
        "memory",
        memory_runs,
        smoke=dict(T=12, batch=2, width=8),
        items=[
            Item(
                source="Fig. 4.2 (centre)",
                what="memory vs sequence length",
                data="generated",
                note="saved-for-backward bytes and attended states (peak GPU memory in full on a GPU); scaling, not "
                "OOM marks; T = 1600 and 2000 measured at batches 1 and 2 and extrapolated to 10 (exact: affine in B)",
            )
        ],
        show=show_memory,
        table=memory_table,
    ),
    Figure(
        "dense",
        dense_runs,
        items=[
            Item(
                source="Table 4.3",
                what="PTB characters (BPC, accuracy) and pMNIST accuracy",
                data="Penn Treebank characters, MNIST (real files)",
                note="quick: 200 steps on slices (pMNIST pooled to 7x7); full: the thesis's set-up, owed to a GPU",
            ),
            Item(
                source="Figs. B.5, B.6, B.7",
                what="attention on PTB and pMNIST; pMNIST validation curves",
                data="",
                note="RelRNN's attention (the thesis's B.5 is full attention, which ran out of memory)",
            ),
        ],
        subset=DENSE_NOTE,
        data_counts=dense_counts,
    ),
    Figure(
        "screening",
        screening_runs,
        items=[
            Item(
                source="Fig. B.1",
                what="nu / rho trade-off: gradients with a smaller buffer or long-term set",
                data="closed form",
                note="linearised model with the screening rule; trained RelLSTM owed",
            )
        ],
        subset=SCREENING_NOTE,
        show=show_screening,
    ),
    Figure(
        "buffer",
        buffer_runs,
        items=[
            Item(
                source="Figs. B.8, B.9",
                what="attention over the short-term buffer only (rho = 0)",
                data="copy and denoise, generated",
                note="quick: 500 updates",
            )
        ],
        subset=FULL_SUBSET,
    ),
)
# the paper's figures and tables that no figure here reproduces (illustrations, say)
NOT_RUN = [
    Item(
        source="Tables B.1, B.3-B.6, Fig. B.4",
        what="MiniGrid; hyper-parameter tables; GORU curves",
        data="",
        note="MiniGrid and GORU not reproduced; Tables B.3-B.6 are the configs used",
    )
]
