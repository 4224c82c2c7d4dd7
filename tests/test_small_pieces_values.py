"""Small pieces by value: the ReLU derivative at 0, cells made by name, torch.compile's options, and which scan
backends a device may use (issue 27)."""

import pytest
import torch

from lscnb.kernels import cells as kcells
from lscnb.kernels import scan
from lscnb.models import make_cell
from lscnb.models.activations import activation_derivative, get_activation


@pytest.mark.parametrize("name", ["linear", "tanh", "relu", "sin", "cos", "sigmoid"])
def test_activation_derivatives_against_autograd(name):
    z = torch.tensor([-1.5, -0.3, 0.0, 0.4, 2.0], dtype=torch.float64)
    auto = torch.func.vmap(torch.func.grad(get_activation(name)))(z)
    torch.testing.assert_close(activation_derivative(name, z), auto)


def test_relu_derivative_at_zero_is_zero():
    assert activation_derivative("relu", torch.zeros(3)).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_make_cell_passes_sizes_and_options(kind):
    cell = make_cell(kind, 3, 5)
    assert cell.input_size == 3 and cell.hidden_size == 5
    out = cell(cell.initial_state(2), torch.zeros(2, 3))
    assert out.shape == (2, cell.state_size)
    if kind == "lstm":
        biased = make_cell("lstm", 3, 5, forget_bias=2.5)
        assert torch.all(biased.bias_ih[5:10] == 2.5) and torch.all(biased.bias_hh[5:10] == 0)


def test_compiled_step_passes_its_options(monkeypatch):
    seen = []
    monkeypatch.setattr(torch, "compile", lambda model, **kw: seen.append((model, kw)) or model)
    cell = make_cell("gru", 2, 3)
    for mode in (None, "default", "reduce-overhead", "max-autotune"):
        for backend in ("inductor", "aot_eager", "eager"):
            assert kcells.compiled_step(cell, mode=mode, backend=backend) is cell
            assert seen[-1] == (cell, {"dynamic": False, "mode": mode, "backend": backend})
    kcells.compiled_step(cell)
    assert seen[-1][1] == {"dynamic": False, "mode": None, "backend": "inductor"}
    with pytest.raises(TypeError, match="cell must be a recurrent cell of lscnb.models, got Linear"):
        kcells.compiled_step(torch.nn.Linear(2, 2))


def test_usable_backends(monkeypatch):
    monkeypatch.setattr(scan, "triton_available", lambda: False)
    assert scan.usable_backends("cuda") == ["sequential", "parallel"]
    monkeypatch.setattr(scan, "triton_available", lambda: True)
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert scan.usable_backends("cpu") == ["sequential", "parallel"]
    assert scan.usable_backends("cuda:0") == ["sequential", "parallel", "triton"]
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert scan.usable_backends("cpu") == ["sequential", "parallel", "triton"]
