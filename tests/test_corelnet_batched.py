"""The CoRelNet chapter's batched runs: runs that differ only in seed and held-out split train together
(``--executor batched``) and end as they end alone; the plain-op LSTM step that lets ``vmap`` batch the ESBN, the NTM
and the LSTM baseline is torch's LSTM."""

import numpy as np
import pytest
import torch

from lscnb import runs
from lscnb.config import Profile
from lscnb.experiments import corelnet as ex
from lscnb.experiments.corelnet import common, curves, encoders, games, unseen
from lscnb.models.relational import LSTMBaseline, lstm_step


def _ctx(seed: int):
    return runs.RunContext(Profile("quick"), "cpu", seed, None, False)


def _same(alone: list[dict], together: list[dict], test: int) -> None:
    for a, b in zip(alone, together):
        assert a.keys() == b.keys() and not a["diverged"] and not b["diverged"]
        np.testing.assert_allclose(b["loss"], a["loss"], rtol=1e-4, atol=1e-6)
        for k in a.keys() - {"loss"}:
            if isinstance(a[k], float):  # an accuracy: a test sample on the boundary may flip with the rounding
                assert b[k] == pytest.approx(a[k], abs=1.5 / test), k
            else:
                assert b[k] == a[k], k


CASES = [
    (common.task_run, common.task_group, dict(task="rmts", model="corelnet")),
    (common.task_run, common.task_group, dict(task="same_different", model="esbn")),
    (unseen.unseen_run, unseen.unseen_group, dict(task="rmts3", model="lstm", lr=5e-4)),
    (games.games_run, games.games_group, dict(task="row_matching", model="transformer", lr=5e-4)),
    (encoders.encoder_run, encoders.encoder_group, dict(task="same_different", model="corelnet", encoder="learned")),
    (curves.unseen_encoder_run, curves.unseen_encoder_group, dict(task="rmts3", model="corelnet", encoder="random")),
]


@pytest.mark.parametrize("run_fn, group_fn, base", CASES, ids=[f"{c[2]['task']}-{c[2]['model']}" for c in CASES])
def test_runs_that_differ_in_seed_and_split_train_together_as_alone(run_fn, group_fn, base):
    """Each run keeps its own initial weights, object encoder, shapes and sample stream in the group."""
    test = 60
    cfgs = [dict(base, m=m, seed=s, iters=6, test=test) for m, s in ((0, 0), (50, 1), (50, 2))]
    alone = [run_fn(dict(c), _ctx(c["seed"])) for c in cfgs]
    together = group_fn([dict(c) for c in cfgs], [_ctx(c["seed"]) for c in cfgs])
    _same(alone, together, test)
    assert not np.allclose(alone[0]["loss"], alone[1]["loss"])  # the runs differ: each got its own set-up


def test_runs_that_cannot_batch_train_one_by_one():
    """CoRelNet_mix (Gumbel noise) and the learned encoders (distinct objects; with or without L1) are trained alone
    inside their group, exactly so; the random encoder (a fixed table) trains in the group."""
    cfgs = [dict(task="same_different", model="mix", m=0, seed=s, iters=4, test=40) for s in (0, 1)]
    alone = [common.task_run(dict(c), _ctx(c["seed"])) for c in cfgs]
    together = common.task_group([dict(c) for c in cfgs], [_ctx(c["seed"]) for c in cfgs])
    for a, b in zip(alone, together):
        assert np.array_equal(a["loss"], b["loss"]) and a["similarity_share"] == b["similarity_share"]
    l1 = [
        dict(task="same_different", model="corelnet", encoder="learned_l1", m=0, seed=s, iters=1, test=4)
        for s in (0, 1)
    ]
    assert not any(common.batchable(encoders._encoded_job(c, _ctx(0))) for c in l1)
    assert not common.batchable(encoders._encoded_job(dict(l1[0], encoder="learned"), _ctx(0)))
    assert common.batchable(encoders._encoded_job(dict(l1[0], encoder="random"), _ctx(0)))


def test_the_twins_group_a_figures_runs_by_model_and_task():
    key = runs.group_key
    mcurve = ex.FIGURES["mcurve"]("full")
    one = [r for r in mcurve if r.config["task"] == "rmts" and r.config["model"] == "esbn"]
    assert len(one) >= 4 and len({key(r) for r in one}) == 1 and {r.config["m"] for r in one} != {one[0].config["m"]}
    assert len({key(r) for r in mcurve}) == len({(r.config["task"], r.config["model"]) for r in mcurve})
    assert all(
        key(r) is not None
        for f in ("unseen", "games", "encoder", "mcurve_unseen_encoder")
        for r in ex.FIGURES[f]("quick")
    )
    # a learned encoder's runs train alone (batchable): each is its own group, so each result is stored as it ends
    for f in ("mcurve_encoder", "mcurve_unseen_encoder", "spurious"):
        full = ex.FIGURES[f]("full")
        learned = [r for r in full if r.config["encoder"] in ("learned", "learned_l1")]
        fixed = [r for r in full if r.config["encoder"] not in ("learned", "learned_l1")]
        assert learned and len({key(r) for r in learned}) == len(learned)
        assert len({key(r) for r in fixed}) == len(
            {(r.config["task"], r.config["model"], r.config["encoder"]) for r in fixed}
        )


def test_the_plain_lstm_step_is_torchs():
    torch.manual_seed(0)
    cell, x = torch.nn.LSTMCell(5, 7), torch.randn(3, 5)
    state = torch.randn(3, 7), torch.randn(3, 7)
    for got, want in zip(lstm_step(cell, x, state), cell(x, state)):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    model, x = LSTMBaseline(4, 2, dim=8, hidden=6), torch.randn(3, 4, 8)
    torch.testing.assert_close(model(x), model.out(model.lstm(model.tcn(x))[0][:, -1]), rtol=1e-6, atol=1e-6)
