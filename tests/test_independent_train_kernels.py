"""train.fit, the scan kernels and the gradient-through-time tools against tiny cases worked by hand and loops written
here (issue 27)."""

import math

import pytest
import torch

from lscnb import jacobian
from lscnb.kernels import linear_scan
from lscnb.models import RNNCell, Stack
from lscnb.train import History, fit

D = torch.float64


# --------------------------------------------------------------------------------------------------------- fit
def _linear(w0):
    model = torch.nn.Linear(3, 1, bias=False).double()
    with torch.no_grad():
        model.weight.copy_(torch.tensor([w0], dtype=D))
    return model


X = torch.tensor([[3.0, 0.0, 4.0]], dtype=D)  # loss = w . x: the gradient is x, |x| = 5


def _batch(k):
    return X, torch.zeros(1, dtype=D)


def _dot(m, x, y):
    return m(x).sum()


@pytest.mark.parametrize("clip,factor", [(None, 1.0), (2.0, 2.0 / (5.0 + 1e-6)), (10.0, 1.0)])
def test_sgd_step_and_global_norm_clipping_by_hand(clip, factor):
    """w_{k+1} = w_k - lr * g * min(1, clip / (|g| + 1e-6)) with g = x (torch's clip_grad_norm_ adds 1e-6); the
    recorded norm is the one before clipping."""
    model = _linear([1.0, 2.0, 3.0])
    hist = fit(model, _batch, _dot, steps=3, lr=0.1, optimizer="sgd", clip=clip, progress=False)
    expected = torch.tensor([[1.0, 2.0, 3.0]], dtype=D) - 3 * 0.1 * factor * X
    torch.testing.assert_close(model.weight.detach(), expected, rtol=1e-14, atol=1e-14)
    assert hist.grad_norm == pytest.approx([5.0] * 3, rel=1e-14)
    # the loss is recorded before each step: w_k . x
    w = torch.tensor([1.0, 2.0, 3.0], dtype=D)
    losses = []
    for _ in range(3):
        losses.append(float(w @ X[0]))
        w = w - 0.1 * factor * X[0]
    assert hist.loss == pytest.approx(losses, rel=1e-14)
    assert hist.step == [0, 1, 2] and not hist.diverged


def test_clipping_is_global_over_parameters():
    """Two parameters with gradients (3, 4) and (12,): global norm 13; clip 1.3 scales both by 1.3 / (13 + 1e-6)."""
    model = torch.nn.Module()
    model.a = torch.nn.Parameter(torch.zeros(2, dtype=D))
    model.b = torch.nn.Parameter(torch.zeros(1, dtype=D))
    loss = lambda m, x, y: m.a @ torch.tensor([3.0, 4.0], dtype=D) + 12.0 * m.b.sum()  # noqa: E731
    hist = fit(model, lambda k: (None, None), loss, steps=1, lr=1.0, optimizer="sgd", clip=1.3, progress=False)
    assert hist.grad_norm == [pytest.approx(13.0, rel=1e-14)]
    f = 1.3 / (13.0 + 1e-6)
    torch.testing.assert_close(model.a.detach(), -f * torch.tensor([3.0, 4.0], dtype=D), rtol=1e-14, atol=1e-14)
    torch.testing.assert_close(model.b.detach(), torch.tensor([-12.0 * f], dtype=D), rtol=1e-14, atol=1e-14)


def test_divergence_stops_at_the_first_nan_loss_without_stepping():
    model = _linear([1.0, 0.0, 0.0])
    loss = lambda m, x, k: m(x).sum() * (float("nan") if k == 3 else 1.0)  # noqa: E731
    evals = []
    hist = fit(
        model,
        lambda k: (X, k),
        loss,
        steps=10,
        lr=0.1,
        optimizer="sgd",
        progress=False,
        eval_fn=lambda m: evals.append(1) or {"one": 1.0},
        eval_every=2,
    )
    assert hist.diverged and hist.diverged_step == 3 and hist.step == [0, 1, 2] and len(hist.loss) == 3
    torch.testing.assert_close(model.weight.detach(), torch.tensor([[1.0, 0, 0]], dtype=D) - 0.3 * X)
    assert [e["step"] for e in hist.evals] == [2]  # no end-of-run eval after a divergence


