"""A re-creation of the Relational Games (Shanahan et al. 2019) as the thesis uses them (§5.4.2): sequentialised.

DeepMind's npz files are not available offline, so this module **re-generates** the tasks from their description
(thesis §5.4.2; the spec's §5): a 36x36x3 image, black background, a 3x3 grid of 12x12 cells, each cell empty or
holding one object, an object being a polyomino drawn with 3x3-pixel unit squares in one of a few palette colours
(channel values <= 192). Training objects are **pentominoes**; the two out-of-distribution test sets are
**hexominoes** and **striped squares**. As in the thesis (and unlike Shanahan et al.), the grid is presented
*sequentially*: 9 patches in raster order.

Implementer's choices (the thesis does not give them): free polyominoes whose bounding box fits the 4x4 units of a
cell, in their distinct 90-degree rotations (an orientation is part of the object: two objects are "same" iff shape,
orientation and colour agree, i.e. iff their images are equal); striped squares are 12x12 squares of horizontal,
vertical or diagonal stripes; six colours with distinct luminances (for left-of). Numbers obtained on these tasks are
**not** comparable value for value with Table 5.1; rankings are.

A sample is an index sequence ``(B, 9)`` over a patch vocabulary: 0 is the empty cell, ``1 + mask * C + colour`` an
object (``C`` colours); :func:`patches` gives the (V, 3, 12, 12) patch images and :func:`render` whole boards. Every
generator takes the allowed mask ids (``catalogue().train`` or a test family), a batch size and a
``torch.Generator`` and returns ``(seq, label)``, fully vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from itertools import combinations

import torch

from .. import checks

UNIT, CELL, GRID = 3, 12, 3
PALETTE = torch.tensor([[192, 0, 0], [0, 192, 0], [0, 0, 192], [192, 192, 0], [0, 192, 192], [192, 192, 192]]) / 255
"""Six colours (red, green, blue, yellow, cyan, grey at 192/255): luminances all different."""
LUMINANCE = PALETTE @ torch.tensor([0.2126, 0.7152, 0.0722])
"""Relative luminance ``0.2126 R + 0.7152 G + 0.0722 B`` of each palette colour (the left-of rule)."""


# --------------------------------------------------------------------------------------------- shapes
def _normal(cells) -> tuple:
    """A polyomino's cells translated to the origin, sorted (a canonical fixed form)."""
    r0, c0 = min(r for r, _ in cells), min(c for _, c in cells)
    return tuple(sorted((r - r0, c - c0) for r, c in cells))


def _rotations(cells) -> list[tuple]:
    """The four 90-degree rotations of a polyomino (possibly repeated)."""
    out, cur = [], _normal(cells)
    for _ in range(4):
        out.append(cur)
        cur = _normal([(c, -r) for r, c in cur])
    return out


@cache
def polyominoes(n: int) -> list[tuple]:
    """Free polyominoes of ``n`` unit squares up to rotation (mirror images count as different shapes), each in
    its canonical form; grown square by square from the monomino."""
    checks.positive_int(n, "n")
    shapes = {((0, 0),)}
    for _ in range(n - 1):
        grown = set()
        for s in shapes:
            for r, c in s:
                for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                    if (r + dr, c + dc) not in s:
                        grown.add(min(_rotations(s + ((r + dr, c + dc),))))
        shapes = grown
    return sorted(shapes)


def _mask(cells) -> torch.Tensor:
    """A 12x12 boolean mask of a polyomino drawn with 3x3-pixel squares, centred in the cell."""
    h, w = max(r for r, _ in cells) + 1, max(c for _, c in cells) + 1
    top, left = (CELL - UNIT * h) // 2, (CELL - UNIT * w) // 2
    m = torch.zeros(CELL, CELL, dtype=torch.bool)
    for r, c in cells:
        m[top + UNIT * r : top + UNIT * (r + 1), left + UNIT * c : left + UNIT * (c + 1)] = True
    return m


