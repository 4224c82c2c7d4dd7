"""CIFAR-10 for the sequential task of Table 2 (Gilboa et al. 2019): real files, or a torchvision download.

The data are not in the offline shared folder. :func:`load_cifar10` reads the python-pickle batches
(``cifar-10-batches-py/``) from any data root (:func:`lscnb.data.files.find`), else downloads them with
torchvision into the cache when a network is there, else raises ``FileNotFoundError``: there is no fallback,
so no figure can silently stand on other data.
"""

from __future__ import annotations

import pickle

import numpy as np
import torch

from .. import checks
from . import files
from .mnist import ImageSet

BATCHES = {"train": [f"data_batch_{i}" for i in range(1, 6)], "test": ["test_batch"]}


def _from_files(split: str) -> ImageSet | None:
    paths = [files.find(f"cifar-10-batches-py/{name}") for name in BATCHES[split]]
    if any(p is None for p in paths):
        return None
    images, labels = [], []
    for p in paths:
        with open(p, "rb") as fh:
            batch = pickle.load(fh, encoding="bytes")
        images.append(np.asarray(batch[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))
        labels.append(np.asarray(batch[b"labels"], dtype=np.int64))
    x, y = np.concatenate(images), np.concatenate(labels)
    what = f"CIFAR-10 ({split}, {len(y):,} images, {paths[0].parent})"
    return ImageSet(torch.from_numpy(x.copy()), torch.from_numpy(y), what)


def _download() -> bool:
    try:
        from torchvision.datasets import CIFAR10

        CIFAR10(str(files.cache_dir()), train=True, download=True)  # unpacks cifar-10-batches-py/ in the cache
        return True
    except Exception:  # noqa: BLE001 - torchvision absent or no network
        return False


def load_cifar10(split: str = "train", *, download: bool = True) -> ImageSet:
    """CIFAR-10 ``split`` (``train`` 50,000 or ``test`` 10,000) as uint8 images (N, 32, 32, 3) and labels."""
    checks.one_of(split, BATCHES, "split")
    found = _from_files(split)
    if found is None and download and _download():
        found = _from_files(split)
    if found is None:
        raise FileNotFoundError(
            "CIFAR-10 not found (cifar-10-batches-py/ in "
            + ", ".join(map(str, files.data_roots()))
            + ") and could not be downloaded: it needs a network once"
        )
    return found


def cifar_sequences(images: ImageSet | torch.Tensor) -> torch.Tensor:
    """Images as sequences of pixels, three values (RGB) per step (N, 1024, 3), standardised per channel so that
    the inputs have zero mean and unit second moment (R = 1)."""
    imgs = images.images if isinstance(images, ImageSet) else images
    checks.tensor(imgs, "images", ndim=4)
    x = imgs.reshape(imgs.shape[0], -1, imgs.shape[-1]).float()
    return (x - x.mean((0, 1))) / x.std((0, 1)).clamp_min(1e-12)
