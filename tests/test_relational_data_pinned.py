"""The relational tasks' data pinned by answers worked here (issue 27): patterns read off the sequences, the
documented defaults, swap balance, draws that repeat with their generator only, full error messages, and the rules
of the Relational Games on hand-built boards."""

import pytest
import torch
from pinning import ConstantUniforms

from lscnb.data import relational as R
from lscnb.data import relational_games as G

SHAPES = torch.arange(100)


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _code(row) -> str:
    """A row's pattern up to renaming, letters by first occurrence (e.g. [7, 3, 7] -> 'aba')."""
    names = {}
    return "".join(names.setdefault(v, "abcdefgh"[len(names)]) for v in row)


def _same_draw(fn):
    """fn(generator) twice with one seed under two global RNG states: equal results."""
    torch.manual_seed(0)
    a = fn(_gen(5))
    torch.manual_seed(1)
    b = fn(_gen(5))
    return all(torch.equal(u, v) for u, v in zip(a, b, strict=True))


# ------------------------------------------------------------------------------------------------------ relational
def test_split_is_the_seed_0_permutation():
    """split(m) holds out the first m of randperm(n) drawn from a generator seeded 0 (the default seed)."""
    perm = torch.randperm(100, generator=_gen(0))
    torch.manual_seed(7)
    train, test = R.split(5)
    assert torch.equal(train, perm[5:]) and torch.equal(test, perm[:5])


def test_rmts_source_pairs_alternate_same_and_different():
    """Row b's source pair is a same pair iff b is even (half each)."""
    seq, _ = R.rmts(SHAPES, 12, _gen(0))
    assert (seq[:, 0] == seq[:, 1]).tolist() == [b % 2 == 0 for b in range(12)]


def test_distribution_of_3_needs_only_four_shapes():
    """Three objects and one other option: four shapes are enough."""
    seq, label = R.distribution_of_3(torch.tensor([3, 1, 4, 5]), 8, _gen(0))
    assert seq.shape == (8, 9) and set(seq.flatten().tolist()) <= {1, 3, 4, 5}
    for row, lab in zip(seq.tolist(), label.tolist(), strict=True):
        assert {row[5 + lab]} == set(row[:3]) - set(row[3:5])  # the option that completes the second row


def test_identity_rules_pattern_cycles_aaa_aba_abb():
    """Row b's first row follows pattern b % 3: AAA, ABA, ABB."""
    seq, _ = R.identity_rules(SHAPES, 9, _gen(0))
    assert [_code(r) for r in seq[:, :3].tolist()] == ["aaa", "aba", "abb"] * 3


def test_comparison_defaults_swaps_and_ties():
    """Default rank: the index order of the 100 shapes; pairs appear in both orders; equal ranks give label 0."""
    x, y = R.comparison(SHAPES, 8, _gen(0))
    assert torch.equal(y, (x[:, 0] > x[:, 1]).long()) and torch.equal(x[4:], x[:4].flip(1))
    _, y = R.comparison(SHAPES, 8, _gen(0), rank=torch.zeros(100, dtype=torch.long))
    assert y.tolist() == [0] * 8
    with pytest.raises(IndexError):
        R.comparison(torch.tensor([99, 100]), 2, _gen(0))  # the default order covers the shapes 0..99 only
    assert _same_draw(lambda g: R.comparison(SHAPES, 6, g))


@pytest.mark.parametrize("fn", [R.same_different6, R.rmts3, R.identity_rules4, R.identity_rules4_flipped])
def test_unseen_tasks_default_to_the_training_phase(fn):
    """phase defaults to "train" (and missing to False)."""
    kw = {"missing": False} if "identity" in fn.__name__ else {}
    assert torch.equal(fn(SHAPES, 64, _gen(3))[0], fn(SHAPES, 64, _gen(3), phase="train", **kw)[0])


@pytest.mark.parametrize(
    ("missing", "codes"),
    [
        (False, {"aaaa", "abaa", "aaba", "abbb", "abba", "abab", "aabb"}),
        (True, {"aaaa", "aaba", "abbb", "abba", "aabb"}),
    ],
)
def test_identity_rules4_training_codes(missing, codes):
    """Training rows follow the seven two-object codes; missing drops abaa and abab (baaa reads abbb)."""
    seq, _ = R.identity_rules4(SHAPES, 600, _gen(1), missing=missing)
    assert {_code(r) for r in seq[:, :4].tolist()} == codes


