"""Chapter "The curse of memory" (Zucchet & Orvieto 2024): sweeps and figures.

Figures: ``sensitivity`` (Fig. 1A: E h^2 and E (dh/dlam)^2 against lam for several input correlations, closed
forms with the corrected eq. 59 against Monte Carlo), ``normalisation`` (Fig. 2: the effect of input
normalisation and the exponential reparametrisation, closed form against forward-mode autodiff) and
``teacher`` (Fig. 3A / Table 1 and Fig. 3B / Table 2: linear teacher-student training, dense linear RNN vs
LRU against nu0, and the ablation from dense to block-diagonal to LRU at nu0 = 0.99), ``hessian`` (Fig. 4A, B:
the Hessian at the optimum of a dense and a complex diagonal 4-unit student) and ``adam_lr`` (Fig. 4C, D: Adam's
effective learning rates after training at a constant learning rate), ``deep`` (Figs. 5 and 13: deep recurrent
networks at initialisation against nu0) and ``autocorrelation`` (Fig. 12: the autocorrelation of their inputs) and
``gated`` (Fig. 15: simplified GRUs at
initialisation against the diagonal theory of App. D.3), ``hessian_lru`` and ``hessian_s4`` (Figs. 9A, B: the
Hessian at the optimum of the LRU and of the paper's modified S4), ``adam_lr_ssm`` (Figs. 9C, D: Adam's effective
learning rates of the LRU and the S4) and ``theta0`` (Fig. 10D / Table 3: final loss against the eigenvalues'
angular spread).
"""

from __future__ import annotations

from ...figures import Figure, Item, declare
from .adam import (  # noqa: F401
    adam_medians,
    adam_runs,
    adam_ssm_runs,
    adam_table,
    gap_adam_lr,
    gap_adam_ssm,
    gap_heads,
    heads_runs,
    heads_summary,
    show_adam_lr,
    show_heads,
)
from .common import CHAPTER  # noqa: F401
from .concentration import (  # noqa: F401
    SIMILARITY_LAM0,
    THETA0_LABELS,
    concentration_table,
    gap_theta0,
    show_concentrated_hessian,
    show_similarity,
    show_theta0,
    similarity_table,
    theta0_grids,
    theta0_runs,
    theta0_table,
)
from .deep import (  # noqa: F401
    DEEP_DATA,
    DEEP_NU0,
    autocorrelation_run,
    autocorrelation_runs,
    collect_autocorrelation,
    collect_deep,
    deep_inputs,
    deep_ratios,
    deep_run,
    deep_runs,
    deep_table,
    gap_deep,
    show_autocorrelation,
    show_deep,
    show_deep_layers,
)
from .gated import (  # noqa: F401
    GATE_LABELS,
    GATED_BINS,
    _panel_result,
    gated_agreement,
    gated_run,
    gated_runs,
    gated_theory,
    gru_jacobian_run,
    gru_jacobian_runs,
    jacobian_offdiag_ratio,
    kernel_regression,
    show_gated,
    show_gru_jacobian,
)
from .hessian import (  # noqa: F401
    gap_hessian,
    gap_hessian_s4,
    hessian_lru_runs,
    hessian_lru_table,
    hessian_run,
    hessian_runs,
    hessian_s4_runs,
    hessian_s4_table,
    hessian_table,
    show_hessian,
    show_hessian_lru,
    show_hessian_s4,
)
from .landscape import (  # noqa: F401
    adam_angle_late_loss,
    adam_angle_runs,
    parametrised_landscape,
    parametrised_table,
    show_adam_angle,
    show_parametrised_landscapes,
)
from .sensitivity import (  # noqa: F401
    explore_figure,
    gap_sensitivity,
    normalisation_errors,
    normalisation_runs,
    sensitivity_errors,
    sensitivity_runs,
    show_normalisation,
    show_sensitivity,
)
from .teacher import (  # noqa: F401
    ABLATION,
    ablation_table,
    best_losses,
    gap_ablation,
    gap_teacher,
    make_student,
    show_ablation,
    show_teacher,
    teacher_runs,
    teacher_table,
)

