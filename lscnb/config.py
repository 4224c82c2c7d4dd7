"""Profiles: the one switch between ``replay``, ``quick`` and ``full``.

A notebook's ``parameters`` cell holds literals only (``PROFILE = None``); the next cell calls
:func:`resolve`, which reads ``LSCNB_PROFILE`` when the parameter is ``None`` and defaults to ``replay``.
Everything that depends on the profile (sizes, seeds, device) is derived from the returned
:class:`Profile`, never from the parameters cell.
"""

from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass, field

import numpy as np
import torch

from . import checks

PROFILES = ("replay", "quick", "full")
ENV_PROFILE = "LSCNB_PROFILE"
ENV_DEVICE = "LSCNB_DEVICE"


@dataclass(frozen=True)
class Profile:
    """A resolved profile.

    ``name`` is what the reader asked for; ``scale`` is the scale experiments are sized for when they have to
    compute (``quick`` or ``full``; ``replay`` computes at quick scale only when no full result is committed).
    """

    name: str
    device: str = "cpu"
    seed: int = 0
    threads: int | None = None
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def scale(self) -> str:
        return "full" if self.name == "full" else "quick"

    @property
    def is_replay(self) -> bool:
        return self.name == "replay"

    def torch_device(self) -> torch.device:
        return torch.device(self.device)

    def __str__(self) -> str:
        return f"profile={self.name} device={self.device} seed={self.seed}"

    def _repr_markdown_(self) -> str:
        what = {
            "replay": "plots the committed full-scale results (and says so where a figure has none yet)",
            "quick": "recomputes every figure at toy scale on the CPU",
            "full": "recomputes every figure at paper scale and writes the results",
        }[self.name]
        why = f" ({self.extra['reason']})" if self.extra.get("reason") else ""
        return f"**Profile `{self.name}`**{why} on `{device_name(self.device)}`, seed {self.seed}: {what}."


def default_device() -> str:
    """``cuda`` when a GPU is visible, else ``cpu``; ``LSCNB_DEVICE`` overrides."""
    env = os.environ.get(ENV_DEVICE)
    if env:
        return env
    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve(
    profile: str | None = None, *, seed: int = 0, device: str | None = None, threads: int | None = None
) -> Profile:
    """Turn a notebook's ``PROFILE`` parameter into a :class:`Profile`.

    ``None`` reads ``LSCNB_PROFILE`` and falls back to ``replay``; on Colab it falls back to ``full`` when a GPU is
    attached and ``quick`` otherwise (the profile says why). ``quick`` runs on the CPU unless a device
    is named; ``full`` takes the GPU when there is one. Seeds every random generator with ``seed``.
    """
    reason = "asked for"
    if profile is None:
        profile = os.environ.get(ENV_PROFILE)
        reason = f"from {ENV_PROFILE}"
        if not profile and on_colab():
            profile = "full" if torch.cuda.is_available() else "quick"
            reason = "on Colab " + ("with a GPU" if profile == "full" else "without a GPU")
        elif not profile:
            profile, reason = "replay", "the default"
    if not isinstance(profile, str):
        raise TypeError(f"profile must be a string or None, got {type(profile).__name__}")
    profile = profile.strip().lower()
    checks.one_of(profile, PROFILES, "profile")
    seed = checks.positive_int(seed, "seed", allow_zero=True)
    if device is None:
        device = os.environ.get(ENV_DEVICE) or ("cpu" if profile != "full" else default_device())
    try:
        torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device must be a torch device string such as 'cpu' or 'cuda', got {device!r}") from err
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} was asked for but no CUDA GPU is visible")
    if threads is None:
        threads = int(os.environ.get("LSCNB_THREADS", "0")) or None
    if threads:
        torch.set_num_threads(checks.positive_int(threads, "threads"))
    seed_everything(seed)
    return Profile(profile, device, seed, threads, {"reason": reason})


def on_colab() -> bool:
    """Whether this runs in a Google Colab kernel."""
    return "google.colab" in sys.modules


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (CPU and CUDA)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def device_name(device: str | torch.device = "cpu") -> str:
    """A human-readable name of the hardware: the GPU's name, or the CPU model and core count."""
    device = torch.device(device)
    if device.type == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_name(device)
    model = "CPU"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model} ({os.cpu_count()} cores)"


def pick(profile: Profile, **by_scale):
    """Pick a value by scale: ``pick(P, quick=64, full=512)``; ``replay`` falls back to ``quick`` sizes."""
    for key in by_scale:  # every keyword names a scale
        checks.one_of(key, ("quick", "full"), "by_scale")
    if profile.scale not in by_scale:
        raise KeyError(f"no value given for scale {profile.scale!r}")
    return by_scale[profile.scale]
