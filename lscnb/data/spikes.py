"""Spike-train tasks of the LSC paper's Fig. 3, offline: spike-latency digits (sl-MNIST) and a synthetic stand-in for
the Spiking Heidelberg Digits (SHD, which needs a download).

sl-MNIST (Zenke & Vogels 2021; the paper's App. G): each pixel ``x`` in [0, 1] fires at most one spike, at latency
``T(x) = tau log(x / (x - thr))`` for ``x > thr`` (none otherwise), binned in
``ceil(t_max / dt)`` steps of ``dt``; each frame is then shown ``repeat`` times (the paper's "time step repeat" 2).
"""

from __future__ import annotations

import math

import torch

from .. import checks


def latency_encode(
    x: torch.Tensor, *, tau: float = 50.0, thr: float = 0.2, t_max: float = 50.0, dt: float = 1.0, repeat: int = 1
) -> torch.Tensor:
    """Latency code: intensities ``x`` (N, C) in [0, 1] -> spike trains (N, steps * repeat, C), ``steps =
    ceil(t_max / dt)``. Each channel spikes once, at ``t = tau log(x / (x - thr))``, when a leaky membrane
    (time constant ``tau``) charged by the constant input ``x`` reaches ``thr``; a channel with ``x <= thr``, or
    whose spike falls in step ``steps`` or later (``t >= steps * dt``), stays silent. ``repeat`` repeats every step
    ``repeat`` times."""
    checks.tensor(x, "x", ndim=2)
    for name, value in (("tau", tau), ("thr", thr), ("t_max", t_max), ("dt", dt)):
        checks.positive_float(value, name)
    repeat = checks.positive_int(repeat, "repeat")
    steps = math.ceil(t_max / dt)
    x = x.float().clamp(0, 1)
    fires = x > thr
    latency = tau * torch.log(x / (x - thr).clamp_min(1e-12))
    idx = torch.where(fires, torch.floor(latency / dt).clamp(max=steps), torch.full_like(x, float(steps))).long()
    out = torch.zeros(x.shape[0], steps + 1, x.shape[1])
    out.scatter_(1, idx.unsqueeze(1), 1.0)
    return out[:, :steps].repeat_interleave(repeat, dim=1)


def spike_patterns(
    n: int,
    *,
    classes: int = 20,
    channels: int = 64,
    steps: int = 100,
    rate: float = 0.02,
    peak: float = 0.5,
    events: int = 6,
    jitter: int = 2,
    seed: int = 0,
    template_seed: int = 1234,
):
    """A synthetic stand-in for SHD: each class is a fixed set of ``events`` (channel, time) bursts; a sample
    fires with probability ``peak`` at each burst (shifted by up to ``jitter`` steps) over Poisson background
    ``rate``. Returns spikes (n, steps, channels) and labels (n,). Templates depend on ``template_seed`` only, so
    train and test sets drawn with different ``seed`` share them."""
    n = checks.positive_int(n, "n")
    tg = torch.Generator().manual_seed(template_seed)
    centre_c = torch.randint(channels, (classes, events), generator=tg)
    centre_t = torch.randint(jitter, steps - jitter, (classes, events), generator=tg)
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(classes, (n,), generator=g)
    x = (torch.rand(n, steps, channels, generator=g) < rate).float()
    shift = torch.randint(-jitter, jitter + 1, (n, 1), generator=g)
    rows = torch.arange(n).unsqueeze(1)
    for dc in (-1, 0, 1):
        c = (centre_c[y] + dc) % channels
        t = (centre_t[y] + shift).clamp(0, steps - 1)
        hit = (torch.rand(n, events, generator=g) < peak).float()
        # bursts that land on one (step, channel) add up, then clip: a spike wherever any of them fired. A plain
        # assignment keeps one of the colliding writes, in no defined order, so a miss could erase a hit.
        x.index_put_((rows.expand_as(t), t, c), hit, accumulate=True)
    return x.clamp_(max=1.0), y


def mode_accuracy(logits: torch.Tensor, labels: torch.Tensor) -> float:
    """Accuracy of the mode over time of the per-step argmax (ties to the smallest class): logits (B, T, K)."""
    checks.tensor(logits, "logits", ndim=3)
    votes = torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).sum(1)
    return float((votes.argmax(-1) == labels).float().mean())
