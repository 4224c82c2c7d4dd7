"""Spike trains and CIFAR-10 by value: the SHD stand-in's templates, bursts and background by their definitions, and
the CIFAR loader on fabricated pickle batches (the real ones need a download) (issue 27)."""

import pickle
import sys
import types

import numpy as np
import pytest
import torch

from lscnb.data import cifar, files
from lscnb.data.spikes import mode_accuracy, spike_patterns


def test_spike_patterns_bursts_sit_on_their_class_templates():
    x, y = spike_patterns(300, classes=4, channels=16, steps=40, rate=0.0, peak=1.0, events=3, jitter=0, seed=1)
    assert x.shape == (300, 40, 16) and y.shape == (300,) and set(y.tolist()) == {0, 1, 2, 3}
    tg = torch.Generator().manual_seed(1234)  # the templates: channels, then times (in [jitter, steps - jitter))
    centre_c = torch.randint(16, (4, 3), generator=tg)
    centre_t = torch.randint(0, 40, (4, 3), generator=tg)
    for i in range(300):
        expected = torch.zeros(40, 16)
        for e in range(3):  # every burst fires (peak 1) on its channel and both neighbours, no background
            for dc in (-1, 0, 1):
                expected[centre_t[y[i], e], (centre_c[y[i], e] + dc) % 16] = 1.0
        assert torch.equal(x[i], expected)


def test_spike_patterns_colliding_bursts_fire_if_any_fires():
    """One channel and 3 steps for 4 bursts: bursts share a step, and a burst's three channels (c - 1, c, c + 1)
    are one. m draws of probability 1/2 land on a (step, channel), which must spike with probability 1 - 2^-m.
    Keeping one of the writes of bursts that collide within one pass (the old assignment) loses hits."""
    x, y = spike_patterns(4000, classes=3, channels=1, steps=3, rate=0.0, peak=0.5, events=4, jitter=0, seed=5)
    tg = torch.Generator().manual_seed(1234)
    torch.randint(1, (3, 4), generator=tg)  # the channel draw (all 0)
    centre_t = torch.randint(0, 3, (3, 4), generator=tg)
    for k in range(3):
        times = centre_t[k].tolist()
        rows = x[y == k, :, 0]
        for t in range(3):
            m = 3 * times.count(t)
            want = 1 - 0.5**m if m else 0.0
            assert rows[:, t].mean().item() == pytest.approx(want, abs=0.04), (k, t, m)


def test_spike_patterns_statistics():
    x, y = spike_patterns(400, classes=5, channels=32, steps=60, rate=0.05, peak=0.0, seed=2)
    assert x.mean().item() == pytest.approx(0.05, rel=0.05)  # background only
    assert torch.bincount(y, minlength=5).min() > 50
    x, _ = spike_patterns(400, classes=5, channels=32, steps=60, rate=0.0, peak=0.5, events=4, jitter=2, seed=3)
    per_sample = x.sum((1, 2))
    assert per_sample.mean().item() == pytest.approx(0.5 * 4 * 3, rel=0.1)  # half of 4 bursts x 3 channels
    a, _ = spike_patterns(10, seed=4)
    b, _ = spike_patterns(10, seed=4)
    c, _ = spike_patterns(10, seed=5)
    assert torch.equal(a, b) and not torch.equal(a, c)
    # templates depend on template_seed only: the same class fires at the same places under different seeds
    t1, y1 = spike_patterns(200, classes=2, rate=0.0, peak=1.0, jitter=0, seed=6)
    t2, y2 = spike_patterns(200, classes=2, rate=0.0, peak=1.0, jitter=0, seed=7)
    assert torch.equal(t1[y1 == 0][0], t2[y2 == 0][0])
    t3, y3 = spike_patterns(200, classes=2, rate=0.0, peak=1.0, jitter=0, seed=7, template_seed=1)
    assert not torch.equal(t1[y1 == 0][0], t3[y3 == 0][0])


def test_spike_pattern_jitter_shifts_whole_samples():
    x, y = spike_patterns(200, classes=1, channels=8, steps=30, rate=0.0, peak=1.0, events=1, jitter=3, seed=0)
    times = x.sum(2).argmax(1)  # the one burst's time in each sample
    assert times.max() - times.min() == 6  # centre +- 3
    assert set(x.sum((1, 2)).tolist()) == {3.0}


