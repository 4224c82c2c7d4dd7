"""lscnb.pretrain and lscnb.train pinned against answers they do not compute: square blocks cut by a seeded
permutation, averages worked by hand, the steps and seeds that reach the hooks, batches from a loop written out, full
error messages, a silent classifier fit, and the checkpoint temporary .gitignore covers (issue 27)."""

import fnmatch
import math
import os

import pytest
import torch

from lscnb import pretrain as P
from lscnb import train as T
from lscnb.models.ffn import DeepFFN
from lscnb.models.lru import DeepLRU
from lscnb.models.rnn import RNNCell, Stack
from lscnb.models.spiking import ALIFCell

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


def _pretrain_hooks(monkeypatch, transitions_fn: str):
    """Record what pretrain_lru / pretrain_stack hands to pretrain, and the step t each transitions(step) asks
    ``transitions_fn`` (lru_transitions or stack_transitions) for."""
    handed, steps_at = {}, []

    def fake_pretrain(transitions, groups, **kwargs):
        handed.update(kwargs, transitions=transitions)
        return P.PretrainHistory()

    monkeypatch.setattr(P, "pretrain", fake_pretrain)
    monkeypatch.setattr(P, transitions_fn, lambda model, x, t: steps_at.append(t) or {})
    return handed, steps_at


def test_pretrain_lru_defaults_reach_pretrain(monkeypatch):
    """Target 1 (the paper's rho_t) and pretrain_lru's own 100 steps, not pretrain's 200."""
    handed, _ = _pretrain_hooks(monkeypatch, "lru_transitions")
    P.pretrain_lru(DeepLRU(3, 2, d_model=4, d_state=3, depth=1), lambda step: torch.zeros(1, 5))
    assert handed["target"] == 1.0 and handed["steps"] == 100


@pytest.mark.parametrize("seed", [None, 7])
def test_pretrain_lru_draws_its_steps_from_its_seed(monkeypatch, seed):
    """t of each update is torch.randint(T, generator seeded with `seed`, 0 by default), in order, whatever the
    global RNG state; inputs(step) receives the step."""
    g = torch.Generator().manual_seed(0 if seed is None else seed)
    expected = [int(torch.randint(1000, (), generator=g)) for _ in range(3)]
    for state in (1, 2):
        handed, steps_at = _pretrain_hooks(monkeypatch, "lru_transitions")
        seen = []
        inputs = lambda step: seen.append(step) or torch.zeros(1, 1000)  # noqa: E731
        options = {} if seed is None else {"seed": seed}
        P.pretrain_lru(DeepLRU(3, 2, d_model=4, d_state=3, depth=1), inputs, **options)
        torch.manual_seed(state)
        for step in range(3):
            handed["transitions"](step)
        assert steps_at == expected and seen == [0, 1, 2]


def test_targets_are_looked_up_by_the_names_prefix_or_the_full_name():
    """Trailing digits only are cut: 'time0' and 'fooX3' read 'time' and 'fooX'; 'depth1' is keyed by its full
    name; a number is every group's target."""
    got = P._targets({"time": 0.5, "fooX": 2, "depth1": 3}, ["time0", "fooX3", "depth1"])
    assert got == {"time0": 0.5, "fooX3": 2.0, "depth1": 3.0}
    assert P._targets(2, ["a", "b1"]) == {"a": 2.0, "b1": 2.0}


def _prescribed(radii):
    """transitions(step) -> {group: (B, 1, 1) matrices holding radii[step][group]}, plus the scale groups: one
    1-D weight w (never shuffled) that every J depends on with zero gradient, so Adam leaves w alone."""
    w = torch.nn.Parameter(torch.ones(1, dtype=F64))

    def transitions(step):
        return {g: torch.tensor(r, dtype=F64).reshape(-1, 1, 1) + 0 * w.sum() for g, r in radii[step].items()}

    return transitions, {g: [w] for g in radii[0]}, w


def _spread_steps(cd):
    """Group a = [1 + c - d, 1 + c + d], b = [1 + c]: both means 1 + c, and the spread (unbiased std) exactly d."""
    return [{"a": [1 + c - d, 1 + c + d], "b": [1 + c]} for c, d in cd]


