"""Every argument check of the core, one bad argument at a time (issue 27: mutation survivors).

Each case calls a public function or class of the core with exactly one argument bad (wrong number of dimensions, zero
or negative, a bool, not one of the options, not square) and every other argument valid, and asserts that the error
comes from the argument check: its message starts with the argument's name (``"<name> must ..."``, the format of
:mod:`lscnb.checks`). A weakened check (``ndim=3`` dropped, ``min_dim`` made None) lets the bad value through to a later
torch error or to a result, and the case fails.

A second table checks the other side of ``allow_zero=True``: zero is accepted where the function documents it.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lscnb import jacobian, pretrain, train
from lscnb.kernels import cells as kcells
from lscnb.kernels import scan
from lscnb.models import (
    rnn,
    unified,
)
from lscnb.theory import fisher, gaussian, lsc, meanfield, memory, vanilla
from lscnb.theory import relevancy as relevancy_theory
from lscnb.theory import roa as roa_theory


# ------------------------------------------------------------------------------------------------ small valid pieces
def _cell():
    return rnn.RNNCell(2, 3)


def _x(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0))


def _stack():
    return rnn.Stack([rnn.RNNCell(2, 3), rnn.RNNCell(3, 3)])


def _hist():
    hist = pretrain.PretrainHistory()
    hist.radius["time0"] = [1.0, 0.9]
    return hist


def _theta(arch="gru"):
    return unified.uniform_theta(arch)


def _relational(cls, **kw):
    return cls(3, 2, **kw)


# (id, thunk, argument name): the thunk calls with that argument bad and everything else valid
CASES = [
    # ------------------------------------------------------------------------------------------------ jacobian
    ("cell_jacobians-state-0d", lambda: jacobian.cell_jacobians(_cell(), torch.tensor(0.0), _x(2)), "state"),
    ("cell_jacobians-x-0d", lambda: jacobian.cell_jacobians(_cell(), _x(3), torch.tensor(0.0)), "x"),
    ("cell_jacobians-wrt", lambda: jacobian.cell_jacobians(_cell(), _x(1, 3), _x(1, 2), wrt="output"), "wrt"),
    ("cell_jacobians-mode", lambda: jacobian.cell_jacobians(_cell(), _x(1, 3), _x(1, 2), mode="both"), "mode"),
    ("time_jacobians-x-2d", lambda: jacobian.time_jacobians(_cell(), _x(4, 2)), "x"),
    ("time_jacobians-x-4d", lambda: jacobian.time_jacobians(_cell(), _x(1, 1, 4, 2)), "x"),
    ("grid_jacobians-x-2d", lambda: jacobian.grid_jacobians(_stack(), _x(4, 2)), "x"),
    ("spectral_radius-1d", lambda: jacobian.spectral_radius(_x(3)), "matrices"),
    ("spectral_radius-nonsquare", lambda: jacobian.spectral_radius(_x(2, 3)), "matrices"),
    ("spectral_radius-method", lambda: jacobian.spectral_radius(_x(3, 3), method="svd"), "method"),
    ("spectral_radius-iters-0", lambda: jacobian.spectral_radius(_x(3, 3), method="power", iters=0), "iters"),
    ("power_radius-iters-0", lambda: jacobian.power_radius(lambda v: v, _x(3), iters=0), "iters"),
    ("power_radius-iters-bool", lambda: jacobian.power_radius(lambda v: v, _x(3), iters=True), "iters"),
    (
        "cell_spectral_radius-state-0d",
        lambda: jacobian.cell_spectral_radius(_cell(), torch.tensor(0.0), _x(2)),
        "state",
    ),
    ("singular_values-1d", lambda: jacobian.singular_values(_x(3)), "matrices"),
    ("product_log_sv-2d", lambda: jacobian.product_log_singular_values(_x(3, 3)), "matrices"),
    ("product_log_sv-nonsquare", lambda: jacobian.product_log_singular_values(_x(2, 3, 2)), "matrices"),
    ("product_log_sv-k-0", lambda: jacobian.product_log_singular_values(_x(2, 3, 3), k=0), "k"),
    (
        "gradient_norms_through_time-x-2d",
        lambda: jacobian.gradient_norms_through_time(_cell(), _x(4, 2), lambda h: h.sum()),
        "x",
    ),
    (
        "grid_gradient_norms-x-2d",
        lambda: jacobian.grid_gradient_norms(_stack(), _x(4, 2), lambda hs: hs[-1].sum()),
        "x",
    ),
    ("decay_rate-0d", lambda: jacobian.decay_rate(torch.tensor(1.0)), "norms"),
    # ------------------------------------------------------------------------------------------------ theory
    ("make_theta-n-0", lambda: fisher.make_theta(0, 0.5, 0.1, 0.1), "n"),
    ("fisher_memory_curve-steps-0", lambda: fisher.fisher_memory_curve(np.eye(2) * 0.5, np.ones(2), 0), "steps"),
    ("fisher_memory_curve-eps-0", lambda: fisher.fisher_memory_curve(np.eye(2) * 0.5, np.ones(2), 3, eps=0.0), "eps"),
    ("delay_line-n-0", lambda: fisher.delay_line(0, 0.9), "n"),
    ("transients-steps-0", lambda: fisher.transients(np.eye(2) * 0.5, 0, samples=4), "steps"),
    ("subdiagonal_profile-kmax-0", lambda: fisher.subdiagonal_profile(np.eye(3) * 0.5, kmax=0), "kmax"),
    ("unipotent_power-n-0", lambda: fisher.unipotent_power(0, 1.0, 2), "n"),
    ("unipotent_power-t-neg", lambda: fisher.unipotent_power(3, 1.0, -1), "t"),
    ("hermite_nodes-order-0", lambda: gaussian.hermite_nodes(0), "order"),
    ("path_count-dl-neg", lambda: lsc.path_count(-1, 2), "dl"),
    ("path_count-dt-neg", lambda: lsc.path_count(2, -1), "dt"),
    ("summed_path_count-T-neg", lambda: lsc.summed_path_count(-1, 2), "T"),
    ("summed_path_count-dl-neg", lambda: lsc.summed_path_count(3, -1), "dl"),
    ("pascal_gradient-T-0", lambda: lsc.pascal_gradient(0, 2, 1.0), "T"),
    ("pascal_gradient-L-0", lambda: lsc.pascal_gradient(3, 0, 1.0), "L"),
    ("pascal_gradient-rho-0", lambda: lsc.pascal_gradient(3, 2, 0.0), "rho"),
    ("pascal_gradient_recursion-T-0", lambda: lsc.pascal_gradient_recursion(0, 2, 1.0), "T"),
    ("pascal_gradient_recursion-L-0", lambda: lsc.pascal_gradient_recursion(3, 0, 1.0), "L"),
    ("trajectory-steps-0", lambda: meanfield.trajectory(_theta(), 0, meanfield.State(0.0, 1.0, 0.5)), "steps"),
    ("population-steps-0", lambda: meanfield.population(_theta("lstm"), 0, samples=8), "steps"),
    ("population-samples-0", lambda: meanfield.population(_theta("lstm"), 2, samples=0), "samples"),
    ("series_moments-terms-neg", lambda: memory.series_moments(0.5, 0.0, terms=-1), "terms"),
    ("monte_carlo-chains-0", lambda: memory.monte_carlo(0.5, 0.0, chains=0, steps=2), "chains"),
    ("monte_carlo-steps-neg", lambda: memory.monte_carlo(0.5, 0.0, chains=2, steps=-1), "steps"),
    ("monte_carlo_rep-chains-0", lambda: memory.monte_carlo_reparametrised(0.5, 0.0, chains=0, steps=2), "chains"),
    ("monte_carlo_rep-steps-neg", lambda: memory.monte_carlo_reparametrised(0.5, 0.0, chains=2, steps=-1), "steps"),
    ("normalised_sensitivity-param", lambda: memory.normalised_sensitivity(0.5, param="log"), "param"),
    ("gated_moments-steps-neg", lambda: memory.gated_moments(0.5, steps=-1), "steps"),
    ("polar_from-angle", lambda: memory.polar_from(0.1, 0.2, "degrees"), "angle"),
    ("adam_angle-steps-0", lambda: memory.adam_angle("polar", 0.5, 0.9, steps=0), "steps"),
    ("adam_angle-angle", lambda: memory.adam_angle("degrees", 0.5, 0.9, steps=2), "angle"),
    ("propagation-pattern", lambda: relevancy_theory.propagation("zigzag", 0.9, 4), "pattern"),
    ("propagation-combine", lambda: relevancy_theory.propagation("sparse", 0.9, 4, combine="max"), "combine"),
    ("propagation-steps-0", lambda: relevancy_theory.propagation("sparse", 0.9, 0), "steps"),
    ("propagation-kappa-0", lambda: relevancy_theory.propagation("sparse", 0.9, 4, kappa=0), "kappa"),
    ("propagation-t-0", lambda: relevancy_theory.propagation("sparse", 0.9, 4, t=0), "t"),
    ("uniform_exponent-combine", lambda: relevancy_theory.uniform_exponent(0.9, combine="max"), "combine"),
    ("screened_gradients-T-0", lambda: relevancy_theory.screened_gradients(0, [1], nu=2, rho=1), "T"),
    ("screened_gradients-nu-0", lambda: relevancy_theory.screened_gradients(5, [1], nu=0, rho=1), "nu"),
    ("screened_gradients-rho-neg", lambda: relevancy_theory.screened_gradients(5, [1], nu=2, rho=-1), "rho"),
    ("screened_gradients-events-neg", lambda: relevancy_theory.screened_gradients(5, [-1], nu=2, rho=1), "events"),
    ("upper_bound-rho-0", lambda: roa_theory.upper_bound(0.0, 0.1, 3), "rho"),
    ("upper_bound-sigma-neg", lambda: roa_theory.upper_bound(1.0, -0.1, 3), "sigma"),
    ("upper_bound-r-0", lambda: roa_theory.upper_bound(1.0, 0.1, 3, r=0.0), "r"),
    ("upper_bound-maps-0", lambda: roa_theory.upper_bound(1.0, 0.1, 0), "maps"),
    ("lower_bound-maps-0", lambda: roa_theory.lower_bound(1.0, 0.1, 0), "maps"),
    ("scalar_counterexample-maps-0", lambda: roa_theory.scalar_counterexample(0, 1.0, 0.1), "maps"),
    ("fixed_point-g-0", lambda: vanilla.fixed_point(g=0.0), "g"),
    ("fixed_point-input_var-neg", lambda: vanilla.fixed_point(g=1.0, input_var=-1.0), "input_var"),
    ("fixed_point-bias_var-neg", lambda: vanilla.fixed_point(g=1.0, bias_var=-1.0), "bias_var"),
    # ------------------------------------------------------------------------------------------------ kernels
    ("compiled_step-mode", lambda: kcells.compiled_step(_cell(), mode="fast", backend="eager"), "mode"),
    ("compiled_step-backend", lambda: kcells.compiled_step(_cell(), backend="xla"), "backend"),
    ("linear_scan-b-0d", lambda: scan.linear_scan(0.5, torch.tensor(1.0)), "b"),
    ("linear_scan-backend", lambda: scan.linear_scan(0.5, _x(2, 3), backend="cuda"), "backend"),
    ("scan_sequential-b-0d", lambda: scan.BACKENDS["sequential"](0.5, torch.tensor(1.0), None, 0), "b"),
    ("scan_parallel-b-0d", lambda: scan.BACKENDS["parallel"](0.5, torch.tensor(1.0), None, 0), "b"),
    # ------------------------------------------------------------------------------------------------ train, pretrain
    ("make_optimizer-optimizer", lambda: train.make_optimizer([torch.zeros(1)], "adamw2"), "optimizer"),
    ("make_optimizer-lr-0", lambda: train.make_optimizer([torch.zeros(1)], "adam", lr=0.0), "lr"),
    ("EpochBatches-n-0", lambda: train.EpochBatches(0, 2, 0), "n"),
    ("EpochBatches-batch_size-0", lambda: train.EpochBatches(4, 0, 0), "batch_size"),
    ("fit-steps-0", lambda: train.fit(torch.nn.Linear(1, 1), None, None, steps=0, progress=False), "steps"),
    ("fit-clip-0", lambda: train.fit(torch.nn.Linear(1, 1), None, None, steps=1, clip=0.0, progress=False), "clip"),
    (
        "fit-eval_every-0",
        lambda: train.fit(torch.nn.Linear(1, 1), None, None, steps=1, eval_every=0, progress=False),
        "eval_every",
    ),
    (
        "fit-checkpoint_every-0",
        lambda: train.fit(torch.nn.Linear(1, 1), None, None, steps=1, checkpoint_every=0, progress=False),
        "checkpoint_every",
    ),
    ("pretrain-steps-0", lambda: pretrain.pretrain(lambda s: {}, {}, steps=0, progress=False), "steps"),
    ("pretrain-measure", lambda: pretrain.pretrain(lambda s: {}, {}, measure="trace", progress=False), "measure"),
    (
        "pretrain-lr-0",
        lambda: pretrain.pretrain(lambda s: {}, {"g": [torch.nn.Parameter(torch.ones(1))]}, lr=0.0, progress=False),
        "lr",
    ),
    ("final_radii-last-0", lambda: pretrain.final_radii(_hist(), last=0), "last"),
    ("stack_transitions-x-2d", lambda: pretrain.stack_transitions(_stack(), _x(4, 2), 1), "x"),
    (
        "lru_transitions-tokens-1d",
        lambda: pretrain.lru_transitions(None, torch.zeros(4, dtype=torch.long), 1),
        "tokens",
    ),
]


@pytest.mark.parametrize(("call", "name"), [pytest.param(c, n, id=i) for i, c, n in CASES])
def test_bad_argument_is_named(call, name):
    with pytest.raises((ValueError, TypeError), match=rf"^{name} must"):
        call()
