"""The ESBN object images by value (lscnb.data.objects): fabricated PNG files read back, the rendered stand-in by its
definition, and the resized objects placed by hand (issue 27)."""

import numpy as np
import pytest
import torch

from lscnb.data import files, objects


@pytest.fixture
def png_root(tmp_path, monkeypatch):
    from PIL import Image

    folder = tmp_path / "esbn_objects"
    folder.mkdir()
    for i in range(100):
        pixels = np.full((32, 32), 255, dtype=np.uint8)
        pixels[i % 32, :] = i  # one dark row per object, its darkness the object's index
        Image.fromarray(pixels).save(folder / f"{i}.png")
    monkeypatch.setattr(files, "data_roots", lambda: [tmp_path])
    return folder


def test_objects_from_files(png_root):
    assert objects.have_objects()
    got = objects.load_objects(fallback=False)
    assert got.images.shape == (100, 32, 32) and got.images.dtype == torch.float32
    assert got.source == f"ESBN object images ({png_root.parent.name}/esbn_objects)"
    for i in (0, 7, 99):
        assert got.images[i, i % 32].tolist() == pytest.approx([i / 255] * 32)
        assert got.images[i, (i + 1) % 32].tolist() == [1.0] * 32


def test_objects_without_files(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "data_roots", lambda: [tmp_path])
    assert not objects.have_objects()
    with pytest.raises(FileNotFoundError, match=f"esbn_objects/ not found in {tmp_path}"):
        objects.load_objects(fallback=False)
    got = objects.load_objects()
    assert got.source == "100 rendered glyphs (offline stand-in for the ESBN images)"
    assert torch.equal(got.images, objects._rendered())


def test_rendered_glyphs_by_definition():
    glyphs = objects._rendered()
    assert glyphs.shape == (100, 32, 32) and glyphs.dtype == torch.float32
    assert glyphs.min() == 0 and glyphs.max() == 1
    assert torch.all(glyphs[:, :2] == 1) and torch.all(glyphs[:, -2:] == 1)  # strokes between 4 and 28: margins white
    dark = (glyphs < 0.5).sum((1, 2))
    assert dark.min() > 5 and dark.max() < 400  # three thin strokes each
    assert len({g.numpy().tobytes() for g in glyphs}) == 100
    assert torch.equal(objects._rendered(3, seed=1), objects._rendered(3, seed=1))
    assert not torch.equal(objects._rendered(3, seed=1), objects._rendered(3, seed=2))
    assert torch.equal(objects._rendered(5), glyphs[:5])  # glyph i does not depend on n


def test_resized_places_each_size_centred():
    black = torch.zeros(2, 32, 32)
    out = objects.resized(black, sizes=(12, 20))
    assert out.shape == (4, 32, 32)
    expected = torch.ones(32, 32)
    expected[10:22, 10:22] = 0
    assert torch.equal(out[0], expected) and torch.equal(out[1], expected)  # size 12: objects 0 and 1
    expected = torch.ones(32, 32)
    expected[6:26, 6:26] = 0
    assert torch.equal(out[2], expected)  # size 20 of object 0 at index 1 * N + 0
    marked = torch.ones(2, 32, 32)
    marked[1] = 0.0
    default = objects.resized(marked)
    assert default.shape == (6, 32, 32) and default[1].min() == 0  # sizes 12, 20, 28
    assert default[0].min().item() == pytest.approx(1.0)
    assert default[5, 2:30, 2:30].max() == 0  # size 28, centred
    for bad in (0, 33):
        with pytest.raises(ValueError, match=f"sizes must lie in 1..32, got {bad}"):
            objects.resized(black, sizes=(bad,))
    with pytest.raises(ValueError, match=r"images must have shape \(N, H, W\), got \(32, 32\)"):
        objects.resized(torch.zeros(32, 32))
