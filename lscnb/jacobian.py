"""Transition derivatives, their spectra, long products and gradients through time.

Notation (LSC paper, eq. 1): the state ``h[t,l]`` of layer ``l`` at time ``t`` depends on ``h[t-1,l]`` (the
*time* link) and on the layer below (the *depth* link). Their Jacobians are the *transition derivatives*
``M_k``; the gradient of a loss at ``h[T,L]`` with respect to ``h[t,l]`` is a sum over monotone paths of
products of ``M_k`` (the Pascal-triangle recursion, eq. 4). Everything here works on any cell with the
``state = cell(state, x)`` convention of :mod:`lscnb.models`, batched with ``torch.func.vmap``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch.func import jacfwd, jacrev, jvp, vmap

from . import checks
from .models.rnn import run_cell


def _flat(t: torch.Tensor, keep: int) -> tuple[torch.Tensor, tuple]:
    lead = t.shape[: t.ndim - keep]
    return t.reshape(-1, *t.shape[t.ndim - keep :]), lead


def cell_jacobians(
    cell: Callable, state: torch.Tensor, x: torch.Tensor, *, wrt: str = "state", mode: str = "rev"
) -> torch.Tensor:
    """``d cell(state, x) / d state`` (or ``/ d x``) for every leading index.

    ``state`` is (..., S) and ``x`` is (..., D) with the same leading shape; the result is (..., S, S) or
    (..., S, D). ``mode`` picks reverse (``jacrev``, cheaper when S <= D) or forward (``jacfwd``) mode.
    """
    checks.tensor(state, "state", min_dim=1)
    checks.tensor(x, "x", min_dim=1)
    checks.one_of(wrt, ("state", "input"), "wrt")
    checks.one_of(mode, ("rev", "fwd"), "mode")
    if state.shape[:-1] != x.shape[:-1]:
        raise ValueError(f"state and x must share leading dimensions, got {tuple(state.shape)} and {tuple(x.shape)}")
    jac = (jacrev if mode == "rev" else jacfwd)(lambda s, u: cell(s, u), argnums=0 if wrt == "state" else 1)
    s, lead = _flat(state.detach(), 1)
    u, _ = _flat(x.detach(), 1)
    with torch.no_grad():
        out = vmap(jac)(s, u)
    return out.reshape(*lead, *out.shape[1:])


def time_jacobians(cell, x: torch.Tensor, state0: torch.Tensor | None = None, *, mode: str = "rev"):
    """The time transition derivatives ``J_t = d h_t / d h_{t-1}`` along a trajectory driven by ``x``.

    ``x`` is (B, T, D). Returns ``(J, states)`` with ``J`` of shape (B, T, S, S) and ``states`` (B, T, S),
    where ``J[:, t]`` is evaluated at ``(states[:, t-1], x[:, t])`` (``state0`` or zeros for ``t = 0``).
    """
    checks.tensor(x, "x", ndim=3)
    with torch.no_grad():
        states = run_cell(cell, x, state0)
    prev = torch.cat(
        [
            (
                state0 if state0 is not None else cell.initial_state(x.shape[0], device=x.device, dtype=x.dtype)
            ).unsqueeze(1),
            states[:, :-1],
        ],
        dim=1,
    )
    return cell_jacobians(cell, prev, x, wrt="state", mode=mode), states


def grid_jacobians(stack, x: torch.Tensor) -> dict:
    """Time and depth transition derivatives of every layer of a :class:`~lscnb.models.Stack`.

    Returns ``{"time": [...], "depth": [...], "states": [...]}``, lists over layers: ``time[l]`` is
    ``d h[t,l] / d h[t-1,l]`` of shape (B, T, S_l, S_l) and ``depth[l]`` is ``d h[t,l] / d h[t,l-1]`` of shape
    (B, T, S_l, S_{l-1}) (for ``l = 0``: with respect to the input x, shape (B, T, S_0, D)). The depth link
    goes through the lower layer's ``output`` (for an LSTM, only its ``h`` half feeds upward).
    """
    checks.tensor(x, "x", ndim=3)
    with torch.no_grad():
        states = stack(x)
    out = {"time": [], "depth": [], "states": states}
    inp = x  # what layer l reads: x for layer 0, the lower layer's output above it
    for l, cell in enumerate(stack.cells):
        prev = torch.cat(
            [cell.initial_state(x.shape[0], device=x.device, dtype=x.dtype).unsqueeze(1), states[l][:, :-1]], dim=1
        )
        out["time"].append(cell_jacobians(cell, prev, inp, wrt="state"))
        if l == 0:
            out["depth"].append(cell_jacobians(cell, prev, x, wrt="input"))
        else:
            lower = stack.cells[l - 1]
            step = lambda h, s_below, _c=cell, _lo=lower: _c(h, _lo.output(s_below))  # noqa: E731
            out["depth"].append(cell_jacobians(step, prev, states[l - 1], wrt="input"))
        inp = cell.output(states[l])
    return out


def spectral_radius(matrices: torch.Tensor, *, method: str = "eig", iters: int = 200) -> torch.Tensor:
    """``max_i |lambda_i|`` of each square matrix in (..., n, n).

    ``eig`` uses exact eigenvalues (on CUDA, ``linalg.eig`` takes a slow hybrid path: prefer ``power`` there).
    ``power`` runs batched power iteration and returns the geometric-mean growth over the last half of the
    iterations, which also converges when the dominant eigenvalues are a complex pair.
    """
    checks.square_matrices(matrices, "matrices")
    checks.one_of(method, ("eig", "power"), "method")
    if method == "eig":
        return torch.linalg.eigvals(matrices).abs().amax(-1)
    iters = checks.positive_int(iters, "iters")
    return power_radius(
        lambda v: (matrices @ v.unsqueeze(-1)).squeeze(-1),
        torch.randn(*matrices.shape[:-1], dtype=matrices.dtype, device=matrices.device),
        iters,
    )


def power_radius(matvec: Callable, v0: torch.Tensor, iters: int = 200) -> torch.Tensor:
    """Matrix-free spectral radius: iterate ``v <- matvec(v) / |matvec(v)|`` and average the log growth over the
    second half of ``iters``. ``v0`` is (..., n); ``matvec`` may be a JVP, so no matrix need exist."""
    iters = checks.positive_int(iters, "iters")
    v = v0 / v0.norm(dim=-1, keepdim=True)
    burn = iters // 2
    log_growth = torch.zeros(v.shape[:-1], dtype=v.real.dtype if v.is_complex() else v.dtype, device=v.device)
    for k in range(iters):
        w = matvec(v)
        norm = w.norm(dim=-1)
        if k >= burn:
            log_growth = log_growth + torch.log(norm.clamp_min(torch.finfo(norm.dtype).tiny))
        v = w / norm.clamp_min(torch.finfo(norm.dtype).tiny).unsqueeze(-1)
    return torch.exp(log_growth / (iters - burn))


def cell_spectral_radius(cell, state: torch.Tensor, x: torch.Tensor, iters: int = 100) -> torch.Tensor:
    """Spectral radius of ``d cell / d state`` at each (state, x) without forming the Jacobian.

    The cell maps a batch row by row, so the Jacobian of the batched map is block diagonal and one JVP of the
    whole batch advances every row's power iteration at once (no ``vmap`` needed).
    """
    checks.tensor(state, "state", min_dim=1)
    s, lead = _flat(state.detach(), 1)
    u, _ = _flat(x.detach(), 1)

    def matvec(v):
        return jvp(lambda h: cell(h, u), (s,), (v,))[1]

    with torch.no_grad():
        rho = power_radius(matvec, torch.randn_like(s), iters)
    return rho.reshape(lead)


def singular_values(matrices: torch.Tensor) -> torch.Tensor:
    """Singular values of each matrix in (..., m, n), largest first."""
    checks.tensor(matrices, "matrices", min_dim=2)
    return torch.linalg.svdvals(matrices)


def product_log_singular_values(matrices: torch.Tensor, k: int | None = None) -> torch.Tensor:
    """Log stretching factors of the product ``M_T ... M_2 M_1`` of a sequence (..., T, n, n), by QR renormalisation.

    Iterates ``Q_t R_t = M_t Q_{t-1}`` and sums ``log |diag R_t|``; the sums are the logs of the product's
    singular values up to O(1) terms, so their relative error vanishes as T grows (divide by T for the
    Lyapunov exponents). The total over all n is exact: ``log |det|`` of the product. Products of 10^3-10^4 Jacobians
    underflow even float64; these sums do not.
    Returns the ``k`` largest (all ``n`` by default), shape (..., k), sorted in decreasing order.
    """
    checks.tensor(matrices, "matrices", min_dim=3)
    checks.square_matrices(matrices, "matrices")
    n = matrices.shape[-1]
    k = n if k is None else checks.positive_int(k, "k")
    if k > n:
        raise ValueError(f"k must be at most the matrix size {n}, got {k}")
    lead = matrices.shape[:-3]
    q = torch.eye(n, k, dtype=matrices.dtype, device=matrices.device).expand(*lead, n, k)
    logs = torch.zeros(*lead, k, dtype=matrices.dtype, device=matrices.device)
    for t in range(matrices.shape[-3]):
        q, r = torch.linalg.qr(matrices[..., t, :, :] @ q)
        logs = logs + torch.log(torch.diagonal(r, dim1=-2, dim2=-1).abs().clamp_min(torch.finfo(r.dtype).tiny))
    return logs.sort(dim=-1, descending=True).values


def stable_norm(v: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Euclidean norm along ``dim`` scaled by the largest entry first, so that it does not underflow.

    ``torch.linalg.vector_norm`` squares the entries: a float64 gradient of size 1e-200 has norm 0 there, which
    ends a gradient profile at ~1e-154 (a vanishing RNN reaches that within a few hundred steps)."""
    scale = v.abs().amax(dim=dim, keepdim=True)
    safe = torch.where(scale > 0, scale, torch.ones_like(scale))
    return (v / safe).norm(dim=dim) * scale.squeeze(dim)


