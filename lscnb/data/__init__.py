"""Data: synthetic tasks, MNIST with offline fallbacks, and the shared search path for real files."""

from .files import ChecksumError, cache_dir, data_roots, find
from .mnist import ImageSet, digits_sequences, load_mnist, pixel_sequences
from .synthetic import ADDING_BASELINE, adding_problem, copy_memory, copy_memory_baseline, denoise

__all__ = [
    "ADDING_BASELINE",
    "ChecksumError",
    "ImageSet",
    "adding_problem",
    "cache_dir",
    "copy_memory",
    "copy_memory_baseline",
    "data_roots",
    "denoise",
    "digits_sequences",
    "find",
    "load_mnist",
    "pixel_sequences",
]
from .text import (  # noqa: E402
    Corpus,
    batchify,
    bits_per_token,
    bptt_windows,
    have_ptb,
    load_ptb,
    markov_corpus,
    spell_chars,
)

__all__ += [
    "Corpus",
    "at_hand",
    "batchify",
    "bits_per_token",
    "bptt_windows",
    "have_ptb",
    "load_ptb",
    "markov_corpus",
    "spell_chars",
]


def at_hand() -> dict[str, bool]:
    """Which real data sets are on the data path (:func:`find`'s roots), by the folder of ``shared/data`` that holds
    each: a GPU machine has only what its call carried (``data/``), and a plan timed without a data set leaves the
    figures whose run length it sets open."""
    from .mnist import have_mnist
    from .objects import have_objects

    return {"mnist": have_mnist(), "ptb": have_ptb("char") and have_ptb("word"), "esbn_objects": have_objects()}
