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
from lscnb import models as cellmodels
from lscnb.data import cifar, embeddings, mnist, moons, padded, relational_games, spikes, synthetic, text
from lscnb.data import relational as relational_data
from lscnb.kernels import cells as kcells
from lscnb.kernels import scan
from lscnb.models import (
    activations,
    deep_recurrent,
    drnn,
    ffn,
    gated,
    linear_rnn,
    lru,
    modrelu_rnn,
    nonnormal,
    orthogonal,
    relational,
    relational_baselines,
    relevancy,
    rnn,
    roa,
    spiking,
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
    ("normal_nodes-scale-negative", lambda: gaussian.normal_nodes(-1.0), "scale"),
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
    (
        "fit-extra-no-state_dict",
        lambda: train.fit(torch.nn.Linear(1, 1), None, None, steps=1, extra=[], progress=False),
        "extra",
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


# (id, thunk, argument name) for the models
MODEL_CASES = [
    ("make_cell-kind", lambda: cellmodels.make_cell("elman", 2, 3), "kind"),
    ("get_activation", lambda: activations.get_activation("swish"), "activation"),
    ("activation_derivative", lambda: activations.activation_derivative("swish", _x(3)), "activation"),
    # deep_recurrent
    ("DiagonalRecurrence-d_model-0", lambda: deep_recurrent.DiagonalRecurrence(0, 3), "d_model"),
    ("DiagonalRecurrence-d_hidden-0", lambda: deep_recurrent.DiagonalRecurrence(2, 0), "d_hidden"),
    ("DiagonalRecurrence-param", lambda: deep_recurrent.DiagonalRecurrence(2, 3, param="polar"), "param"),
    ("DiagonalRecurrence.forward-x-2d", lambda: deep_recurrent.DiagonalRecurrence(2, 3)(_x(4, 2)), "x"),
    ("ChronoGRU.forward-x-2d", lambda: deep_recurrent.ChronoGRU(2, 3)(_x(4, 2)), "x"),
    ("DeepRecurrentNet-kind", lambda: deep_recurrent.DeepRecurrentNet(2, kind="s4", d_model=4, depth=1), "kind"),
    ("DeepRecurrentNet-norm", lambda: deep_recurrent.DeepRecurrentNet(2, d_model=4, depth=1, norm="group"), "norm"),
    ("DeepRecurrentNet-d_in-0", lambda: deep_recurrent.DeepRecurrentNet(0, d_model=4, depth=1), "d_in"),
    ("DeepRecurrentNet-d_model-0", lambda: deep_recurrent.DeepRecurrentNet(2, d_model=0, depth=1), "d_model"),
    ("DeepRecurrentNet-depth-0", lambda: deep_recurrent.DeepRecurrentNet(2, d_model=4, depth=0), "depth"),
    (
        "DeepRecurrentNet.forward-x-2d",
        lambda: deep_recurrent.DeepRecurrentNet(2, d_model=4, depth=1)(_x(4, 2)),
        "x",
    ),
    ("SimplifiedGRU-d_in-0", lambda: deep_recurrent.SimplifiedGRU(0, 3), "d_in"),
    ("SimplifiedGRU-d-0", lambda: deep_recurrent.SimplifiedGRU(2, 0), "d"),
    ("SimplifiedGRU-networks-0", lambda: deep_recurrent.SimplifiedGRU(2, 3, networks=0), "networks"),
    ("SimplifiedGRU-gates", lambda: deep_recurrent.SimplifiedGRU(2, 3, gates="output"), "gates"),
    ("SimplifiedGRU.bias_sensitivity-x-2d", lambda: deep_recurrent.SimplifiedGRU(2, 3).bias_sensitivity(_x(4, 2)), "x"),
    # drnn
    ("make_drnn_cell-kind", lambda: drnn.make_drnn_cell("elman", 2, 3), "kind"),
    ("DRNN-kind", lambda: drnn.DRNN("elman", 2, [3], output_size=2), "kind"),
    ("DRNN-widths-0", lambda: drnn.DRNN("lstm", 2, [3, 0], output_size=2), "widths"),
    ("DRNN-input_size-0", lambda: drnn.DRNN("lstm", 0, [3], output_size=2), "input_size"),
    ("DRNN-vocab-0", lambda: drnn.DRNN("lstm", 3, [3], vocab=0), "vocab"),
    ("DRNN-output_size-0", lambda: drnn.DRNN("lstm", 2, [3], output_size=0), "output_size"),
    # ffn
    ("DeepFFN-d_in-0", lambda: ffn.DeepFFN(0, 3, 2, 1), "d_in"),
    ("DeepFFN-width-0", lambda: ffn.DeepFFN(2, 0, 2, 1), "width"),
    ("DeepFFN-depth-0", lambda: ffn.DeepFFN(2, 3, 0, 1), "depth"),
    ("DeepFFN-d_out-0", lambda: ffn.DeepFFN(2, 3, 2, 0), "d_out"),
    ("DeepFFN-init", lambda: ffn.DeepFFN(2, 3, 2, 1, init="zeros"), "init"),
    ("DeepFFN.forward-x-1d", lambda: ffn.DeepFFN(2, 3, 2, 1)(_x(2)), "x"),
    ("DeepFFN.forward-x-3d", lambda: ffn.DeepFFN(2, 3, 2, 1)(_x(1, 1, 2)), "x"),
    # gated
    ("LSTMCell-input_size-0", lambda: gated.LSTMCell(0, 3), "input_size"),
    ("GRUCell-hidden_size-0", lambda: gated.GRUCell(2, 0), "hidden_size"),
    # linear_rnn
    ("power_vectors-T-0", lambda: linear_rnn.power_vectors(_x(1, 2, 2), _x(1, 2), 0), "T"),
    ("DenseLinearRNN-n-0", lambda: linear_rnn.DenseLinearRNN(0), "n"),
    ("DenseLinearRNN-heads-0", lambda: linear_rnn.DenseLinearRNN(4, heads=0), "heads"),
    ("DenseLinearRNN.from_system-A-1d", lambda: linear_rnn.DenseLinearRNN.from_system(_x(2), _x(2), _x(2), 0.0), "A"),
    ("DenseLinearRNN.forward-x-1d", lambda: linear_rnn.DenseLinearRNN(4)(_x(5)), "x"),
    ("DenseLinearRNN.forward-x-3d", lambda: linear_rnn.DenseLinearRNN(4)(_x(1, 2, 5)), "x"),
    ("DenseLinearRNN.kernel-T-0", lambda: linear_rnn.DenseLinearRNN(4).kernel(0), "T"),
    ("DiagonalLRU.kernel-T-0", lambda: linear_rnn.DiagonalLRU(4).kernel(0), "T"),
    ("DiagonalLRU.forward-x-1d", lambda: linear_rnn.DiagonalLRU(4)(_x(5)), "x"),
    ("DiagonalLRU-n-0", lambda: linear_rnn.DiagonalLRU(0), "n"),
    ("DiagonalLRU-param", lambda: linear_rnn.DiagonalLRU(4, param="polar"), "param"),
    (
        "DiagonalLRU.from_system-param",
        lambda: linear_rnn.DiagonalLRU.from_system([0.5], [1.0], [1.0], 0.0, param="polar"),
        "param",
    ),
    (
        "DiagonalLRU.from_system-lam-2d",
        lambda: linear_rnn.DiagonalLRU.from_system([[0.5]], [1.0], [1.0], 0.0),
        "lam",
    ),
    ("DiagonalS4-n-0", lambda: linear_rnn.DiagonalS4(0), "n"),
    ("DiagonalS4-delta-0", lambda: linear_rnn.DiagonalS4(4, delta=0.0), "delta"),
    (
        "DiagonalS4.from_system-delta-0",
        lambda: linear_rnn.DiagonalS4.from_system([-0.5], [1.0], [1.0], 0.0, delta=0.0),
        "delta",
    ),
    ("DiagonalS4.from_system-lam-2d", lambda: linear_rnn.DiagonalS4.from_system([[-0.5]], [1.0], [1.0], 0.0), "lam"),
    ("Teacher-n-0", lambda: linear_rnn.Teacher(0), "n"),
    # lru
    ("LRU-d_model-0", lambda: lru.LRU(0, 3), "d_model"),
    ("LRU-d_state-0", lambda: lru.LRU(2, 0), "d_state"),
    ("LRU.forward-x-2d", lambda: lru.LRU(2, 3)(_x(4, 2)), "x"),
    ("DeepLRU-depth-0", lambda: lru.DeepLRU(2, 2, d_model=4, d_state=3, depth=0), "depth"),
    ("DeepLRU-output_size-0", lambda: lru.DeepLRU(2, 0, d_model=4, d_state=3, depth=1), "output_size"),
    # modrelu_rnn, nonnormal, orthogonal
    ("FreeRNNCell-input_size-0", lambda: modrelu_rnn.FreeRNNCell(0, 4), "input_size"),
    ("FreeRNNCell-hidden_size-0", lambda: modrelu_rnn.FreeRNNCell(2, 0), "hidden_size"),
    ("FreeRNNCell-init", lambda: modrelu_rnn.FreeRNNCell(2, 4, init="zeros"), "init"),
    ("EURNNCell-capacity-0", lambda: modrelu_rnn.EURNNCell(2, 4, capacity=0), "capacity"),
    ("NNRNNCell-input_size-0", lambda: nonnormal.NNRNNCell(0, 4), "input_size"),
    ("NNRNNCell-hidden_size-0", lambda: nonnormal.NNRNNCell(2, 0), "hidden_size"),
    ("NNRNNCell-t_mask", lambda: nonnormal.NNRNNCell(2, 4, t_mask="triu"), "t_mask"),
    ("NNRNNCell-gamma_fixed-0", lambda: nonnormal.NNRNNCell(2, 4, gamma_fixed=0.0), "gamma_fixed"),
    ("Orthogonal-map", lambda: orthogonal.Orthogonal(map="householder"), "map"),
    ("skew_init-n-0", lambda: orthogonal.skew_init(0), "n"),
    ("skew_init-kind", lambda: orthogonal.skew_init(4, kind="ones"), "kind"),
    ("ModReLU-size-0", lambda: orthogonal.ModReLU(0), "size"),
    ("OrthogonalRNNCell-input_size-0", lambda: orthogonal.OrthogonalRNNCell(0, 4), "input_size"),
    ("OrthogonalRNNCell-hidden_size-0", lambda: orthogonal.OrthogonalRNNCell(2, 0), "hidden_size"),
    ("OrthogonalRNNCell-activation", lambda: orthogonal.OrthogonalRNNCell(2, 4, activation="gelu"), "activation"),
    ("OrthogonalRNNCell-input_init", lambda: orthogonal.OrthogonalRNNCell(2, 4, input_init="zeros"), "input_init"),
    # relational
    ("ConvEncoder-size-0", lambda: relational.ConvEncoder(size=0), "size"),
    ("ConvEncoder-layers-0", lambda: relational.ConvEncoder(layers=0), "layers"),
    ("encode_objects-images-2d", lambda: relational.encode_objects(_x(4, 4)), "images"),
    ("encode_colours-palette-1d", lambda: relational.encode_colours(_x(3)), "palette"),
    ("encode_patches-patches-3d", lambda: relational.encode_patches(_x(2, 4, 4)), "patches"),
    ("Encoded-images-2d", lambda: relational.Encoded(torch.nn.Identity(), _x(4, 4)), "images"),
    ("Encoded-palette-1d", lambda: relational.Encoded(torch.nn.Identity(), _x(2, 4, 4), palette=_x(3)), "palette"),
    ("CoRelNet-T-0", lambda: relational.CoRelNet(0, 2), "T"),
    ("CoRelNet-variant", lambda: relational.CoRelNet(3, 2, dim=4, hidden=4, variant="sum"), "variant"),
    ("CoRelNet.forward-z-2d", lambda: relational.CoRelNet(3, 2, dim=4, hidden=4)(_x(3, 4)), "z"),
    ("CoRelNetT-T-0", lambda: relational.CoRelNetT(0, 2), "T"),
    (
        "CoRelNetT.forward-z-2d",
        lambda: relational.CoRelNetT(3, 2, dim=4, width=8, pos=2, heads=2)(_x(3, 4)),
        "z",
    ),
    ("PrediNet-T-0", lambda: relational.PrediNet(0, 2), "T"),
    ("PrediNet-heads-0", lambda: relational.PrediNet(3, 2, heads=0), "heads"),
    ("PrediNet-key-0", lambda: relational.PrediNet(3, 2, key=0), "key"),
    ("PrediNet-relations-0", lambda: relational.PrediNet(3, 2, relations=0), "relations"),
    (
        "PrediNet.forward-z-2d",
        lambda: relational.PrediNet(3, 2, dim=4, heads=2, relations=2, key=2, hidden=4)(_x(3, 4)),
        "z",
    ),
    ("CoRelNetMix-T-0", lambda: relational.CoRelNetMix(0, 2), "T"),
    ("CoRelNetMix-tau-0", lambda: relational.CoRelNetMix(3, 2, tau=0.0), "tau"),
    ("CoRelNetMix.forward-z-2d", lambda: relational.CoRelNetMix(3, 2, dim=4, hidden=4, key=2)(_x(3, 4)), "z"),
    ("LSTMBaseline.forward-z-2d", lambda: relational.LSTMBaseline(3, 2, dim=4, hidden=4)(_x(3, 4)), "z"),
    ("MLPBaseline.forward-z-2d", lambda: relational.MLPBaseline(3, 2, dim=4, hidden=4)(_x(3, 4)), "z"),
    ("ESBN-T-0", lambda: relational.ESBN(0, 2), "T"),
    ("ESBN.forward-z-2d", lambda: relational.ESBN(3, 2, dim=4, hidden=4, key=4)(_x(3, 4)), "z"),
    ("nhid_width-T-0", lambda: relational.nhid_width(0, 2), "T"),
    ("nhid_width-classes-0", lambda: relational.nhid_width(3, 0), "classes"),
    ("RelationNetwork-T-0", lambda: relational_baselines.RelationNetwork(0, 2), "T"),
    ("RelationNetwork-classes-0", lambda: relational_baselines.RelationNetwork(3, 0), "classes"),
    ("RelationNetwork-dim-0", lambda: relational_baselines.RelationNetwork(3, 2, dim=0), "dim"),
    ("RelationNetwork-hidden-0", lambda: relational_baselines.RelationNetwork(3, 2, hidden=0), "hidden"),
    ("RelationNetwork-out-0", lambda: relational_baselines.RelationNetwork(3, 2, out=0), "out"),
    (
        "RelationNetwork.forward-z-2d",
        lambda: relational_baselines.RelationNetwork(3, 2, dim=4, hidden=4, out=4)(_x(3, 4)),
        "z",
    ),
    (
        "ntm_address-memory-2d",
        lambda: relational_baselines.ntm_address(_x(3, 4), _x(1, 4), _x(1), _x(1), _x(1, 3), _x(1)),
        "memory",
    ),
    ("NTM-T-0", lambda: relational_baselines.NTM(0, 2), "T"),
    ("NTM-dim-0", lambda: relational_baselines.NTM(3, 2, dim=0), "dim"),
    ("NTM-slots-0", lambda: relational_baselines.NTM(3, 2, slots=0), "slots"),
    ("NTM-width-0", lambda: relational_baselines.NTM(3, 2, width=0), "width"),
    ("NTM-hidden-0", lambda: relational_baselines.NTM(3, 2, hidden=0), "hidden"),
    ("NTM-classes-0", lambda: relational_baselines.NTM(3, 0), "classes"),
    (
        "NTM.forward-z-2d",
        lambda: relational_baselines.NTM(3, 2, dim=4, hidden=4, slots=2, width=4)(_x(3, 4)),
        "z",
    ),
    ("MNM-T-0", lambda: relational_baselines.MNM(0, 2), "T"),
    ("MNM-dim-0", lambda: relational_baselines.MNM(3, 2, dim=0), "dim"),
    ("MNM-layers-0", lambda: relational_baselines.MNM(3, 2, layers=0), "layers"),
    ("MNM-classes-0", lambda: relational_baselines.MNM(3, 0), "classes"),
    ("MNM.forward-z-2d", lambda: relational_baselines.MNM(3, 2, dim=4, layers=1)(_x(3, 4)), "z"),
    # relevancy
    ("RelRNN-input_size-0", lambda: relevancy.RelRNN(0, 3), "input_size"),
    ("RelRNN-hidden_size-0", lambda: relevancy.RelRNN(2, 0), "hidden_size"),
    ("RelRNN-nu-0", lambda: relevancy.RelRNN(2, 3, nu=0), "nu"),
    ("RelRNN-rho-neg", lambda: relevancy.RelRNN(2, 3, rho=-1), "rho"),
    ("RelRNN-cell", lambda: relevancy.RelRNN(2, 3, cell="gru"), "cell"),
    ("RelRNN.forward-x-2d", lambda: relevancy.RelRNN(2, 3, nu=2, rho=1)(_x(4, 2)), "x"),
    ("CellSequence.forward-x-2d", lambda: relevancy.CellSequence(_cell())(_x(4, 2)), "x"),
    ("make_core-kind", lambda: relevancy.make_core("transformer", 2, 3), "kind"),
    ("Tagger-classes-0", lambda: relevancy.Tagger("RNN", 2, 3, 0), "classes"),
    ("TokenTagger-vocab-0", lambda: relevancy.TokenTagger("RNN", 0, 2, 3), "vocab"),
    ("TokenTagger-embedding-0", lambda: relevancy.TokenTagger("RNN", 5, 0, 3), "embedding"),
    (
        "TokenTagger.forward-tokens-1d",
        lambda: relevancy.TokenTagger("RNN", 5, 2, 3)(torch.zeros(4, dtype=torch.long)),
        "tokens",
    ),
    (
        "hidden_gradient_norms-x-2d",
        lambda: relevancy.hidden_gradient_norms(relevancy.Tagger("RNN", 2, 3, 2), _x(4, 2), torch.zeros(4).long()),
        "x",
    ),
    (
        "hidden_gradient_norms-last-0",
        lambda: relevancy.hidden_gradient_norms(
            relevancy.Tagger("RNN", 2, 3, 2), _x(1, 4, 2), torch.zeros(1, 4).long(), last=0
        ),
        "last",
    ),
    # rnn
    ("recurrent_matrix-n-0", lambda: rnn.recurrent_matrix(0), "n"),
    ("recurrent_matrix-scale-neg", lambda: rnn.recurrent_matrix(3, scale=-1.0), "scale"),
    ("recurrent_matrix-init", lambda: rnn.recurrent_matrix(3, init="zeros"), "init"),
    ("RNNCell-input_size-0", lambda: rnn.RNNCell(0, 3), "input_size"),
    ("RNNCell-hidden_size-0", lambda: rnn.RNNCell(2, 0), "hidden_size"),
    ("RNNCell-input_scale-neg", lambda: rnn.RNNCell(2, 3, input_scale=-1.0), "input_scale"),
    ("run_cell-x-2d", lambda: rnn.run_cell(_cell(), _x(4, 2)), "x"),
    ("run_cell-x-4d", lambda: rnn.run_cell(_cell(), _x(1, 1, 4, 2)), "x"),
    ("SequenceModel-readout", lambda: rnn.SequenceModel([_cell()], 2, readout="mean"), "readout"),
    ("SequenceModel-output_size-0", lambda: rnn.SequenceModel([_cell()], 0), "output_size"),
    # roa
    ("semi_orthogonal-n-0", lambda: roa.semi_orthogonal(0, 2), "n"),
    ("semi_orthogonal-m-0", lambda: roa.semi_orthogonal(2, 0), "m"),
    ("semi_orthogonal-method", lambda: roa.semi_orthogonal(2, 2, method="svd"), "method"),
    ("RoaFNN-depth-0", lambda: roa.RoaFNN(2, 3, 1, 0), "depth"),
    ("RoaFNN-rho-0", lambda: roa.RoaFNN(2, 3, 1, 3, rho=0.0), "rho"),
    ("RoaFNN.forward-x-1d", lambda: roa.RoaFNN(2, 3, 1, 3, rho=1.0)(_x(2)), "x"),
    ("RoaRNNCell-input_size-0", lambda: roa.RoaRNNCell(0, 3, alpha=0.5), "input_size"),
    ("RoaRNNCell-hidden_size-0", lambda: roa.RoaRNNCell(2, 0, alpha=0.5), "hidden_size"),
    ("RoaRNNCell-alpha-0", lambda: roa.RoaRNNCell(2, 3, alpha=0.0), "alpha"),
    ("RoaRNN-readout", lambda: roa.RoaRNN(2, 3, 1, alpha=0.5, readout="mean"), "readout"),
    ("RoaRNN-output_size-0", lambda: roa.RoaRNN(2, 3, 0, alpha=0.5), "output_size"),
    ("RoaRNN.states-x-2d", lambda: roa.RoaRNN(2, 3, 1, alpha=0.5).states(_x(4, 2)), "x"),
    ("RoaRNN.last_state-x-2d", lambda: roa.RoaRNN(2, 3, 1, alpha=0.5).last_state(_x(4, 2)), "x"),
    ("PaperBaseline-kind", lambda: roa.PaperBaseline("gru", 2, 3, 1), "kind"),
    ("PaperBaseline-readout", lambda: roa.PaperBaseline("rnn", 2, 3, 1, readout="mean"), "readout"),
    ("PaperBaseline-hidden_size-0", lambda: roa.PaperBaseline("rnn", 2, 0, 1), "hidden_size"),
    ("PaperBaseline-rnn-input_size-0", lambda: roa.PaperBaseline("rnn", 0, 3, 1), "input_size"),
    ("PaperBaseline-lstm-input_size-0", lambda: roa.PaperBaseline("lstm", 0, 3, 1), "input_size"),
    ("PaperBaseline-output_size-0", lambda: roa.PaperBaseline("rnn", 2, 3, 0), "output_size"),
    ("PaperBaseline.forward-x-2d", lambda: roa.PaperBaseline("rnn", 2, 3, 1)(_x(4, 2)), "x"),
    # spiking
    ("ALIFCell-input_size-0", lambda: spiking.ALIFCell(0, 3), "input_size"),
    ("ALIFCell-hidden_size-0", lambda: spiking.ALIFCell(2, 0), "hidden_size"),
    ("ALIFCell-beta_init", lambda: spiking.ALIFCell(2, 3, beta_init="zero"), "beta_init"),
    ("ALIFCell-tau_y-0", lambda: spiking.ALIFCell(2, 3, tau_y=0.0), "tau_y"),
    ("ALIFCell-tau_th-0", lambda: spiking.ALIFCell(2, 3, tau_th=0.0), "tau_th"),
    ("ALIFCell-b_th-0", lambda: spiking.ALIFCell(2, 3, b_th=0.0), "b_th"),
    ("ALIFCell-beta-0", lambda: spiking.ALIFCell(2, 3, beta=0.0), "beta"),
    ("ALIFCell-dampening-0", lambda: spiking.ALIFCell(2, 3, dampening=0.0), "dampening"),
    ("ALIFCell-sharpness-0", lambda: spiking.ALIFCell(2, 3, sharpness=0.0), "sharpness"),
    # unified
    ("state_size-arch", lambda: unified.state_size("rnn", 3), "arch"),
    ("Theta-arch", lambda: unified.Theta("rnn"), "arch"),
    ("uniform_theta-arch", lambda: unified.uniform_theta("rnn"), "arch"),
    ("standard_theta-d-0", lambda: unified.standard_theta(d=0), "d"),
    ("standard_theta-n-0", lambda: unified.standard_theta(n=0), "n"),
    ("evaluate_equations-arch", lambda: unified.evaluate_equations("rnn", _x(3), {}), "arch"),
    ("fresh_product-x-1d", lambda: unified.fresh_product(_x(3), 1.0, 2), "x"),
    ("sample_weights-n-0", lambda: unified.sample_weights(_theta(), 0, 2), "n"),
    ("sample_weights-d-0", lambda: unified.sample_weights(_theta(), 3, 0), "d"),
    ("simulate_pair-inputs-2d", lambda: unified.simulate_pair(_theta(), 3, _x(2, 4), tied=True), "inputs"),
    ("GatedClassifier-n-0", lambda: unified.GatedClassifier([_theta()], 0, 2, 4, 2), "n"),
    ("GatedClassifier-d-0", lambda: unified.GatedClassifier([_theta()], 3, 0, 4, 2), "d"),
    ("GatedClassifier-length-0", lambda: unified.GatedClassifier([_theta()], 3, 2, 0, 2), "length"),
    ("GatedClassifier.forward-x-2d", lambda: unified.GatedClassifier([_theta()], 3, 2, 4, 2)(_x(4, 2)), "x"),
]


_SHAPES = torch.arange(4)

# (id, thunk, argument name) for the data sets
DATA_CASES = [
    ("load_cifar10-split", lambda: cifar.load_cifar10("valid", download=False), "split"),
    ("cifar_sequences-images-3d", lambda: cifar.cifar_sequences(torch.zeros(2, 32, 32, dtype=torch.uint8)), "images"),
    ("load_mnist-split", lambda: mnist.load_mnist("valid", download=False), "split"),
    ("pixel_sequences-images-2d", lambda: mnist.pixel_sequences(torch.zeros(2, 28, dtype=torch.uint8)), "images"),
    (
        "pixel_sequences-limit-0",
        lambda: mnist.pixel_sequences(torch.zeros(2, 4, 4, dtype=torch.uint8), limit=0),
        "limit",
    ),
    ("ar1-batch-0", lambda: embeddings.ar1(0, 3, 2, 0.5), "batch"),
    ("ar1-length-0", lambda: embeddings.ar1(2, 0, 2, 0.5), "length"),
    ("ar1-features-0", lambda: embeddings.ar1(2, 3, 0, 0.5), "features"),
    ("bert_like-white-neg", lambda: embeddings.bert_like(2, 3, 2, white=-0.1), "white"),
    ("bert_like-slow-neg", lambda: embeddings.bert_like(2, 3, 2, slow=-0.1), "slow"),
    ("autocorrelation-x-2d", lambda: embeddings.autocorrelation(_x(3, 2), 1), "x"),
    ("autocorrelation-max_lag-neg", lambda: embeddings.autocorrelation(_x(2, 3, 2), -1), "max_lag"),
    ("bert_wikipedia-articles-0", lambda: embeddings.bert_wikipedia(0), "articles"),
    ("bert_wikipedia-length-0", lambda: embeddings.bert_wikipedia(2, 0), "length"),
    ("double_moon-n-0", lambda: moons.double_moon(0), "n"),
    ("double_moon-r-0", lambda: moons.double_moon(4, r=0.0), "r"),
    ("double_moon-w-0", lambda: moons.double_moon(4, w=0.0), "w"),
    ("standardised_digits-source", lambda: padded.standardised_digits("emnist"), "source"),
    ("standardised_digits-pool-0", lambda: padded.standardised_digits("mnist", pool=0), "pool"),
    ("standardised_digits-limit-0", lambda: padded.standardised_digits(limit=0), "limit"),
    ("padded_sequences-x-1d", lambda: padded.padded_sequences(_x(3), 5), "x"),
    ("padded_sequences-length-0", lambda: padded.padded_sequences(_x(2, 3), 0), "length"),
    ("replicated_pixels-x-1d", lambda: padded.replicated_pixels(_x(3), 2, 1), "x"),
    ("replicated_pixels-repeat-0", lambda: padded.replicated_pixels(_x(2, 3), 0, 1), "repeat"),
    ("replicated_pixels-dim-0", lambda: padded.replicated_pixels(_x(2, 3), 2, 0), "dim"),
    ("concatenated_digits-x-1d", lambda: padded.concatenated_digits(_x(3), torch.zeros(3).long(), 2, 2), "x"),
    ("concatenated_digits-n-0", lambda: padded.concatenated_digits(_x(3, 2), torch.zeros(3).long(), 0, 2), "n"),
    ("concatenated_digits-count-0", lambda: padded.concatenated_digits(_x(3, 2), torch.zeros(3).long(), 2, 0), "count"),
    ("split-m-neg", lambda: relational_data.split(-1), "m"),
    ("same_different6-phase", lambda: relational_data.same_different6(_SHAPES, 2, phase="val"), "phase"),
    ("rmts3-phase", lambda: relational_data.rmts3(_SHAPES, 2, phase="val"), "phase"),
    ("distribution_of_n-n-0", lambda: relational_data.distribution_of_n(_SHAPES, 2, n=0), "n"),
    ("colours-n-0", lambda: relational_data.colours(0), "n"),
    ("coloured-n_colours-0", lambda: relational_data.coloured(relational_data.rmts3, n_colours=0), "n_colours"),
    ("separated-n_colours-0", lambda: relational_data.separated(relational_data.rmts3, n_colours=0), "n_colours"),
    ("separated-n_shapes-0", lambda: relational_data.separated(relational_data.rmts3, n_shapes=0), "n_shapes"),
    ("polyominoes-n-0", lambda: relational_games.polyominoes(0), "n"),
    ("render-seq-1d", lambda: relational_games.render(torch.zeros(3).long()), "seq"),
    ("same-shapes-2d", lambda: relational_games.same(torch.zeros(2, 3).long(), 2), "shapes"),
    ("between-shapes-2d", lambda: relational_games.between(torch.zeros(2, 3).long(), 2), "shapes"),
    ("colour_shape-shapes-2d", lambda: relational_games.colour_shape(torch.zeros(2, 3).long(), 2), "shapes"),
    ("latency_encode-x-1d", lambda: spikes.latency_encode(torch.rand(3)), "x"),
    ("latency_encode-tau-0", lambda: spikes.latency_encode(torch.rand(2, 3), tau=0.0), "tau"),
    ("latency_encode-thr-0", lambda: spikes.latency_encode(torch.rand(2, 3), thr=0.0), "thr"),
    ("latency_encode-t_max-0", lambda: spikes.latency_encode(torch.rand(2, 3), t_max=0.0), "t_max"),
    ("latency_encode-dt-0", lambda: spikes.latency_encode(torch.rand(2, 3), dt=0.0), "dt"),
    ("latency_encode-repeat-0", lambda: spikes.latency_encode(torch.rand(2, 3), repeat=0), "repeat"),
    ("spike_patterns-n-0", lambda: spikes.spike_patterns(0), "n"),
    ("mode_accuracy-logits-2d", lambda: spikes.mode_accuracy(_x(2, 3), torch.zeros(2).long()), "logits"),
    ("copy_memory-batch-0", lambda: synthetic.copy_memory(0, 3, seed=0), "batch"),
    ("copy_memory-blanks-neg", lambda: synthetic.copy_memory(2, -1, seed=0), "blanks"),
    ("copy_memory-n_symbols-0", lambda: synthetic.copy_memory(2, 3, n_symbols=0, seed=0), "n_symbols"),
    ("copy_memory-length-0", lambda: synthetic.copy_memory(2, 3, length=0, seed=0), "length"),
    ("adding_problem-batch-0", lambda: synthetic.adding_problem(0, 5, seed=0), "batch"),
    ("adding_problem-length-0", lambda: synthetic.adding_problem(2, 0, seed=0), "length"),
    ("denoise-batch-0", lambda: synthetic.denoise(0, 3, seed=0), "batch"),
    ("denoise-blanks-neg", lambda: synthetic.denoise(2, -1, seed=0), "blanks"),
    ("denoise-n_symbols-0", lambda: synthetic.denoise(2, 3, n_symbols=0, seed=0), "n_symbols"),
    ("denoise-length-0", lambda: synthetic.denoise(2, 3, length=0, seed=0), "length"),
    ("load_ptb-level", lambda: text.load_ptb("byte", download=False), "level"),
    ("markov_corpus-vocab_size-0", lambda: text.markov_corpus(0, lengths=(20, 10, 10)), "vocab_size"),
    ("markov_corpus-lengths-0", lambda: text.markov_corpus(5, lengths=(20, 0, 10)), "lengths"),
    ("batchify-batch-0", lambda: text.batchify(torch.arange(10), 0), "batch"),
    ("bptt_windows-length-0", lambda: list(text.bptt_windows(torch.zeros(2, 5).long(), 0)), "length"),
]


@pytest.mark.parametrize(("call", "name"), [pytest.param(c, n, id=i) for i, c, n in CASES + MODEL_CASES + DATA_CASES])
def test_bad_argument_is_named(call, name):
    with pytest.raises((ValueError, TypeError), match=rf"^{name} must"):
        call()


# ------------------------------------------------------------------------------------------------ zero is allowed
# (id, thunk, expected or None): the argument is zero where the function documents zero as valid (allow_zero=True);
# the expected values follow from the definitions, not from the functions
ZERO_CASES = [
    ("unipotent_power-t-0", lambda: fisher.unipotent_power(3, 0.7, 0), np.eye(3)),  # A^0 = I
    ("path_count-dl-0", lambda: lsc.path_count(0, 3), 1),  # one monotone path along a 0 x 3 grid
    ("path_count-dt-0", lambda: lsc.path_count(3, 0), 1),
    ("summed_path_count-T-0", lambda: lsc.summed_path_count(0, 2), 1),  # the single term C(dl + 0, 0)
    ("summed_path_count-dl-0", lambda: lsc.summed_path_count(2, 0), 6),  # sum_{t<=2} (t + 1) = 1 + 2 + 3
    ("screened_gradients-rho-0", lambda: relevancy_theory.screened_gradients(5, [1], nu=2, rho=0), None),
    ("screened_gradients-events-0", lambda: relevancy_theory.screened_gradients(5, [0], nu=2, rho=1), None),
    ("upper_bound-sigma-0", lambda: roa_theory.upper_bound(1.0, 0.0, 3), None),
    ("fixed_point-input_var-0", lambda: vanilla.fixed_point(g=0.5, input_var=0.0, bias_var=0.0), 0.0),  # q* = 0
    ("RelRNN-rho-0", lambda: relevancy.RelRNN(2, 3, nu=2, rho=0), None),
    ("recurrent_matrix-scale-0", lambda: rnn.recurrent_matrix(3, scale=0.0), np.zeros((3, 3))),
    ("RNNCell-input_scale-0", lambda: rnn.RNNCell(2, 3, input_scale=0.0), None),
    ("bert_like-white-0", lambda: embeddings.bert_like(2, 3, 2, white=0.0), None),
    ("bert_like-slow-0", lambda: embeddings.bert_like(2, 3, 2, slow=0.0), None),
    ("autocorrelation-max_lag-0", lambda: embeddings.autocorrelation(torch.ones(2, 3, 2), 0), np.ones(1)),
    ("split-m-0", lambda: relational_data.split(0, n=5), None),
    ("copy_memory-blanks-0", lambda: synthetic.copy_memory(2, 0, seed=0), None),
]


@pytest.mark.parametrize(("call", "expected"), [pytest.param(c, e, id=i) for i, c, e in ZERO_CASES])
def test_zero_is_accepted_where_allowed(call, expected):
    out = call()
    if expected is not None:
        np.testing.assert_allclose(np.asarray(out, dtype=float), expected, atol=1e-9)
