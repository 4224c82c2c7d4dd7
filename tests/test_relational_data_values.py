"""The relational tasks' data (lscnb.data.relational, lscnb.data.relational_games) against answers worked here:
seeds that repeat, labels recomputed from the objects, polyomino counts from the literature and masks drawn by
hand (issue 27)."""

import pytest
import torch

from lscnb.data import relational as R
from lscnb.data import relational_games as G

SHAPES = torch.arange(100)
ALL = {
    **{k: (v[0], {}) for k, v in R.TASKS.items()},
    **{k: (v[0], {"phase": p}) for k, v in R.UNSEEN.items() for p in ("train",)},
    **{k + "-test": (v[0], {"phase": "test"}) for k, v in R.UNSEEN.items()},
    **{k: (v[0], {"phase": "train"}) for k, v in R.APPENDIX_UNSEEN.items()},
    **{k: (v[0], {}) for k, v in R.SEPARATED.items()},
    "size_comparison": (R.size_comparison, {}),
    "coloured_same_different": (R.coloured(R.same_different), {}),
}


def _run(name, seed, batch=64):
    fn, kw = ALL[name]
    return fn(SHAPES, batch, torch.Generator().manual_seed(seed), **kw)


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_task_repeats_with_its_generator_and_only_with_it(name):
    (x0, y0), (x1, y1), (x2, _) = _run(name, 0), _run(name, 0), _run(name, 1)
    assert torch.equal(x0, x1) and torch.equal(y0, y1)
    assert not torch.equal(x0, x2)
    assert x0.shape[0] == y0.shape[0] == 64 and y0.dtype == torch.long


def test_separated_inputs_interleave_the_tasks_shapes_with_uniform_colours():
    gen = R.separated(R.same_different, n_colours=7, n_shapes=50)
    shapes = torch.arange(50)
    x, y = gen(shapes, 4000, torch.Generator().manual_seed(3))
    base_x, base_y = R.same_different(shapes, 4000, torch.Generator().manual_seed(3))
    assert x.shape == (4000, 4) and torch.equal(x[:, 0::2], base_x) and torch.equal(y, base_y)
    colours = x[:, 1::2]
    assert colours.min() == 50 and colours.max() == 56
    assert colours.float().mean().item() == pytest.approx(53.0, abs=0.1)  # uniform over 50..56
    assert "separated inputs" in gen.__doc__ and "object 50 + colour" in gen.__doc__
    assert R.SEPARATED["same_different_sep"][1:] == (4, 2)


def test_size_comparison_labels_by_hand():
    x, y = R.size_comparison(SHAPES, 5, torch.Generator().manual_seed(0))
    size, shape = x // 100, x % 100
    assert torch.equal(shape[:, 0], shape[:, 1])  # one shape, two sizes
    assert torch.equal(y, (size[:, 1] > size[:, 0]).long())  # the position of the larger
    assert torch.equal(x[3:], x[:2].flip(1))  # swap-balanced: the second half is the first swapped
    assert {tuple(p) for p in size.tolist()} <= set(R.SIZE_PAIRS["comparison"])
    x, _ = R.size_comparison(SHAPES, 400, torch.Generator().manual_seed(1), pairs=R.SIZE_PAIRS["transitive_test"])
    assert {tuple(p) for p in (x // 100).tolist()} == {(0, 2), (2, 0)}
    assert R.size_comparison(torch.arange(10), 40, None, n_shapes=10)[0].max() < 30
    for bad in ([(1, 1)], [(0, 1, 2)], [0, 1]):
        with pytest.raises(ValueError, match="pairs must be a list of"):
            R.size_comparison(SHAPES, 4, pairs=bad)


def test_comparison_follows_the_hidden_rank():
    rank = torch.randperm(100, generator=torch.Generator().manual_seed(0))
    x, y = R.comparison(SHAPES, 9, torch.Generator().manual_seed(1), rank=rank)
    assert torch.equal(y, (rank[x[:, 0]] > rank[x[:, 1]]).long())
    assert torch.equal(x[5:], x[:4].flip(1))


# ------------------------------------------------------------------------------------------ relational games


def test_polyomino_counts_are_the_one_sided_counts():
    """Free polyominoes with mirror images distinct (one-sided): 1, 1, 2, 7, 18, 60 (OEIS A000988)."""
    assert [len(G.polyominoes(n)) for n in range(1, 7)] == [1, 1, 2, 7, 18, 60]


def test_normal_and_rotations_by_hand():
    assert G._normal([(2, 3), (1, 5)]) == ((0, 2), (1, 0))
    ell = ((0, 0), (1, 0), (1, 1))
    assert G._rotations(ell) == [
        ((0, 0), (1, 0), (1, 1)),
        ((0, 0), (0, 1), (1, 0)),
        ((0, 0), (0, 1), (1, 1)),
        ((0, 1), (1, 0), (1, 1)),
    ]
    square = ((0, 0), (0, 1), (1, 0), (1, 1))
    assert G._rotations(square) == [square] * 4


def test_masks_by_hand():
    mono = G._mask(((0, 0),))
    expected = torch.zeros(12, 12, dtype=torch.bool)
    expected[4:7, 4:7] = True  # one 3 x 3 square, centred
    assert torch.equal(mono, expected)
    ell = G._mask(((0, 0), (1, 0), (1, 1)))
    expected = torch.zeros(12, 12, dtype=torch.bool)
    expected[3:6, 3:6] = expected[6:9, 3:6] = expected[6:9, 6:9] = True
    assert torch.equal(ell, expected)
    bar = G._mask(((0, 0), (1, 0), (2, 0), (3, 0)))
    expected = torch.zeros(12, 12, dtype=torch.bool)
    expected[:, 4:7] = True
    assert torch.equal(bar, expected)


def test_polyomino_masks_are_the_fixed_polyominoes_that_fit():
    """Fixed polyominoes (every rotation): 1, 2, 6, 19, 63 (OEIS A001168); the straight pentomino (two of the 63) is
    5 units long and does not fit the 4 x 4 cell."""
    counts = [len(G._polyomino_masks(n)) for n in range(1, 6)]
    assert counts == [1, 2, 6, 19, 61]
    masks = torch.stack(G._polyomino_masks(4))
    assert len({m.numpy().tobytes() for m in masks}) == 19  # all distinct
    assert set(masks.sum((1, 2)).tolist()) == {36}  # four 3 x 3 squares each


def test_stripe_masks_by_hand():
    stripes = G._stripe_masks()
    assert len(stripes) == 32  # 4 orientations x 8 (width, gap) pairs with width + gap >= 3
    rows = torch.arange(12)[:, None].expand(12, 12)
    cols = torch.arange(12)[None, :].expand(12, 12)
    assert torch.equal(stripes[0], rows % 3 == 0)  # horizontal, width 1, gap 2
    assert torch.equal(stripes[7], rows % 6 < 3)  # horizontal, width 3, gap 3
    assert torch.equal(stripes[8], cols % 3 == 0)  # vertical
    assert torch.equal(stripes[16], (rows + cols) % 3 == 0)  # diagonal
    assert torch.equal(stripes[24], (rows - cols + 12) % 3 == 0)  # the other diagonal
    assert torch.equal(stripes[2], rows % 3 < 2)  # width 2, gap 1