def test_divergence_on_a_non_finite_gradient_with_a_finite_loss():
    model = _linear([1.0, 2.0, 3.0])
    # sqrt at 0: the loss is 0 but its gradient is not finite
    loss = lambda m, x, k: torch.sqrt((m.weight * 0).sum().abs()) if k == 2 else m(x).sum()  # noqa: E731
    hist = fit(model, lambda k: (X, k), loss, steps=5, lr=0.1, optimizer="sgd", progress=False)
    assert hist.diverged_step == 2 and hist.step == [0, 1] and len(hist.grad_norm) == 2
    torch.testing.assert_close(model.weight.detach(), torch.tensor([[1.0, 2.0, 3.0]], dtype=D) - 0.2 * X)


@pytest.mark.parametrize("steps,expected", [(5, [2, 4, 5]), (4, [2, 4]), (1, [1])])
def test_eval_schedule_and_after_step(steps, expected):
    seen = []
    model = _linear([1.0, 1.0, 1.0])
    hist = fit(
        model,
        _batch,
        _dot,
        steps=steps,
        lr=0.1,
        optimizer="sgd",
        progress=False,
        eval_fn=lambda m: {"w0": m.weight[0, 0].detach()},
        eval_every=2,
        after_step=lambda m, k: seen.append((k, float(m.weight[0, 0].detach()))),
    )
    assert [e["step"] for e in hist.evals] == expected
    # after_step runs after the optimiser step: w0 = 1 - 0.1 * 3 * (k + 1)
    assert seen == [(k, pytest.approx(1 - 0.3 * (k + 1), rel=1e-12)) for k in range(steps)]
    assert hist.evals[-1]["w0"] == pytest.approx(1 - 0.3 * steps, rel=1e-12)


def test_history_final_means_the_last_window():
    h = History(loss=[4.0, 3.0, 2.0, 1.0], evals=[{"step": 1, "acc": 0.5}, {"step": 2, "acc": 0.7}, {"step": 3}])
    assert h.final() == 1.0 and h.final(window=3) == pytest.approx(2.0) and h.final("acc", 2) == pytest.approx(0.6)
    with pytest.raises(KeyError):
        h.final("bleu")


