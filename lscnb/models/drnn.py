"""The six deep RNNs (d-RNNs) of the LSC paper's Fig. 3, with its initialisations and parameter conventions (App. H).

* ``sigma``, ``relu``, ``swish``: ``h = a(W_rec h + W_in u + b)``; W_in Glorot-uniform, W_rec orthogonal, b
  Glorot-uniform (so units are not off at zero input). Swish replaces ReLU on PTB in the paper.
* ``gru``: :class:`~lscnb.models.GRUCell` (reset-after, two bias vectors: the convention Tab. S1's counts imply);
  W Glorot-uniform, U orthogonal, biases zero.
* ``lstm``: a single bias per gate (Keras; Tab. S1's counts imply it); W Glorot-uniform, U orthogonal, biases zero
  (forget bias 0, as the paper says, not Keras' 1).
* ``alif+``, ``alif-pm``: :class:`~lscnb.models.spiking.ALIFCell` with positive or symmetric adaptation.

:class:`DRNN` is a stack of such cells with a linear readout at every step (classification), or, for language
modelling, an input embedding whose transpose is also the output map (tied, no readout): Tab. S1's PTB models.
"""

from __future__ import annotations

import torch
from torch import nn

from .. import checks
from .gated import GRUCell, LSTMCell
from .rnn import RNNCell, Stack
from .spiking import ALIFCell, glorot_uniform_

KINDS = ("sigma", "relu", "swish", "gru", "lstm", "alif+", "alif-pm")
SPIKING = ("alif+", "alif-pm")


def _orthogonal_blocks_(weight: torch.Tensor, blocks: int, generator) -> None:
    """Each of the ``blocks`` stacked (n, n) recurrent blocks orthogonal (Keras' orthogonal recurrent kernel)."""
    n = weight.shape[1]
    with torch.no_grad():
        for k in range(blocks):
            q, r = torch.linalg.qr(torch.randn(n, n, generator=generator))
            weight[k * n : (k + 1) * n].copy_(q * torch.sign(torch.diagonal(r)))


class SingleBiasLSTMCell(LSTMCell):
    """:class:`~lscnb.models.LSTMCell` with one bias per gate (``bias_hh`` fixed at zero, not a parameter)."""

    def __init__(self, input_size: int, hidden_size: int):
        super().__init__(input_size, hidden_size)
        del self.bias_hh
        self.register_buffer("bias_hh", torch.zeros(4 * hidden_size))


def make_drnn_cell(kind: str, input_size: int, hidden_size: int, *, seed: int = 0, **alif_options) -> nn.Module:
    """One layer of kind ``kind`` (see :data:`KINDS`) with the paper's initialisation."""
    checks.one_of(kind, KINDS, "kind")
    g = torch.Generator().manual_seed(seed)
    if kind in SPIKING:
        return ALIFCell(
            input_size, hidden_size, beta_init="positive" if kind == "alif+" else "symmetric", seed=seed, **alif_options
        )
    if kind in ("sigma", "relu", "swish"):
        cell = RNNCell(input_size, hidden_size, activation="relu" if kind == "relu" else "sigmoid")
        if kind == "swish":
            cell.activation, cell.phi = "swish", nn.functional.silu
        glorot_uniform_(cell.weight_ih, g)
        glorot_uniform_(cell.bias, g)
        _orthogonal_blocks_(cell.weight_hh, 1, g)
        return cell
    cell = GRUCell(input_size, hidden_size) if kind == "gru" else SingleBiasLSTMCell(input_size, hidden_size)
    glorot_uniform_(cell.weight_ih, g)
    _orthogonal_blocks_(cell.weight_hh, cell.gates, g)
    with torch.no_grad():
        cell.bias_ih.zero_()
        cell.bias_hh.zero_()
    return cell


class DRNN(nn.Module):
    """A stack of d-RNN layers of widths ``widths``.

    ``output_size`` given: a linear readout (with bias) at every step, logits (B, T, output_size) from inputs
    (B, T, input_size). ``vocab`` given instead: token ids (B, T) go through an embedding of size ``input_size``,
    the last width must equal it, and the logits are the top layer's output times the embedding's transpose.
    """

    def __init__(
        self,
        kind: str,
        input_size: int,
        widths,
        *,
        output_size: int | None = None,
        vocab: int | None = None,
        seed: int = 0,
        **alif_options,
    ):
        super().__init__()
        self.kind = checks.one_of(kind, KINDS, "kind")
        widths = [checks.positive_int(w, "widths") for w in widths]
        if not widths:
            raise ValueError("widths must hold at least one width")
        if (output_size is None) == (vocab is None):
            raise ValueError("give exactly one of output_size (classification) and vocab (tied language model)")
        sizes = [checks.positive_int(input_size, "input_size")] + widths
        self.stack = Stack(
            [
                make_drnn_cell(kind, a, b, seed=seed + 1000 * l, **alif_options)
                for l, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))
            ]
        )
        if vocab is not None:
            if widths[-1] != input_size:
                raise ValueError(
                    f"a tied language model needs widths[-1] == input_size, got {widths[-1]} and {input_size}"
                )
            self.embed = nn.Embedding(checks.positive_int(vocab, "vocab"), input_size)
            self.readout = None
        else:
            self.embed = None
            self.readout = nn.Linear(widths[-1], checks.positive_int(output_size, "output_size"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.embed(x) if self.embed is not None else x
        top = self.stack.cells[-1].output(self.stack(h)[-1])
        return top @ self.embed.weight.T if self.embed is not None else self.readout(top)


def count_parameters(module: nn.Module) -> int:
    """Number of trainable scalars."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
