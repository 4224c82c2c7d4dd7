"""Recurrent cells written once and shared by every chapter (see :mod:`lscnb.models.rnn` for the convention)."""

from __future__ import annotations

from .. import checks
from .activations import ACTIVATIONS, get_activation
from .gated import GRUCell, LSTMCell
from .rnn import RNNCell, SequenceModel, Stack, recurrent_matrix, run_cell

CELLS = {"rnn": RNNCell, "lstm": LSTMCell, "gru": GRUCell}


def make_cell(kind: str, input_size: int, hidden_size: int, **options):
    """A cell by name: ``rnn`` (options of :class:`RNNCell`), ``lstm`` or ``gru``."""
    return CELLS[checks.one_of(kind, CELLS, "kind")](input_size, hidden_size, **options)


__all__ = [
    "ACTIVATIONS",
    "CELLS",
    "GRUCell",
    "LSTMCell",
    "RNNCell",
    "SequenceModel",
    "Stack",
    "get_activation",
    "make_cell",
    "recurrent_matrix",
    "run_cell",
]
