"""The generated data sets and the object images pinned by answers worked here (issue 27): plain recurrences on the
same generator draws, RGB PNGs, defaults and full error messages, and hand-computed resampling weights."""

import math
import re
import types

import numpy as np
import pytest
import torch
from pinning import ConstantUniforms

from lscnb.data import files, moons, objects, padded, spikes, synthetic, text


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


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
