"""Float64 in, float64 out (issue 27: ``dtype=x.dtype`` mutated to ``dtype=None`` survived).

The functions that build a starting state or an auxiliary tensor take its dtype from their input. A cell of lscnb
falls back to its weights' dtype when given ``dtype=None``, which hides the slip whenever the cell and the input
agree; :class:`StrictCell` below has no weights, so its fallback is torch's default (float32), and it refuses a
state whose dtype differs from its input's, as a torch layer would. Each test runs on float64 and checks the dtype
of the result and, where cheap, that it agrees with the float32 run.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from lscnb import jacobian, pretrain
from lscnb.kernels import scan
from lscnb.models import linear_rnn, orthogonal, relevancy, rnn, roa, unified


class StrictCell(nn.Module):
    """``h' = tanh(h / 2 + x[:2])`` without weights; the state and the input must share a dtype."""

    state_size = 2

    def forward(self, state, x):
        if state.dtype != x.dtype:
            raise TypeError(f"state {state.dtype} and x {x.dtype} differ")
        return torch.tanh(0.5 * state + x[..., :2])

    def output(self, state):
        return state

    def initial_state(self, batch, device=None, dtype=None):
        return torch.zeros(batch, 2, device=device, dtype=dtype)  # dtype None: torch's default, float32


def _x(dtype, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64).to(dtype)


def _both(fn):
    """``fn(dtype)`` for float64 and float32."""
    return fn(torch.float64), fn(torch.float32)


def _agree(out64, out32, tol=1e-5):
    assert out64.dtype == torch.float64, out64.dtype
    assert out32.dtype == torch.float32, out32.dtype
    torch.testing.assert_close(out64.float(), out32, rtol=tol, atol=tol)


def test_strict_cell_rejects_mixed_dtypes():
    """The test double does what the tests below rely on."""
    cell = StrictCell()
    with pytest.raises(TypeError):
        cell(cell.initial_state(1), _x(torch.float64, 1, 2))


def test_run_cell_starts_in_the_input_dtype():
    _agree(*_both(lambda dt: rnn.run_cell(StrictCell(), _x(dt, 2, 4, 3))))


def test_time_jacobians_start_in_the_input_dtype():
    (j64, s64), (j32, s32) = _both(lambda dt: jacobian.time_jacobians(StrictCell(), _x(dt, 2, 4, 3)))
    _agree(j64, j32)
    _agree(s64, s32)
    # J at t = 0 is evaluated at the zero state: d tanh(h/2 + x)/dh = diag(1 - tanh(x)^2) / 2
    x = _x(torch.float64, 2, 4, 3)
    expected = torch.diag_embed(0.5 * (1 - torch.tanh(x[:, 0, :2]) ** 2))
    torch.testing.assert_close(j64[:, 0], expected)


def test_gradient_norms_through_time_start_in_the_input_dtype():
    _agree(*_both(lambda dt: jacobian.gradient_norms_through_time(StrictCell(), _x(dt, 2, 4, 3), lambda h: h.sum())))


def test_grid_functions_start_in_the_input_dtype():
    stack = rnn.Stack([StrictCell(), StrictCell()])
    grids = _both(lambda dt: jacobian.grid_jacobians(stack, _x(dt, 2, 4, 3)))
    for key in ("time", "depth", "states"):
        for a, b in zip(grids[0][key], grids[1][key]):
            _agree(a, b)
    norms = _both(lambda dt: jacobian.grid_gradient_norms(stack, _x(dt, 2, 4, 3), lambda hs: hs[-1].sum()))
    assert isinstance(norms[0], type(norms[1]))
    for a, b in zip(*(n if isinstance(n, (list, tuple)) else [n] for n in norms)):
        _agree(a, b)


def test_stack_transitions_start_in_the_input_dtype():
    stack = rnn.Stack([StrictCell(), StrictCell()])
    out64, out32 = _both(lambda dt: pretrain.stack_transitions(stack, _x(dt, 2, 4, 3), 0))
    assert out64.keys() == out32.keys()
    for k in out64:
        _agree(out64[k], out32[k])


def test_cell_sequence_starts_in_the_input_dtype():
    _agree(*_both(lambda dt: relevancy.CellSequence(StrictCell())(_x(dt, 2, 4, 3))))


