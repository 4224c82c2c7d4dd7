"""Character-level Penn Treebank in a fraction of a second: the same token ids as ``load_ptb("char")``.

Mikolov's character files write one character per token (``<unk>`` is spelled ``< u n k >``), tokens separated
by spaces, one sentence per line. :func:`load_ptb_chars` therefore drops the spaces of the raw bytes and turns
each line end into ``<eos>`` with numpy, instead of splitting five million tokens in Python; the vocabulary
(sorted as strings, 50 symbols) and ids equal those of :func:`lscnb.data.text.load_ptb` (unit test). Without
the files it returns whatever ``load_ptb("char")`` returns (a download, or the offline stand-in, which says so).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from . import files
from .text import EOS, PTB_SHA256, Corpus, load_ptb

SPLITS = ("train", "valid", "test")


def _symbols(raw: bytes) -> np.ndarray:
    """The token bytes of one file, ``\\n`` standing for ``<eos>`` (blank lines dropped, as ``load_ptb``)."""
    b = np.frombuffer(raw, dtype=np.uint8)
    b = b[(b != ord(" ")) & (b != ord("\t")) & (b != ord("\r"))]
    newline = b == ord("\n")
    blank = newline & np.concatenate([[True], newline[:-1]])  # a line end right after another (or at the start)
    return b[~blank]


@functools.lru_cache(maxsize=2)
def load_ptb_chars(*, download: bool = True, fallback: bool = True) -> Corpus:
    """PTB characters as token ids (``<eos>`` at each line end): train, valid, test and the 50-symbol vocabulary."""
    paths = [files.find(f"ptb/ptb.char.{s}.txt", PTB_SHA256[f"ptb.char.{s}.txt"]) for s in SPLITS]
    if any(p is None for p in paths):
        return load_ptb("char", download=download, fallback=fallback)
    syms = [_symbols(p.read_bytes()) for p in paths]
    codes = np.unique(syms[0])
    names = [EOS if c == ord("\n") else chr(c) for c in codes]
    order = sorted(range(len(names)), key=lambda i: names[i])
    lookup = np.full(256, -1, dtype=np.int64)
    lookup[codes[order]] = np.arange(len(order))
    ids = []
    for s, split in zip(syms, SPLITS):
        out = lookup[s]
        if (out < 0).any():
            raise ValueError(f"the {split} split has symbols absent from the training split")
        ids.append(torch.from_numpy(out))
    return Corpus(*ids, [names[i] for i in order], "Penn Treebank (char level, Mikolov's files)")