@pytest.mark.parametrize("phase", ["train", "test"])
def test_rmts3_distractor_has_another_pattern(phase):
    """The matching target has the source's pattern, the distractor another pattern of the phase."""
    seq, label = R.rmts3(SHAPES, 300, _gen(2), phase=phase)
    src = [_code(r) for r in seq[:, :3].tolist()]
    first, second = [_code(r) for r in seq[:, 3:6].tolist()], [_code(r) for r in seq[:, 6:].tolist()]
    match = [f if lab == 0 else s for f, s, lab in zip(first, second, label.tolist(), strict=True)]
    distract = [s if lab == 0 else f for f, s, lab in zip(first, second, label.tolist(), strict=True)]
    assert match == src and all(d != s for d, s in zip(distract, src, strict=True))
    assert {(s, d) for s, d in zip(src, distract, strict=True)} == {
        (a, b) for a in R.RMTS3[phase] for b in R.RMTS3[phase] if a != b
    }


def test_keeps_head_by_hand():
    """The first n - 3 positions draw from the first n - 3: n = 4, position 0 from {0}; n = 5, 0 and 1 from {0, 1}."""
    got = R._keeps_head(torch.tensor([[1, 0, 2, 3], [0, 2, 3, 1], [3, 1, 2, 0]]), 4)
    assert got.tolist() == [False, True, False]
    got = R._keeps_head(torch.tensor([[0, 1, 4, 2, 3], [0, 2, 1, 3, 4], [0, 3, 1, 2, 4]]), 5)
    assert got.tolist() == [True, False, False]


def test_distribution_of_n_smallest_n_and_message():
    """n = 4 is allowed (its test phase rejects, with its own generator, the permutations that keep position 0);
    n = 3 is refused by name."""
    seq, _ = R.distribution_of_n(SHAPES, 20, _gen(0), phase="test", n=4)
    assert seq.shape == (20, 4 + 3 + 5) and torch.all(seq[:, 4] != seq[:, 0])
    assert _same_draw(lambda g: R.distribution_of_n(SHAPES, 40, g, phase="test", n=4))
    with pytest.raises(ValueError, match=r"^n must be at least 4, got 3$"):
        R.distribution_of_n(SHAPES, 2, _gen(0), n=3)


def test_coloured_adds_colour_draws_after_the_task():
    """seq = task seq + n_shapes * randint(n_colours) drawn next from the same generator; keywords reach the task."""
    gen = R.coloured(R.rmts3, n_colours=7, n_shapes=100)
    x, y = gen(SHAPES, 50, _gen(1), phase="test")
    g = _gen(1)
    base, base_y = R.rmts3(SHAPES, 50, g, phase="test")
    assert torch.equal(x, base + 100 * torch.randint(7, base.shape, generator=g)) and torch.equal(y, base_y)
    assert gen.__doc__ == "rmts3 with a random colour per object (index = colour * 100 + shape)."


def test_separated_defaults_and_keywords():
    """Defaults 100 colours, colour c = object 100 + c, drawn after the task; keywords reach the task."""
    x, y = R.separated(R.rmts3)(SHAPES, 50, _gen(4), phase="test")
    g = _gen(4)
    base, base_y = R.rmts3(SHAPES, 50, g, phase="test")
    col = 100 + torch.randint(100, base.shape, generator=g)
    assert torch.equal(x[:, 0::2], base) and torch.equal(x[:, 1::2], col) and torch.equal(y, base_y)


def test_size_comparison_even_batch_is_swap_balanced():
    """An even batch: the second half is exactly the first half swapped."""
    x, y = R.size_comparison(SHAPES, 6, _gen(0))
    assert torch.equal(x[3:], x[:3].flip(1)) and torch.equal(y[3:], 1 - y[:3])


# ------------------------------------------------------------------------------------------------ relational games
def test_masks_are_boolean():
    """Masks are boolean (the docstring's 12x12 boolean mask), in the catalogue too."""
    assert G._mask(((0, 0),)).dtype == torch.bool and G.catalogue().masks.dtype == torch.bool