NOTEBOOK = "book/memory.ipynb"

# the smoke test's shrink: config entries that make a full-profile run take seconds (lscnb.figures.smoke_runs)
SMOKE = dict(
    chains=64,
    steps=5,
    lams=[0.9],
    batch=4,
    length=32,
    batches=1,
    d_in=16,
    d_model=8,
    networks=4,
    d=8,
    offdiag=8,
    max_lag=16,
)

FIGURES = declare(
    Figure(
        "sensitivity",
        sensitivity_runs,
        items=[
            Item(
                source="Fig. 1A",
                what="sensitivity E(dh/dλ)² vs λ for input correlations ρ (eq. 59)",
                data="generated AR(1) inputs",
                note="printed eq. 59 corrected",
                gap=gap_sensitivity,
            )
        ],
        show=show_sensitivity,
    ),
    Figure(
        "normalisation",
        normalisation_runs,
        items=[
            Item(
                source="Fig. 2",
                what="effect of input normalisation and the exp reparametrisation",
                data="generated AR(1) inputs",
                note="",
            )
        ],
        show=show_normalisation,
    ),
    Figure(
        "teacher",
        teacher_runs,
        items=[
            Item(
                source="Fig. 3A, Table 1",
                what="final loss vs ν₀: linear RNN vs LRU",
                data="generated linear teacher",
                note="3 of 10 seeds; the code's LR grids",
                gap=gap_teacher,
            ),
            Item(
                source="Fig. 3B, Table 2",
                what="ablation from dense to block-diagonal to LRU at ν₀ = 0.99",
                data="generated linear teacher",
                note="3 of 10 seeds; the code's LR grids",
                gap=gap_ablation,
            ),
        ],
        subset="3 of the paper's 10 seeds",
        show=show_teacher,
        table=teacher_table,
    ),
    Figure(
        "hessian",
        hessian_runs,
        items=[
            Item(
                source="Fig. 4A, B",
                what="Hessian at the optimum, dense vs complex diagonal (4 units)",
                data="generated linear teacher",
                note="float64 torch.func.hessian",
                gap=gap_hessian,
            )
        ],
        show=show_hessian,
        table=hessian_table,
    ),
    Figure(
        "adam_lr",
        adam_runs,
        items=[
            Item(
                source="Fig. 4C, D",
                what="Adam effective learning rates after training, dense vs complex diagonal",
                data="generated linear teacher",
                note="1 seed; preconditioner lr/(√v̂+ε)",
                gap=gap_adam_lr,
            )
        ],
        subset="1 seed",
        show=show_adam_lr,
    ),
    Figure(
        "deep",
        deep_runs,
        items=[
            Item(
                source="Fig. 5",
                what="deep networks at initialisation (cRNN, LRU, Chrono GRU, cRNN + LayerNorm) vs ν₀",
                data="synthetic inputs with the paper's measured autocorrelation (BERT/Wikipedia not offline)",
                note="one init seed; the real pipeline is ex.FIGURES['deep'].collect(P, data='wikipedia')",
                gap=gap_deep,
            ),
            Item(
                source="Fig. 13",
                what="the gradients of Fig. 5B per layer",
                data="synthetic inputs with the paper's measured autocorrelation",
                note="same runs as Fig. 5",
            ),
        ],
        show=show_deep,
        table=deep_table,
        collector=collect_deep,
    ),
    Figure(
        "autocorrelation",
        autocorrelation_runs,
        items=[
            Item(
                source="Fig. 12",
                what="autocorrelation of the inputs and its two-component fit",
                data="synthetic substitute for BERT embeddings of Wikipedia",
                note="checks the substitute",
            )
        ],
        show=show_autocorrelation,
        collector=collect_autocorrelation,
    ),
    Figure(
        "gated",
        gated_runs,
        items=[
            Item(
                source="Fig. 15",
                what="simplified GRUs at initialisation against the diagonal theory (App. D.3)",
                data="synthetic inputs with the paper's measured autocorrelation",
                note="exact finite-length theory beside the stationary eqs. 159-161",
            )
        ],
        show=show_gated,
    ),
    Figure(
        "gru_jacobian",
        gru_jacobian_runs,
        items=[
            Item(
                source="Fig. 14",
                what="recurrent Jacobian of a Chrono GRU: diagonal vs off-diagonal entries (App. D.2)",
                data="synthetic inputs with the paper's measured autocorrelation",
                note="one sequence, as the paper",
            )
        ],
        subset="one sequence (the paper: one Wikipedia sentence)",
        show=show_gru_jacobian,
    ),
    Figure(
        "adam_angle",
        adam_angle_runs,
        items=[
            Item(
                source="Fig. 7",
                what="Adam on the 1-D loss with three angle parametrisations",
                data="closed-form white-noise loss",
                note="the paper's 50k steps in full, 20k in quick",
            )
        ],
        show=show_adam_angle,
    ),
    Figure(
        "heads",
        heads_runs,
        items=[
            Item(
                source="Fig. 11",
                what="loss and Adam's effective learning rate against the number of heads (ν₀ = 0.99)",
                data="generated linear teacher",
                note="3 of 10 seeds; η read at the end of training",
                gap=gap_heads,
            )
        ],
        subset="3 of the paper's 10 seeds",
        show=show_heads,
    ),
    Figure(
        "hessian_lru",
        hessian_lru_runs,
        items=[
            Item(
                source="Fig. 9A",
                what="Hessian at the optimum of the LRU (exp parametrisation)",
                data="generated linear teacher",
                note="the teachers of Fig. 4; float64 torch.func.hessian",
            )
        ],
        show=show_hessian_lru,
        table=hessian_lru_table,
    ),
    Figure(
        "hessian_s4",
        hessian_s4_runs,
        items=[
            Item(
                source="Fig. 9B",
                what="Hessian at the optimum of the modified S4 (Δ = 0.01; Δ = 1 in the table)",
                data="generated linear teacher",
                note="the teachers of Fig. 4; float64 torch.func.hessian",
                gap=gap_hessian_s4,
            )
        ],
        show=show_hessian_s4,
        table=hessian_s4_table,
    ),
    Figure(
        "adam_lr_ssm",
        adam_ssm_runs,
        items=[
            Item(
                source="Fig. 9C, D",
                what="Adam effective learning rates after training, LRU and S4 (Δ initialised to 1)",
                data="generated linear teacher",
                note="1 seed; preconditioner lr/(√v̂+ε)",
                gap=gap_adam_ssm,
            )
        ],
        subset="1 seed",
    ),
    Figure(
        "theta0",
        theta0_runs,
        items=[
            Item(
                source="Fig. 10D, Table 3",
                what="final loss vs θ₀ for the RNN, complex diagonal RNN and LRU (ν₀ = 0.99)",
                data="generated linear teacher",
                note="3 of 10 seeds; the code's LR grids",
                gap=gap_theta0,
            )
        ],
        subset="3 of the paper's 10 seeds",
        show=show_theta0,
        table=theta0_table,
    ),
)
# the paper's figures and tables the chapter reproduces without a training run (closed forms, exact counts,
# drawings of generated trials or of an untrained model): nothing to scale up
WITHOUT_RUNS = [
    Item(
        source="Fig. 1B, C",
        what="1-D teacher-student loss landscapes (λ and angle)",
        data="closed form",
        note="drawn from the closed forms in the chapter text (no sweep)",
    ),
    Item(
        source="Fig. 8",
        what="|S(λ, λ₀)|: which eigenvalues couple in the Hessian",
        data="closed form",
        note="corrected eq. 134 (the paper's figure used the printed one)",
    ),
    Item(
        source="Fig. 10A-C",
        what="theoretical Hessian (eq. 143) as eigenvalues concentrate",
        data="closed form",
        note="ρ = 0 as the text (the paper's code used 0.99; table shows both)",
    ),
    Item(
        source="Fig. 6",
        what="1-D loss and Hessian under the polar, exp (LRU) and optimal parametrisations",
        data="closed form",
        note="second derivatives by torch.func",
    ),
]
