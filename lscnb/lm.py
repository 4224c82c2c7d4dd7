"""Language modelling with any recurrent cell: a token model, truncated-BPTT training, and evaluation in
bits per token (BPC for characters) and next-token accuracy.

Used by the chapters that train on Penn Treebank (LSC, nnRNN, relevancy screening). The state is carried
across windows (detached), as in the usual truncated-BPTT set-up of the papers' code.
"""
from __future__ import annotations

import math
import time

import torch
from torch import nn
from tqdm.auto import tqdm

from . import checks
from .data.text import batchify, bptt_windows
from .models.rnn import Stack
from .train import History, make_optimizer


class CellLM(nn.Module):
    """Embedding -> stack of cells -> linear readout over the vocabulary at every step."""

    def __init__(self, vocab_size: int, cells, *, embedding: int | None = None):
        super().__init__()
        self.vocab_size = checks.positive_int(vocab_size, "vocab_size")
        self.stack = cells if isinstance(cells, Stack) else Stack(cells)
        first = self.stack.cells[0]
        width = embedding if embedding is not None else first.input_size
        if width != first.input_size:
            raise ValueError(f"embedding must equal the first cell's input_size {first.input_size}, got {width}")
        self.embed = nn.Embedding(vocab_size, width)
        top = self.stack.cells[-1]
        out = top.output(torch.zeros(1, top.state_size)).shape[-1]
        self.readout = nn.Linear(out, vocab_size)

    def forward(self, tokens: torch.Tensor, states=None):
        """Logits (B, T, V) and the last state of every layer (to carry into the next window)."""
        seqs = self.stack(self.embed(tokens), states)
        top = self.stack.cells[-1]
        return self.readout(top.output(seqs[-1])), [s[:, -1] for s in seqs]


def _loss(logits, targets):
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


@torch.no_grad()
def evaluate(model: nn.Module, ids: torch.Tensor, *, batch: int = 10, length: int = 150, device="cpu",
             max_windows: int | None = None) -> dict:
    """Mean cross-entropy (nats), bits per token and accuracy of next-token prediction on a token stream."""
    model.eval()
    rows = batchify(ids, batch).to(device)
    total, correct, count, states = 0.0, 0, 0, None
    for k, (x, y) in enumerate(bptt_windows(rows, length)):
        if max_windows is not None and k >= max_windows:
            break
        logits, states = model(x, states)
        total += float(_loss(logits, y)) * y.numel()
        correct += int((logits.argmax(-1) == y).sum())
        count += y.numel()
    model.train()
    nats = total / max(count, 1)
    return {"nats": nats, "bits": nats / math.log(2), "accuracy": correct / max(count, 1)}


def train_lm(model: nn.Module, train_ids: torch.Tensor, *, steps: int, batch: int = 32, length: int = 150,
             lr: float = 1e-3, optimizer="adam", optimizer_kwargs: dict | None = None, clip: float | None = 1.0,
             device="cpu", valid_ids: torch.Tensor | None = None, eval_every: int | None = None,
             eval_windows: int | None = 50, progress: bool = True, desc: str = "lm",
             after_step=None) -> History:
    """Truncated BPTT over ``train_ids`` for ``steps`` windows (cycling through epochs); NaN/inf stops the run
    and is recorded as divergence. ``valid_ids`` are evaluated every ``eval_every`` steps and at the end."""
    steps = checks.positive_int(steps, "steps")
    rows = batchify(train_ids, checks.positive_int(batch, "batch")).to(device)
    opt = make_optimizer(model.parameters(), optimizer, lr, **(optimizer_kwargs or {}))
    hist, t0, states = History(), time.perf_counter(), None
    windows = bptt_windows(rows, length)
    params = [p for p in model.parameters() if p.requires_grad]
    for k in tqdm(range(steps), desc=desc, disable=not progress, leave=False):
        try:
            x, y = next(windows)
        except StopIteration:
            windows, states = bptt_windows(rows, length), None
            x, y = next(windows)
        if states is not None and states[0].shape[0] != x.shape[0]:
            states = None
        logits, states = model(x, states)
        states = [s.detach() for s in states]
        loss = _loss(logits, y)
        value = float(loss.detach())
        if not math.isfinite(value):
            hist.diverged, hist.diverged_step = True, k
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = float(torch.nn.utils.clip_grad_norm_(params, clip if clip is not None else float("inf")))
        if not math.isfinite(gnorm):
            hist.diverged, hist.diverged_step = True, k
            break
        opt.step()
        if after_step is not None:
            after_step(model, k)
        hist.step.append(k)
        hist.loss.append(value)
        hist.grad_norm.append(gnorm)
        if valid_ids is not None and eval_every and (k + 1) % eval_every == 0 and k + 1 < steps:
            hist.evals.append({"step": k + 1, **evaluate(model, valid_ids, length=length, device=device,
                                                          max_windows=eval_windows)})
    if valid_ids is not None and not hist.diverged:
        hist.evals.append({"step": steps, **evaluate(model, valid_ids, length=length, device=device,
                                                      max_windows=eval_windows)})
    hist.wall_time_s = time.perf_counter() - t0
    return hist
