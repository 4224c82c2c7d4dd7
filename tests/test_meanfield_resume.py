"""A killed run of meanfield Fig. 3 (two models trained one after the other on one generator) resumes from its
checkpoints and ends where an uninterrupted run ends."""

from __future__ import annotations

import types

import numpy as np
import pytest

from lscnb.experiments.meanfield import critical

CFG = dict(
    task="replicated",
    repeat=1,
    dim=8,
    width=4,
    source="sklearn",
    iters=200,
    lr=1e-2,
    every=100,
    clip=1.0,
    batch=16,
    probe=32,
    seed=0,
    limit=200,
)


def _ctx(checkpoint=None):
    return types.SimpleNamespace(device="cpu", seed=0, checkpoint=checkpoint, progress=False)


def test_curve_run_resumes_after_the_first_model(tmp_path, monkeypatch):
    whole = critical.curve_run(CFG, _ctx())
    real_fit, calls = critical.fit, []

    def dies_on_the_second_model(*args, **kwargs):
        calls.append(kwargs["checkpoint"])
        if len(calls) == 2:
            raise KeyboardInterrupt  # killed while the critical model trains
        return real_fit(*args, **kwargs)

    ckpt = tmp_path / "run.ckpt"
    monkeypatch.setattr(critical, "fit", dies_on_the_second_model)
    with pytest.raises(KeyboardInterrupt):
        critical.curve_run(CFG, _ctx(ckpt))
    assert (tmp_path / "run.standard.ckpt").exists() and calls[1] == tmp_path / "run.critical.ckpt"
    monkeypatch.setattr(critical, "fit", real_fit)
    resumed = critical.curve_run(CFG, _ctx(ckpt))
    assert sorted(resumed) == sorted(whole)
    for key, value in whole.items():
        np.testing.assert_allclose(resumed[key], value, rtol=1e-10, err_msg=key)
    assert not list(tmp_path.glob("*.ckpt"))  # both finished: their checkpoints are gone
