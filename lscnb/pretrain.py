"""Pre-training to the Local Stability Condition (Herranz-Celotti & Rouat 2024, Sec. II-D).

Before training on the task, drive the spectral radius of every transition derivative ``M_k`` to a target
``rho_t`` (1 or 1/2, or a (time, depth) pair) with the loss (eq. 2)

    L_prep = mean_k (rho(M_k) - rho_t)^2,

and after every gradient step (i) multiply each group's weights by ``kappa = clip(rho_t / mean rho, 0.85, 1.15)``
and (ii) with some probability shuffle the entries of each weight matrix. Stop when every group's mean radius
is within ``eps`` of its target, the spread of radii is below ``std_thr``, and an EMA of that spread is too.

The model-specific part is two functions: ``transitions(step)`` returning ``{group: Jacobians (B, n, m)}``
(differentiable in the weights) and the parameters each group's ``kappa`` scales; ``stack_*`` and ``ffn_*``
provide them for :class:`lscnb.models.Stack` and :class:`lscnb.models.ffn.DeepFFN`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from tqdm.auto import tqdm

from . import checks
from .train import make_optimizer


@dataclass
class PretrainHistory:
    """Per step: the loss, each group's mean radius, the spread of all radii; whether and when it stopped, and
    whether it stopped because it diverged (a non-finite Jacobian or loss, or a radius that cannot be computed)."""

    loss: list = field(default_factory=list)
    radius: dict = field(default_factory=dict)
    spread: list = field(default_factory=list)
    converged: bool = False
    diverged: bool = False
    steps: int = 0


def differentiable_radius(J: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """``max |eig|`` of each (..., n, m) matrix; a non-square one is cut to a random square block of its smaller
    size first (as the official code does)."""
    n, m = J.shape[-2:]
    if n != m:
        k = min(n, m)
        if n > m:
            J = J[..., torch.randperm(n, generator=generator)[:k], :]
        else:
            J = J[..., :, torch.randperm(m, generator=generator)[:k]]
    return torch.linalg.eigvals(J).abs().amax(-1)


def differentiable_norm(J: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """The spectral norm ``||J||_2`` (largest singular value) of each (..., n, m) matrix: App. A's ``a_k``."""
    return torch.linalg.matrix_norm(J, ord=2)


MEASURES = {"radius": differentiable_radius, "norm": differentiable_norm}


def _targets(target, groups) -> dict:
    if isinstance(target, dict):
        return {
            g: float(target[g.rstrip("0123456789")] if g.rstrip("0123456789") in target else target[g]) for g in groups
        }
    return {g: float(target) for g in groups}


def pretrain(
    transitions,
    scale_groups: dict,
    *,
    target=1.0,
    steps: int = 200,
    lr: float = 3e-3,
    kappa_clip: tuple = (0.85, 1.15),
    shuffle_prob: float = 1 / 3,
    eps: float = 0.02,
    std_thr: float = 0.2,
    ema: int = 10,
    seed: int = 0,
    progress: bool = True,
    measure: str = "radius",
) -> PretrainHistory:
    """Pre-train to the LSC. ``transitions(step)`` -> ``{group: J (B, n, m)}``; ``scale_groups`` maps each group
    to the parameters its ``kappa`` multiplies; ``target`` is a number or ``{"time": a, "depth": b}`` keyed by
    the group names' prefixes; ``measure`` is ``"radius"`` (Thm 1) or ``"norm"`` (the 2-norm ``a_k`` of Thm 2,
    used for Figs S2-S3). Returns a :class:`PretrainHistory` (its ``radius`` holds the chosen measure)."""
    steps = checks.positive_int(steps, "steps")
    size = MEASURES[checks.one_of(measure, tuple(MEASURES), "measure")]
    lo, hi = kappa_clip
    if not 0 < lo <= 1 <= hi:
        raise ValueError(f"kappa_clip must satisfy 0 < low <= 1 <= high, got {kappa_clip}")
    params = list({id(p): p for ps in scale_groups.values() for p in ps}.values())
    opt = make_optimizer(params, "adam", lr)
    gen = torch.Generator().manual_seed(seed)
    hist, smoothed = PretrainHistory(), None
    for step in tqdm(range(steps), desc="LSC pre-training", disable=not progress, leave=False):
        jacs = transitions(step)
        targets = _targets(target, jacs)
        try:
            if not all(bool(torch.isfinite(J).all()) for J in jacs.values()):
                raise FloatingPointError
            radii = {g: size(J, gen) for g, J in jacs.items()}
            loss = torch.cat([(r - targets[g]).pow(2).reshape(-1) for g, r in radii.items()]).mean()
            if not torch.isfinite(loss):
                raise FloatingPointError
        except (FloatingPointError, torch.linalg.LinAlgError):  # recorded, not raised: the caller decides
            hist.diverged, hist.steps = True, step
            break
        opt.zero_grad()
        loss.backward()
        opt.step()
        means = {g: float(r.detach().mean()) for g, r in radii.items()}
        every = torch.cat([r.detach().reshape(-1) for r in radii.values()])  # rho(M_k) over all k: groups, samples
        spread = float(every.std()) if every.numel() > 1 else 0.0
        with torch.no_grad():
            for g, ps in scale_groups.items():
                if g in means and means[g] > 0:
                    kappa = min(max(targets[g] / means[g], lo), hi)
                    for p in ps:
                        p.mul_(kappa)
            for p in params:
                if p.ndim >= 2 and torch.rand((), generator=gen) < shuffle_prob:
                    p.copy_(p.reshape(-1)[torch.randperm(p.numel(), generator=gen)].reshape(p.shape))
        hist.loss.append(float(loss.detach()))
        for g, v in means.items():
            hist.radius.setdefault(g, []).append(v)
        hist.spread.append(spread)
        smoothed = spread if smoothed is None else smoothed + (spread - smoothed) / ema
        hist.steps = step + 1
        if all(abs(means[g] - targets[g]) <= eps for g in means) and spread < std_thr and smoothed < std_thr:
            hist.converged = True
            break
    return hist


