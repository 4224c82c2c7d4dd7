"""Non-normal RNNs: Schur form, Henrici departure, Fisher memory, transients, the nnRNN cell."""

import math
import types

import numpy as np
import pytest
import torch

from lscnb.experiments import nnrnn as _chapter
from lscnb.models.nonnormal import NNRNNCell
from lscnb.theory import fisher


def test_real_schur_lower_and_henrici():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((60, 60))
    Q, Th = fisher.real_schur_lower(A)
    assert np.abs(Q @ Th @ Q.T - A).max() < 1e-10 and np.abs(Q.T @ Q - np.eye(60)).max() < 1e-10
    assert np.abs(np.triu(Th, 2)).max() == 0  # block lower: nothing above the first super-diagonal
    q, _ = np.linalg.qr(A)
    assert fisher.henrici(q) < 1e-6 and fisher.henrici(np.eye(5, k=-1)) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="square"):
        fisher.henrici(np.zeros((2, 3)))


def test_fisher_memory_of_delay_line_and_normal_network():
    N, alpha = 30, 1.1
    J = fisher.fisher_memory_curve(fisher.delay_line(N, math.sqrt(alpha)), np.eye(N)[0], N + 3)
    np.testing.assert_allclose(J[:N], fisher.fmc_delay_line(np.arange(N), alpha), rtol=1e-12)
    assert np.all(J[N:] == 0)  # nilpotent: no memory beyond the line
    q, _ = np.linalg.qr(np.random.default_rng(1).standard_normal((20, 20)))
    v = np.random.default_rng(2).standard_normal(20)
    J = fisher.fisher_memory_curve(0.9 * q, v, 400)
    np.testing.assert_allclose(J[:50], 0.81 ** np.arange(50) * 0.19, rtol=1e-10)
    assert J.sum() == pytest.approx(1.0, abs=1e-9)  # normal: total memory pinned at 1/eps


@pytest.mark.parametrize(
    "a,b,paper",
    [
        (0.95, 0.0, 3.03),
        (1.0, 0.0, 5.19),
        (1.05, 0.0, 12.1),
        (0.95, 0.005, 3.18),
        (1.0, 0.005, 5.30),
        (1.05, 0.005, 12.1),
    ],
)
def test_table_a5_well_conditioned_rows(a, b, paper):
    J = fisher.fisher_memory_curve(fisher.make_theta(100, 0.0, a, b), np.eye(100)[0], 150)
    assert J.sum() == pytest.approx(paper, abs=0.05 if paper > 10 else 0.01)


def test_transients():
    th = fisher.make_theta(100, 0.0, 1.05, 0.005)
    assert np.abs(np.linalg.matrix_power(th, 100)).max() == 0
    tr = fisher.transients(th, 150, 200)
    assert tr["norm_mean"][100] == 0 and tr["norm_mean"].max() > 50
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((100, 100)))
    assert abs(fisher.transients(q, 120, 50)["norm_mean"][100] - 1) < 1e-10


def test_nnrnn_spectrum_and_orthogonality():
    cell = NNRNNCell(3, 16, init="cayley", t_mask="block", seed=0).double()
    torch.testing.assert_close(cell.V(), cell.Lambda(), atol=1e-6, rtol=0)  # P commutes with Lambda at init
    with torch.no_grad():
        cell.T.copy_(0.3 * torch.randn(16, 16, dtype=torch.float64))
        cell.gamma.uniform_(0.8, 1.2)
    mods = torch.linalg.eigvals(cell.V()).abs().sort().values
    expected = torch.cat([cell.gamma, cell.gamma]).detach().sort().values
    torch.testing.assert_close(mods, expected, atol=1e-8, rtol=0)
    assert fisher.henrici(cell.V().detach().numpy()) == pytest.approx(
        float((cell.T * cell.mask).detach().norm()), rel=1e-6
    )
    P = cell.P().detach()
    assert float((P.T @ P - torch.eye(16, dtype=torch.float64)).abs().max()) < 1e-10
    tril = NNRNNCell(3, 16, t_mask="tril", seed=0).double()
    with torch.no_grad():
        tril.T.copy_(0.3 * torch.randn(16, 16, dtype=torch.float64))
    moved = torch.linalg.eigvals(tril.V().detach()).abs()
    assert float((moved - 1).abs().max()) > 1e-3  # the released code's mask moves the moduli