@pytest.mark.parametrize(
    "cd, options, stops_at, converged",
    [
        ([(0.25, 0.0)], {"eps": 0.25}, 1, True),  # |mean - 1| = eps: within
        ([(0.5, 0.0), (0.0, 0.25)], {"std_thr": 0.25}, 2, False),  # spread = std_thr: not below
        ([(0.5, 0.5), (0.0, 0.0)], {"std_thr": 0.375, "ema": 4}, 2, False),  # EMA 0.5 + (0 - 0.5) / 4 = std_thr
        ([(0.5, 0.5)] + [(0.0, 0.0)] * 19, {}, 10, True),  # defaults 0.2, 10: EMA 0.5 * 0.9^k < 0.2 first at k = 9
    ],
)
def test_pretrain_stops_by_its_rule(cd, options, stops_at, converged):
    """Prescribed radii: the losses mean((r - 1)^2), spreads d and steps worked by hand; stop once every mean is
    within eps (<=) and the spread and its EMA are below std_thr (<)."""
    transitions, groups, _ = _prescribed(_spread_steps(cd))
    hist = P.pretrain(transitions, groups, steps=len(cd), progress=False, **options)
    assert hist.steps == stops_at and hist.converged is converged and not hist.diverged
    cd = cd[:stops_at]
    torch.testing.assert_close(hist.loss, [((c - d) ** 2 + (c + d) ** 2 + c**2) / 3 for c, d in cd], rtol=1e-12, atol=0)
    assert hist.spread == [d for _, d in cd]
    assert hist.radius == {"a": [1 + c for c, _ in cd], "b": [1 + c for c, _ in cd]}


def test_one_radius_has_no_spread():
    """A single group of one radius 1: spread 0 (not the nan std of one value), converged at once."""
    transitions, groups, _ = _prescribed([{"time0": [1.0]}] * 3)
    hist = P.pretrain(transitions, groups, steps=3, progress=False)
    assert hist.spread == [0.0] and hist.loss == [0.0] and hist.steps == 1 and hist.converged


def test_one_group_of_several_radii_has_their_spread():
    """The stopping rule's spread is the std of rho(M_k) over every k (Sec. II-D), samples of one group too: radii
    0.5 and 1.5 average to the target but spread by 0.71 > 0.2, so it does not stop."""
    transitions, groups, _ = _prescribed([{"time0": [0.5, 1.5]}] * 3)
    hist = P.pretrain(transitions, groups, steps=3, eps=0.5, progress=False)
    assert hist.spread[0] == pytest.approx(2**-0.5, rel=1e-6) and not hist.converged and hist.steps == 3


def test_pretrain_runs_200_steps_by_default():
    """A radius held at 2 never converges: the documented default of 200 steps."""
    transitions, groups, _ = _prescribed([{"time0": [2.0]}] * 201)
    hist = P.pretrain(transitions, groups, progress=False)
    assert hist.steps == 200 and len(hist.loss) == 200 and not hist.converged


@pytest.mark.parametrize("clip, kappa", [((1.0, 1.15), 1.0), ((0.85, 1.0), 0.85)])
def test_kappa_is_clipped_at_bounds_that_touch_1(clip, kappa):
    """Radius 2 for target 1: kappa = clip(1/2, low, high), bounds equal to 1 allowed; w (zero gradient) * kappa."""
    transitions, groups, w = _prescribed([{"time0": [2.0]}])
    P.pretrain(transitions, groups, steps=1, kappa_clip=clip, progress=False)
    assert float(w.detach()) == kappa


def test_kappa_clip_low_bound_must_be_positive():
    """(0, 1.15): the full message with the pair passed."""
    transitions, groups, _ = _prescribed([{"time0": [2.0]}])
    with pytest.raises(ValueError, match=r"^kappa_clip must satisfy 0 < low <= 1 <= high, got \(0, 1\.15\)$"):
        P.pretrain(transitions, groups, steps=1, kappa_clip=(0, 1.15), progress=False)


