"""The shared loop's hooks that the chapters' training uses: several optimisers, a penalty, epochs of shuffled
batches (EpochBatches), evaluation every epoch, and resume. Each is checked against a loop written plainly here."""

import copy

import numpy as np
import pytest
import torch

from lscnb.train import EpochBatches, accuracy, classification_loss, fit


def _data(n=50, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g, dtype=torch.float64)
    return x, (x[:, 0] > 0).long()


def _net(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).double()


def _plain_epochs(net, x, y, xt, yt, *, seed, epochs=3, batch=16, lr=0.05):
    """The classic loop on a copy of ``net``: each epoch permute with one generator, Adam through the batches, then
    the test accuracy. Returns the losses, the accuracies and the trained copy."""
    plain = copy.deepcopy(net)
    opt = torch.optim.Adam(plain.parameters(), lr=lr)
    g, losses, acc = torch.Generator().manual_seed(seed), [], []
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=g)
        for i in range(0, len(y), batch):
            idx = order[i : i + batch]
            loss = torch.nn.functional.cross_entropy(plain(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
        with torch.no_grad():
            acc.append(float((plain(xt).argmax(-1) == yt).float().mean()))
    return losses, acc, plain


@pytest.mark.parametrize("n, batch, drop_last", [(50, 8, False), (50, 8, True), (48, 8, False), (7, 7, True)])
def test_epoch_batches_are_those_of_a_loop_that_permutes_every_epoch(n, batch, drop_last):
    batches = EpochBatches(n, batch, seed=5, drop_last=drop_last)
    g, plain = torch.Generator().manual_seed(5), []
    for _ in range(3):
        order = torch.randperm(n, generator=g)
        stop = n - batch + 1 if drop_last else n
        plain += [order[i : i + batch] for i in range(0, stop, batch)]
    assert batches.per_epoch * 3 == len(plain)
    got = [batches(k) for k in range(len(plain))]
    assert all(torch.equal(a, b) for a, b in zip(got, plain))
    # each epoch covers every example once (all of them unless the short last batch is dropped)
    first = torch.cat(got[: batches.per_epoch])
    assert len(set(first.tolist())) == len(first) == (n // batch * batch if drop_last else n)
    # asked out of order (a resumed run), the draws it missed are replayed
    fresh = EpochBatches(n, batch, seed=5, drop_last=drop_last)
    for k in [len(plain) - 1, 0, batches.per_epoch + 1]:
        assert torch.equal(fresh(k), plain[k])
    assert batches.epochs(2 * batches.per_epoch + 1) == 3


def test_epoch_batches_bad_arguments():
    with pytest.raises(ValueError, match="batch_size"):
        EpochBatches(5, 8, seed=0, drop_last=True)
    with pytest.raises(ValueError, match="n"):
        EpochBatches(0, 8, seed=0)
    with pytest.raises(ValueError, match="tensors"):
        EpochBatches(5, 2, seed=0).over(torch.zeros(5), torch.zeros(4))


def test_epochs_of_adam_with_evaluation_match_a_plain_loop():
    """fit over EpochBatches with an eval every epoch = the classic loop: permute, step through batches, evaluate."""
    x, y = _data()
    xt, yt = _data(30, seed=1)
    net = _net()
    losses, acc, plain = _plain_epochs(net, x, y, xt, yt, seed=2)
    batches = EpochBatches(len(y), 16, seed=2)
    hist = fit(
        net,
        batches.over(x, y),
        classification_loss,
        steps=3 * batches.per_epoch,
        lr=0.05,
        eval_fn=lambda m: {"acc": accuracy(m, xt, yt)},
        eval_every=batches.per_epoch,
        progress=False,
    )
    assert hist.loss == pytest.approx(losses, rel=1e-12)
    assert [e["acc"] for e in hist.evals] == acc and [e["step"] for e in hist.evals] == [4, 8, 12]
    for p, q in zip(net.parameters(), plain.parameters()):
        torch.testing.assert_close(p, q, rtol=0, atol=0)


def test_two_optimisers_and_a_penalty_match_a_plain_loop():
    """A list of optimisers is stepped together (each its own parameters and rate); the penalty is differentiated
    but not recorded."""
    x, y = _data()
    net = _net()
    plain = copy.deepcopy(net)

    def opts(m):
        first, last = list(m[0].parameters()), list(m[2].parameters())
        return [torch.optim.SGD(first, lr=0.1), torch.optim.RMSprop(last, lr=0.01, alpha=0.9)]

    def penalty(m):
        return 0.3 * m[2].weight.pow(2).sum()

    mine, recorded = opts(plain), []
    for k in range(6):
        idx = torch.arange(k * 8, k * 8 + 8)
        loss = torch.nn.functional.cross_entropy(plain(x[idx]), y[idx])
        for o in mine:
            o.zero_grad()
        (loss + penalty(plain)).backward()
        for o in mine:
            o.step()
        recorded.append(float(loss.detach()))
    batch = lambda k: (x[k * 8 : k * 8 + 8], y[k * 8 : k * 8 + 8])  # noqa: E731
    hist = fit(net, batch, classification_loss, steps=6, optimizer=opts(net), penalty=penalty, progress=False)
    assert hist.loss == pytest.approx(recorded, rel=1e-12)
    for p, q in zip(net.parameters(), plain.parameters()):
        torch.testing.assert_close(p, q, rtol=0, atol=0)
    # the penalty changed the result: without it the readout ends elsewhere
    other = _net()
    fit(other, batch, classification_loss, steps=6, optimizer=opts(other), progress=False)
    assert not torch.allclose(other[2].weight, net[2].weight)


def test_resume_with_two_optimisers_and_epoch_batches(tmp_path):
    x, y = _data()

    class Stop(Exception):
        pass

    def run(ckpt=None, stop=None):
        net = _net()
        opts = [torch.optim.Adam(net[0].parameters(), lr=0.02), torch.optim.Adam(net[2].parameters(), lr=0.01)]
        batches = EpochBatches(len(y), 16, seed=4)

        def after(model, k):
            if k == stop:
                raise Stop

        hist = fit(
            net,
            batches.over(x, y),
            classification_loss,
            steps=14,
            optimizer=opts,
            after_step=after,
            checkpoint=ckpt,
            checkpoint_every=5,
            progress=False,
        )
        return hist, net

    straight, net = run()
    ckpt = tmp_path / "two.ckpt"
    with pytest.raises(Stop):
        run(ckpt, stop=7)
    resumed, net2 = run(ckpt)
    np.testing.assert_array_equal(resumed.loss, straight.loss)
    for p, q in zip(net.parameters(), net2.parameters()):
        torch.testing.assert_close(p, q, rtol=0, atol=0)


def test_a_list_of_optimisers_must_hold_optimisers():
    with pytest.raises(TypeError, match="optimizer"):
        fit(_net(), lambda k: _data(8), classification_loss, steps=1, optimizer=[], progress=False)
    with pytest.raises(TypeError, match="optimizer"):
        fit(_net(), lambda k: _data(8), classification_loss, steps=1, optimizer=["adam"], progress=False)


def test_fit_classifier_is_the_plain_epoch_loop():
    """fit_classifier = Adam over shuffled epochs seeded with ``seed``, the test accuracy after every epoch."""
    x, y = _data()
    xt, yt = _data(30, seed=1)
    net = _net()
    losses, acc, _ = _plain_epochs(net, x, y, xt, yt, seed=7)
    from lscnb.train import fit_classifier

    curve, hist = fit_classifier(net, (x, y), (xt, yt), epochs=3, batch_size=16, lr=0.05, seed=7, chance=0.1)
    assert curve == acc and hist.loss == pytest.approx(losses, rel=1e-12)
    assert [e["step"] for e in hist.evals] == [4, 8, 12] and not hist.diverged


def test_fit_classifier_pads_a_diverged_run_with_chance():
    from lscnb.train import fit_classifier

    x, y = _data()
    net = _net()
    with torch.no_grad():
        net[2].weight.fill_(float("inf"))  # the first loss is not finite: the run diverges at once
    curve, hist = fit_classifier(net, (x, y), (x, y), epochs=3, batch_size=16, lr=0.05, seed=0, chance=0.25)
    assert hist.diverged and curve == [0.25, 0.25, 0.25]


def test_checkpoint_goes_into_new_nested_folders(tmp_path):
    """A checkpoint path whose folders do not exist yet: they are made, and only the checkpoint is left there."""
    from lscnb.train import _save

    path = tmp_path / "a" / "b" / "run.ckpt"
    _save(path, {"step": 3})
    assert torch.load(path) == {"step": 3} and sorted(p.name for p in path.parent.iterdir()) == ["run.ckpt"]


def _flushing() -> bool:
    """Whether the CPU flushes float32 subnormals to zero just now (1e-40 is one)."""
    return float(torch.tensor([1e-40]) * 1.0) == 0.0


@pytest.mark.skipif(not torch.set_flush_denormal(False), reason="this CPU cannot flush subnormals")
def test_training_flushes_subnormals_and_turns_it_off_after():
    from lscnb.batched import fit_batched
    from lscnb.train import flushed_denormals

    assert not _flushing()
    seen = []
    x, y = _data()
    fit(
        _net(),
        lambda k: (x, y),
        lambda m, xb, yb: (seen.append(_flushing()), classification_loss(m, xb, yb))[1],
        steps=2,
        progress=False,
    )
    hists = fit_batched(
        [_net(0), _net(1)],
        lambda k: (x, y),
        lambda m, xb, yb: classification_loss(m, xb, yb),
        steps=2,
        in_dims=None,
        progress=False,
        eval_fn=lambda m: {"flushing": _flushing()},
        eval_every=1,
    )
    assert seen == [True, True] and not _flushing()
    assert [e["flushing"] for h in hists for e in h.evals] == [True] * 4
    with flushed_denormals():  # nested: the inner block leaves it on for the outer one
        with flushed_denormals():
            pass
        assert _flushing()
    assert not _flushing()
    with pytest.raises(RuntimeError), flushed_denormals():
        raise RuntimeError("a run that fails")
    assert not _flushing()
