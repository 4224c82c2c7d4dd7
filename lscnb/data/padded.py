"""Padded digits (Gilboa et al. 2019, Fig. 2): one standardised digit at step 1, then Gaussian noise.

The theory wants zero-mean inputs of unit second moment, so the digits are standardised per pixel over the
set (constant pixels become 0) and rescaled to mean square 1; the noise steps are N(0, I), redrawn for every
batch so that the network cannot memorise them.
"""

from __future__ import annotations

import torch

from .. import checks
from .mnist import digits_sequences, load_mnist


def standardised_digits(source: str = "sklearn", *, pool: int = 2, limit: int | None = None):
    """Flat standardised digits (N, d) and labels, with a description of the data.

    ``source="sklearn"``: scikit-learn's 1,797 real 8x8 digits (d = 64, offline). ``"mnist"``: the MNIST
    training set (real files when found, see ``load_mnist``), average-pooled by ``pool`` (d = (28/pool)^2)."""
    checks.one_of(source, ("sklearn", "mnist"), "source")
    if source == "sklearn":
        x, y = digits_sequences()
        x, what = x.squeeze(-1), "scikit-learn's 1,797 real 8x8 digits"
    else:
        pool = checks.positive_int(pool, "pool")
        imgs = load_mnist("train")
        x = torch.nn.functional.avg_pool2d(imgs.images.float().unsqueeze(1) / 255.0, pool).flatten(1)
        y, what = imgs.labels, f"MNIST ({imgs.source}), {pool}x{pool}-pooled"
    if limit is not None:
        x, y = x[: checks.positive_int(limit, "limit")], y[:limit]
    std = x.std(0)
    x = torch.where(std > 0, (x - x.mean(0)) / std.clamp_min(1e-12), torch.zeros_like(x))
    x = x / x.pow(2).mean().sqrt()
    return x, y, what


def padded_sequences(x: torch.Tensor, length: int, *, generator: torch.Generator | None = None) -> torch.Tensor:
    """Sequences (B, length, d): the rows of ``x`` (B, d) at the first step, N(0, 1) noise after."""
    checks.tensor(x, "x", ndim=2)
    length = checks.positive_int(length, "length")
    noise = torch.randn(x.shape[0], length - 1, x.shape[1], generator=generator, dtype=x.dtype, device=x.device)
    return torch.cat([x.unsqueeze(1), noise], dim=1)


def replicated_pixels(x: torch.Tensor, repeat: int, dim: int) -> torch.Tensor:
    """Unrolled digits with every pixel repeated (Sec. 5.3, Fig. 3 bottom): the flat pixels of ``x`` (B, P), each
    repeated ``repeat`` times in place (``np.repeat``), then cut into steps of ``dim`` values: (B, P*repeat/dim,
    dim)."""
    checks.tensor(x, "x", ndim=2)
    repeat, dim = checks.positive_int(repeat, "repeat"), checks.positive_int(dim, "dim")
    total = x.shape[1] * repeat
    if total % dim:
        raise ValueError(f"dim must divide the {x.shape[1]} pixels x repeat {repeat} = {total}, got {dim}")
    return x.repeat_interleave(repeat, dim=1).reshape(x.shape[0], total // dim, dim)


def concatenated_digits(
    x: torch.Tensor, y: torch.Tensor, n: int, count: int, *, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` sequences of ``n`` digits drawn from the 0s and 1s of ``x`` (B, P) with labels ``y`` (Sec. 5.3,
    Fig. 3 top): flat pixels concatenated (count, n*P), labelled by the digits read as a binary number, so the
    label is the tuple of the digits' labels (``2**n`` classes; the paper's "product of the labels")."""
    checks.tensor(x, "x", ndim=2)
    n, count = checks.positive_int(n, "n"), checks.positive_int(count, "count")
    if len(y) != len(x):
        raise ValueError(f"y must have one label per row of x ({len(x)}), got {len(y)}")
    pool = torch.nonzero((y == 0) | (y == 1)).squeeze(-1)
    if len(pool) == 0:
        raise ValueError("y holds no digit 0 or 1")
    idx = pool[torch.randint(len(pool), (count, n), generator=generator, device=pool.device)]
    bits = y[idx]
    labels = (bits * (2 ** torch.arange(n - 1, -1, -1, device=y.device))).sum(-1)
    return x[idx].reshape(count, -1), labels