def test_mode_accuracy_by_hand():
    logits = torch.tensor([[[0.0, 1.0], [1.0, 0.0], [0.0, 2.0]], [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]])
    # sample 0: votes 1, 0, 1 -> class 1; sample 1: votes 0, 1, 0 (tie at 0 goes to 0) -> 0
    assert mode_accuracy(logits, torch.tensor([1, 0])) == 1.0
    assert mode_accuracy(logits, torch.tensor([1, 1])) == 0.5


def _batch(n, seed):
    rng = np.random.default_rng(seed)
    return {b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8), b"labels": list(rng.integers(0, 10, n))}


@pytest.fixture
def cifar_root(tmp_path, monkeypatch):
    root = tmp_path / "data"
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    for i, name in enumerate(cifar.BATCHES["train"] + cifar.BATCHES["test"]):
        with open(folder / name, "wb") as fh:
            pickle.dump(_batch(3, i), fh)
    monkeypatch.setattr(files, "data_roots", lambda: [root])
    return root


def test_cifar_from_fabricated_batches(cifar_root):
    train = cifar.load_cifar10("train", download=False)
    assert train.images.shape == (15, 32, 32, 3) and train.images.dtype == torch.uint8
    first = _batch(3, 0)
    # row-major 3 x 1024 planes (R, G, B) -> (32, 32, 3)
    expected = first[b"data"][1].reshape(3, 32, 32).transpose(1, 2, 0)
    assert np.array_equal(train.images[1].numpy(), expected)
    assert train.labels[:3].tolist() == [int(v) for v in first[b"labels"]] and train.labels.dtype == torch.long
    assert train.source == f"CIFAR-10 (train, 15 images, {cifar_root / 'cifar-10-batches-py'})"
    test = cifar.load_cifar10("test", download=False)
    assert len(test) == 3 and test.labels.tolist() == [int(v) for v in _batch(3, 5)[b"labels"]]


def test_cifar_missing_without_download(cifar_root, monkeypatch):
    (cifar_root / "cifar-10-batches-py" / "data_batch_3").unlink()
    with pytest.raises(FileNotFoundError, match="CIFAR-10 not found .* it needs a network once"):
        cifar.load_cifar10("train", download=False)
    assert cifar.load_cifar10("test", download=False).labels.shape == (3,)
    monkeypatch.setattr(cifar, "_download", lambda: True)  # a download that does not produce the files
    with pytest.raises(FileNotFoundError):
        cifar.load_cifar10("train")


def test_cifar_download_through_a_faked_torchvision(cifar_root, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("LSCNB_DATA_CACHE", str(cache))
    monkeypatch.setattr(files, "data_roots", lambda: [cache])
    made = []

    def fake(root, train, download):
        made.append((root, train, download))
        (cache / "cifar-10-batches-py").mkdir(parents=True)
        for path in (cifar_root / "cifar-10-batches-py").iterdir():
            (cache / "cifar-10-batches-py" / path.name).write_bytes(path.read_bytes())

    monkeypatch.setitem(sys.modules, "torchvision.datasets", types.SimpleNamespace(CIFAR10=fake))
    assert len(cifar.load_cifar10("test")) == 3
    assert made == [(str(cache), True, True)]
    monkeypatch.setitem(sys.modules, "torchvision.datasets", None)
    assert cifar._download() is False


def test_cifar_sequences_are_standardised_per_channel():
    imgs = torch.randint(0, 256, (6, 32, 32, 3), generator=torch.Generator().manual_seed(0), dtype=torch.uint8)
    imgs[..., 2] //= 4  # channels of different scales
    seq = cifar.cifar_sequences(imgs)
    assert seq.shape == (6, 1024, 3)
    torch.testing.assert_close(seq.mean((0, 1)), torch.zeros(3), atol=1e-5, rtol=0)
    torch.testing.assert_close(seq.std((0, 1)), torch.ones(3), atol=1e-5, rtol=0)
    assert seq[0, 33, 2].item() == pytest.approx(
        ((imgs[0, 1, 1, 2].float() - imgs[..., 2].float().mean()) / imgs[..., 2].float().std()).item(), rel=1e-5
    )