@pytest.mark.parametrize("progress", [None, False])
def test_pretrain_progress_bar(capsys, progress):
    """By default a tqdm bar named 'LSC pre-training' on stderr, cleared at the end (leave=False); none when off."""
    transitions, groups, _ = _prescribed([{"time0": [2.0]}] * 2)
    P.pretrain(transitions, groups, steps=2, **({} if progress is None else {"progress": progress}))
    err = capsys.readouterr().err
    if progress is False:
        assert err == ""
    else:
        assert err.startswith("\rLSC pre-training:   0%|") and err.endswith("\r") and "\n" not in err
        assert err.rsplit("\r", 2)[-2].strip() == ""


def _lsc_by_hand(W, U, bias, steps, prob):
    """Sec. II-D written out for J = {time0: W, depth0: U (2 x 3: a random 2 x 2 column block)}: Adam(lr 3e-3) on
    mean((rho - 1)^2), each group times clip(1 / rho, 0.85, 1.15), each matrix shuffled when a draw is < prob;
    one generator seeded 0 for the block, the draws and the permutations, in that order."""
    W, U, bias = (p.clone().requires_grad_() for p in (W, U, bias))
    opt, gen = torch.optim.Adam([W, U, bias], lr=3e-3), torch.Generator().manual_seed(0)
    loss_log, rt_log, rd_log, shuffled = [], [], [], []
    for _ in range(steps):
        cols = torch.randperm(3, generator=gen)[:2]
        rt, rd = torch.linalg.eigvals(W).abs().max(), torch.linalg.eigvals(U[:, cols]).abs().max()
        loss = ((rt - 1) ** 2 + (rd - 1) ** 2) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            kt, kd = (min(max(1 / float(r), 0.85), 1.15) for r in (rt, rd))
            W.mul_(kt), bias.mul_(kt), U.mul_(kd)
            for p in (W, U):
                shuffled.append(bool(torch.rand((), generator=gen) < prob))
                if shuffled[-1]:
                    p.copy_(p.flatten()[torch.randperm(p.numel(), generator=gen)].reshape(p.shape))
        loss_log.append(float(loss.detach())), rt_log.append(float(rt.detach())), rd_log.append(float(rd.detach()))
    spread = [abs(a - b) / math.sqrt(2) for a, b in zip(rt_log, rd_log)]
    return W.detach(), U.detach(), bias.detach(), loss_log, {"time0": rt_log, "depth0": rd_log}, spread, shuffled