def test_stripe_masks_by_their_formula():
    """Stripes: coord % (width + gap) < width for rows, columns, i + j and i - j + 12 (period 5 tells +12 from -12)."""
    stripes = G._stripe_masks()
    pairs = [(w, gap) for w in (1, 2, 3) for gap in (1, 2, 3) if w + gap >= 3]
    coords = [lambda i, j: i, lambda i, j: j, lambda i, j: i + j, lambda i, j: i - j + 12]
    k = 0
    for coord in coords:
        for w, gap in pairs:
            expected = [[coord(i, j) % (w + gap) < w for j in range(12)] for i in range(12)]
            assert stripes[k].tolist() == expected
            k += 1


def test_render_message():
    """The full message names the 9 cells of a board."""
    with pytest.raises(ValueError, match=r"^seq must hold 9 cells per board, got 8$"):
        G.render(torch.zeros(1, 8, dtype=torch.long))


def test_objects_by_hand():
    """Index 1 + mask * 6 + colour; empty cells give -1 and -1."""
    masks, colours = G.objects(torch.tensor([[0, 1, 14]]))
    assert masks.tolist() == [[-1, 0, 2]] and colours.tolist() == [[-1, 0, 1]]


@pytest.mark.parametrize(("fn", "k"), [(G.same, 3), (G.between, 3), (G.occurs, 4), (G.row_matching, 6)])
def test_object_counts_in_messages(fn, k):
    """Each game says how many distinct objects it needs."""
    with pytest.raises(ValueError, match=rf"^shapes must allow at least {k} distinct objects, got 0$"):
        fn(torch.tensor([], dtype=torch.long), 2, _gen(0))


def test_one_mask_gives_exactly_six_objects():
    """One mask in six colours is exactly six distinct objects: enough for six."""
    o = G._objects(torch.tensor([2]), 5, 6, _gen(0))
    assert sorted(o[0].tolist()) == list(range(13, 19)) and all(len(set(r)) == 6 for r in o.tolist())


def test_balanced_odd_one_out_is_a_fair_coin():
    """batch = 1: the single label is 0 or 1 with probability 1/2 (400 seeds: 200 +- 10)."""
    ones = sum(int(G._balanced(1, _gen(s))) for s in range(400))
    assert 160 < ones < 240


def _on_line(seq):
    cells = {tuple(sorted(c)) for c in G.LINES.tolist()}
    return [tuple(torch.nonzero(r).flatten().tolist()) in cells for r in seq]


def test_between_negatives_off_a_line_half_the_time(monkeypatch):
    """Negatives go on a line iff u < 1/2: with u = 1/2 none does; with real draws about half do."""
    seq, y = G.between(SHAPES, 400, _gen(0))
    off = [not on for on, lab in zip(_on_line(seq), y.tolist(), strict=True) if lab == 0]
    assert 0.4 < sum(off) / len(off) < 0.6
    monkeypatch.setattr(G, "torch", ConstantUniforms(0.5))
    seq, y = G.between(SHAPES, 40, _gen(0))
    assert not any(on for on, lab in zip(_on_line(seq), y.tolist(), strict=True) if lab == 0)


def test_xoccurs_negatives_half_none_half_two():
    """Negatives hold the top object 0 or 2 times in the bottom row, half each."""
    seq, y = G.xoccurs(SHAPES, 4000, _gen(0))
    top = seq[:, :3].max(1).values
    count = (seq[:, 6:] == top[:, None]).sum(1)[y == 0]
    assert set(count.tolist()) == {0, 2} and 0.45 < (count == 0).float().mean().item() < 0.55


def test_top_count_on_hand_boards():
    """The top row's object only (not the middle row's), and an empty top row occurs nowhere."""
    assert G.is_occurs(torch.tensor([[5, 0, 0, 9, 0, 0, 0, 5, 0]])).item() == 1
    assert G.is_occurs(torch.tensor([[0, 0, 0, 0, 4, 0, 0, 5, 0]])).item() == 0


def test_row_matching_negatives_use_every_other_pattern():
    """Negatives pair each pattern with each of the four others."""
    seq, y = G.row_matching(SHAPES, 2000, _gen(0))
    pairs = {(_code(r[:3]), _code(r[6:])) for r, lab in zip(seq.tolist(), y.tolist(), strict=True) if lab == 0}
    assert pairs == {(a, b) for a in G.ROW_PATTERNS for b in G.ROW_PATTERNS if a != b}