def gradient_norms_through_time(
    cell, x: torch.Tensor, loss: Callable[[torch.Tensor], torch.Tensor], state0: torch.Tensor | None = None
) -> torch.Tensor:
    """``||dL/dh_t||`` for every step t, from one backward pass.

    ``loss`` maps the states (B, T, S) to a scalar; when it sums per-sample losses the result is per sample,
    shape (B, T). ``h_t`` is the state after step ``t``.
    """
    checks.tensor(x, "x", ndim=3)
    state = state0 if state0 is not None else cell.initial_state(x.shape[0], device=x.device, dtype=x.dtype)
    state = state.detach().requires_grad_(True)
    states = []
    for t in range(x.shape[1]):
        state = cell(state, x[:, t])
        state.retain_grad()
        states.append(state)
    value = loss(torch.stack(states, dim=1))
    if value.ndim != 0:
        raise ValueError(f"loss must return a scalar, got shape {tuple(value.shape)}")
    value.backward()
    return torch.stack([stable_norm(s.grad) for s in states], dim=1).detach()


def grid_gradient_norms(stack, x: torch.Tensor, loss: Callable[[Sequence[torch.Tensor]], torch.Tensor]):
    """``||dL/dh[t,l]||`` on the whole time-depth grid, shape (B, T, L), from one backward pass.

    ``loss`` receives the list of per-layer state sequences (B, T, S_l) and returns a scalar.
    """
    checks.tensor(x, "x", ndim=3)
    B, T, _ = x.shape
    grid = [[None] * len(stack.cells) for _ in range(T)]
    states = [cell.initial_state(B, device=x.device, dtype=x.dtype).requires_grad_(True) for cell in stack.cells]
    for t in range(T):
        below = x[:, t]
        for l, cell in enumerate(stack.cells):
            states[l] = cell(states[l], below)
            states[l].retain_grad()
            grid[t][l] = states[l]
            below = cell.output(states[l])
    seqs = [torch.stack([grid[t][l] for t in range(T)], dim=1) for l in range(len(stack.cells))]
    value = loss(seqs)
    if value.ndim != 0:
        raise ValueError(f"loss must return a scalar, got shape {tuple(value.shape)}")
    value.backward()
    return torch.stack(
        [torch.stack([stable_norm(grid[t][l].grad) for l in range(len(stack.cells))], dim=-1) for t in range(T)], dim=1
    ).detach()