def test_nnrnn_effective_parameter_count():
    # copy task: one-hot 10 inputs, 9 outputs (readout 9 x 128 + 9): 18,953 parameters, the paper's copy-task budget
    cell = NNRNNCell(10, 128, t_mask="tril")
    assert cell.effective_parameters() + 128 * 9 + 9 == 18953


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="hidden_size must be even"):
        NNRNNCell(3, 5)
    with pytest.raises(ValueError, match="t_mask"):
        NNRNNCell(3, 4, t_mask="upper")
    with pytest.raises(ValueError, match="name"):
        from lscnb.experiments.nnrnn import make_copy_model

        make_copy_model("GRU", 8, 0)


SHRINK = _chapter.SMOKE  # the chapter's smoke-test shrink (lscnb.experiments.nnrnn)


def _shrunk(run):
    from lscnb.sweep import Run

    return Run(
        run.chapter,
        run.figure,
        run.name,
        run.fn,
        {**dict(run.config), **{k: v for k, v in SHRINK.items() if k in run.config}},
    )


def test_schur_parts_subdiagonal_profile_and_angles():
    cell = NNRNNCell(3, 8, seed=1)
    with torch.no_grad():
        cell.T.copy_(torch.randn(8, 8))
    parts = cell.schur_parts()
    np.testing.assert_allclose(parts["Theta"], parts["Lambda"] + parts["T"], atol=1e-7)
    assert np.all(np.triu(parts["T"]) == 0) and parts["P_orthogonality"] < 1e-5
    assert np.all((parts["theta"] >= 0) & (parts["theta"] < 2 * math.pi)) and parts["gamma"].shape == (4,)
    profile = fisher.subdiagonal_profile(np.diag(np.full(5, 2.0), -1) + np.diag(np.ones(4), -2), 3)
    np.testing.assert_allclose(profile, [2.0, 1.0, 0.0])  # 6x6: a delay line and a second sub-diagonal
    assert fisher.angle_concentration(np.full(7, 1.3)) == pytest.approx(1.0)
    assert fisher.angle_concentration(np.linspace(0, 2 * math.pi, 8, endpoint=False)) < 1e-12
    with pytest.raises(ValueError, match="kmax"):
        fisher.subdiagonal_profile(np.eye(3), 3)
    with pytest.raises(ValueError, match="angles"):
        fisher.angle_concentration([])


def test_psmnist_parameter_budgets_and_data():
    from lscnb.experiments import nnrnn as ex

    # psMNIST: nnRNN-512 with the authors' mask, 1 input, 10 classes = 268,298 effective parameters
    assert NNRNNCell(1, 512, t_mask="tril").effective_parameters() + 512 * 10 + 10 == 268298
    counts = {
        m: ex.effective_parameters(*ex.make_model(m, w, 0, n_in=1, n_out=10, hyper=ex.PSMNIST_HYPER)[:2])
        for m, w in ex.PSMNIST_MATCHED.items()
    }
    assert all(abs(c / 269_000 - 1) < 0.01 for c in counts.values()), counts  # "269K" within 1%
    d = ex.psmnist_data(7, 30, 10)
    assert d["train"][0].shape == (30, 16, 1) and d["valid"][0].shape == (10, 16, 1)
    assert float(d["train"][0].max()) <= 1.0
    with pytest.raises(ValueError, match="pool"):
        ex.psmnist_data(5, 10, 10)


def test_ptb_char_ids_match_a_plain_tokenisation():
    """The numpy reader of the character files against the plain rule written here: white-space tokens, ``<eos>``
    at each line end, ids by sorted vocabulary."""
    from lscnb.data import files
    from lscnb.data.text import _char_ids

    path = files.find("ptb/ptb.char.valid.txt")
    if path is None:
        pytest.skip("PTB files absent (../shared/data/ptb)")
    texts = [path.read_text()[:200_000], "a b _ c\n\n< u n k > a", "c _ a\n"]
    ids, vocab = _char_ids(texts)
    tokens = [[t for line in text.split("\n") if line.split() for t in line.split() + ["<eos>"]] for text in texts]
    expect_vocab = sorted(set(tokens[0]))
    assert vocab == expect_vocab and len(vocab) <= 50
    for got, toks in zip(ids, tokens):
        assert got.tolist() == [expect_vocab.index(t) for t in toks]


