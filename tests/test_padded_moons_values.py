"""The double moon and the padded/replicated/concatenated digit tasks by value: points on their moons, the
standardisation, padding noise, pixel replication and binary labels worked by hand (issue 27)."""

import math

import pytest
import torch

from lscnb.data import moons, padded


def test_double_moon_points_lie_on_their_moons():
    x, y = moons.double_moon(2001, r=10.0, w=6.0, d=1.0, seed=3)
    x = x.double()
    assert x.shape == (2001, 2) and (y == 1).sum() == 1000 and (y == -1).sum() == 1001
    up, low = x[y == 1], x[y == -1]
    ru = up.norm(dim=1)
    assert ru.min() >= 7 - 1e-4 and ru.max() <= 13 + 1e-4 and torch.all(up[:, 1] >= -1e-5)
    rl = (low - torch.tensor([10.0, -1.0], dtype=torch.float64)).norm(dim=1)
    assert rl.min() >= 7 - 1e-4 and rl.max() <= 13 + 1e-4 and torch.all(low[:, 1] <= -1 + 1e-5)
    # radii uniform on [r - w/2, r + w/2]: mean 10
    assert ru.mean().item() == pytest.approx(10.0, abs=0.2) and rl.mean().item() == pytest.approx(10.0, abs=0.2)
    # shuffled: the labels are not in blocks
    assert (y[:1000] == 1).float().mean().item() == pytest.approx(0.5, abs=0.1)


def test_double_moon_defaults_and_seed():
    x, y = moons.double_moon()
    assert x.shape == (1000, 2) and x.dtype == torch.float32 and (y == 1).sum() == 500
    low = x[y == -1].double()
    assert low[:, 1].max() <= -1.0 + 1e-5  # d = 1
    assert (low - torch.tensor([10.0, -1.0], dtype=torch.float64)).norm(dim=1).max() <= 13 + 1e-4  # r 10, w 6
    assert torch.equal(moons.double_moon(seed=0)[0], x) and not torch.equal(moons.double_moon(seed=1)[0], x)
    with pytest.raises(ValueError, match=r"w must be smaller than 2 r = 4.0, got 4.0"):
        moons.double_moon(r=2.0, w=4.0)


def test_standardised_digits_by_value():
    from sklearn.datasets import load_digits

    x, y, what = padded.standardised_digits()
    d = load_digits()
    assert what == "scikit-learn's 1,797 real 8x8 digits" and x.shape == (1797, 64)
    assert y.tolist() == d.target.tolist()
    raw = torch.from_numpy(d.data).float() / 16
    std = raw.std(0)
    expected = torch.where(std > 0, (raw - raw.mean(0)) / std.clamp_min(1e-12), torch.zeros_like(raw))
    expected = expected / expected.pow(2).mean().sqrt()
    torch.testing.assert_close(x, expected)
    assert x.pow(2).mean().item() == pytest.approx(1.0) and torch.all(x[:, std == 0] == 0)
    assert x[:, std > 0].mean(0).abs().max() < 1e-5
    few, _, _ = padded.standardised_digits(limit=10)
    assert few.shape == (10, 64)


def test_mnist_digits_are_pooled_from_the_images(monkeypatch):
    from lscnb.data.mnist import ImageSet

    images = torch.zeros(3, 28, 28, dtype=torch.uint8)
    images[0, :2, :2] = 255
    images[1, 2:4, :2] = 51
    monkeypatch.setattr(padded, "load_mnist", lambda split: ImageSet(images, torch.tensor([0, 1, 2]), "fake"))
    x, y, what = padded.standardised_digits("mnist")
    assert what == "MNIST (fake), 2x2-pooled" and x.shape == (3, 196) and y.tolist() == [0, 1, 2]
    # pooled values 1.0 and 0.2 in two columns, standardised per column then scaled to unit mean square
    col0 = torch.tensor([1.0, 0.0, 0.0])
    col14 = torch.tensor([0.0, 0.2, 0.0])
    z0 = (col0 - col0.mean()) / col0.std()
    z14 = (col14 - col14.mean()) / col14.std()
    scale = math.sqrt((z0.pow(2).sum() + z14.pow(2).sum()).item() / (3 * 196))
    torch.testing.assert_close(x[:, 0], z0 / scale)
    torch.testing.assert_close(x[:, 14], z14 / scale)
    x3, _, _ = padded.standardised_digits("mnist", pool=4)
    assert x3.shape == (3, 49)


def test_padded_sequences_put_the_digit_first_then_noise():
    x = torch.arange(6.0).view(2, 3).double()
    g = torch.Generator().manual_seed(0)
    seq = padded.padded_sequences(x, 4, generator=g)
    assert seq.shape == (2, 4, 3) and seq.dtype == torch.float64 and torch.equal(seq[:, 0], x)
    noise = torch.randn(2, 3, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    torch.testing.assert_close(seq[:, 1:], noise)
    assert padded.padded_sequences(x, 4, generator=None).shape == (2, 4, 3)


def test_replicated_pixels_by_hand():
    x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    out = padded.replicated_pixels(x, 2, 3)  # 1 1 2 | 2 3 3
    assert out.tolist() == [[[1, 1, 2], [2, 3, 3]], [[4, 4, 5], [5, 6, 6]]]
    with pytest.raises(ValueError, match="dim must divide the 3 pixels x repeat 2 = 6, got 4"):
        padded.replicated_pixels(x, 2, 4)


def test_concatenated_digits_labels_are_binary_numbers():
    x = torch.arange(12.0).view(6, 2)
    y = torch.tensor([0, 1, 2, 1, 0, 7])
    seqs, labels = padded.concatenated_digits(x, y, 3, 200, generator=torch.Generator().manual_seed(0))
    assert seqs.shape == (200, 6)
    rows = (seqs[:, 0::2] / 2).long()  # each digit's first pixel is 2 * row
    assert set(rows.flatten().tolist()) == {0, 1, 3, 4}  # only the 0s and 1s
    bits = y[rows]
    assert torch.equal(labels, bits[:, 0] * 4 + bits[:, 1] * 2 + bits[:, 2])
    assert set(labels.tolist()) == set(range(8))
    with pytest.raises(ValueError, match="y holds no digit 0 or 1"):
        padded.concatenated_digits(x, torch.full((6,), 5), 2, 3)
