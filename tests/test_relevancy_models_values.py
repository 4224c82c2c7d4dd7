"""The relevancy-screening models' construction by value (lscnb.models.relevancy): which core each name makes, with
which memory sizes, the layers' shapes and initial scales, and the per-step gradient norms against autograd here
(issue 27)."""

import math

import pytest
import torch

from lscnb.models import relevancy as RV
from lscnb.models.gated import LSTMCell
from lscnb.models.orthogonal import OrthogonalRNNCell


def test_make_core_by_name():
    rnn = RV.make_core("RNN", 3, 4)
    assert type(rnn) is RV.RelRNN and (rnn.nu, rnn.rho, rnn.cell) == (1, 0, "rnn")
    rel = RV.make_core("RelRNN", 3, 4)
    assert type(rel) is RV.RelRNN and (rel.nu, rel.rho, rel.cell) == (10, 10, "rnn")
    lstm_rel = RV.make_core("RelLSTM", 3, 4, nu=2, rho=3)
    assert type(lstm_rel) is RV.RelRNN and (lstm_rel.nu, lstm_rel.rho, lstm_rel.cell) == (2, 3, "lstm")
    mem = RV.make_core("MemRNN", 3, 4)
    assert type(mem) is RV.MemRNN and (mem.nu, mem.rho, mem.cell) == (RV.FULL, 0, "rnn")
    assert RV.MemRNN(3, 4, cell="lstm").cell == "lstm"
    orth = RV.make_core("orthRNN", 3, 4)
    assert type(orth) is RV.CellSequence and isinstance(orth.cell, OrthogonalRNNCell)
    plain = RV.make_core("LSTM", 3, 4)
    assert type(plain) is RV.CellSequence and isinstance(plain.cell, LSTMCell)
    assert (RV.RelRNN(3, 4).nu, RV.RelRNN(3, 4).rho) == (5, 5)


def test_relrnn_layers_and_scales():
    torch.manual_seed(0)
    m = RV.RelRNN(5, 400)
    assert m.V.bias is None and m.Wa.bias is None and m.Ua.bias is None and m.U.bias is not None
    V = m.V.weight.detach()
    torch.testing.assert_close(V @ V.T, torch.eye(400), atol=1e-4, rtol=0)  # orthogonal recurrent matrix
    assert m.va.std().item() == pytest.approx(1 / math.sqrt(400), rel=0.1)
    assert m.memory_trace == []
    lstm = RV.RelRNN(5, 6, cell="lstm")
    assert isinstance(lstm.lstm, LSTMCell) and not hasattr(lstm, "V")


def test_tagger_readout_and_gradient_norms_against_autograd():
    torch.manual_seed(1)
    model = RV.Tagger("RNN", 3, 4, 5)
    assert model.readout.out_features == 5
    x = torch.randn(2, 6, 3)
    y = torch.randint(5, (2, 6))
    got = RV.hidden_gradient_norms(model, x, y, last=2)
    assert all(p.grad is None for p in model.parameters())  # the model is left without gradients
    # the same by hand: the RNN's recurrence h_t = tanh(U x_t + V h_{t-1}), gradients of the last two outputs' loss
    core = model.core
    h = torch.zeros(2, 4)
    hs = []
    for t in range(6):
        h = torch.tanh(core.U(x[:, t]) + core.V(h))
        h.retain_grad()
        hs.append(h)
    logits = model.readout(torch.stack(hs, 1))
    torch.nn.functional.cross_entropy(logits[:, -2:].reshape(-1, 5), y[:, -2:].reshape(-1), reduction="sum").backward()
    expected = torch.stack([hh.grad.norm(dim=-1) for hh in hs], 1)
    torch.testing.assert_close(got, expected)
    assert torch.all(got[:, :3] > 0)
    every = RV.hidden_gradient_norms(model, x, y)
    assert every.shape == (2, 6) and torch.all(every[:, -1] > 0)
