import math

import numpy as np
import pytest
import torch
from steep import Steep

from lscnb.data import adding_problem
from lscnb.models import RNNCell, SequenceModel
from lscnb.theory import gaussian, vanilla
from lscnb.train import fit


def _model():
    torch.manual_seed(0)
    return SequenceModel([RNNCell(2, 8)], 1)


def _mse(m, x, y):
    return torch.nn.functional.mse_loss(m(x), y)


def _batch(k):
    return adding_problem(16, 10, seed=k)


def test_fit_learns_and_records():
    hist = fit(
        _model(),
        _batch,
        _mse,
        steps=60,
        lr=1e-2,
        progress=False,
        eval_fn=lambda m: {"mse": _mse(m, *adding_problem(200, 10, seed=99))},
        eval_every=20,
    )
    assert len(hist.loss) == 60 and not hist.diverged
    assert [e["step"] for e in hist.evals] == [20, 40, 60]
    assert np.mean(hist.loss[-10:]) < np.mean(hist.loss[:10])


def test_divergence_is_recorded_not_raised():
    hist = fit(_model(), _batch, _mse, steps=50, lr=1e6, optimizer="sgd", progress=False)
    assert hist.diverged and hist.diverged_step is not None and len(hist.loss) == hist.diverged_step
    assert all(math.isfinite(v) for v in hist.loss)


def test_checkpoint_resume_gives_identical_run(tmp_path):
    straight = fit(_model(), _batch, _mse, steps=40, lr=1e-2, progress=False)
    ckpt = tmp_path / "run.ckpt"

    class Stop(Exception):
        pass

    def stop_at_25(model, k):
        if k == 24:
            raise Stop

    with pytest.raises(Stop):
        fit(
            _model(),
            _batch,
            _mse,
            steps=40,
            lr=1e-2,
            progress=False,
            checkpoint=ckpt,
            checkpoint_every=10,
            after_step=stop_at_25,
        )
    assert ckpt.exists()
    resumed = fit(_model(), _batch, _mse, steps=40, lr=1e-2, progress=False, checkpoint=ckpt, checkpoint_every=10)
    assert resumed.step == list(range(40))
    np.testing.assert_allclose(resumed.loss, straight.loss, rtol=1e-6)


def test_resume_restores_the_generator_batches_are_drawn_from(tmp_path):
    """A batch_fn drawing from its own generator: a killed run resumes onto the batches it would have seen."""

    class Stop(Exception):
        pass

    def run(ckpt=None, stop=None):
        gen = torch.Generator().manual_seed(3)

        def batch(k):
            return adding_problem(16, 10, generator=gen)

        def after(model, k):
            if k == stop:
                raise Stop

        return fit(
            _model(),
            batch,
            _mse,
            steps=30,
            lr=1e-2,
            progress=False,
            checkpoint=ckpt,
            checkpoint_every=10,
            after_step=after,
            generators=(gen,),
        )

    straight = run()
    ckpt = tmp_path / "gen.ckpt"
    with pytest.raises(Stop):
        run(ckpt, stop=14)
    resumed = run(ckpt)
    np.testing.assert_allclose(resumed.loss, straight.loss, rtol=1e-6)


def test_fit_moves_model_and_batches_to_device():
    """``device=``: the model and every batch go there (the meta device: no data, but placement is checked)."""
    from lscnb.train import to_device

    moved = to_device({"x": torch.ones(2), "pair": (torch.zeros(1), 3)}, "meta")
    assert moved["x"].device.type == "meta" and moved["pair"][0].device.type == "meta" and moved["pair"][1] == 3
    seen = []
    hist = fit(
        _model(),
        _batch,
        lambda m, x, y: seen.append((x.device, next(m.parameters()).device)) or _mse(m, x, y),
        steps=3,
        progress=False,
        device="cpu",
    )
    assert len(hist.loss) == 3 and seen == [(torch.device("cpu"), torch.device("cpu"))] * 3


def test_fit_bad_arguments():
    with pytest.raises(ValueError, match="steps"):
        fit(_model(), _batch, _mse, steps=0)
    with pytest.raises(ValueError, match="optimizer"):
        fit(_model(), _batch, _mse, steps=1, optimizer="lbfgs2")
    with pytest.raises(ValueError, match="clip"):
        fit(_model(), _batch, _mse, steps=1, clip=-1.0)


def test_gaussian_expectations():
    assert abs(gaussian.expect(lambda x: x**2, 2.0) - 2.0) < 1e-12
    assert abs(gaussian.expect(lambda x: x**4, 1.0, 1.0) - 10.0) < 1e-10  # E(1+z)^4 = 1 + 6 + 3
    assert abs(gaussian.expect(np.cos, 1.0) - math.exp(-0.5)) < 1e-12
    with pytest.raises(ValueError, match="var"):
        gaussian.expect(np.cos, -1.0)


def test_vanilla_mean_field_closed_forms():
    assert abs(vanilla.gradient_rate(g=0.7, activation="linear") - 0.7) < 1e-15
    assert abs(vanilla.gradient_rate(g=math.sqrt(2), activation="relu") - 1.0) < 1e-12
    # tanh with no input: q* = 0 below g = 1, so chi = g^2
    assert abs(vanilla.chi(g=0.8, activation="tanh") - 0.64) < 1e-9
    # the fixed point satisfies its own equation
    q = vanilla.fixed_point(g=1.5, input_var=0.3)
    assert abs(vanilla.variance_map(q, g=1.5, input_var=0.3) - q) < 1e-10
    # inputs push tanh into saturation and lower the rate
    assert vanilla.gradient_rate(g=1.0, input_var=0.3) < vanilla.gradient_rate(g=1.0, input_var=0.0)
    with pytest.raises(ValueError, match="g must be positive"):
        vanilla.fixed_point(g=0.0)


def _steep_batch(k):
    return torch.full((2, 4), 1e25), torch.zeros(2)


@pytest.mark.parametrize("clip, lr", [(None, 1e-30), (1.0, 0.1)])
def test_an_exploding_but_finite_gradient_is_not_a_divergence(clip, lr):
    """A standard LSTM's gradient at T = 1024 (meanfield Fig. 1) explodes past 1.8e19 and stays finite: the run goes
    on, its norm is recorded (2e25 here, four entries of 1e25), and ``clip`` scales the step to its norm."""
    model = Steep()
    hist = fit(
        model, _steep_batch, lambda m, x, y: m(x).mean(), steps=3, lr=lr, optimizer="sgd", clip=clip, progress=False
    )
    assert not hist.diverged and len(hist.loss) == 3
    assert hist.grad_norm == pytest.approx([2e25] * 3, rel=1e-6)
    step = lr * (1.0 / 2e25 if clip else 1.0) * 1e25  # lr x (clip / norm) x gradient entry
    assert model.w.detach() == pytest.approx(torch.full((4,), -3 * step), rel=1e-5)
