"""Long full-profile runs checkpoint, so a GPU plan's commands of a few minutes can finish them: a run killed after
some steps resumes from its checkpoint and ends where an uninterrupted run ends (at the figure's smoke size)."""

from __future__ import annotations

import importlib
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from lscnb import train
from lscnb.config import Profile
from lscnb.figures import smoke_runs
from lscnb.runs import RunContext

CASES = {  # chapter, figure, the module whose fit the run calls, the checkpoints of its trainings up to the killed one
    "lsc/drnn": ("lsc", "drnn", "lscnb.experiments.lsc.drnn", ["run.ckpt"]),
    "lsc/lru": ("lsc", "lru", "lscnb.experiments.lsc.lru", ["run.noclip.ckpt"]),
    "nnrnn/psmnist": ("nnrnn", "psmnist", "lscnb.experiments.nnrnn.psmnist", ["run.ckpt"]),
    # two models trained one after the other on one generator: killed in the second, after the first finished
    "meanfield/curves": (
        "meanfield",
        "curves",
        "lscnb.experiments.meanfield.critical",
        ["run.standard.ckpt", "run.critical.ckpt"],
    ),
    # killed in the second of three epochs: the best model, the validation curve, the plateau schedulers and the
    # state carried across windows come back with the checkpoint
    "nnrnn/ptb": ("nnrnn", "ptb", "lscnb.experiments.nnrnn.ptb", ["run.ckpt"]),
}
LONGER = {"nnrnn/ptb": ({"epochs": 3, "n_train": 200, "n_eval": 40}, 8)}  # the config's changes, the step killed at


def _compute(run, checkpoint=None):
    torch.manual_seed(123)  # the global RNG as another process would leave it: runs seed what they draw
    return run.fn(dict(run.config), RunContext(Profile("full", "cpu"), "cpu", run.seed, checkpoint, False))


def _fit_that_dies(real, die_at, die_in=1):
    """``fit`` that saves every step and, with ``die_at``, is killed when it asks for batch ``die_at`` of the run's
    ``die_in``-th training."""
    calls = []

    def fit(model, batch_fn, *args, **kwargs):
        calls.append(kwargs.get("checkpoint"))
        dies = len(calls) == die_in

        def batch(k):
            if dies and die_at is not None and k == die_at:
                raise KeyboardInterrupt
            return batch_fn(k)

        return real(model, batch, *args, **{**kwargs, "checkpoint_every": 1})

    return fit, calls


@pytest.mark.parametrize("case", list(CASES))
def test_a_killed_run_resumes_and_ends_where_a_whole_one_ends(case, tmp_path, monkeypatch):
    chapter, figure, where, checkpoints = CASES[case]
    run = smoke_runs(importlib.import_module(f"lscnb.experiments.{chapter}"), figure)[0]
    changes, die_at = LONGER.get(case, ({}, 1))
    run.config.update(changes)
    module = importlib.import_module(where)
    real = train.fit

    def use(fit):  # the run's module, or lscnb.train where the run imports fit when it runs
        monkeypatch.setattr(module if hasattr(module, "fit") else train, "fit", fit)

    use(_fit_that_dies(real, None)[0])
    whole = _compute(run)
    dying, calls = _fit_that_dies(real, die_at, die_in=len(checkpoints))
    use(dying)
    with pytest.raises(KeyboardInterrupt):
        _compute(run, tmp_path / "run.ckpt")
    assert [c.name for c in calls] == checkpoints, calls  # one checkpoint per training
    assert all(c.exists() for c in calls), calls  # each training so far left its checkpoint
    use(_fit_that_dies(real, None)[0])
    resumed = _compute(run, tmp_path / "run.ckpt")
    assert sorted(resumed) == sorted(whole)
    for key, value in whole.items():
        if isinstance(value, (float, int, np.ndarray, np.floating)) and not isinstance(value, bool):
            np.testing.assert_allclose(resumed[key], value, rtol=1e-10, err_msg=key)
        else:
            assert resumed[key] == value, key
    left = {p.name for p in tmp_path.glob("*.ckpt")}
    assert left <= {"run.ckpt"} & set(checkpoints), left  # the sweep removes run.ckpt itself; the run the others


def _records_its_checkpoint(cfg, ctx):
    return {"is_path": isinstance(ctx.checkpoint, Path), "name": str(ctx.checkpoint)}


def test_a_run_gets_its_checkpoint_as_a_path_whatever_the_executor_sent(tmp_path):
    """The process and Ray executors send the checkpoint as a string; runs call Path methods on it."""
    from lscnb.runs import Run, compute

    run = Run("fake", "fig", "one", _records_its_checkpoint, {"seed": 0})
    sent = str(tmp_path / "one.ckpt")
    for given in (sent, Path(sent)):
        result = compute(run, Profile("full", "cpu"), "full", given, False)
        assert result.metrics["is_path"] is True and result.metrics["name"] == sent
    assert compute(run, Profile("full", "cpu"), "full", None, False).metrics["name"] == "None"


def _trains_a_line(cfg, ctx):
    """Fits y = 2x for ``cfg["steps"]`` steps, checkpointing each step, and sleeps ``cfg["pause"]`` s on each."""
    model = torch.nn.Linear(1, 1)
    x = torch.linspace(-1, 1, 8)[:, None]

    def batch(k):
        if k == cfg.get("die_at"):
            raise KeyboardInterrupt
        time.sleep(cfg["pause"])
        return x, 2 * x

    loss = lambda m, xb, yb: torch.nn.functional.mse_loss(m(xb), yb)  # noqa: E731
    hist = train.fit(
        model, batch, loss, steps=cfg["steps"], lr=0.1, checkpoint=ctx.checkpoint, checkpoint_every=1, progress=False
    )
    return {"loss": hist.loss[-1]}


def test_a_resumed_run_records_the_seconds_of_every_part(tmp_path):
    """A run killed after 4 of 8 steps of 0.1 s and resumed: its wall time counts the 4 steps of the first process
    (the checkpoint's History carries them), not only the second's."""
    from lscnb.runs import Run, compute

    cfg = {"steps": 8, "pause": 0.1, "seed": 0}
    ckpt = tmp_path / "line.ckpt"
    with pytest.raises(KeyboardInterrupt):
        compute(Run("fake", "fig", "line", _trains_a_line, {**cfg, "die_at": 4}), Profile("full", "cpu"), "full", ckpt)
    resumed = compute(Run("fake", "fig", "line", _trains_a_line, cfg), Profile("full", "cpu"), "full", ckpt, False)
    assert resumed.provenance["wall_time_s"] >= 8 * 0.1, resumed.provenance  # 4 steps here, 4 before
    train.carried(5.0)  # outside a run: nothing collects it
    with train.carried_time() as seconds:
        train.carried(2.0)
    assert seconds == [2.0]
