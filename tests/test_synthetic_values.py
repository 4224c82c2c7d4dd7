"""The synthetic tasks by value (lscnb.data.synthetic): every position of copy, adding and denoise sequences checked
against the task's definition, symbol ranges, seeds and generators (issue 27)."""

import math

import pytest
import torch

from lscnb.data import synthetic as S


def test_copy_memory_layout():
    x, y = S.copy_memory(500, 3, n_symbols=4, length=5, seed=1)
    T = 5 + 3 + 1 + 5
    assert x.shape == (500, T, 6) and y.shape == (500, T)
    tokens = x.argmax(-1)
    assert torch.all(x.sum(-1) == 1)  # one-hot
    symbols = tokens[:, :5]
    assert symbols.min() == 1 and symbols.max() == 4 and len(symbols.unique()) == 4  # 1..n_symbols, all used
    assert torch.all(tokens[:, 5:8] == 0) and torch.all(tokens[:, 8] == 5) and torch.all(tokens[:, 9:] == 0)
    assert torch.all(y[:, :9] == 0) and torch.equal(y[:, 9:], symbols)
    x2, y2 = S.copy_memory(2, 0, n_symbols=3, length=2, recall_at_marker=True, seed=0)
    assert x2.shape == (2, 2 + 0 + 1 + 1, 5)  # the recall starts at the marker
    assert torch.equal(y2[:, -2:], x2.argmax(-1)[:, :2]) and torch.all(x2.argmax(-1)[:, 2] == 4)


def test_seeds_and_generators():
    for make in (
        lambda **k: S.copy_memory(4, 2, **k),
        lambda **k: S.adding_problem(4, 6, **k),
        lambda **k: S.denoise(4, 3, **k),
    ):
        a, b, c = make(seed=3), make(seed=3), make(seed=4)
        assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])
        assert torch.equal(make()[0], make(seed=0)[0])  # no seed: seed 0
        g = torch.Generator().manual_seed(9)
        assert torch.equal(make(generator=g, seed=1)[0], make(seed=9)[0])  # a generator wins over a seed
        assert make(device="meta")[0].device.type == "meta" and make(device="meta")[1].device.type == "meta"


def test_adding_problem_by_definition():
    x, y = S.adding_problem(1000, 9, seed=2)
    assert x.shape == (1000, 9, 2) and y.shape == (1000, 1)
    marks = x[..., 1]
    assert torch.all(marks.sum(1) == 2)
    first, second = marks[:, :4].argmax(1), 4 + marks[:, 4:].argmax(1)  # one marker in each half (9 // 2 = 4)
    assert torch.all(marks[:, :4].sum(1) == 1) and torch.all(marks[:, 4:].sum(1) == 1)
    rows = torch.arange(1000)
    torch.testing.assert_close(y[:, 0], x[rows, first, 0] + x[rows, second, 0])
    assert set(first.tolist()) == {0, 1, 2, 3} and set(second.tolist()) == set(range(4, 9))
    assert y.var().item() == pytest.approx(S.ADDING_BASELINE, rel=0.15)
    assert S.adding_problem(2, 2)[0][:, :, 1].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(ValueError, match="length must be at least 2, got 1"):
        S.adding_problem(2, 1)


def test_denoise_by_definition():
    x, y = S.denoise(300, 4, n_symbols=5, length=3, seed=0)
    span, T = 4 + 3 - 1, 4 + 2 * 3
    assert x.shape == (300, T, 8) and y.shape == (300, T)
    tokens = x.argmax(-1)
    assert torch.all(tokens[:, span] == 7) and torch.all(tokens[:, span + 1 :] == 0)
    head = tokens[:, :span]
    assert torch.all((head > 0).sum(1) == 3)  # three symbols among the first span steps
    kept = head[head > 0].view(300, 3)  # in order of position
    assert torch.equal(y[:, -3:], kept) and torch.all(y[:, :-3] == 0)
    assert kept.min() == 1 and kept.max() == 5
    assert (head > 0).float().mean(0).min() > 0.2  # symbol positions spread over the whole span
    with pytest.raises(ValueError, match="blanks must be at least 1 for 3 symbols, got 0"):
        S.denoise(2, 0, length=3)


def test_copy_baseline_by_hand():
    assert S.copy_memory_baseline(10, n_symbols=8, length=10) == pytest.approx(10 * math.log(8) / 31)
    assert S.copy_memory_baseline(10, recall_at_marker=True) == pytest.approx(10 * math.log(8) / 30)