def final_radii(hist: PretrainHistory, last: int = 1) -> dict:
    """Each group's mean radius, averaged over the ``last`` steps (single steps are noisy: few samples)."""
    last = checks.positive_int(last, "last")
    return {g: float(np.mean(v[-last:])) for g, v in hist.radius.items()}


# --------------------------------------------------------------------------------------------- stacks of cells
def stack_transitions(stack, x: torch.Tensor, t: int) -> dict:
    """Differentiable ``time{l}`` (d h[t,l] / d h[t-1,l]) and ``depth{l}`` (d h[t,l] / d h[t,l-1], for l = 0 with
    respect to the input) derivatives of a :class:`~lscnb.models.Stack` at step ``t`` of inputs ``x`` (B, T, D)."""
    checks.tensor(x, "x", ndim=3)
    with torch.no_grad():
        states = stack(x)
    out, inp = {}, x[:, t]
    jac = torch.func.jacrev
    for l, cell in enumerate(stack.cells):
        prev = states[l][:, t - 1] if t > 0 else cell.initial_state(x.shape[0], dtype=x.dtype)
        out[f"time{l}"] = torch.func.vmap(jac(lambda s, u, c=cell: c(s.unsqueeze(0), u.unsqueeze(0))[0]))(prev, inp)
        if l == 0:
            out[f"depth{l}"] = torch.func.vmap(
                jac(lambda s, u, c=cell: c(s.unsqueeze(0), u.unsqueeze(0))[0], argnums=1)
            )(prev, inp)
        else:
            below, lower = states[l - 1][:, t], stack.cells[l - 1]
            out[f"depth{l}"] = torch.func.vmap(
                jac(lambda s, b, c=cell, lo=lower: c(s.unsqueeze(0), lo.output(b.unsqueeze(0)))[0], argnums=1)
            )(prev, below)
        inp = cell.output(states[l][:, t])
    return out


def stack_scale_groups(stack) -> dict:
    """``time{l}`` scales layer l's recurrent weights (``weight_hh``), ``depth{l}`` its input weights; a cell with
    an ``lsc_scale_groups()`` method (the ALIF cell) names its own ``{"time": [...], "depth": [...]}``."""
    groups = {}
    for l, cell in enumerate(stack.cells):
        if hasattr(cell, "lsc_scale_groups"):
            own = cell.lsc_scale_groups()
            groups[f"time{l}"], groups[f"depth{l}"] = list(own["time"]), list(own["depth"])
            continue
        groups[f"time{l}"] = [p for n, p in cell.named_parameters() if n.startswith("weight_hh")]
        groups[f"depth{l}"] = [p for n, p in cell.named_parameters() if n.startswith("weight_ih")]
    return groups


def pretrain_stack(stack, inputs, *, target=1.0, steps: int = 100, **options) -> PretrainHistory:
    """Pre-train a stack of cells on batches ``inputs(step)`` (B, T, D), one random step t per update."""
    gen = torch.Generator().manual_seed(options.get("seed", 0))

    def transitions(step):
        x = inputs(step)
        return stack_transitions(stack, x, int(torch.randint(x.shape[1], (), generator=gen)))

    return pretrain(transitions, stack_scale_groups(stack), target=target, steps=steps, **options)