def test_colour_shape_with_two_masks():
    """Two masks are enough for the four labels."""
    seq, y = G.colour_shape(torch.tensor([4, 9]), 200, _gen(0))
    assert torch.equal(G.colour_shape_label(seq), y) and set(y.tolist()) == {0, 1, 2, 3}


def test_pattern_by_hand():
    """(0 = 1, 0 = 2, 1 = 2) of aab, aba, abb."""
    got = G._pattern(torch.tensor([[1, 1, 2], [3, 4, 3], [5, 6, 6]]))
    assert got.tolist() == [[True, False, False], [False, True, False], [False, False, True]]


def test_two_takes_the_first_two_in_raster_order():
    """Of objects in cells 1, 4 and 7, the first two."""
    objs, cells = G._two(torch.tensor([[0, 5, 0, 0, 6, 0, 0, 7, 0]]))
    assert objs.tolist() == [[5, 6]] and cells.tolist() == [[1, 4]]


def test_rules_with_four_colours():
    """n_colours = 4: index 1 + mask * 4 + colour. Colours 1 (green) and 3 (yellow): green is darker."""
    seq = torch.tensor([[1 + 1 * 4 + 3, 0, 1 + 0 * 4 + 1, 0, 0, 0, 0, 0, 0]])  # yellow left, green right
    assert G.is_left_of(seq, n_colours=4).item() == 0
    assert G.colour_shape_label(seq, n_colours=4).item() == 2 * 1 + 1  # colours and masks differ
    same_colour = torch.tensor([[1 + 2 * 4 + 1, 1 + 3 * 4 + 1, 0, 0, 0, 0, 0, 0, 0]])
    assert G.colour_shape_label(same_colour, n_colours=4).item() == 1


def test_left_of_same_column_is_not_left():
    """Two objects in one column: neither is left of the other."""
    seq = torch.zeros(1, 9, dtype=torch.long)
    seq[0, 0], seq[0, 3] = 1 + 0 * 6 + 2, 1 + 0 * 6 + 5  # blue above grey
    assert G.is_left_of(seq).item() == 0


def _objects_and_labels(batch, k, g):
    """k distinct objects per row (the top k of uniform scores over the 600 objects), then balanced labels."""
    pool = (1 + SHAPES[:, None] * 6 + torch.arange(6)).flatten()
    o = pool[torch.rand(batch, len(pool), generator=g).topk(k, 1).indices]
    y = ((torch.arange(batch) + torch.randint(2, (1,), generator=g)) % 2)[torch.randperm(batch, generator=g)]
    return o, y


def test_same_repeats_the_first_object():
    """Positives repeat the first object in the third place; the three go to the first three of a random order."""
    g = _gen(3)
    o, y = _objects_and_labels(50, 3, g)
    cells = torch.rand(50, 9, generator=g).argsort(1)[:, :3]
    expected = torch.zeros(50, 9, dtype=torch.long)
    for i in range(50):
        for k in range(3):
            expected[i, cells[i, k]] = o[i, 0] if (k == 2 and y[i] == 1) else o[i, k]
    seq, got_y = G.same(SHAPES, 50, _gen(3))
    assert torch.equal(got_y, y) and torch.equal(seq, expected)


def test_between_pairs_the_outer_objects():
    """Positives and off-line negatives repeat the first object last; on-line boards use a line, others a non-line."""
    g = _gen(4)
    o, y = _objects_and_labels(50, 3, g)
    on_line = (y == 1) | (torch.rand(50, generator=g) < 0.5)
    line, other = torch.randint(8, (50,), generator=g), torch.randint(76, (50,), generator=g)
    expected = torch.zeros(50, 9, dtype=torch.long)
    for i in range(50):
        cells = G.LINES[line[i]] if on_line[i] else G.OFF_LINE[other[i]]
        third = o[i, 0] if (y[i] == 1 or not on_line[i]) else o[i, 2]
        for cell, obj in zip(cells.tolist(), [o[i, 0], o[i, 1], third], strict=True):
            expected[i, cell] = obj
    seq, got_y = G.between(SHAPES, 50, _gen(4))
    assert torch.equal(got_y, y) and torch.equal(seq, expected)
