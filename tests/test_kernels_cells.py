"""The compiled step of a hand-written cell computes what the eager cell computes (values and gradients)."""

import pytest
import torch

from lscnb.kernels import compiled_step
from lscnb.models import GRUCell, LSTMCell
from lscnb.models.rnn import run_cell
from lscnb.models.spiking import ALIFCell


@pytest.mark.parametrize(
    "make", [lambda: LSTMCell(3, 5), lambda: GRUCell(3, 5), lambda: ALIFCell(3, 5, seed=0)], ids=["LSTM", "GRU", "ALIF"]
)
def test_compiled_step_matches_eager(make):
    torch.manual_seed(0)
    cell = make().double()
    x = torch.randn(2, 7, 3, dtype=torch.float64)
    eager = run_cell(cell, x)
    (g_eager,) = torch.autograd.grad(eager.square().sum(), cell.weight_hh)
    compiled = run_cell(cell, x, step=compiled_step(cell, backend="aot_eager"))
    (g_comp,) = torch.autograd.grad(compiled.square().sum(), cell.weight_hh)
    torch.testing.assert_close(compiled, eager)
    torch.testing.assert_close(g_comp, g_eager)


def test_compiled_step_rejects_bad_input():
    with pytest.raises(TypeError, match="cell"):
        compiled_step(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="mode"):
        compiled_step(LSTMCell(2, 2), mode="fastest")
    with pytest.raises(TypeError, match="step"):
        run_cell(LSTMCell(2, 2), torch.zeros(1, 3, 2), step=3)
