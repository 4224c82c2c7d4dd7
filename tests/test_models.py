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


# --------------------------------------------------------------------------------- LRU golden tests (authors' JAX code)
def _golden(name):
    import pathlib

    import numpy as np

    return np.load(pathlib.Path(__file__).parent / "golden" / name)


def test_the_teacher_is_the_authors_code_teacher():
    """NicolasZucchet/Vanishing-and-exploding-gradients-are-not-the-end-of-the-story @ 686ec0a,
    ``source/dataloaders/regression.py``, class ``LinearSystem`` (dense, d_hidden 10, default seed 42, the teacher
    of every run: the training script never passes a seed), jax 0.10.2 float32 on a CPU: its remapped A for four
    (min_nu, max_phase), and two sequences of ``sample`` at min_nu 0.99, max_phase 3.14."""
    from lscnb.models.linear_rnn import Teacher, causal_conv

    g = _golden("zucchet_teacher.npz")
    for i in range(4):
        t = Teacher.from_authors(float(g[f"nu_{i}"]), float(g[f"phase_{i}"]))
        torch.testing.assert_close(t.A, torch.tensor(g[f"A_{i}"]), rtol=0, atol=1e-5)
    t = Teacher.from_authors(0.99)
    for name in "BCD":
        torch.testing.assert_close(getattr(t, name), torch.tensor(g[name]), rtol=0, atol=1e-7)
    x, want = torch.tensor(g["x"]), torch.tensor(g["y"])
    y = causal_conv(x, t.kernel(x.shape[1])) + t.D * x
    # their scan runs in float32 over 300 steps with |lambda| near 0.997: ~3e-5 of the largest output
    torch.testing.assert_close(y, want, rtol=0, atol=1e-4 * float(want.abs().max()))


@pytest.mark.parametrize(
    "tag,param,gamma", [("lru", "exp", True), ("cgamma", "default", True), ("complex", "default", False)]
)
def test_diagonal_lru_matches_the_authors_code(tag, param, gamma):
    """NicolasZucchet/Vanishing-and-exploding-gradients-are-not-the-end-of-the-story @
    686ec0aa68385ee61f1e1879b5974a9c665015f4, ``source/model.py``, class ``LRUBase`` (d_input = d_output = 1,
    d_hidden = 4, min_nu = 0.5, max_phase = pi), float64 JAX: outputs over 12 steps, loss and every gradient for the
    LRU (exp + learned gamma = exp(w_gamma)), the complex+gamma ablation (default: Re/Im lam and gamma learned
    directly) and the complex diagonal RNN (no gamma)."""
    from lscnb.models.linear_rnn import DiagonalLRU

    g = _golden("lru_diagonal.npz")
    t = lambda k: torch.tensor(g[f"{tag}_{k}"], dtype=torch.float64)
    m = DiagonalLRU(4, param=param, gamma=gamma, dtype=torch.float64)
    lam = t("lambda")
    names = {"B_re": "B_re", "B_im": "B_im", "C_re": "C_re", "C_im": "C_im", "D": "D"}
    names.update(
        {"w_nu": ("lambda", 0), "w_theta": ("lambda", 1)}
        if param == "exp"
        else {"lam_re": ("lambda", 0), "lam_im": ("lambda", 1)}
    )
    if gamma:
        names["w_gamma" if param == "exp" else "gamma"] = "gamma"
    with torch.no_grad():
        for ours, theirs in names.items():
            v = lam[theirs[1]] if isinstance(theirs, tuple) else t(theirs)
            getattr(m, ours).copy_(v.reshape(getattr(m, ours).shape))
    x, R = (torch.tensor(g[k], dtype=torch.float64)[None] for k in ("x", "R"))
    for forward in (m.forward, m.forward_recurrent):
        m.zero_grad()
        y = forward(x)
        loss = (y * R).sum() + 0.5 * (y**2).sum()
        loss.backward()
        assert (
            float((y.detach()[0] - t("y")).abs().max()) < 1e-10 and abs(loss.item() - float(g[f"{tag}_loss"])) < 1e-10
        )
        for ours, theirs in names.items():
            gt = t("g_lambda")[theirs[1]] if isinstance(theirs, tuple) else t("g_" + theirs)
            grad = getattr(m, ours).grad
            assert float((grad - gt.reshape(grad.shape)).abs().max()) < 1e-10 * max(1.0, float(gt.abs().max())), ours


def test_lru_layer_matches_minimal_lru():
    """NicolasZucchet/minimal-LRU @ bbd71b1104c399ec0d13819527d791949e66f599, ``lru/model.py``, class ``LRU``
    (d_model 3, d_hidden 5, r_min 0.4, r_max 0.95, max_phase 6.28), float64 JAX, one 12-step sequence: outputs and
    loss, and the gradients of every parameter, gamma_log (a free parameter there and here) included."""
    from lscnb.models.lru import LRU

    g = _golden("lru_layer.npz")
    t = lambda k: torch.tensor(g[k], dtype=torch.float64)
    m = LRU(3, 5).double()
    with torch.no_grad():
        for k in ("nu_log", "theta_log", "gamma_log", "B_re", "B_im", "C_re", "C_im", "D"):
            getattr(m, k).copy_(t(k))
    y = m(t("x")[None])
    loss = (y * t("R")).sum() + 0.5 * (y**2).sum()
    loss.backward()
    assert float((y.detach()[0] - t("y")).abs().max()) < 1e-10 and abs(loss.item() - float(g["loss"])) < 1e-10
    for k in ("nu_log", "theta_log", "gamma_log", "B_re", "B_im", "C_re", "C_im", "D"):
        assert float((getattr(m, k).grad - t("g_" + k)).abs().max()) < 1e-10 * max(
            1.0, float(t("g_" + k).abs().max())
        ), k


def test_lru_gamma_starts_at_its_normalisation_and_is_learned_apart_from_nu():
    from lscnb.models.lru import LRU

    torch.manual_seed(0)
    m = LRU(3, 6, r_min=0.5, r_max=0.99).double()
    torch.testing.assert_close(m.gamma(), torch.sqrt(1 - m.eigenvalues().abs() ** 2), atol=1e-6, rtol=0)
    with torch.no_grad():
        m.nu_log.add_(1.0)  # moving |lambda| leaves gamma where it was (minimal-LRU)
    assert float((m.gamma() - torch.sqrt(1 - m.eigenvalues().abs() ** 2)).abs().max().detach()) > 1e-2
    off = LRU(3, 6, normalize=False)
    assert torch.equal(off.gamma(), torch.ones(6)) and not off.gamma_log.requires_grad
