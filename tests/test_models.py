import pytest
import torch

from lscnb.models import GRUCell, LSTMCell, RNNCell, SequenceModel, Stack, make_cell, recurrent_matrix, run_cell


def test_lstm_matches_torch_lstmcell():
    torch.manual_seed(0)
    ours, ref = LSTMCell(5, 7), torch.nn.LSTMCell(5, 7)
    ref.load_state_dict({k: v for k, v in ours.state_dict().items()})
    x, h, c = torch.randn(3, 5), torch.randn(3, 7), torch.randn(3, 7)
    h2, c2 = ref(x, (h, c))
    out = ours(torch.cat([h, c], -1), x)
    torch.testing.assert_close(out, torch.cat([h2, c2], -1))
    torch.testing.assert_close(ours.output(out), h2)


def test_gru_matches_torch_grucell():
    torch.manual_seed(1)
    ours, ref = GRUCell(4, 6), torch.nn.GRUCell(4, 6)
    ref.load_state_dict(ours.state_dict())
    x, h = torch.randn(3, 4), torch.randn(3, 6)
    torch.testing.assert_close(ours(h, x), ref(x, h))


def test_parameter_counts_equal_torch():
    for ours, ref in ((LSTMCell(9, 11), torch.nn.LSTMCell(9, 11)), (GRUCell(9, 11), torch.nn.GRUCell(9, 11))):
        assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in ref.parameters())


def test_forget_bias():
    cell = LSTMCell(2, 3, forget_bias=1.0)
    assert torch.all(cell.bias_ih[3:6] == 1.0) and torch.all(cell.bias_hh[3:6] == 0.0)


def test_rnn_cell_and_run_cell():
    torch.manual_seed(2)
    cell = RNNCell(2, 4, activation="relu")
    x = torch.randn(3, 6, 2)
    states = run_cell(cell, x)
    assert states.shape == (3, 6, 4)
    h = torch.zeros(3, 4)
    for t in range(6):
        h = torch.relu(h @ cell.weight_hh.T + x[:, t] @ cell.weight_ih.T + cell.bias)
    torch.testing.assert_close(states[:, -1], h)


def test_stack_and_sequence_model():
    torch.manual_seed(3)
    model = SequenceModel([LSTMCell(2, 5), GRUCell(5, 4)], 3, readout="all")
    assert model(torch.randn(2, 7, 2)).shape == (2, 7, 3)
    model = SequenceModel(Stack([RNNCell(2, 5)]), 1)
    assert model(torch.randn(2, 7, 2)).shape == (2, 1)


def test_recurrent_matrix_scales():
    torch.manual_seed(4)
    q = recurrent_matrix(50, 0.7, "orthogonal")
    torch.testing.assert_close(q @ q.T, 0.49 * torch.eye(50), atol=1e-5, rtol=0)
    g = recurrent_matrix(400, 1.0, "gaussian")
    assert abs(float(g.pow(2).sum()) / 400 - 1.0) < 0.05


def test_bad_arguments():
    with pytest.raises(ValueError, match="activation"):
        RNNCell(2, 3, activation="swish")
    with pytest.raises(ValueError, match="hidden_size"):
        LSTMCell(2, 0)
    with pytest.raises(TypeError, match="input_size"):
        GRUCell(2.5, 3)
    with pytest.raises(ValueError, match="kind"):
        make_cell("transformer", 2, 3)
    with pytest.raises(ValueError, match="init"):
        recurrent_matrix(3, 1.0, "xavier")
    with pytest.raises(ValueError, match="readout"):
        SequenceModel([RNNCell(2, 3)], 1, readout="first")
