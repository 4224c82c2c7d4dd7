"""Relational reasoning tasks of the CoRelNet chapter (thesis ch. 5, 7; the ESBN task suite), as index sequences.

Every generator draws object indices from a set of allowed shapes (the train or test shapes of a held-out
split) and returns ``(seq (B, T) long, label (B,) long)``. ``split(m)`` holds out ``m`` of the 100 shapes.
"""

from __future__ import annotations

import torch

from .. import checks


def split(m: int, n: int = 100, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(train shapes, test shapes): ``n - m`` and ``m`` shapes, disjoint; ``m = 0`` tests on the training shapes."""
    m = checks.positive_int(m, "m", allow_zero=True)
    if m > n - 2:
        raise ValueError(f"m must leave at least 2 training shapes, got m={m} of n={n}")
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    return (perm, perm) if m == 0 else (perm[m:], perm[:m])


def _distinct(shapes, batch, k, g):
    """``batch`` rows of ``k`` distinct shapes."""
    if len(shapes) < k:
        raise ValueError(f"shapes must hold at least {k} objects for this task, got {len(shapes)}")
    return shapes[_perms(batch, len(shapes), g)[:, :k]]


def _perms(batch: int, n: int, g) -> torch.Tensor:
    """``batch`` independent random permutations of ``range(n)`` (one vectorised draw)."""
    return torch.rand(batch, n, generator=g).argsort(1)


def same_different(shapes, batch: int, g=None):
    """Two objects; label 0 = same, 1 = different (half each)."""
    o = _distinct(shapes, batch, 2, g)
    label = torch.arange(batch) % 2
    seq = torch.stack([o[:, 0], torch.where(label == 0, o[:, 0], o[:, 1])], 1)
    return seq, label


def rmts(shapes, batch: int, g=None):
    """Relational match-to-sample: source pair + two target pairs; label = index of the target pair whose
    relation (same/different) matches the source's."""
    o = _distinct(shapes, batch, 5, g)
    same = torch.arange(batch) % 2 == 0
    A, B, C, D, E = o.unbind(1)
    src = torch.where(same[:, None], torch.stack([A, A], 1), torch.stack([A, B], 1))
    match = torch.where(same[:, None], torch.stack([B, B], 1), torch.stack([C, C], 1))
    other = torch.where(same[:, None], torch.stack([C, D], 1), torch.stack([D, E], 1))
    # "different" trials: the matching target is a different pair; "same" trials: a same pair
    match, other = (
        torch.where(same[:, None], match, torch.stack([D, E], 1)),
        torch.where(same[:, None], other, torch.stack([C, C], 1)),
    )
    label = torch.randint(2, (batch,), generator=g)
    first = torch.where(label[:, None] == 0, match, other)
    second = torch.where(label[:, None] == 0, other, match)
    return torch.cat([src, first, second], 1), label


def distribution_of_3(shapes, batch: int, g=None):
    """Row of three distinct objects, a permutation of them with the last missing, four options (the three and
    one other, shuffled); label = the option that completes the second row."""
    o = _distinct(shapes, batch, 4, g)
    row1 = o[:, :3]
    perm = _perms(batch, 3, g)
    row2 = torch.gather(row1, 1, perm)
    answer = row2[:, 2]
    opts_perm = _perms(batch, 4, g)
    options = torch.gather(o, 1, opts_perm)
    label = (options == answer[:, None]).float().argmax(1)
    return torch.cat([row1, row2[:, :2], options], 1), label


def identity_rules(shapes, batch: int, g=None):
    """ABA / ABB / AAA rows: the second row's first two objects (new ones) and four options; label = the option
    that completes the second row with the first row's pattern."""
    o = _distinct(shapes, batch, 4, g)
    pattern = torch.arange(batch) % 3  # 0: AAA, 1: ABA, 2: ABB
    o0, o1, o2, o3 = o.unbind(1)
    row1 = torch.stack(
        [
            torch.where(pattern == 0, o0, o0),
            torch.where(pattern == 0, o0, o1),
            torch.where(pattern == 1, o0, torch.where(pattern == 0, o0, o1)),
        ],
        1,
    )
    row2 = torch.stack([torch.where(pattern == 0, o1, o2), torch.where(pattern == 0, o1, o3)], 1)
    answer = torch.where(pattern == 0, o1, torch.where(pattern == 1, o2, o3))
    opts_perm = _perms(batch, 4, g)
    options = torch.gather(o, 1, opts_perm)
    label = (options == answer[:, None]).float().argmax(1)
    return torch.cat([row1, row2, options], 1), label


def comparison(shapes, batch: int, g=None, rank: torch.Tensor | None = None):
    """Two distinct objects; label 1 iff the first ranks above the second in a fixed hidden order (an
    antisymmetric relation, thesis ch. 7). Swap-balanced: every pair appears in both orders."""
    rank = rank if rank is not None else torch.arange(100)
    o = _distinct(shapes, (batch + 1) // 2, 2, g)
    o = torch.cat([o, o.flip(1)])[:batch]
    return o, (rank[o[:, 0]] > rank[o[:, 1]]).long()


TASKS = {
    "same_different": (same_different, 2, 2),
    "rmts": (rmts, 6, 2),
    "dist3": (distribution_of_3, 9, 4),
    "identity_rules": (identity_rules, 9, 4),
}
"""name -> (generator, sequence length T, number of classes)."""


# -------------------------------------------------------------------------------------------- unseen relations (§5.4.3)
def _fill(objs: torch.Tensor, codes: list, which: torch.Tensor) -> torch.Tensor:
    """Rows ``codes[which[b]]`` (letter patterns such as ``"aaba"``) filled with ``objs[b]``: letter ``a`` is
    ``objs[b, 0]``, ``b`` is ``objs[b, 1]`` and so on."""
    idx = torch.tensor([[ord(ch) - ord("a") for ch in code] for code in codes])[which]
    return torch.gather(objs, 1, idx)


def _shuffled(o: torch.Tensor, answer: torch.Tensor, g):
    """All objects of ``o`` in a random order per row, and the index of ``answer`` among them."""
    perm = torch.rand(o.shape, generator=g).argsort(1)
    options = torch.gather(o, 1, perm)
    return options, (options == answer[:, None]).float().argmax(1)


SAME_DIFF6 = {
    "train": {
        "same": [("aaa", "aaa"), ("abb", "abb"), ("aba", "aba")],
        "different": [("aaa", "baa"), ("baa", "aaa"), ("baa", "aba"), ("aba", "baa"), ("aba", "aaa"), ("aaa", "aba")],
    },
    "test": {
        "same": [("aab", "aab")],
        "different": [("aaa", "aab"), ("aab", "aaa"), ("aab", "baa"), ("baa", "aab"), ("aab", "aba"), ("aba", "aab")],
    },
}
RMTS3 = {"train": ["aaa", "aba", "abb"], "test": ["aab", "abc"]}
IDENTITY4 = {"train": ["aaaa", "abaa", "aaba", "baaa", "abba", "abab", "aabb"], "test": ["abca", "baca", "bcaa"]}
IDENTITY4_MISSING = {"train": ["aaaa", "aaba", "baaa", "abba", "aabb"], "test": IDENTITY4["test"]}


def _phase(phase: str) -> str:
    return checks.one_of(phase, ("train", "test"), "phase")


def same_different6(shapes, batch: int, g=None, phase: str = "train"):
    """Two triplets over two objects A, B; label 0 iff they are identical element-wise. Training and test use
    disjoint triplet patterns (test: the unseen pattern AAB), half same, half different."""
    pats = SAME_DIFF6[_phase(phase)]
    o = _distinct(shapes, batch, 2, g)
    label = torch.arange(batch) % 2
    same, diff = pats["same"], pats["different"]
    pairs = same + diff
    pick = torch.where(
        label == 0,
        torch.randint(len(same), (batch,), generator=g),
        len(same) + torch.randint(len(diff), (batch,), generator=g),
    )
    return torch.cat([_fill(o, [p[0] for p in pairs], pick), _fill(o, [p[1] for p in pairs], pick)], 1), label


def rmts3(shapes, batch: int, g=None, phase: str = "train"):
    """Relational match-to-sample with triplets: a source triplet and two target triplets on fresh objects, one
    with the source's pattern, one with another pattern of the same phase; label = index of the matching one.
    Train patterns AAA, ABA, ABB; test patterns AAB, ABC (never seen in training)."""
    pats = RMTS3[_phase(phase)]
    k = max(len(set(p)) for p in pats)
    o = _distinct(shapes, batch, 3 * k, g)
    src = torch.randint(len(pats), (batch,), generator=g)
    other = (src + 1 + torch.randint(len(pats) - 1, (batch,), generator=g)) % len(pats)
    source, match, distract = (_fill(o[:, i * k : (i + 1) * k], pats, w) for i, w in enumerate((src, src, other)))
    label = torch.randint(2, (batch,), generator=g)
    first = torch.where(label[:, None] == 0, match, distract)
    second = torch.where(label[:, None] == 0, distract, match)
    return torch.cat([source, first, second], 1), label


def identity_rules4(shapes, batch: int, g=None, phase: str = "train", missing: bool = False):
    """A row of four objects with a pattern code, the first three of a second row with the same code on new
    objects, and six options (all six objects, shuffled); label = the option completing the second row. Training
    codes have at most two distinct objects, test codes three (``missing`` drops abaa and abab from training)."""
    pats = (IDENTITY4_MISSING if missing else IDENTITY4)[_phase(phase)]
    o = _distinct(shapes, batch, 6, g)
    which = torch.randint(len(pats), (batch,), generator=g)
    row1, row2 = _fill(o[:, :3], pats, which), _fill(o[:, 3:], pats, which)
    options, label = _shuffled(o, row2[:, 3], g)
    return torch.cat([row1, row2[:, :3], options], 1), label


UNSEEN = {
    "rmts3": (rmts3, 9, 2),
    "same_diff6": (same_different6, 6, 2),
    "identity_rules4": (identity_rules4, 13, 6),
    "identity_rules4_missing": (lambda *a, **k: identity_rules4(*a, missing=True, **k), 13, 6),
}
"""Unseen-relation tasks (Fig. 5.5): name -> (generator taking ``phase``, T, classes)."""


# --------------------------------------------------------------------------------------------- appendix C.3, C.4
def identity_rules4_flipped(shapes, batch: int, g=None, phase: str = "train", missing: bool = False):
    """Identity rules 4 with training and test codes swapped (thesis App. C.3): training on the three-object codes
    abca, baca, bcaa (``missing`` drops abca), testing on the codes with at most two distinct objects."""
    pats = {"train": [c for c in IDENTITY4["test"] if not (missing and c == "abca")], "test": IDENTITY4["train"]}
    pats = pats[_phase(phase)]
    o = _distinct(shapes, batch, 6, g)
    which = torch.randint(len(pats), (batch,), generator=g)
    row1, row2 = _fill(o[:, :3], pats, which), _fill(o[:, 3:], pats, which)
    options, label = _shuffled(o, row2[:, 3], g)
    return torch.cat([row1, row2[:, :3], options], 1), label


def _keeps_head(perm: torch.Tensor, n: int) -> torch.Tensor:
    """Whether each permutation (rows of ``perm``) maps the first ``n - 3`` positions onto themselves."""
    return (perm[:, : n - 3] < n - 3).all(1)


def distribution_of_n(shapes, batch: int, g=None, phase: str | None = None, n: int = 10):
    """Distribution-of-N (thesis App. C.4): a row of ``n`` distinct objects, a permutation of it with the last
    missing, ``n + 1`` options; label = the option completing the second row. ``phase`` ``None``: any permutation;
    ``"train"``: only permutations that keep the set of the first ``n - 3`` objects; ``"test"``: all the others."""
    n = checks.positive_int(n, "n")
    if n < 4:
        raise ValueError(f"n must be at least 4, got {n}")
    o = _distinct(shapes, batch, n + 1, g)
    perm = _perms(batch, n, g)
    if phase is not None and _phase(phase) == "train":
        perm = torch.cat([_perms(batch, n - 3, g), n - 3 + _perms(batch, 3, g)], 1)
    elif phase == "test":
        bad = _keeps_head(perm, n)
        while bad.any():  # rejection: 1 in C(n, 3) permutations keeps the head
            perm[bad] = _perms(int(bad.sum()), n, g)
            bad = _keeps_head(perm, n)
    row1 = o[:, :n]
    row2 = torch.gather(row1, 1, perm)
    options, label = _shuffled(o, row2[:, -1], g)
    return torch.cat([row1, row2[:, :-1], options], 1), label


APPENDIX_UNSEEN = {
    "identity_rules4_flipped": (identity_rules4_flipped, 13, 6),
    "identity_rules4_flipped_missing": (lambda *a, **k: identity_rules4_flipped(*a, missing=True, **k), 13, 6),
    "dist10": (lambda *a, phase="train", **k: distribution_of_n(*a, **k), 30, 11),
    "dist10_restricted": (distribution_of_n, 30, 11),
}
"""The appendix's variants (Figs. C.1, C.2): name -> (generator taking ``phase``, T, classes). ``dist10`` draws any
permutation in both phases; ``dist10_restricted`` trains and tests on disjoint sets of permutations."""


# ------------------------------------------------------------------------------------------- spurious features (§5.4.3)
def colours(n: int = 100, seed: int = 0) -> torch.Tensor:
    """``n`` RGB colours in [0, 1]^3, as the authors' code draws them (``RandomState(0).uniform(size=(n, 3))``)."""
    import numpy as np

    return torch.from_numpy(np.random.RandomState(seed).uniform(size=(checks.positive_int(n, "n"), 3))).float()


def coloured(fn, n_colours: int = 100, n_shapes: int = 100):
    """The task ``fn`` with a spurious feature: every object gets a colour drawn uniformly (with replacement) from
    ``n_colours``, independently of its shape and of the label. Sequences index (shape, colour) pairs as
    ``colour * n_shapes + shape``; the label still depends on the shapes only."""
    checks.positive_int(n_colours, "n_colours")

    def gen(shapes, batch: int, g=None, **kw):
        seq, y = fn(shapes, batch, g, **kw)
        return seq + n_shapes * torch.randint(n_colours, seq.shape, generator=g), y

    gen.__doc__ = f"{fn.__name__} with a random colour per object (index = colour * {n_shapes} + shape)."
    return gen


def separated(fn, n_colours: int = 100, n_shapes: int = 100):
    """The task ``fn`` with shape and colour given as separate objects (thesis App. C.6, Fig. C.4): each shape is
    followed by a colour drawn uniformly (with replacement) from ``n_colours``, independently of the label, so a
    sequence of ``T`` shapes becomes ``shape, colour, shape, colour, ...`` (``2T`` objects). Colour ``c`` is object
    ``n_shapes + c``; the label depends on the shapes only."""
    checks.positive_int(n_colours, "n_colours")
    checks.positive_int(n_shapes, "n_shapes")

    def gen(shapes, batch: int, g=None, **kw):
        seq, y = fn(shapes, batch, g, **kw)
        col = n_shapes + torch.randint(n_colours, seq.shape, generator=g)
        return torch.stack([seq, col], -1).flatten(1), y

    gen.__doc__ = f"{fn.__name__} with separated inputs: shape, colour (object {n_shapes} + colour), shape, colour, ..."
    return gen


SEPARATED = {"same_different_sep": (separated(same_different), 4, 2)}
"""Separated-input tasks (Fig. C.4): name -> (generator, T, classes)."""


# --------------------------------------------------------------------------------------------- sizes (ch. 7)
SIZE_PAIRS = {
    "comparison": [(0, 1), (1, 0), (1, 2), (2, 1), (0, 2), (2, 0)],
    "transitive_train": [(1, 2), (2, 1), (0, 1), (1, 0)],
    "transitive_test": [(0, 2), (2, 0)],
}
"""Size-index pairs (0 small, 1 medium, 2 large) of the comparison tasks (Fig. 7.2): transitive comparison trains on
(M, L), (L, M), (S, M), (M, S) and tests on (S, L), (L, S)."""


def size_comparison(shapes, batch: int, g=None, pairs=None, n_shapes: int = 100):
    """Two copies of one shape at two sizes; label = the position of the larger (an antisymmetric relation). Indices
    ``size * n_shapes + shape`` (see :func:`lscnb.data.objects.resized`); ``pairs`` of size indices are drawn
    uniformly; every sample also appears with its two objects swapped (a swap-balanced task)."""
    pairs = torch.tensor(SIZE_PAIRS["comparison"] if pairs is None else pairs)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or bool((pairs[:, 0] == pairs[:, 1]).any()):
        raise ValueError(f"pairs must be a list of (size, size) pairs of distinct sizes, got {pairs.tolist()}")
    half = (batch + 1) // 2
    shape = shapes[torch.randint(len(shapes), (half,), generator=g)]
    p = pairs[torch.randint(len(pairs), (half,), generator=g)]
    p, shape = torch.cat([p, p.flip(1)])[:batch], torch.cat([shape, shape])[:batch]
    return p * n_shapes + shape[:, None], (p[:, 1] > p[:, 0]).long()
