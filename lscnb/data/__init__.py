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
from .text import Corpus, batchify, bits_per_token, bptt_windows, load_ptb, markov_corpus, spell_chars  # noqa: E402

__all__ += ["Corpus", "batchify", "bits_per_token", "bptt_windows", "load_ptb", "markov_corpus", "spell_chars"]
