"""lscnb.pretrain and lscnb.train pinned against answers they do not compute: square blocks cut by a seeded
permutation, averages worked by hand, the steps and seeds that reach the hooks, batches from a loop written out, full
error messages, a silent classifier fit, and the checkpoint temporary .gitignore covers (issue 27)."""

import fnmatch
import os

import pytest
import torch

from lscnb import pretrain as P
from lscnb import train as T
from lscnb.models.ffn import DeepFFN
from lscnb.models.lru import DeepLRU

F64 = torch.float64


# --------------------------------------------------------------------------------------------- pretrain
@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_non_square_radius_uses_the_generators_block(shape):
    """max |eig| of the rows (or columns) randperm(generator)[:3] picks, whatever the global RNG state."""
    J = torch.randn(*shape, dtype=F64, generator=torch.Generator().manual_seed(0))
    pick = torch.randperm(5, generator=torch.Generator().manual_seed(1))[:3]
    block = J[pick] if shape[0] == 5 else J[:, pick]
    expected = torch.linalg.eigvals(block).abs().max()
    for state in (2, 3):
        torch.manual_seed(state)
        got = P.differentiable_radius(J, torch.Generator().manual_seed(1))
        torch.testing.assert_close(got, expected, rtol=1e-12, atol=0)


def test_final_radii_averages_the_last_steps():
    """Radii 1, 2, 4: the last step alone by default (4), the last two when asked (3)."""
    hist = P.PretrainHistory(radius={"time0": [1.0, 2.0, 4.0], "depth0": [0.5, 0.5, 1.5]})
    assert P.final_radii(hist) == {"time0": 4.0, "depth0": 1.5}
    assert P.final_radii(hist, last=2) == {"time0": 3.0, "depth0": 1.0}


def test_pretrain_ffn_feeds_each_step_its_own_batch():
    """inputs(step) is called with 0, 1, 2 over three (unconverged) steps."""
    net = DeepFFN(2, 3, 3, 1, seed=0)
    x, seen = torch.randn(4, 2, generator=torch.Generator().manual_seed(2)), []

    def inputs(step):
        seen.append(step)
        return x

    P.pretrain_ffn(net, inputs, steps=3, eps=1e-12, progress=False)
    assert seen == [0, 1, 2]


def _lru_hooks(monkeypatch):
    """Record what pretrain_lru hands to pretrain, and the step t each transitions(step) asks lru_transitions for."""
    handed, steps_at = {}, []

    def fake_pretrain(transitions, groups, **kwargs):
        handed.update(kwargs, transitions=transitions)
        return P.PretrainHistory()

    monkeypatch.setattr(P, "pretrain", fake_pretrain)
    monkeypatch.setattr(P, "lru_transitions", lambda model, tokens, t: steps_at.append(t) or {})
    return handed, steps_at


def test_pretrain_lru_defaults_reach_pretrain(monkeypatch):
    """Target 1 (the paper's rho_t) and pretrain_lru's own 100 steps, not pretrain's 200."""
    handed, _ = _lru_hooks(monkeypatch)
    P.pretrain_lru(DeepLRU(3, 2, d_model=4, d_state=3, depth=1), lambda step: torch.zeros(1, 5))
    assert handed["target"] == 1.0 and handed["steps"] == 100


@pytest.mark.parametrize("seed", [None, 7])
def test_pretrain_lru_draws_its_steps_from_its_seed(monkeypatch, seed):
    """t of each update is torch.randint(T, generator seeded with `seed`, 0 by default), in order, whatever the
    global RNG state; inputs(step) receives the step."""
    g = torch.Generator().manual_seed(0 if seed is None else seed)
    expected = [int(torch.randint(1000, (), generator=g)) for _ in range(3)]
    for state in (1, 2):
        handed, steps_at = _lru_hooks(monkeypatch)
        seen = []
        inputs = lambda step: seen.append(step) or torch.zeros(1, 1000)  # noqa: E731
        options = {} if seed is None else {"seed": seed}
        P.pretrain_lru(DeepLRU(3, 2, d_model=4, d_state=3, depth=1), inputs, **options)
        torch.manual_seed(state)
        for step in range(3):
            handed["transitions"](step)
        assert steps_at == expected and seen == [0, 1, 2]


# --------------------------------------------------------------------------------------------- train
def test_history_final_names_the_missing_metric():
    """KeyError with the full message naming the metric."""
    with pytest.raises(KeyError) as err:
        T.History().final("accuracy")
    assert err.value.args == ("no values recorded for 'accuracy'",)


@pytest.mark.parametrize("bad", [[], ["adam"]])
def test_make_optimizers_rejects_a_list_without_optimizers(bad):
    """The full message."""
    with pytest.raises(TypeError, match=r"^optimizer: a list must hold one or more torch\.optim\.Optimizer instances$"):
        T.make_optimizers([torch.nn.Parameter(torch.zeros(1))], bad, 0.1)


def test_epoch_batches_are_those_of_a_loop_over_epochs(monkeypatch):
    """3 batches an epoch of 5: batch k is slice k % 3 of permutation k // 3 of a generator seeded with 3; jumping
    ahead then back replays them."""
    g = torch.Generator().manual_seed(3)
    perms = [torch.randperm(5, generator=g) for _ in range(3)]
    expected = {k: perms[k // 3][(k % 3) * 2 : (k % 3) * 2 + 2] for k in range(9)}
    draw, count = torch.randperm, []

    def counted(*args, **kwargs):
        count.append(1)
        if len(count) > 100:
            raise RuntimeError("the epochs never end")
        return draw(*args, **kwargs)

    monkeypatch.setattr(torch, "randperm", counted)
    batches = T.EpochBatches(5, 2, seed=3)
    for k in (7, 8, 0, 4, 3):
        assert torch.equal(batches(k), expected[k]), k


def test_fit_classifier_prints_no_progress_bar(capsys):
    """A fit_classifier run writes nothing to stderr (no tqdm bar)."""
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 2)
    x, y = torch.randn(8, 2), torch.tensor([0, 1] * 4)
    curve, _ = T.fit_classifier(model, (x, y), (x, y), epochs=2, batch_size=4, lr=0.1, seed=0, chance=0.5)
    assert len(curve) == 2
    assert capsys.readouterr().err == ""


def test_an_interrupted_checkpoint_save_leaves_a_git_ignored_temporary(tmp_path, monkeypatch):
    """Killed before the rename: run.ckpt.tmp is left (matched by .gitignore's *.ckpt.tmp), run.ckpt untouched."""

    def interrupted(src, dst):
        raise OSError("killed")

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(OSError, match="killed"):
        T._save(tmp_path / "run.ckpt", {"step": 1})
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["run.ckpt.tmp"] and fnmatch.fnmatch(names[0], "*.ckpt.tmp")