def decay_rate(norms: torch.Tensor, *, start: int = 0, stop: int | None = None) -> torch.Tensor:
    """Per-step growth factor of a gradient profile: ``exp`` of the least-squares slope of ``log norms`` against
    the distance from the end, over distances ``start..stop``. ``norms`` is (..., T) in time order.

    Entries that underflowed to zero (or are not finite) are left out of the fit rather than clamped, which
    would bend the slope; a profile with fewer than two usable points gets NaN."""
    checks.tensor(norms, "norms", min_dim=1)
    values = norms.flip(-1)[..., start:stop]
    if values.shape[-1] < 2:
        raise ValueError(f"need at least two points to fit a rate, got {values.shape[-1]} (start={start}, stop={stop})")
    ok = torch.isfinite(values) & (values > 0)
    w = ok.to(values.dtype)
    logs = torch.where(ok, torch.log(torch.where(ok, values, torch.ones_like(values))), torch.zeros_like(values))
    k = torch.arange(values.shape[-1], dtype=values.dtype, device=values.device).expand_as(values)
    n = w.sum(-1, keepdim=True)
    kc = (k - (w * k).sum(-1, keepdim=True) / n) * w
    lc = (logs - (w * logs).sum(-1, keepdim=True) / n) * w
    slope = (lc * kc).sum(-1) / (kc**2).sum(-1)
    return torch.where(n.squeeze(-1) >= 2, torch.exp(slope), torch.full_like(slope, float("nan")))
