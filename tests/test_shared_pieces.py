import math

import pytest
import torch

from lscnb.data import batchify, bptt_windows, load_ptb, markov_corpus, spell_chars
from lscnb.kernels import linear_scan, scan_parallel, scan_sequential
from lscnb.models.lru import LRU
from lscnb.models.orthogonal import OrthogonalRNNCell, cayley, skew, skew_init


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_parallel_scan_equals_sequential(dtype):
    torch.manual_seed(0)
    a = torch.rand(2, 53, 4, dtype=dtype) * 0.99
    b = torch.randn(2, 53, 4, dtype=dtype)
    h0 = torch.randn(2, 4, dtype=dtype)
    ref = scan_sequential(a, b, h0)
    torch.testing.assert_close(scan_parallel(a, b, h0), ref, rtol=1e-5, atol=1e-5)
    # explicit loop
    h = h0
    for t in range(53):
        h = a[:, t] * h + b[:, t]
    torch.testing.assert_close(ref[:, -1], h)


def test_scan_gradients_agree():
    torch.manual_seed(1)
    a = torch.rand(1, 20, 3, dtype=torch.float64, requires_grad=True)
    b = torch.randn(1, 20, 3, dtype=torch.float64, requires_grad=True)
    g1 = torch.autograd.grad(scan_sequential(a, b).pow(2).sum(), (a, b))
    g2 = torch.autograd.grad(scan_parallel(a, b).pow(2).sum(), (a, b))
    for x, y in zip(g1, g2):
        torch.testing.assert_close(x, y)


def test_scan_bad_backend():
    with pytest.raises(ValueError, match="backend"):
        linear_scan(torch.ones(3), torch.ones(1, 3), backend="triton9")


def test_lru_matches_explicit_recurrence():
    torch.manual_seed(2)
    m = LRU(3, 5, r_min=0.4, r_max=0.9, max_phase=1.0).double()
    x = torch.randn(2, 12, 3, dtype=torch.float64)
    lam, gamma = m.eigenvalues(), m.gamma()
    assert torch.all((lam.abs() >= 0.4 - 1e-9) & (lam.abs() <= 0.9 + 1e-9))
    B = torch.complex(m.B_re, m.B_im)
    C = torch.complex(m.C_re, m.C_im)
    h = torch.zeros(2, 5, dtype=torch.complex128)
    for t in range(12):
        h = lam * h + gamma * (x[:, t].to(torch.complex128) @ B.T)
    torch.testing.assert_close(m(x)[:, -1], (h @ C.T).real + x[:, -1] * m.D)


def test_orthogonal_cell_stays_orthogonal_through_training():
    torch.manual_seed(3)
    cell = OrthogonalRNNCell(2, 16, map="exp", init="henaff")
    opt = torch.optim.Adam(cell.parameters(), lr=1e-2)
    for _ in range(50):
        h = torch.zeros(4, 16)
        for _t in range(5):
            h = cell(h, torch.randn(4, 2))
        opt.zero_grad()
        h.pow(2).sum().backward()
        opt.step()
    W = cell.weight_hh.detach()
    assert (W @ W.T - torch.eye(16)).abs().max() < 1e-5


def test_skew_maps_and_inits():
    a = skew_init(8, "henaff", dtype=torch.float64)
    w = torch.matrix_exp(skew(a))
    angles = torch.linalg.eigvals(w).angle().abs()
    assert torch.all(angles <= math.pi + 1e-9)
    c = cayley(skew(torch.randn(6, 6, dtype=torch.float64)))
    torch.testing.assert_close(c @ c.T, torch.eye(6, dtype=torch.float64))
    with pytest.raises(ValueError, match="kind"):
        skew_init(4, "glorot")


def test_spell_chars_rule():
    assert spell_chars(" a bc \n d \n") == "a _ b c \n d \n "


def test_ptb_or_stand_in():
    corpus = load_ptb("char", download=False)
    assert corpus.train.dtype == torch.long and corpus.vocab_size >= 20
    if "Penn Treebank" in corpus.source:  # 49 symbols + <eos>; one token per character and line end
        assert corpus.vocab_size == 50
        assert (len(corpus.train), len(corpus.valid), len(corpus.test)) == (5_017_482, 393_042, 442_423)
    else:
        assert corpus.entropy_rate_bits is not None


def test_ptb_real_files_counts():
    corpus = load_ptb("word", download=False, fallback=True)
    if "Penn Treebank" not in corpus.source:
        pytest.skip("PTB files absent (../shared/data/ptb): the real loader cannot be checked here")
    assert corpus.vocab_size == 10_000
    assert (len(corpus.train), len(corpus.valid), len(corpus.test)) == (929_589, 73_760, 82_430)


def test_markov_stand_in_entropy_rate_is_achievable():
    c = markov_corpus(8, lengths=(20_000, 10, 10), seed=1)
    counts = torch.zeros(8, 8)
    seq = c.train
    counts.index_put_((seq[:-1], seq[1:]), torch.ones(len(seq) - 1), accumulate=True)
    p = counts / counts.sum(1, keepdim=True)
    nll = -torch.log2(p[seq[:-1], seq[1:]]).mean()
    assert abs(float(nll) - c.entropy_rate_bits) < 0.05


def test_batchify_and_windows():
    rows = batchify(torch.arange(103), 4)
    assert rows.shape == (4, 25)
    wins = list(bptt_windows(rows, 10))
    assert [w[0].shape[1] for w in wins] == [10, 10, 4]
    torch.testing.assert_close(wins[0][1], rows[:, 1:11])
    with pytest.raises(ValueError, match="batch"):
        batchify(torch.arange(3), 4)


def test_deep_lru_shapes_and_residual():
    from lscnb.models.lru import DeepLRU

    torch.manual_seed(4)
    lm = DeepLRU(50, 50, d_model=8, d_state=6, depth=2, tokens=True)
    assert lm(torch.randint(0, 50, (3, 11))).shape == (3, 11, 50)
    reg = DeepLRU(2, 1, d_model=8, d_state=6, depth=3).eval()
    x = torch.randn(2, 7, 2)
    y = reg(x)
    # causal: the output at t does not depend on inputs after t
    x2 = x.clone()
    x2[:, 5:] += 1.0
    torch.testing.assert_close(reg(x2)[:, :5], y[:, :5])