# ------------------------------------------------------------------------------------------------------ kernels
@pytest.mark.parametrize("backend", ["sequential", "parallel"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_linear_scan_along_any_dim_with_h0_and_broadcast_a(backend, dim):
    gen = torch.Generator().manual_seed(0)
    b = torch.randn(5, 6, 7, dtype=D, generator=gen)
    shape = list(b.shape)
    shape[dim] = 1  # a constant along the scanned axis, broadcast
    a = torch.rand(*shape, dtype=D, generator=gen)
    bm = b.movedim(dim, 0)
    am = a.expand_as(b).movedim(dim, 0)
    h0 = torch.randn(bm.shape[1:], dtype=D, generator=gen)
    h, out = h0, []
    for t in range(bm.shape[0]):
        h = am[t] * h + bm[t]
        out.append(h)
    expected = torch.stack(out, 0).movedim(0, dim)
    torch.testing.assert_close(linear_scan(a, b, h0, dim=dim, backend=backend), expected, rtol=1e-12, atol=1e-12)
    # without h0 the first state is b_0
    torch.testing.assert_close(linear_scan(a, b, dim=dim, backend=backend).movedim(dim, 0)[0], bm[0], rtol=0, atol=0)


def test_complex_scan_and_its_gradient_by_hand():
    """h_t = a h_{t-1} + b_t with a scalar complex a: h_T-1 = sum_t a^(T-1-t) b_t, so d Re(h_{T-1}) / d Re(b_t) =
    Re(a^(T-1-t))."""
    a = torch.tensor(0.9 * complex(math.cos(0.3), math.sin(0.3)), dtype=torch.complex128)
    b = torch.randn(1, 8, 1, dtype=torch.complex128, generator=torch.Generator().manual_seed(1))
    for backend in ("sequential", "parallel"):
        br = b.real.clone().requires_grad_(True)
        h = linear_scan(a, torch.complex(br, b.imag), backend=backend)
        expected = sum(a ** (7 - t) * b[0, t, 0] for t in range(8))
        torch.testing.assert_close(h[0, -1, 0], expected, rtol=1e-12, atol=1e-12)
        (g,) = torch.autograd.grad(h[0, -1, 0].real, br)
        torch.testing.assert_close(g[0, :, 0], torch.stack([(a ** (7 - t)).real for t in range(8)]), rtol=1e-12, atol=0)


# ---------------------------------------------------------------------------------------- gradients through time
def test_grid_gradient_norms_two_layers_against_a_plain_loop():
    """||dL/dh[t,l]|| on a 2-layer tanh grid with L = sum of the top layer's last state, the grid written here with
    explicit weights and autograd on each state."""
    torch.manual_seed(0)
    c0, c1 = RNNCell(2, 3).double(), RNNCell(3, 4).double()
    with torch.no_grad():
        c0.bias.normal_()
        c1.bias.normal_()
    x = torch.randn(2, 5, 2, dtype=D)
    grid = jacobian.grid_gradient_norms(Stack([c0, c1]), x, lambda seqs: seqs[-1][:, -1].sum())
    h0 = torch.zeros(2, 3, dtype=D)
    h1 = torch.zeros(2, 4, dtype=D)
    kept = []
    for t in range(5):
        h0 = torch.tanh(h0 @ c0.weight_hh.T + x[:, t] @ c0.weight_ih.T + c0.bias)
        h1 = torch.tanh(h1 @ c1.weight_hh.T + h0 @ c1.weight_ih.T + c1.bias)
        h0.retain_grad()
        h1.retain_grad()
        kept.append((h0, h1))
    h1.sum().backward()
    expected = torch.stack([torch.stack([s.grad.norm(dim=-1) for s in pair], -1) for pair in kept], 1)
    assert grid.shape == (2, 5, 2)
    torch.testing.assert_close(grid, expected, rtol=1e-12, atol=1e-14)


def test_decay_rate_window_counts_from_the_end():
    """A profile growing by 2 per step toward the end for its last 4 steps and by 3 before: start/stop select the
    distance from the end (0 = the last step)."""
    logs = [0.0]
    for k in range(1, 10):
        logs.append(logs[-1] + (math.log(2) if k <= 4 else math.log(3)))
    norms = torch.tensor([math.exp(v) for v in reversed(logs)], dtype=D)  # time order: the end is the smallest
    assert float(jacobian.decay_rate(norms, start=0, stop=5)) == pytest.approx(2.0, rel=1e-12)
    assert float(jacobian.decay_rate(norms, start=4)) == pytest.approx(3.0, rel=1e-12)


def test_power_radius_of_a_rotation_pair():
    """A scaled 2x2 rotation has a complex eigenvalue pair of modulus 0.7: power iteration must still give 0.7."""
    c, s = math.cos(1.0), math.sin(1.0)
    m = 0.7 * torch.tensor([[c, -s], [s, c]], dtype=D)
    assert float(jacobian.spectral_radius(m, method="power", iters=50)) == pytest.approx(0.7, rel=1e-10)
    big = torch.block_diag(m, torch.diag(torch.tensor([0.2, -0.5], dtype=D)))
    assert float(jacobian.spectral_radius(big)) == pytest.approx(0.7, rel=1e-12)


# ------------------------------------------------------------------------------------------ pretrain's measures
def test_differentiable_radius_and_norm_values_and_gradients():
    """max |eig| and ||J||_2 against numpy, their gradients against float64 finite differences (gradcheck); a tall
    matrix is cut to some ordering of k of its rows."""
    import itertools

    import numpy as np

    from lscnb.pretrain import differentiable_norm, differentiable_radius

    J = torch.tensor([[0.9, 0.3, -0.2], [0.1, -0.4, 0.5], [0.2, 0.1, 0.3]], dtype=D)
    assert float(differentiable_radius(J)) == pytest.approx(float(np.abs(np.linalg.eigvals(J.numpy())).max()), 1e-12)
    assert float(differentiable_norm(J)) == pytest.approx(float(np.linalg.svd(J.numpy())[1][0]), rel=1e-12)
    assert torch.autograd.gradcheck(differentiable_radius, (J.clone().requires_grad_(True),))
    assert torch.autograd.gradcheck(differentiable_norm, (J.clone().requires_grad_(True),))
    tall = torch.tensor([[0.5, 0.1], [0.3, -0.8], [2.0, 0.4]], dtype=D)
    options = {
        round(float(np.abs(np.linalg.eigvals(tall.numpy()[list(rows)])).max()), 12)
        for rows in itertools.permutations(range(3), 2)
    }
    got = round(float(differentiable_radius(tall, torch.Generator().manual_seed(0))), 12)
    assert got in options
    wide_norm = float(differentiable_norm(tall.T))
    assert wide_norm == pytest.approx(float(np.linalg.svd(tall.numpy())[1][0]), rel=1e-12)
