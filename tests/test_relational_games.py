"""The re-created Relational Games: shapes, boards, the seven rules on hand-built boards, OOD families, seeds."""

import pytest
import torch

from lscnb.data import relational_games as rg


def board(cells: dict) -> torch.Tensor:
    """A (1, 9) board from ``{cell: (mask, colour)}``."""
    seq = torch.zeros(1, 9, dtype=torch.long)
    for cell, (m, c) in cells.items():
        seq[0, cell] = 1 + m * len(rg.PALETTE) + c
    return seq


def test_polyominoes_and_catalogue():
    assert [len(rg.polyominoes(n)) for n in range(1, 7)] == [1, 1, 2, 7, 18, 60]  # one-sided polyominoes (OEIS A000988)
    cat = rg.catalogue()
    fams = {"train": cat.train, "hexominoes": cat.hexominoes, "stripes": cat.stripes}
    ids = [set(v.tolist()) for v in fams.values()]
    assert sum(map(len, ids)) == len(cat.masks) and not (ids[0] & ids[1] or ids[0] & ids[2] or ids[1] & ids[2])
    flat = cat.masks.flatten(1)
    assert len(torch.unique(flat, dim=0)) == len(flat)  # pixel-distinct objects
    area = flat.sum(1)
    assert set(area[cat.train].tolist()) == {5 * 9} and set(area[cat.hexominoes].tolist()) == {6 * 9}
    assert len(cat.train) >= 40 and len(cat.hexominoes) >= 100 and len(cat.stripes) >= 20
    p = rg.patches()
    assert (
        p.shape == (rg.vocabulary_size(), 3, 12, 12)
        and float(p[0].abs().sum()) == 0
        and float(p.max()) <= 192 / 255 + 1e-6
    )
    assert len(set(rg.LUMINANCE.tolist())) == len(rg.PALETTE)


def test_render_places_cells_in_raster_order():
    seq = board({0: (3, 0), 5: (7, 2)})
    img = rg.render(seq)
    assert img.shape == (1, 3, 36, 36)
    p = rg.patches()
    torch.testing.assert_close(img[0, :, 0:12, 0:12], p[seq[0, 0]])
    torch.testing.assert_close(img[0, :, 12:24, 24:36], p[seq[0, 5]])
    assert float(img[0, :, 24:, :].abs().sum()) == 0
    with pytest.raises(ValueError, match="seq"):
        rg.render(torch.zeros(2, 8, dtype=torch.long))


def test_rules_on_hand_built_boards():
    A, A_red, A_rot, B, C = (0, 0), (0, 1), (1, 0), (5, 0), (9, 3)  # A_red: A in another colour; A_rot: another mask
    R = rg.RULES
    assert R["same"](board({0: A, 4: B, 8: A})).item() == 1
    assert R["same"](board({0: A, 4: B, 8: A_red})).item() == 0  # colour matters
    assert R["same"](board({0: A, 4: B, 8: A_rot})).item() == 0  # orientation matters
    assert R["between"](board({0: A, 4: B, 8: A})).item() == 1  # diagonal line, outer same
    assert R["between"](board({3: A, 4: B, 5: A})).item() == 1
    assert R["between"](board({3: A, 4: B, 5: C})).item() == 0  # outer differ
    assert R["between"](board({0: A, 4: B, 7: A})).item() == 0  # not a line
    assert R["occurs"](board({1: A, 6: B, 7: C, 8: A})).item() == 1
    assert R["occurs"](board({1: A, 6: B, 7: C, 8: A_red})).item() == 0
    assert R["xoccurs"](board({1: A, 6: B, 7: C, 8: A})).item() == 1
    assert R["xoccurs"](board({1: A, 6: A, 7: C, 8: A})).item() == 0  # twice
    assert R["xoccurs"](board({1: A, 6: B, 7: C, 8: B})).item() == 0  # never
    assert R["row_matching"](board({0: A, 1: A, 2: B, 6: C, 7: C, 8: A_rot})).item() == 1  # AAB, AAB
    assert R["row_matching"](board({0: A, 1: B, 2: A, 6: C, 7: C, 8: A_rot})).item() == 0  # ABA, AAB
    assert R["row_matching"](board({0: A, 1: B, 2: C, 6: B, 7: C, 8: A})).item() == 1  # ABC, ABC
    cs = R["colour_shape"]
    assert [cs(board({2: A, 6: x})).item() for x in (A, A_rot, A_red, (1, 1))] == [0, 1, 2, 3]
    red, grey = 0, 5  # luminance 0.16 < 0.75
    assert R["left_of"](board({3: (2, red), 1: (4, grey)})).item() == 1  # darker in column 0, the other in column 1
    assert R["left_of"](board({5: (2, red), 1: (4, grey)})).item() == 0
    assert R["left_of"](board({8: (2, grey), 0: (4, red)})).item() == 1