def test_product_log_singular_values_and_power_radius_in_float64():
    mats = _both(lambda dt: 0.5 * _x(dt, 5, 3, 3))
    _agree(jacobian.product_log_singular_values(mats[0]), jacobian.product_log_singular_values(mats[1]), 1e-4)
    spd = mats[0] @ mats[0].mT  # symmetric positive semi-definite: the radius is the largest eigenvalue
    r64 = jacobian.spectral_radius(spd, method="power", iters=400)
    assert r64.dtype == torch.float64
    torch.testing.assert_close(r64, torch.linalg.eigvalsh(spd)[..., -1], rtol=1e-3, atol=1e-3)


def test_linear_scan_keeps_a_scalar_a_in_float64():
    """``a = 0.1`` is not a float32 number: made a float32 tensor, it would differ from 0.1 at 1e-9."""
    b = _x(torch.float64, 1, 6)
    h = scan.linear_scan(0.1, b)
    expected, acc = [], 0.0
    for t in range(6):
        acc = 0.1 * acc + float(b[0, t])
        expected.append(acc)
    assert h.dtype == torch.float64
    torch.testing.assert_close(h[0], torch.tensor(expected, dtype=torch.float64), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("init", ["gaussian", "orthogonal", "identity"])
def test_recurrent_matrix_dtype(init):
    assert rnn.recurrent_matrix(3, init=init, dtype=torch.float64).dtype == torch.float64


@pytest.mark.parametrize("kind", ["henaff", "cayley", "random", "zero"])
def test_skew_init_dtype(kind):
    a = orthogonal.skew_init(4, kind, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert a.dtype == torch.float64


def test_semi_orthogonal_dtype():
    q = roa.semi_orthogonal(4, 3, dtype=torch.float64)
    assert q.dtype == torch.float64


def test_linear_rnn_float64():
    model = linear_rnn.DenseLinearRNN(4, dtype=torch.float64)
    x = _x(torch.float64, 2, 5)
    y = model.forward_recurrent(x)
    assert y.dtype == torch.float64
    torch.testing.assert_close(y, model(x))  # the recurrence and the convolution agree
    assert linear_rnn.DiagonalS4(4, dtype=torch.float64).w_delta.dtype == torch.float64
    lru = linear_rnn.DiagonalLRU.from_system([0.5 + 0.1j], [1.0], [1.0], 0.25, dtype=torch.float64)
    assert lru.D.dtype == torch.float64


def test_unified_float64():
    theta = unified.uniform_theta("gru")
    z = unified.fresh_product(_x(torch.float64, 2, 3), 1.0, 4, generator=torch.Generator().manual_seed(0))
    assert z.dtype == torch.float64
    W, U, b = unified.sample_weights(theta, 3, 2)
    assert all(t.dtype == torch.float64 for d in (W, U, b) for t in d.values())  # the documented default
    for tied in (True, False):
        states = unified.simulate_pair(theta, 3, _x(torch.float64, 2, 4, 2), tied=tied)
        assert states.dtype == torch.float64
        assert np.isfinite(states.numpy()).all()


# ------------------------------------------------------------------------------------------------ device
# Without a GPU, the ``meta`` device stands in for "not the CPU": a starting state left on the CPU meets a meta input
# and torch refuses the mix.
META_CALLS = {
    "run_cell": lambda x: rnn.run_cell(StrictCell(), x),
    "gradient_norms_through_time": lambda x: jacobian.gradient_norms_through_time(StrictCell(), x, lambda h: h.sum()),
    "grid_gradient_norms": lambda x: jacobian.grid_gradient_norms(
        rnn.Stack([StrictCell(), StrictCell()]), x, lambda hs: hs[-1].sum()
    ),
    "CellSequence": lambda x: relevancy.CellSequence(StrictCell())(x),
    "time_jacobians": lambda x: jacobian.time_jacobians(StrictCell(), x)[0],
}


@pytest.mark.parametrize("name", list(META_CALLS))
def test_starting_state_on_the_input_device(name):
    out = META_CALLS[name](torch.empty(2, 4, 3, device="meta"))
    outs = out if isinstance(out, (list, tuple)) else [out]
    assert all(o.device.type == "meta" for o in outs)