@pytest.mark.parametrize("at_the_draw", [False, True])
def test_pretrain_is_the_algorithm_written_out(at_the_draw):
    """Weights, losses, radii and spreads of 4 steps match the loop written out, with the defaults (target 1,
    lr 3e-3, seed 0, clip (0.85, 1.15), shuffle 1/3) and whatever the global RNG state; shuffle_prob equal to the
    first shuffle draw does not shuffle (draw < prob)."""
    g = torch.Generator().manual_seed(5)
    W0, U0, b0 = torch.randn(2, 2, generator=g, dtype=F64), torch.randn(2, 3, generator=g, dtype=F64), torch.ones(2)
    b0 = b0.to(F64)
    options = {}
    if at_the_draw:
        first = torch.Generator().manual_seed(0)
        torch.randperm(3, generator=first)
        options["shuffle_prob"] = float(torch.rand((), generator=first))
    W1, U1, b1, loss, radius, spread, shuffled = _lsc_by_hand(W0, U0, b0, 4, options.get("shuffle_prob", 1 / 3))
    assert shuffled[0] is False if at_the_draw else (any(shuffled) and not all(shuffled))
    for state in (1, 2):
        W, U, b = (torch.nn.Parameter(p.clone()) for p in (W0, U0, b0))
        transitions = lambda step: {"time0": W.unsqueeze(0), "depth0": U.unsqueeze(0)}  # noqa: E731
        torch.manual_seed(state)
        hist = P.pretrain(transitions, {"time0": [W, b], "depth0": [U]}, steps=4, eps=0.0, progress=False, **options)
        assert hist.steps == 4 and not hist.converged
        torch.testing.assert_close(hist.loss, loss, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(hist.radius, radius, rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(hist.spread, spread, rtol=1e-9, atol=1e-12)
        for got, want in ((W, W1), (U, U1), (b, b1)):
            torch.testing.assert_close(got.detach(), want, rtol=1e-10, atol=1e-12)


def test_stack_transitions_wants_a_batch_of_sequences():
    """A 2-D x: the full message with its shape."""
    with pytest.raises(ValueError, match=r"^x must have 3 dimensions, got shape \(2, 3\)$"):
        P.stack_transitions(Stack([RNNCell(3, 2)]), torch.zeros(2, 3), 0)


@pytest.mark.parametrize("t", [0, 1, 2])
def test_stack_transitions_of_a_tanh_rnn_in_closed_form(t):
    """h_t = tanh(W h_{t-1} + U x_t), h_{-1} = 0, written out: d h_t / d h_{t-1} = diag(1 - h_t^2) W and
    d h_t / d x_t = diag(1 - h_t^2) U, per batch row."""
    torch.manual_seed(0)
    cell = RNNCell(2, 3).double()
    x = torch.randn(2, 3, 2, dtype=F64, generator=torch.Generator().manual_seed(1))
    W, U = cell.weight_hh.detach(), cell.weight_ih.detach()
    h = torch.zeros(2, 3, dtype=F64)
    for s in range(t + 1):
        h = torch.tanh(h @ W.T + x[:, s] @ U.T)
    d = (1 - h**2).unsqueeze(-1)
    got = P.stack_transitions(Stack([cell]), x, t)
    torch.testing.assert_close(got["time0"], d * W, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(got["depth0"], d * U, rtol=1e-10, atol=1e-12)


def test_stack_scale_groups_after_a_cell_that_names_its_own():
    """An ALIF layer (App. H: time -> W, tau_y, tau_th; depth -> U, b_th, beta) then an RNN layer (W; U)."""
    alif, rnn = ALIFCell(1, 2, seed=0), RNNCell(2, 2)
    groups = P.stack_scale_groups(Stack([alif, rnn]))
    expected = {
        "time0": [alif.weight_hh, alif.tau_y, alif.tau_th],
        "depth0": [alif.weight_ih, alif.b_th, alif.beta],
        "time1": [rnn.weight_hh],
        "depth1": [rnn.weight_ih],
    }
    assert list(groups) == list(expected)
    assert all([id(p) for p in groups[k]] == [id(p) for p in v] for k, v in expected.items())


@pytest.mark.parametrize("kwargs, target, steps", [({}, 1.0, 100), ({"target": 0.5, "steps": 7}, 0.5, 7)])
def test_pretrain_stack_hands_its_target_and_steps_to_pretrain(monkeypatch, kwargs, target, steps):
    """Target 1 (the paper's rho_t) and pretrain_stack's own 100 steps by default, else those given."""
    handed, _ = _pretrain_hooks(monkeypatch, "stack_transitions")
    P.pretrain_stack(Stack([RNNCell(1, 2)]), lambda step: torch.zeros(1, 5, 1), **kwargs)
    assert handed["target"] == target and handed["steps"] == steps


@pytest.mark.parametrize("seed", [None, 7])
def test_pretrain_stack_draws_its_steps_from_its_seed(monkeypatch, seed):
    """t of each update is torch.randint(T, generator seeded with `seed`, 0 by default), in order, whatever the
    global RNG state; inputs(step) receives the step."""
    g = torch.Generator().manual_seed(0 if seed is None else seed)
    expected = [int(torch.randint(1000, (), generator=g)) for _ in range(3)]
    for state in (1, 2):
        handed, steps_at = _pretrain_hooks(monkeypatch, "stack_transitions")
        seen = []
        inputs = lambda step: seen.append(step) or torch.zeros(1, 1000, 1)  # noqa: E731
        P.pretrain_stack(Stack([RNNCell(1, 2)]), inputs, **({} if seed is None else {"seed": seed}))
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


class _Recorded(torch.Tensor):
    """A tensor that records the keyword arguments of its .to calls."""

    calls: list = []

    def to(self, *args, **kwargs):
        _Recorded.calls.append(kwargs)
        return super().to(*args, **kwargs)


def test_to_device_copies_without_blocking():
    """Every tensor, also inside a tuple and a dict, is moved with non_blocking=True (pinned host memory then
    overlaps the copy with GPU work)."""
    _Recorded.calls = []
    t = torch.zeros(2).as_subclass(_Recorded)
    T.to_device((t, {"y": t}), "cpu")
    assert _Recorded.calls == [{"non_blocking": True}] * 2


def test_make_optimizer_defaults_to_adam_at_1e_3():
    """The documented default: Adam with lr 1e-3."""
    opt = T.make_optimizer([torch.nn.Parameter(torch.zeros(1))])
    assert type(opt) is torch.optim.Adam and opt.param_groups[0]["lr"] == 1e-3


@pytest.mark.parametrize("name", sorted(T.OPTIMIZERS))
def test_make_optimizer_asks_for_foreach_kernels_unless_told(name):
    """Named optimisers use the multi-tensor kernels (the per-tensor loop's numbers, faster); ``foreach`` given wins."""
    p = [torch.nn.Parameter(torch.zeros(1))]
    assert T.make_optimizer(p, name, 0.1).param_groups[0]["foreach"] is True
    assert T.make_optimizer(p, name, 0.1, foreach=False).param_groups[0]["foreach"] is False
    if name in ("adam", "adamw"):  # the fused kernel excludes foreach: asking for it is not an error
        assert T.make_optimizer(p, name, 0.1, fused=True).param_groups[0]["fused"] is True


@pytest.mark.parametrize("name", sorted(T.OPTIMIZERS))
def test_foreach_kernels_give_the_per_tensor_loops_numbers(name):
    """Ten steps on mixed-shape and complex parameters (the LRU's) end bit for bit where the per-tensor loop ends."""
    g = torch.Generator().manual_seed(0)
    start = [torch.randn(5, 3, generator=g), torch.randn(7, generator=g)]
    start.append(torch.randn(4, dtype=torch.cfloat, generator=g))
    grads = [[torch.randn(s.shape, dtype=s.dtype, generator=g) for s in start] for _ in range(10)]
    ends = []
    for foreach in (False, True):
        ps = [torch.nn.Parameter(s.clone()) for s in start]
        kw = {"momentum": 0.9} if name == "sgd" else {}
        opt = T.make_optimizer(ps, name, 0.01, foreach=foreach, **kw)
        for gs in grads:
            for p, gr in zip(ps, gs):
                p.grad = gr
            opt.step()
        ends.append([p.detach() for p in ps])
    assert all(torch.equal(a, b) for a, b in zip(*ends))


def _tiny_fit(**kwargs):
    """A 2 -> 1 linear model on one fixed batch, squared error."""
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    x, y = torch.randn(4, 2), torch.randn(4, 1)
    loss = lambda m, xb, yb: ((m(xb) - yb) ** 2).mean()  # noqa: E731
    return model, T.fit(model, lambda k: (x, y), loss, **kwargs)


def test_fit_first_adam_step_moves_each_weight_by_the_default_lr():
    """Adam's first step is lr * g / (|g| + 1e-8): every weight moves by 1e-3 (the default lr)."""
    torch.manual_seed(0)
    before = [p.detach().clone() for p in torch.nn.Linear(2, 1).parameters()]
    model, _ = _tiny_fit(steps=1, progress=False)
    for p, p0 in zip(model.parameters(), before):
        torch.testing.assert_close((p.detach() - p0).abs(), torch.full_like(p0, 1e-3), rtol=1e-4, atol=0)


def test_fit_shows_a_train_bar_by_default(capsys):
    """By default a tqdm bar named 'train' on stderr."""
    _tiny_fit(steps=2)
    assert capsys.readouterr().err.startswith("\rtrain:   0%|")


def test_fit_checkpoints_every_200_steps_by_default(tmp_path):
    """200 steps with a checkpoint path: the file holds step 200."""
    _tiny_fit(steps=200, progress=False, checkpoint=tmp_path / "run.ckpt")
    assert torch.load(tmp_path / "run.ckpt", weights_only=False)["step"] == 200


def test_fit_resumes_from_an_older_file_with_one_optimizer(tmp_path):
    """A file of the older format ('optimizer': one state dict, no generators) resumes at its step 2: only step 2
    is run, and the wall time goes on from the file's."""
    path = tmp_path / "run.ckpt"
    _tiny_fit(steps=2, progress=False, checkpoint=path, checkpoint_every=2)
    state = torch.load(path, weights_only=False)
    state["optimizer"] = state.pop("optimizers")[0]
    del state["generators"]
    state["history"]["wall_time_s"] = 100.0
    torch.save(state, path)
    gens = [torch.Generator().manual_seed(0)]
    _, hist = _tiny_fit(steps=3, progress=False, checkpoint=path, checkpoint_every=10, generators=gens)
    assert hist.step == [0, 1, 2] and len(hist.loss) == 3
    assert 100.0 <= hist.wall_time_s < 160.0  # the saved 100 s carried on
    assert torch.equal(gens[0].get_state(), torch.Generator().manual_seed(0).get_state())  # no saved state: untouched


class _Stop(Exception):
    pass


def test_fit_moves_the_model_and_the_batches_to_the_device():
    """device='meta' (there on every machine): the loss sees the model's weights and the batch on meta."""
    seen = []

    def loss(m, x, y):
        seen.append((next(m.parameters()).device.type, x.device.type, y.device.type))
        raise _Stop

    with pytest.raises(_Stop):
        T.fit(torch.nn.Linear(2, 1), lambda k: (torch.zeros(1, 2), torch.zeros(1, 1)), loss, steps=1, device="meta")
    assert seen == [("meta", "meta", "meta")]


def test_fit_resumes_with_the_file_read_in_full_onto_the_device(tmp_path, monkeypatch):
    """torch.load is asked for weights_only=False (the file holds the History and RNG states) and map_location=the
    device given."""
    path, calls, load = tmp_path / "run.ckpt", [], torch.load
    _tiny_fit(steps=1, progress=False, checkpoint=path, checkpoint_every=1)
    monkeypatch.setattr(torch, "load", lambda *a, **k: calls.append(k) or load(*a, **k))
    _tiny_fit(steps=2, progress=False, checkpoint=path, device="cpu")
    assert calls == [{"weights_only": False, "map_location": torch.device("cpu")}]


@pytest.mark.parametrize("cuda_rng", [None, [torch.arange(3, dtype=torch.uint8)]])
def test_fit_restores_the_cuda_rng_states_it_saved(tmp_path, monkeypatch, cuda_rng):
    """With CUDA there (stubbed), a file's CUDA RNG states are restored as saved; a file without them restores none."""
    path = tmp_path / "run.ckpt"
    _tiny_fit(steps=1, progress=False, checkpoint=path, checkpoint_every=1)
    state = torch.load(path, weights_only=False)
    state["cuda_rng"] = cuda_rng
    torch.save(state, path)
    restored = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", lambda states: restored.append(states))
    _tiny_fit(steps=2, progress=False, checkpoint=path, checkpoint_every=10)
    assert len(restored) == (cuda_rng is not None)
    assert all(len(r) == 1 and torch.equal(r[0], cuda_rng[0]) for r in restored)


def test_a_resumed_fit_bar_starts_at_the_saved_step(tmp_path, capsys):
    """Resumed at step 1 of 3: the 'train' bar opens at 1/3 (33%) and is cleared at the end (leave=False)."""
    path = tmp_path / "run.ckpt"
    _tiny_fit(steps=1, progress=False, checkpoint=path, checkpoint_every=1)
    _tiny_fit(steps=3, checkpoint=path, checkpoint_every=10)
    err = capsys.readouterr().err
    assert err.startswith("\rtrain:  33%|") and " 1/3 " in err.split("\r")[1]
    assert err.endswith("\r") and "\n" not in err and err.rsplit("\r", 2)[-2].strip() == ""


def test_fit_resumed_from_a_diverged_file_returns_its_history(tmp_path):
    """A checkpoint whose History already diverged: the resumed run trains no further step and returns that
    History (still diverged, its steps unchanged)."""
    path = tmp_path / "run.ckpt"
    _tiny_fit(steps=2, progress=False, checkpoint=path, checkpoint_every=2)
    state = torch.load(path, weights_only=False)
    state["history"].update(diverged=True, diverged_step=1)
    torch.save(state, path)
    _, hist = _tiny_fit(steps=5, progress=False, checkpoint=path)
    assert hist is not None and hist.diverged and hist.diverged_step == 1 and hist.step == [0, 1]


def test_fit_with_no_gradient_records_a_zero_norm():
    """A loss that reaches no parameter leaves every .grad None: the recorded gradient norm is 0 (no stack of an
    empty list), and the weights stay where they were."""
    model = torch.nn.Linear(2, 1)
    before = [p.detach().clone() for p in model.parameters()]
    loss = lambda m, x, y: (x.sum() * 0.0).requires_grad_()  # noqa: E731
    hist = T.fit(model, lambda k: (torch.ones(1, 2), None), loss, steps=3, progress=False)
    assert hist.grad_norm == [0.0, 0.0, 0.0] and not hist.diverged
    assert all(torch.equal(p, p0) for p, p0 in zip(model.parameters(), before))


def test_fit_sets_unused_gradients_to_none():
    """zero_grad(set_to_none=True): a bias that the loss stops using after step 0 gets no gradient, so Adam moves it
    once (by lr = 1e-3, its first step) and then leaves it alone; zeroed gradients would let momentum move it on."""
    model = torch.nn.Linear(1, 1)
    with torch.no_grad():
        model.weight.fill_(0.5)
        model.bias.fill_(0.5)
    loss = lambda m, x, k: (m.weight * x).sum() + (m.bias.sum() if k == 0 else 0.0)  # noqa: E731
    T.fit(model, lambda k: (torch.ones(1), k), loss, steps=4, progress=False)
    torch.testing.assert_close(model.bias.detach(), torch.tensor([0.5 - 1e-3]), rtol=0, atol=1e-7)


def test_fit_updates_the_bar_every_ten_steps(monkeypatch):
    """The bar's postfix is the loss of steps 0, 10 and 20 of 25 (4 significant digits), and the bar is cleared at
    the end."""
    made = []

    class Bar:
        def __init__(self, iterable, **kwargs):
            self.iterable, self.kwargs, self.postfixes = iterable, kwargs, []
            made.append(self)

        def __iter__(self):
            return iter(self.iterable)

        def set_postfix(self, **kwargs):
            self.postfixes.append(kwargs)

    monkeypatch.setattr(T, "tqdm", Bar)
    _, hist = _tiny_fit(steps=25)
    assert len(made) == 1 and made[0].kwargs["leave"] is False
    assert made[0].postfixes == [{"loss": f"{hist.loss[k]:.4g}"} for k in (0, 10, 20)]


def test_fit_checkpoint_holds_the_wall_time_so_far(tmp_path):
    """The History saved at step 2 holds the seconds spent so far (well under a minute for three tiny steps)."""
    _tiny_fit(steps=3, progress=False, checkpoint=tmp_path / "run.ckpt", checkpoint_every=2)
    assert 0.0 <= torch.load(tmp_path / "run.ckpt", weights_only=False)["history"]["wall_time_s"] < 60.0


@pytest.mark.parametrize("cuda", [False, True])
def test_fit_checkpoint_saves_the_cuda_rng_only_with_cuda(tmp_path, monkeypatch, cuda):
    """The file's 'cuda_rng' holds every GPU's RNG state where CUDA is available, None where it is not (torch.cuda
    stubbed: the states are a marker, and asking for them without CUDA fails)."""

    def states():
        if not cuda:
            raise AssertionError("asked for the CUDA RNG states without CUDA")
        return ["gpu0 state"]

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", states)
    _tiny_fit(steps=1, progress=False, checkpoint=tmp_path / "run.ckpt", checkpoint_every=1)
    saved = torch.load(tmp_path / "run.ckpt", weights_only=False)
    assert "cuda_rng" in saved and saved["cuda_rng"] == (["gpu0 state"] if cuda else None)