# --------------------------------------------------------------------------------------------- feed-forward
def pretrain_ffn(ffn, inputs, *, target: float = 1.0, steps: int = 200, **options) -> PretrainHistory:
    """Pre-train a :class:`~lscnb.models.ffn.DeepFFN` so that every ``diag(phi'(z_l)) W_l`` has radius ``target``."""

    def transitions(step):
        return {f"layer{l}": J for l, J in enumerate(ffn.transition_derivatives(inputs(step)), start=1)}

    groups = {f"layer{l}": [layer.weight] for l, layer in enumerate(ffn.layers) if l >= 1}
    return pretrain(transitions, groups, target=target, steps=steps, **options)


# --------------------------------------------------------------------------------------------- LRU stacks
def lru_states(model, tokens: torch.Tensor) -> list:
    """Per block of a :class:`~lscnb.models.lru.DeepLRU`: ``(h, x)``, its residual-stream input (B, T, d) and its
    complex LRU state (B, T, N) at every step."""
    from .kernels import linear_scan

    h, out = model.encoder(tokens), []
    for block in model.blocks:
        lru = block.lru
        u = block.norm(h)
        x = linear_scan(lru.eigenvalues(), torch.complex(u @ lru.B_re.T, u @ lru.B_im.T) * lru.gamma(), dim=1)
        out.append((h, x))
        h = block(h)
    return out


def _block_output(block, h: torch.Tensor, x_re: torch.Tensor, x_im: torch.Tensor) -> torch.Tensor:
    """A block's output (eq. 50-51) from its residual input ``h`` and its LRU state ``x`` (dropout off)."""
    lru = block.lru
    y = x_re @ lru.C_re.T - x_im @ lru.C_im.T + block.norm(h) * lru.D
    return h + torch.nn.functional.glu(block.glu(torch.nn.functional.gelu(y)), dim=-1)


def lru_transitions(model, tokens: torch.Tensor, t: int) -> dict:
    """Transition derivatives of a DeepLRU at step ``t`` (stacked convention): ``time{l}`` is ``diag(lambda_l)``,
    whose radius is ``max |lambda|`` (one matrix, shape (1, N, N), of the moduli); ``depth{l}`` for ``l >= 1`` is
    ``d x[t,l] / d x[t,l-1]`` with the complex states written as real ``[Re, Im]`` vectors (B, 2N, 2N). The
    embedding's link to block 0 is not square and is left out."""
    checks.tensor(tokens, "tokens", ndim=2)
    with torch.no_grad():
        grid = lru_states(model, tokens)
    out = {f"time{l}": torch.diag_embed(b.lru.eigenvalues().abs()).unsqueeze(0) for l, b in enumerate(model.blocks)}
    for l in range(1, len(model.blocks)):
        below, block = model.blocks[l - 1], model.blocks[l]
        h_below, x_below = grid[l - 1][0][:, t], grid[l - 1][1][:, t]
        n = x_below.shape[-1]

        def step(xr, h, below=below, block=block):
            u = block.norm(_block_output(below, h, xr[:n], xr[n:]))
            g = block.lru.gamma()
            return torch.cat([g * (u @ block.lru.B_re.T), g * (u @ block.lru.B_im.T)])  # + lambda x[t-1]: constant

        out[f"depth{l}"] = torch.func.vmap(torch.func.jacrev(step))(
            torch.cat([x_below.real, x_below.imag], -1), h_below
        )
    return out


def lru_scale_groups(model) -> dict:
    """``time{l}`` scales ``nu_log`` of block l (kappa > 1 raises ``|lambda|``, as ``nu_log < 0``), ``depth{l}`` its
    input matrix ``B``: the paper's LRU mapping (App. H), with C and the GLU left to the gradient of the others."""
    groups = {}
    for l, b in enumerate(model.blocks):
        groups[f"time{l}"] = [b.lru.nu_log]
        if l >= 1:
            groups[f"depth{l}"] = [b.lru.B_re, b.lru.B_im]
    return groups


def pretrain_lru(model, inputs, *, target=1.0, steps: int = 100, **options) -> PretrainHistory:
    """Pre-train a :class:`~lscnb.models.lru.DeepLRU` on token batches ``inputs(step)`` (B, T), one random step per
    update, in evaluation mode (no dropout). ``target`` may be ``{"time": a, "depth": b}`` (the paper's
    ``rho-bar_t = 1/2``: ``a = T / (T + L)``, ``b = L / (T + L)``)."""
    gen = torch.Generator().manual_seed(options.get("seed", 0))
    was_training = model.training
    model.eval()

    def transitions(step):
        x = inputs(step)
        return lru_transitions(model, x, int(torch.randint(x.shape[1], (), generator=gen)))

    try:
        return pretrain(transitions, lru_scale_groups(model), target=target, steps=steps, **options)
    finally:
        model.train(was_training)