def test_the_plan_counts_the_whole_ptb_text_a_full_run_trains_on(monkeypatch):
    """``n_train=None`` trains on all of PTB's training characters: ``ptb_counts`` says how many (for the plan), and
    refuses the offline stand-in, whose size says nothing of the real run."""
    from lscnb.experiments import nnrnn as ex
    from lscnb.experiments.nnrnn import ptb

    full = ex.ptb_runs("full")[0].config
    seen = []

    def load(level, **kwargs):
        seen.append((level, kwargs))
        return types.SimpleNamespace(train=torch.zeros(5_101_618, dtype=torch.long))

    monkeypatch.setattr(ptb, "load_ptb", load)
    assert ex.ptb_counts(full) == {"n_train": 5_101_618} and ex.ptb_counts({**full, "n_train": 100}) == {}
    assert seen == [("char", {"download": False, "fallback": False})]


def test_ptb_char_corpus_is_the_real_one():
    from lscnb.data.text import load_ptb

    corpus = load_ptb("char", download=False)
    if "Penn Treebank" not in corpus.source:
        pytest.skip("PTB files absent (../shared/data/ptb): the offline stand-in was returned")
    assert corpus.vocab_size == 50 and len(corpus.train) > 5_000_000 and corpus.vocab.count("<eos>") == 1


