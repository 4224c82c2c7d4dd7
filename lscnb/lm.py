"""Evaluation of a language model in bits per token (BPC for characters) and next-token accuracy, over a token
stream cut into truncated-BPTT windows with the state carried across them, as in the papers' code."""

from __future__ import annotations

import math

import torch
from torch import nn

from .data.text import batchify, bptt_windows


def next_token_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the next tokens ``targets`` (..., ) under ``logits`` (..., vocabulary)."""
    return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


@torch.no_grad()
def evaluate(
    model: nn.Module,
    ids: torch.Tensor,
    *,
    batch: int = 10,
    length: int = 150,
    device="cpu",
    max_windows: int | None = None,
) -> dict:
    """Mean cross-entropy (nats), bits per token and accuracy of next-token prediction on a token stream."""
    model.eval()
    rows = batchify(ids, batch).to(device)
    total, correct, count, states = 0.0, 0, 0, None
    for k, (x, y) in enumerate(bptt_windows(rows, length)):
        if max_windows is not None and k >= max_windows:
            break
        logits, states = model(x, states)
        total += float(next_token_loss(logits, y)) * y.numel()
        correct += int((logits.argmax(-1) == y).sum())
        count += y.numel()
    model.train()
    nats = total / max(count, 1)
    return {"nats": nats, "bits": nats / math.log(2), "accuracy": correct / max(count, 1)}