@pytest.mark.parametrize("name", list(rg.GAMES))
def test_generators_follow_their_rule_and_stay_in_family(name):
    fn, classes = rg.GAMES[name]
    cat = rg.catalogue()
    g = torch.Generator().manual_seed(0)
    for family in (cat.train, cat.hexominoes, cat.stripes):
        seq, y = fn(family, 2000, g)
        assert seq.shape == (2000, 9) and y.shape == (2000,)
        torch.testing.assert_close(rg.RULES[name](seq), y)  # every label obeys the rule
        counts = torch.bincount(y, minlength=classes).float() / 2000
        assert float((counts - 1 / classes).abs().max()) < 0.04, counts  # balanced
        masks, _ = rg.objects(seq)
        assert set(masks[masks >= 0].unique().tolist()) <= set(family.tolist())  # OOD shapes never leak into training
    seq1, y1 = fn(cat.train, 64, torch.Generator().manual_seed(3))
    seq2, y2 = fn(cat.train, 64, torch.Generator().manual_seed(3))
    assert torch.equal(seq1, seq2) and torch.equal(y1, y2)  # seeds repeatable
    seq3, _ = fn(cat.train, 64, torch.Generator().manual_seed(4))
    assert not torch.equal(seq1, seq3)


def test_structured_layouts():
    cat, g = rg.catalogue(), torch.Generator().manual_seed(1)
    seq, _ = rg.occurs(cat.train, 500, g)
    assert torch.equal((seq[:, :3] > 0).sum(1), torch.ones(500, dtype=torch.long)) and bool((seq[:, 3:6] == 0).all())
    assert bool((seq[:, 6:] > 0).all())
    seq, _ = rg.row_matching(cat.train, 500, g)
    assert bool((seq[:, 3:6] == 0).all()) and bool((seq[:, [0, 1, 2, 6, 7, 8]] > 0).all())
    assert not any(set(r[:3].tolist()) & set(r[6:].tolist()) for r in seq)  # the rows use disjoint objects
    seq, y = rg.left_of(cat.train, 500, g)
    _, colour = rg.objects(seq)
    assert bool(((seq > 0).sum(1) == 2).all()) and all(len(set(c[c >= 0].tolist())) == 2 for c in colour)
    with pytest.raises(ValueError, match="shapes"):
        rg.colour_shape(torch.tensor([0]), 4, g)  # needs two masks
    with pytest.raises(ValueError, match="shapes"):
        rg.row_matching(torch.tensor([], dtype=torch.long), 4, g)
    with pytest.raises(TypeError, match="shapes"):
        rg.same([0, 1], 4, g)


def test_patch_encoder():
    from lscnb.models.relational import ConvEncoder, encode_patches

    emb = encode_patches(rg.patches(), seed=0)
    assert emb.shape == (rg.vocabulary_size(), 128)
    d = torch.cdist(emb, emb) + torch.eye(len(emb)) * 1e9
    assert float(d.min()) > 1e-2  # distinct patches, distinct codes
    torch.testing.assert_close(encode_patches(rg.patches()[:5], seed=0), emb[:5])
    with pytest.raises(ValueError, match="patches"):
        encode_patches(torch.zeros(5, 12, 12))
    with pytest.raises(ValueError, match="size"):
        ConvEncoder(size=4, layers=3)