def _polyomino_masks(n: int) -> list[torch.Tensor]:
    """Every distinct rotation of every ``n``-omino that fits a 4x4-unit cell, as masks."""
    fits = [s for s in polyominoes(n) if max(max(r, c) for r, c in s) < CELL // UNIT]
    return [_mask(r) for s in fits for r in dict.fromkeys(_rotations(s))]


def _stripe_masks() -> list[torch.Tensor]:
    """Striped 12x12 squares: stripes of width 1-3 px and gap 1-3 px, horizontal, vertical and both diagonals."""
    i, j = torch.meshgrid(torch.arange(CELL), torch.arange(CELL), indexing="ij")
    out = []
    for coord in (i, j, i + j, i - j + CELL):
        for width in (1, 2, 3):
            for gap in (1, 2, 3):
                if width + gap >= 3:
                    out.append(coord % (width + gap) < width)
    return out


@dataclass(frozen=True)
class Catalogue:
    """All masks (M, 12, 12) with the mask ids of each family: ``train`` (pentominoes), ``hexominoes``, ``stripes``."""

    masks: torch.Tensor
    train: torch.Tensor
    hexominoes: torch.Tensor
    stripes: torch.Tensor

    @property
    def tests(self) -> dict:
        return {"hexominoes": self.hexominoes, "stripes": self.stripes}


@cache
def catalogue() -> Catalogue:
    """The object masks of the three families, pixel-distinct across all of them."""
    families = {"train": _polyomino_masks(5), "hexominoes": _polyomino_masks(6), "stripes": _stripe_masks()}
    masks, ids, seen = [], {}, set()
    for name, fam in families.items():
        ids[name] = []
        for m in fam:
            key = m.numpy().tobytes()
            if key not in seen:
                seen.add(key)
                ids[name].append(len(masks))
                masks.append(m)
    return Catalogue(torch.stack(masks), *(torch.tensor(ids[k]) for k in families))


def patches(palette: torch.Tensor = PALETTE) -> torch.Tensor:
    """The patch vocabulary (V, 3, 12, 12): index 0 the empty (black) cell, ``1 + mask * C + colour`` an object."""
    masks = catalogue().masks.float()
    obj = masks[:, None, None] * palette[None, :, :, None, None]  # (M, C, 3, 12, 12)
    return torch.cat([torch.zeros(1, 3, CELL, CELL), obj.flatten(0, 1)])


def vocabulary_size(n_colours: int = len(PALETTE)) -> int:
    return 1 + len(catalogue().masks) * n_colours


def render(seq: torch.Tensor, palette: torch.Tensor = PALETTE) -> torch.Tensor:
    """Boards (B, 3, 36, 36) of index sequences (B, 9), cells in raster order."""
    checks.tensor(seq, "seq", ndim=2)
    if seq.shape[1] != GRID * GRID:
        raise ValueError(f"seq must hold {GRID * GRID} cells per board, got {seq.shape[1]}")
    p = patches(palette)[seq]  # (B, 9, 3, 12, 12)
    B = seq.shape[0]
    return p.view(B, GRID, GRID, 3, CELL, CELL).permute(0, 3, 1, 4, 2, 5).reshape(B, 3, GRID * CELL, GRID * CELL)


def objects(seq: torch.Tensor, n_colours: int = len(PALETTE)):
    """(mask, colour) of each cell of ``seq``; -1 for empty cells."""
    o = seq - 1
    return torch.where(seq > 0, o // n_colours, -1), torch.where(seq > 0, o % n_colours, -1)


# --------------------------------------------------------------------------------------------- sampling helpers
def _perms(batch: int, n: int, g) -> torch.Tensor:
    return torch.rand(batch, n, generator=g).argsort(1)


def _objects(shapes: torch.Tensor, batch: int, k: int, g, n_colours: int = len(PALETTE)) -> torch.Tensor:
    """``batch`` rows of ``k`` distinct objects (patch indices) with masks from ``shapes``."""
    shapes = checks.tensor(shapes, "shapes", ndim=1)
    pool = (1 + shapes[:, None] * n_colours + torch.arange(n_colours)).flatten()
    if len(pool) < k:
        raise ValueError(f"shapes must allow at least {k} distinct objects, got {len(pool)}")
    return pool[torch.rand(batch, len(pool), generator=g).topk(k, 1).indices]


def _place(objs: torch.Tensor, cells: torch.Tensor) -> torch.Tensor:
    """Boards (B, 9) with ``objs`` (B, k) in ``cells`` (B, k) and empty cells elsewhere."""
    return torch.zeros(objs.shape[0], GRID * GRID, dtype=torch.long).scatter(1, cells, objs)


def _balanced(batch: int, g) -> torch.Tensor:
    """Labels 0/1, half each (the odd one out at random), in random order."""
    return ((torch.arange(batch) + torch.randint(2, (1,), generator=g)) % 2)[torch.randperm(batch, generator=g)]


LINES = torch.tensor([[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]])
"""The 8 straight lines of the grid, each as (end, middle, end) cells."""
OFF_LINE = torch.tensor([c for c in combinations(range(9), 3) if sorted(c) not in [sorted(x) for x in LINES.tolist()]])
"""The 76 triples of cells that are not on a line."""


# --------------------------------------------------------------------------------------------- the 7 rules
def same(shapes, batch: int, g=None):
    """Three objects in random cells; label 1 iff two of them are the same (shape, orientation and colour)."""
    o = _objects(shapes, batch, 3, g)
    y = _balanced(batch, g)
    o[:, 2] = torch.where(y == 1, o[:, 0], o[:, 2])
    return _place(o, _perms(batch, 9, g)[:, :3]), y


def between(shapes, batch: int, g=None):
    """Three objects; label 1 iff they lie on a straight line whose outer two are the same. Negatives: half on a line
    with different outer objects, half a same pair and a third object not on a line."""
    o = _objects(shapes, batch, 3, g)
    y = _balanced(batch, g)
    on_line = (y == 1) | (torch.rand(batch, generator=g) < 0.5)
    o[:, 2] = torch.where(y == 1, o[:, 0], o[:, 2])  # outer objects o0, o2; middle o1
    o[:, 2] = torch.where(~on_line, o[:, 0], o[:, 2])  # off-line negatives keep a same pair
    cells = torch.where(
        on_line[:, None],
        LINES[torch.randint(len(LINES), (batch,), generator=g)],
        OFF_LINE[torch.randint(len(OFF_LINE), (batch,), generator=g)],
    )
    return _place(o, cells), y


def _top_bottom(shapes, batch, g, count):
    """One object in the top row, three in the bottom row of which ``count[b]`` (0, 1 or 2) equal the top one."""
    o = _objects(shapes, batch, 4, g)
    top, bottom = o[:, 0], o[:, 1:].clone()
    slots = _perms(batch, 3, g)
    for k in range(2):
        hit = count > k
        bottom[torch.arange(batch), slots[:, k]] = torch.where(hit, top, bottom[torch.arange(batch), slots[:, k]])
    cells = torch.cat([torch.randint(3, (batch, 1), generator=g), torch.arange(6, 9).expand(batch, 3)], 1)
    return _place(torch.cat([top[:, None], bottom], 1), cells)


def occurs(shapes, batch: int, g=None):
    """An object in the top row, three in the bottom row; label 1 iff the top object also occurs in the bottom row."""
    y = _balanced(batch, g)
    return _top_bottom(shapes, batch, g, y), y


def xoccurs(shapes, batch: int, g=None):
    """As :func:`occurs`, but label 1 iff the top object occurs in the bottom row *exactly once* (the other two differ
    from it). Negatives: half with no occurrence, half with two."""
    y = _balanced(batch, g)
    count = torch.where(y == 1, 1, 2 * torch.randint(2, (batch,), generator=g))
    return _top_bottom(shapes, batch, g, count), y


ROW_PATTERNS = ["aaa", "aab", "aba", "abb", "abc"]
"""The five patterns of a row of three (every partition of three places)."""


def row_matching(shapes, batch: int, g=None):
    """Full top and bottom rows on disjoint objects, middle row empty; label 1 iff both rows follow the same pattern
    (AAA, AAB, ABA, ABB or ABC)."""
    o = _objects(shapes, batch, 6, g)
    y = _balanced(batch, g)
    idx = torch.tensor([[ord(ch) - ord("a") for ch in p] for p in ROW_PATTERNS])
    p1 = torch.randint(len(ROW_PATTERNS), (batch,), generator=g)
    p2 = torch.where(
        y == 1, p1, (p1 + 1 + torch.randint(len(ROW_PATTERNS) - 1, (batch,), generator=g)) % len(ROW_PATTERNS)
    )
    rows = torch.cat([torch.gather(o[:, :3], 1, idx[p1]), torch.gather(o[:, 3:], 1, idx[p2])], 1)
    return _place(rows, torch.tensor([0, 1, 2, 6, 7, 8]).expand(batch, 6)), y


def colour_shape(shapes, batch: int, g=None, n_colours: int = len(PALETTE)):
    """Two objects in random cells; four labels: ``2 * (colours differ) + (shapes differ)`` (a shape is a mask, so
    its orientation included)."""
    shapes = checks.tensor(shapes, "shapes", ndim=1)
    if len(shapes) < 2:
        raise ValueError(f"shapes must hold at least 2 masks, got {len(shapes)}")
    y = torch.randint(4, (batch,), generator=g)
    m = shapes[_perms(batch, len(shapes), g)[:, :2]]
    c = _perms(batch, n_colours, g)[:, :2]
    m[:, 1] = torch.where(y % 2 == 1, m[:, 1], m[:, 0])
    c[:, 1] = torch.where(y // 2 == 1, c[:, 1], c[:, 0])
    return _place(1 + m * n_colours + c, _perms(batch, 9, g)[:, :2]), y


def left_of(shapes, batch: int, g=None, n_colours: int = len(PALETTE)):
    """Two objects of different colours (so different luminance) in different columns; label 1 iff the darker one is
    left of the other (an antisymmetric relation)."""
    o = _objects(shapes, batch, 2, g)
    colour = (o - 1) % n_colours
    c = _perms(batch, n_colours, g)[:, :2]
    o = o - colour + c  # two distinct colours
    dark_first = LUMINANCE[c[:, 0]] < LUMINANCE[c[:, 1]]
    cols = _perms(batch, 3, g)[:, :2].sort(1).values  # left column first
    rows = torch.randint(3, (batch, 2), generator=g)
    y = _balanced(batch, g)
    left_is_first = (y == 1) == dark_first  # put the darker object left iff y = 1
    o = torch.where(left_is_first[:, None], o, o.flip(1))
    return _place(o, rows * 3 + cols), y


GAMES = {
    "same": (same, 2),
    "between": (between, 2),
    "occurs": (occurs, 2),
    "xoccurs": (xoccurs, 2),
    "row_matching": (row_matching, 2),
    "colour_shape": (colour_shape, 4),
    "left_of": (left_of, 2),
}
"""name -> (generator, number of classes); every board is a sequence of T = 9 patches."""


# ------------------------------------------------------------------------------------------ the rules, read off a board
def _occupied(seq: torch.Tensor) -> torch.Tensor:
    return (seq > 0).sum(1)


def is_same(seq: torch.Tensor) -> torch.Tensor:
    """1 iff two occupied cells hold the same object."""
    eq = (seq[:, :, None] == seq[:, None, :]) & (seq[:, :, None] > 0)
    return (eq & ~torch.eye(seq.shape[1], dtype=torch.bool)).flatten(1).any(1).long()


def is_between(seq: torch.Tensor) -> torch.Tensor:
    """1 iff the board holds exactly three objects, on a line, whose outer two are the same."""
    ends, mid = seq[:, LINES[:, [0, 2]]], seq[:, LINES[:, 1]]  # (B, 8, 2), (B, 8)
    hit = (ends[..., 0] == ends[..., 1]) & (ends[..., 0] > 0) & (mid > 0)
    return (hit.any(1) & (_occupied(seq) == 3)).long()


def _top_count(seq: torch.Tensor) -> torch.Tensor:
    top = seq[:, :3].max(1).values  # the one object of the top row
    return ((seq[:, 6:] == top[:, None]) & (top[:, None] > 0)).sum(1)


def is_occurs(seq: torch.Tensor) -> torch.Tensor:
    """1 iff the top-row object occurs in the bottom row."""
    return (_top_count(seq) >= 1).long()


def is_xoccurs(seq: torch.Tensor) -> torch.Tensor:
    """1 iff the top-row object occurs exactly once in the bottom row."""
    return (_top_count(seq) == 1).long()


def _pattern(row: torch.Tensor) -> torch.Tensor:
    """The equalities (0=1, 0=2, 1=2) of a row of three: its pattern up to renaming."""
    return torch.stack([row[:, 0] == row[:, 1], row[:, 0] == row[:, 2], row[:, 1] == row[:, 2]], 1)


def is_row_matching(seq: torch.Tensor) -> torch.Tensor:
    """1 iff the top and bottom rows follow the same pattern."""
    return (_pattern(seq[:, :3]) == _pattern(seq[:, 6:])).all(1).long()


def _two(seq: torch.Tensor):
    """The two objects of a two-object board, in raster order, and their cells."""
    cells = ((seq > 0) * 10.0 - torch.arange(seq.shape[1])).topk(2, 1).indices.sort(1).values
    return torch.gather(seq, 1, cells), cells


def colour_shape_label(seq: torch.Tensor, n_colours: int = len(PALETTE)) -> torch.Tensor:
    """``2 * (colours differ) + (masks differ)`` of the board's two objects."""
    o, _ = _two(seq)
    m, c = objects(o, n_colours)
    return 2 * (c[:, 0] != c[:, 1]).long() + (m[:, 0] != m[:, 1]).long()


def is_left_of(seq: torch.Tensor, n_colours: int = len(PALETTE)) -> torch.Tensor:
    """1 iff the darker of the two objects is in a column left of the other's."""
    o, cells = _two(seq)
    lum, col = LUMINANCE[objects(o, n_colours)[1]], cells % 3
    dark = lum.argmin(1)
    return (col[torch.arange(len(seq)), dark] < col[torch.arange(len(seq)), 1 - dark]).long()


RULES = {
    "same": is_same,
    "between": is_between,
    "occurs": is_occurs,
    "xoccurs": is_xoccurs,
    "row_matching": is_row_matching,
    "colour_shape": colour_shape_label,
    "left_of": is_left_of,
}
"""name -> the rule as a function of the boards (B, 9): what every generator's label must equal."""
