"""The 100 object images of the ESBN task suite (Webb, Sinha & Cohen 2021), used by the CoRelNet chapter.

Looked for on the shared data path (``esbn_objects/{0..99}.png``: 32x32 grey line drawings on white, Apache-2.0,
see ``../shared/data/README.md``); offline without them, 100 distinct glyphs are rendered instead (random
strokes on a 32x32 canvas, fixed seed) and ``.source`` says so."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import files


@dataclass
class Objects:
    images: torch.Tensor  # (100, 32, 32) in [0, 1], dark objects on white
    source: str


def _rendered(n: int = 100, seed: int = 0) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    out = np.ones((n, 32, 32), dtype=np.float32)
    yy, xx = np.mgrid[0:32, 0:32]
    for i in range(n):
        for _ in range(3):
            (x0, y0), (x1, y1) = rng.uniform(4, 28, size=(2, 2))
            t = np.clip(
                ((xx - x0) * (x1 - x0) + (yy - y0) * (y1 - y0)) / ((x1 - x0) ** 2 + (y1 - y0) ** 2 + 1e-9), 0, 1
            )
            dist = np.hypot(xx - (x0 + t * (x1 - x0)), yy - (y0 + t * (y1 - y0)))
            out[i] = np.minimum(out[i], np.clip(dist - 0.8, 0, 1))
    return torch.from_numpy(out)


FIRST_OBJECT = "esbn_objects/0.png"
"""The first of the 100 object files: where it lies, the others lie."""


def have_objects() -> bool:
    """Whether the real ESBN object images are on the data path (:func:`load_objects` reads them)."""
    return files.find(FIRST_OBJECT) is not None


def load_objects(*, fallback: bool = True) -> Objects:
    """The 100 ESBN objects from local files, or (``fallback``) rendered glyphs."""
    first = files.find(FIRST_OBJECT)
    if first is not None:
        from PIL import Image

        imgs = [
            np.asarray(Image.open(first.parent / f"{i}.png").convert("L"), dtype=np.float32) / 255.0 for i in range(100)
        ]
        return Objects(torch.from_numpy(np.stack(imgs)), f"ESBN object images ({files.shown(first.parent)})")
    if not fallback:
        raise FileNotFoundError("esbn_objects/ not found in " + ", ".join(map(str, files.data_roots())))
    return Objects(_rendered(), "100 rendered glyphs (offline stand-in for the ESBN images)")


def resized(images: torch.Tensor, sizes=(12, 20, 28)) -> torch.Tensor:
    """Each object drawn at each size (pixels, at most 32), centred on a white 32x32 canvas: (len(sizes) * N, 32, 32),
    object ``i`` at size ``sizes[k]`` at index ``k * N + i`` (the comparison tasks of thesis ch. 7)."""
    import torch.nn.functional as F

    if images.ndim != 3:
        raise ValueError(f"images must have shape (N, H, W), got {tuple(images.shape)}")
    out = []
    for s in sizes:
        if not 1 <= int(s) <= 32:
            raise ValueError(f"sizes must lie in 1..32, got {s}")
        small = F.interpolate(
            images[:, None].float(), size=(int(s), int(s)), mode="bilinear", antialias=True, align_corners=False
        )[:, 0]
        canvas = torch.ones(images.shape[0], 32, 32)
        o = (32 - int(s)) // 2
        canvas[:, o : o + int(s), o : o + int(s)] = small
        out.append(canvas)
    return torch.cat(out)