def test_modrelu_baselines():
    from lscnb.models.modrelu_rnn import EURNNCell, FreeRNNCell

    for n, cap in ((7, 3), (8, 2), (10, 1)):
        cell = EURNNCell(3, n, capacity=cap).double()
        W = cell.weight()
        torch.testing.assert_close(W.T @ W, torch.eye(n, dtype=torch.float64), atol=1e-12, rtol=0)
        assert (
            cell.effective_parameters() == sum(((n // 2) if l % 2 == 0 else (n - 1) // 2) for l in range(cap)) + 4 * n
        )
    assert (
        int((EURNNCell(1, 8, capacity=2).weight().abs() > 1e-12).sum()) <= 8 * 4
    )  # banded: capacity 2 couples neighbours
    for init in ("orth", "cayley", "henaff"):
        W = FreeRNNCell(2, 6, init=init).W.detach()
        torch.testing.assert_close(W.T @ W, torch.eye(6), atol=1e-5, rtol=0)
    x, h0 = torch.randn(2, 5, 3), torch.randn(2, 6)
    cell = FreeRNNCell(3, 6)
    seq = cell.sequence(x, h0)
    torch.testing.assert_close(seq[:, 0], cell(h0, x[:, 0]))
    with pytest.raises(ValueError, match="init"):
        FreeRNNCell(2, 4, init="identity")
    with pytest.raises(ValueError, match="capacity"):
        EURNNCell(2, 4, capacity=0)


def test_nnrnn_gamma_clamped_and_carried_state():
    cell = NNRNNCell(3, 8, gamma_fixed=0.958, seed=0)
    assert "gamma" not in dict(cell.named_parameters()) and float(cell.gamma.max()) == pytest.approx(0.958)
    assert cell.effective_parameters() == NNRNNCell(3, 8, seed=0).effective_parameters() - 4
    mods = torch.linalg.eigvals(cell.V().detach().double()).abs()
    torch.testing.assert_close(mods, torch.full((8,), 0.958, dtype=torch.float64), atol=1e-5, rtol=0)
    x, h0 = torch.randn(2, 4, 3), torch.randn(2, 8)
    full = cell.sequence(x, h0)
    torch.testing.assert_close(cell.sequence(x[:, 2:], full[:, 1]), full[:, 2:])  # carrying the state = one pass
    with pytest.raises(ValueError, match="gamma_fixed"):
        NNRNNCell(3, 8, gamma_fixed=-1.0)


def test_char_lm_budgets_and_backprop_norms():
    from lscnb.experiments import nnrnn as ex

    # Table 3.1's equal-parameter column: about 1.32M parameters (embedding 200, 50 characters)
    for row in ex.PTB_HYPER[150]:
        if "params" in row["budgets"] and row["hid"] <= 1386:
            lm, _ = ex.make_lm(row, 0, 50, 200)
            n = ex.effective_parameters(lm.core, lm.decoder) + lm.embed.weight.numel()
            assert abs(n / 1.32e6 - 1) < 0.01, (row["model"], row["hid"], n)
    row = dict(ex.PTB_HYPER[150][0], hid=8)
    lm, opts = ex.make_lm(row, 0, 50, 4)
    tokens = torch.randint(0, 50, (3, 7))
    logits, states = lm(tokens)
    logits2, _ = lm(tokens[:, 4:], [lm(tokens[:, :4])[1][0]])
    torch.testing.assert_close(logits2, logits[:, 4:], atol=1e-5, rtol=0)  # state carried across windows
    g = ex.backprop_norms(lm, tokens)
    assert g.shape == (6,) and np.all(g > 0)
    assert all(p.grad is None for p in lm.parameters())
    lstm, _ = ex.make_lm(dict(ex.PTB_HYPER[150][3], hid=6), 0, 50, 4)
    logits, states = lstm(tokens)
    assert states[0].shape == (3, 12)
    torch.testing.assert_close(lstm(tokens[:, 4:], [lstm(tokens[:, :4])[1][0]])[0], logits[:, 4:], atol=1e-5, rtol=0)
    with pytest.raises(TypeError, match="NNRNNCell"):
        ex.backprop_norms(lstm, tokens)
    with pytest.raises(ValueError, match="metric"):
        ex.table_3_1([], "perplexity")


def test_hyper_tables_match_the_thesis():
    from lscnb.experiments import nnrnn as ex

    for table in ex.THESIS_HYPER:
        rows = ex.hyper_table(table)
        assert len(rows) == 9 and all(r["vs thesis"] in ("= thesis", "not run (thesis row shown)") for r in rows), table
        assert ex.quick_hyper_note(table)
    assert all(r["vs thesis"] == "= thesis" for r in ex.hyper_table("A.4, T = 300"))
    nn = ex.THESIS_HYPER["A.2"][0]
    assert (nn["lr"], nn["lr_orth"], nn["delta"], nn["t_decay"], nn["init"]) == (1.5e-4, 1.5e-5, 0.15, 1e-4, "Cayley")
    assert (
        ex.THESIS_HYPER["A.4, T = 300"][5]["init"] == "Cayley"
        and ex.THESIS_HYPER["A.4, T = 150"][5]["init"] == "Random orth"
    )
    with pytest.raises(ValueError, match="table"):
        ex.hyper_table("A.3")


def test_unipotent_power_is_polynomial():
    n, x = 8, 0.3
    A = np.eye(n) + x * np.triu(np.ones((n, n)), 1)
    for t in (0, 5, 50, 200):
        np.testing.assert_allclose(fisher.unipotent_power(n, x, t), np.linalg.matrix_power(A, t), rtol=1e-12)
    assert fisher.unipotent_power(n, x, 5)[0, -1] == pytest.approx(11.79645, rel=1e-6)
    with pytest.raises(ValueError, match="t"):
        fisher.unipotent_power(n, x, -1)


def test_rotation_blocks_match_the_cells_lambda():
    cell = NNRNNCell(3, 10, seed=1).double()
    with torch.no_grad():
        cell.gamma.mul_(0.9)
        expected = cell.Lambda().numpy()
        theta, gamma = cell.theta.numpy(), cell.gamma.numpy()
    np.testing.assert_allclose(fisher.rotation_blocks(theta, gamma), expected, atol=1e-12)
    with pytest.raises(ValueError, match="theta and gamma"):
        fisher.rotation_blocks(np.zeros(3), np.ones(4))


# --------------------------------------------------------------------------------- golden tests vs the authors' code
GOLDEN = __import__("pathlib").Path(__file__).parent / "golden"


def _golden_loss(hs: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    return (hs * R).sum() + 0.5 * (hs**2).sum()


def _run_cell(cell, x: torch.Tensor) -> torch.Tensor:
    """States (T, B, N) of ``cell`` from zeros for time-major inputs (T, B, D)."""
    return cell.sequence(x.transpose(0, 1)).transpose(0, 1)


def test_nnrnn_cell_matches_the_authors_code():
    """KyleGoyette/nnRNN @ 294d4fffdf623d82153a9836d42c1d2a7cdd7da6, ``RNN_Cell.py``, class ``OrthoRNNCell``
    (modReLU, no input bias), float64, 2 inputs, 6 units, batch 3, 5 steps: states, loss and every gradient (log_P's
    through the authors' ``orthogonal_step``, a hand-written Frechet derivative). Their recurrence is ``h @ rec``
    with ``rec = P (UppT*M + alpha R(theta)) P^T``, so ours holds ``T = UppT^T`` (``t_mask="tril"``) and
    ``theta = -theta``."""
    g = np.load(GOLDEN / "nnrnn_cell.npz")
    t = lambda k: torch.tensor(g[k], dtype=torch.float64)
    cell = NNRNNCell(2, 6, init="zero", t_mask="tril").double()
    with torch.no_grad():
        cell.log_P.copy_(t("log_P")), cell.T.copy_(t("UppT").T), cell.theta.copy_(-t("thetas"))
        cell.gamma.copy_(t("alphas")), cell.U.copy_(t("U")), cell.phi.bias.copy_(t("b"))
    hs = _run_cell(cell, t("x"))
    loss = _golden_loss(hs, t("R"))
    loss.backward()
    assert float((hs.detach() - t("h")).abs().max()) < 1e-10 and abs(loss.item() - float(g["loss"])) < 1e-10
    pairs = [
        (cell.log_P.grad.triu(1), t("g_logP")),
        (cell.T.grad, (t("g_UppT") * torch.ones(6, 6).triu(1)).T),
        (cell.theta.grad, -t("g_thetas")),
        (cell.gamma.grad, t("g_alphas")),
        (cell.U.grad, t("g_U")),
        (cell.phi.bias.grad, t("g_b")),
    ]
    for ours, theirs in pairs:
        assert float((ours - theirs).abs().max()) < 1e-10 * max(1.0, float(theirs.abs().max()))


def test_exprnn_cell_matches_the_authors_code():
    """KyleGoyette/nnRNN @ 294d4fffdf623d82153a9836d42c1d2a7cdd7da6, ``expRNN/exprnn.py``, class ``ExpRNN`` (the
    one ``utils.select_network`` builds; modReLU, no input bias), float64, 2 inputs, 6 units, batch 3, 5 steps:
    states, loss and gradients (the skew parameter's through their Frechet-derivative ``orthogonal_step``). Their
    recurrence is ``h @ exp(A)``, ours ``W h`` with ``W = exp(skew(a))``, so ``a = -A``."""
    from lscnb.experiments.nnrnn import _CellModel
    from lscnb.models.orthogonal import OrthogonalRNNCell

    g = np.load(GOLDEN / "exprnn_cell.npz")
    t = lambda k: torch.tensor(g[k], dtype=torch.float64)
    cell = OrthogonalRNNCell(2, 6, input_init="xavier", input_bias=False).double()
    skew_param = cell.recurrent.parametrizations.weight.original
    with torch.no_grad():
        skew_param.copy_(-t("log_A")), cell.input.weight.copy_(t("W_in")), cell.phi.bias.copy_(t("b"))
    hs = _CellModel(cell).sequence(t("x").transpose(0, 1)).transpose(0, 1)
    loss = _golden_loss(hs, t("R"))
    loss.backward()
    assert float((hs.detach() - t("h")).abs().max()) < 1e-10 and abs(loss.item() - float(g["loss"])) < 1e-10
    for ours, theirs in (
        (skew_param.grad.triu(1), -t("g_logA")),
        (cell.input.weight.grad, t("g_Win")),
        (cell.phi.bias.grad, t("g_b")),
    ):
        assert float((ours - theirs).abs().max()) < 1e-10 * max(1.0, float(theirs.abs().max()))


def test_lstm_matches_the_authors_code():
    """KyleGoyette/nnRNN @ 294d4fffdf623d82153a9836d42c1d2a7cdd7da6, ``LSTM.py``, class ``LSTM``: gates f, i, o, g,
    each ``nn.Linear(d + n, n)`` on ``[h, x]`` with one bias; float64, 2 inputs, 6 units, batch 3, 5 steps. Loaded
    into the chapter's ``torch.nn.LSTM`` (gates i, f, g, o; ``bias_hh`` frozen at zero): states, loss, gradients."""
    from lscnb.experiments.nnrnn import _LSTMModel

    g = np.load(GOLDEN / "lstm_cell.npz")
    t = lambda k: torch.tensor(g[k], dtype=torch.float64)
    n = 6
    model = _LSTMModel(2, n).double()
    lstm = model.lstm
    with torch.no_grad():
        W = torch.cat([t("W" + k) for k in "ifgo"])
        lstm.weight_hh_l0.copy_(W[:, :n]), lstm.weight_ih_l0.copy_(W[:, n:])
        lstm.bias_ih_l0.copy_(torch.cat([t("b" + k) for k in "ifgo"]))
    assert float(lstm.bias_hh_l0.abs().max()) == 0 and not lstm.bias_hh_l0.requires_grad
    hs = model.sequence(t("x").transpose(0, 1)).transpose(0, 1)
    loss = _golden_loss(hs, t("R"))
    loss.backward()
    assert float((hs.detach() - t("h")).abs().max()) < 1e-10 and abs(loss.item() - float(g["loss"])) < 1e-10
    gW = torch.cat([t("g_W" + k) for k in "ifgo"])
    for ours, theirs in (
        (lstm.weight_hh_l0.grad, gW[:, :n]),
        (lstm.weight_ih_l0.grad, gW[:, n:]),
        (lstm.bias_ih_l0.grad, torch.cat([t("g_b" + k) for k in "ifgo"])),
    ):
        assert float((ours - theirs).abs().max()) < 1e-10 * max(1.0, float(theirs.abs().max()))


def _std_ok(sample: torch.Tensor, expected: float, kurtosis: float) -> bool:
    """Sample std within 5 standard errors of ``expected`` (SE of a std: ``sigma sqrt((kappa - 1) / (4 n))``)."""
    n = sample.numel()
    return abs(float(sample.std()) - expected) < 5 * expected * math.sqrt((kurtosis - 1) / (4 * n))


def test_initial_distributions_match_the_authors_code():
    """The authors' inits (RNN_Cell.py, expRNN/exprnn.py, LSTM.py): the nnRNN's U keeps nn.Linear's default
    (uniform +-1/sqrt(n_in), std 1/sqrt(3 n_in) = 0.577 at n_in = 1), the expRNN's input weights are Xavier normal
    (std sqrt(2 / (n_in + N))), the LSTM's gate weights Xavier normal on [h, x] (std sqrt(2 / (2N + n_in)))."""
    from lscnb.experiments.nnrnn import make_model

    cells = [NNRNNCell(1, 512, seed=s) for s in range(4)]
    U = torch.cat([c.U.detach() for c in cells])
    assert float(U.abs().max()) <= 1.0 and _std_ok(U, 1 / math.sqrt(3), 1.8)  # uniform: kurtosis 1.8
    core, _, _ = make_model("expRNN", 1024, 0, n_in=1)
    w = core.cell.input.weight.detach()
    assert core.cell.input.bias is None and _std_ok(w, math.sqrt(2 / 1025), 3.0)
    core, _, _ = make_model("LSTM", 256, 0, n_in=1)
    for w in (core.lstm.weight_hh_l0, core.lstm.weight_ih_l0):
        assert _std_ok(w.detach(), math.sqrt(2 / 513), 3.0)
    b = core.lstm.bias_ih_l0.detach()
    assert float(b.abs().max()) <= 1 / math.sqrt(257) and _std_ok(b, 1 / math.sqrt(3 * 257), 1.8)
    theta = torch.cat([c.theta.detach() for c in cells])
    assert float(theta.min()) >= 0 and float(theta.max()) < 6.28


DETERMINISTIC = {"fmc": "closed-form Fisher memory curves of fixed matrices: nothing is drawn"}


@pytest.mark.parametrize("figure", ["transients", "copy", "psmnist", "theta", "ptb", "gamma"])
def test_seed_reaches_every_figure_that_trains_or_samples(figure):
    from seedcheck import assert_seed_reaches

    from lscnb.experiments import nnrnn as ex

    assert set(ex.FIGURES) == {"transients", "copy", "psmnist", "theta", "ptb", "gamma"} | set(DETERMINISTIC)
    assert_seed_reaches(_shrunk(ex.FIGURES[figure]("full")[0]))
