"""fit_batched trains models of one architecture together exactly as fit trains each alone (float64, to rounding);
the stacked forward agrees with the models' own; run_group and the batched executor give each run its own result."""

import math

import numpy as np
import pytest
import torch
from steep import Steep

from lscnb import config, runs, sweep
from lscnb.batched import fit_batched, run_group
from lscnb.experiments import gradients
from lscnb.models import LSTMCell
from lscnb.models.rnn import RNNCell, SequenceModel
from lscnb.models.stacked import stacked_forward
from lscnb.train import carried_time, fit

D, N, T, B, STEPS = 3, 8, 12, 6, 25


def make(seed: int, gain: float = 1.0) -> SequenceModel:
    torch.manual_seed(seed)
    return SequenceModel([RNNCell(D, N, weight_scale=gain)], 1).double()


def batches(seed: int):
    def draw(k):
        g = torch.Generator().manual_seed(1000 * seed + k)
        x = torch.randn(B, T, D, generator=g, dtype=torch.float64)
        return x, x[:, :, :1].sum(1) + 0.1 * torch.randn(B, 1, generator=g, dtype=torch.float64)

    return draw


def mse(m, x, y):
    return torch.nn.functional.mse_loss(m(x), y)


def solo(seed, lr, gain=1.0, **kw):
    model = make(seed, gain)
    return model, fit(model, batches(seed), mse, steps=STEPS, lr=lr, progress=False, **kw)


def assert_same(solo_run, model, hist, tol=1e-10):
    ref_model, ref = solo_run
    assert (hist.diverged, hist.diverged_step, hist.step) == (ref.diverged, ref.diverged_step, ref.step)
    assert hist.loss == pytest.approx(ref.loss, rel=tol, abs=tol)
    assert hist.grad_norm == pytest.approx(ref.grad_norm, rel=tol, abs=tol)
    for (name, a), b in zip(ref_model.named_parameters(), model.parameters()):
        assert torch.allclose(a, b, rtol=tol, atol=tol), name
    assert len(hist.evals) == len(ref.evals)
    for e, r in zip(hist.evals, ref.evals):
        assert e == pytest.approx(r, rel=tol, abs=tol)


@pytest.mark.parametrize("forward", ["auto", "vmap"])
@pytest.mark.parametrize(
    "optimizer, kwargs, lrs",
    [
        ("adam", {}, [1e-2, 3e-3, 1e-2, 2e-2]),
        ("sgd", {"momentum": 0.9, "weight_decay": 1e-3}, [0.05, 0.02, 0.01, 0.05]),
        ("adamw", {"weight_decay": 0.1}, [1e-2, 5e-3, 2e-2, 1e-3]),
        ("rmsprop", {}, [1e-3, 3e-3, 1e-3, 5e-4]),
    ],
)
def test_matches_solo_runs_with_clipping(optimizer, kwargs, lrs, forward):
    """Seeds, init scales and learning rates differ; the stacked forward ("auto") and vmap both match."""
    seeds, gains = [0, 1, 2, 3], [1.0, 0.8, 1.3, 1.0]
    kw = dict(optimizer=optimizer, optimizer_kwargs=kwargs, clip=0.5)
    refs = [solo(s, lr, g, **kw) for s, lr, g in zip(seeds, lrs, gains)]
    assert any(gn > 0.5 for _, h in refs for gn in h.grad_norm)  # clipping is at work
    models = [make(s, g) for s, g in zip(seeds, gains)]
    hists = fit_batched(
        models, [batches(s) for s in seeds], mse, steps=STEPS, lr=lrs, progress=False, forward=forward, **kw
    )
    for ref, model, hist in zip(refs, models, hists):
        assert_same(ref, model, hist)


def test_shared_batch_and_evals():
    """One batch for every model (in_dims=None), one learning rate, eval_fn every few steps and at the end."""
    x_val, y_val = batches(99)(0)
    evals = dict(eval_fn=lambda m: {"mse": mse(m, x_val, y_val)}, eval_every=10)
    refs = []
    for seed in range(3):
        model = make(seed)
        refs.append((model, fit(model, batches(7), mse, steps=STEPS, lr=1e-2, clip=1.0, progress=False, **evals)))
    models = [make(seed) for seed in range(3)]
    hists = fit_batched(models, batches(7), mse, steps=STEPS, lr=1e-2, clip=1.0, in_dims=None, progress=False, **evals)
    assert [e["step"] for e in hists[0].evals] == [10, 20, STEPS]
    for ref, model, hist in zip(refs, models, hists):
        assert_same(ref, model, hist, tol=1e-12)


def cosine(peak: float, k: int) -> float:
    return 1e-7 + 0.5 * (peak - 1e-7) * (1 + math.cos(math.pi * min(k, STEPS) / STEPS))


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_a_schedule_gives_each_model_its_rate_at_every_step(optimizer):
    """Per-model cosine schedules (the memory chapter's teacher runs), as fit's after_step sets each solo run's rate
    for the next step; a schedule of one rate for all (a uniform step) matches too."""
    peaks = [1e-2, 3e-3, 2e-2]
    refs = []
    for seed, peak in enumerate(peaks):
        model, holder = make(seed), {}

        def opt(params, peak=peak):
            holder["opt"] = torch.optim.Adam(params, lr=peak) if optimizer == "adam" else torch.optim.SGD(params, peak)
            return holder["opt"]

        def after(m, k, peak=peak):
            holder["opt"].param_groups[0]["lr"] = cosine(peak, k + 1)

        refs.append((model, fit(model, batches(5), mse, steps=STEPS, optimizer=opt, after_step=after, progress=False)))
    models = [make(seed) for seed in range(3)]
    kw = dict(steps=STEPS, optimizer=optimizer, in_dims=None, progress=False)
    hists = fit_batched(models, batches(5), mse, lr=peaks, schedule=lambda k: [cosine(p, k) for p in peaks], **kw)
    for ref, model, hist in zip(refs, models, hists):
        assert_same(ref, model, hist)
    assert refs[0][1].loss[-1] != refs[1][1].loss[-1]  # the rates made a difference
    one = fit_batched([make(0), make(0)], batches(5), mse, lr=1.0, schedule=lambda k: cosine(peaks[0], k), **kw)
    assert_same(refs[0], models[0], one[0])


def test_a_killed_group_resumes_from_its_checkpoint_and_ends_where_a_whole_one_ends(tmp_path):
    """A group saved every step and killed when it asks for batch 7 resumes there: the same histories, the same
    parameters, the generator the batches come from restored, a diverged model still frozen."""
    lrs = [1e-2, 3e-3, 1e6]

    def group(checkpoint=None, die_at=None):
        gen = torch.Generator().manual_seed(3)

        def draw(k):
            if k == die_at:
                raise KeyboardInterrupt
            x = torch.randn(B, T, D, generator=gen, dtype=torch.float64)
            return x, x[:, :, :1].sum(1)

        models = [make(s) for s in range(3)]
        kw = dict(lr=lrs, optimizer="sgd", optimizer_kwargs={"momentum": 0.9}, in_dims=None, progress=False)
        kw.update(generators=(gen,), checkpoint_every=1)
        return models, fit_batched(models, draw, mse, steps=STEPS, checkpoint=checkpoint, **kw)

    whole_models, whole = group()
    assert whole[2].diverged and not whole[0].diverged
    with pytest.raises(KeyboardInterrupt):
        group(tmp_path / "g.ckpt", die_at=7)
    assert (tmp_path / "g.ckpt").exists()
    with carried_time() as before:  # the group's seconds before the kill, for the runs' wall time (lscnb.runs)
        models, resumed = group(tmp_path / "g.ckpt")
    assert len(before) == 1 and before[0] > 0
    for a, b, ma, mb in zip(whole, resumed, whole_models, models):
        assert (b.step, b.diverged, b.diverged_step) == (a.step, a.diverged, a.diverged_step)
        assert b.loss == pytest.approx(a.loss, rel=1e-12) and b.grad_norm == pytest.approx(a.grad_norm, rel=1e-12)
        assert all(torch.allclose(p, q, rtol=1e-12, atol=0) for p, q in zip(ma.parameters(), mb.parameters()))
    assert resumed[0].wall_time_s > 0


@pytest.mark.parametrize(
    "optimizer, kwargs, lrs",
    [  # plain SGD leaves a zero gradient's parameters alone; momentum and Adam would move them on: frozen, they stay
        ("sgd", {}, [0.05, 1e6, 0.02]),
        ("sgd", {"momentum": 0.9}, [0.05, 1e6, 0.02]),
        ("adam", {}, [1e-2, 1e200, 3e-3]),
    ],
)
def test_diverged_model_is_frozen_and_the_others_go_on(optimizer, kwargs, lrs):
    seeds = [0, 1, 2]
    refs = [solo(s, lr, optimizer=optimizer, optimizer_kwargs=kwargs) for s, lr in zip(seeds, lrs)]
    assert refs[1][1].diverged and not refs[0][1].diverged and not refs[2][1].diverged
    models = [make(s) for s in seeds]
    hists = fit_batched(
        models,
        [batches(s) for s in seeds],
        mse,
        steps=STEPS,
        lr=lrs,
        optimizer=optimizer,
        optimizer_kwargs=kwargs,
        progress=False,
    )
    assert hists[1].diverged and hists[1].diverged_step == refs[1][1].diverged_step < STEPS
    assert len(hists[1].loss) == hists[1].diverged_step
    for ref, model, hist in zip(refs, models, hists):
        assert_same(ref, model, hist)


def test_all_diverged_stops_early():
    models = [make(s) for s in range(2)]
    hists = fit_batched(models, batches(0), mse, steps=STEPS, lr=1e6, optimizer="sgd", in_dims=None, progress=False)
    assert all(h.diverged and h.diverged_step < STEPS for h in hists)
    assert all(math.isfinite(float(p.detach().sum())) for m in models for p in m.parameters())


def test_bad_arguments_name_the_argument():
    models = [make(0), make(1)]
    call = lambda **kw: fit_batched(
        kw.pop("models", models), kw.pop("batch_fn", batches(0)), mse, progress=False, **{"steps": 2, **kw}
    )
    for kw, err, word in [
        (dict(models=[]), ValueError, "models"),
        (dict(models=make(0)), ValueError, "models"),
        (dict(models=[models[0], models[0]]), ValueError, "distinct"),
        (dict(models=[make(0), SequenceModel([RNNCell(D, N + 1)], 1).double()]), ValueError, "models"),
        (dict(steps=0), ValueError, "steps"),
        (dict(lr=-1.0), ValueError, "lr"),
        (dict(lr=[1e-3]), ValueError, "lr"),
        (dict(lr=[1e-3, float("nan")]), ValueError, "lr[1]"),
        (dict(schedule=1e-3), TypeError, "schedule"),
        (dict(schedule=lambda k: [1e-3]), ValueError, "schedule must be one number or one per model"),
        (dict(schedule=lambda k: [1e-3, 1e-3 if k == 0 else 0.0], in_dims=None), ValueError, "schedule[1]"),
        (dict(checkpoint_every=0), ValueError, "checkpoint_every"),
        (dict(optimizer="adagrad"), ValueError, "optimizer"),
        (dict(optimizer=torch.optim.Adam), TypeError, "optimizer"),
        (dict(clip=0.0), ValueError, "clip"),
        (dict(eval_every=0), ValueError, "eval_every"),
        (dict(in_dims=1), ValueError, "in_dims"),
        (dict(randomness="maybe"), ValueError, "randomness"),
        (dict(batch_fn=[batches(0)]), TypeError, "batch_fn"),
        (dict(batch_fn=[batches(0)] * 2, in_dims=None), ValueError, "in_dims"),
        (dict(batch_fn=batches(0)), ValueError, "in_dims=None"),  # a (B, ...) batch is not one per model
    ]:
        with pytest.raises(err, match=word.replace("[", r"\[").replace("]", r"\]")):
            call(**kw)


@pytest.mark.parametrize(
    "readout, activation", [("last", "relu"), ("all", "sigmoid"), ("all", "sin"), ("last", "linear"), ("all", "gelu")]
)
def test_stacked_forward_is_the_models_own(readout, activation):
    """Outputs and gradients: two layers (the first without bias, any activation), either readout, one batch per
    model or one shared by all."""
    models = []
    for seed in range(3):
        torch.manual_seed(seed)
        cells = [RNNCell(D, N, activation=activation, bias=False), RNNCell(N, N + 2, weight_scale=0.7)]
        models.append(SequenceModel(cells, 2, readout=readout).double())
    forward = stacked_forward(models[0])
    params, buffers = torch.func.stack_module_state(models)
    xs = torch.stack([batches(s)(0)[0] for s in range(3)])
    for x in (xs, xs[0]):
        out = forward(params, buffers, x)
        own = torch.stack([m(xm) for m, xm in zip(models, xs if x.ndim == 4 else [x] * 3)])
        assert torch.allclose(out, own, atol=1e-12)
        weights = torch.randn(out.shape, dtype=out.dtype, generator=torch.Generator().manual_seed(3))
        got = torch.autograd.grad((out * weights).sum(), list(params.values()))
        ref = torch.autograd.grad((own * weights).sum(), [p for m in models for p in m.parameters()])
        for i, (name, g) in enumerate(zip(params, got)):
            assert torch.allclose(g, torch.stack(ref[i :: len(params)]), atol=1e-11), name
    assert stacked_forward(SequenceModel([LSTMCell(D, N)], 1)) is None
    assert stacked_forward(type("Sub", (SequenceModel,), {})([RNNCell(D, N)], 1)) is None


def test_stacked_forward_needs_loss_fn_to_call_the_model_on_its_batch():
    models = [make(0), make(1)]
    odd = lambda m, x, y: mse(m, x[:, :5], y)
    with pytest.raises(ValueError, match="forward='vmap'"):
        fit_batched(models, batches(0), odd, steps=2, in_dims=None, progress=False)
    fit_batched(models, batches(0), odd, steps=2, in_dims=None, progress=False, forward="vmap")


# ---------------------------------------------------------------------- run_group and the batched executor
def _training_runs():
    base = dict(model="rnn", width=8, length=10, steps=6, batch=4)
    out = [
        runs.Run(
            "gradients", "training", f"rnn-g{g}-s{s}", gradients.train_run, {**base, "gain": g, "lr": lr, "seed": s}
        )
        for g, lr, s in [(0.5, 1e-2, 0), (1.5, 3e-2, 0), (1.0, 1e-2, 1)]
    ]
    lstm = {**base, "model": "lstm", "gain": None, "lr": 1e-2, "seed": 0}
    return out + [runs.Run("gradients", "training", "lstm-s0", gradients.train_run, lstm)]


def _assert_results_close(a, b, tol=1e-5):
    assert (a.key, a.config, a.provenance["seeds"]) == (b.key, b.config, b.provenance["seeds"])
    assert set(a.metrics) == set(b.metrics) and set(a.arrays) == set(b.arrays)
    for name in a.arrays:
        np.testing.assert_allclose(a.arrays[name], b.arrays[name], rtol=tol, atol=tol)
    for name, value in a.metrics.items():
        expected = b.metrics[name]
        assert value == (pytest.approx(expected, rel=tol, abs=tol) if isinstance(expected, float) else expected), name


def test_run_group_gives_each_run_its_own_result():
    p = config.Profile("quick")
    rnns = _training_runs()[:3]
    got = run_group(rnns, p, "quick")
    for run, result in zip(rnns, got):
        _assert_results_close(result, runs.compute(run, p, "quick", progress=False))
        assert result.provenance["batched"] == 3
    with pytest.raises(ValueError, match="twin"):
        run_group([runs.Run("t", "f", "n", _no_twin, {})], p, "quick")
    with pytest.raises(ValueError, match="twin's key"):
        run_group(_training_runs(), p, "quick")  # the LSTM does not batch with the RNNs
    with pytest.raises(ValueError, match="distinct"):
        run_group([rnns[0], rnns[0]], p, "quick")


def _no_twin(cfg, ctx):
    return {"x": 1.0}


_CLOCK = [0.0]


def _timed_one(cfg, ctx):
    _CLOCK[0] += 1.0
    return {"x": float(cfg["n"])}


@runs.twin(_timed_one, key=lambda cfg: 0)
def _timed_together(cfgs, ctxs):
    _CLOCK[0] += 6.0  # three runs together take 6 s of the fake clock
    return [{"x": float(c["n"])} for c in cfgs]


def test_run_group_records_each_runs_share_of_the_groups_wall_time(monkeypatch):
    """A run of a group of 3 that took 6 s records 2 s, so plans and tables that add runs' times count the group once
    (a roaRNN output that repeated the share, ``wall_s``, was dropped for it)."""
    monkeypatch.setattr(runs.time, "perf_counter", lambda: _CLOCK[0])
    todo = [runs.Run("t", "f", f"n{n}", _timed_one, {"n": n}) for n in range(3)]
    got = run_group(todo, config.Profile("quick"), "quick")
    assert [r.provenance["wall_time_s"] for r in got] == [2.0, 2.0, 2.0]
    assert [r.provenance["batched"] for r in got] == [3, 3, 3] and [r["x"] for r in got] == [0.0, 1.0, 2.0]


def test_batched_executor_matches_local(stores):
    p = config.resolve("quick", device="cpu")
    todo = _training_runs()
    batched = sweep.run_sweep(todo, p, executor="batched", progress=False, force=True)
    local = sweep.run_sweep(todo, p, executor="local", progress=False, force=True)
    assert [r.provenance.get("batched") for r in batched] == [3, 3, 3, None]  # the LSTM ran alone
    for a, b in zip(batched, local):
        _assert_results_close(a, b)


def test_batched_executor_runs_groups_in_worker_processes_as_in_this_one(stores):
    p = config.resolve("quick", device="cpu")
    todo = _training_runs()
    pooled = sweep.run_sweep(todo, p, executor="batched", workers=2, progress=False, force=True)
    here = sweep.run_sweep(todo, p, executor="batched", progress=False, force=True)
    assert [r.provenance.get("batched") for r in pooled] == [3, 3, 3, None]  # two jobs, one per worker
    for a, b in zip(pooled, here):
        _assert_results_close(a, b)


_SEEN = []


def _solo_counts(cfg, ctx):
    return {"n": float(cfg["n"])}


@runs.twin(_solo_counts, key=lambda cfg: {})
def _group_counts(cfgs, ctxs):
    _SEEN.append([c.checkpoint for c in ctxs])
    ctxs[0].checkpoint.parent.mkdir(parents=True, exist_ok=True)
    ctxs[0].checkpoint.write_text("saved")  # what a twin that keeps a checkpoint leaves while it trains
    if cfgs[0].get("fail"):
        raise RuntimeError("killed")
    return [{"n": float(c["n"])} for c in cfgs]


def test_a_group_keeps_one_checkpoint_named_for_its_runs(stores):
    """The batched executor hands a group's twin one checkpoint (the first run's context), named for all its runs'
    keys; it is removed when the group finishes and kept when it fails, for the group to resume from."""
    from lscnb.executors import BatchedExecutor, group_checkpoint
    from lscnb.results import store_for

    p = config.resolve("quick", device="cpu")
    make_runs = lambda ns, **kw: [runs.Run("fakechapter", "g", f"n{n}", _solo_counts, {"n": n, **kw}) for n in ns]
    store = store_for("quick", "fakechapter")
    a, b = make_runs([1, 2]), make_runs([1, 3])
    assert group_checkpoint([(r, store) for r in a]) != group_checkpoint([(r, store) for r in b])
    assert group_checkpoint([(r, store) for r in a]).parent == store.checkpoint_path(a[0].key).parent
    _SEEN.clear()
    done = list(BatchedExecutor().map([(r, store) for r in a], p, "quick", progress=False))
    assert [o.metrics["n"] for _, o in done] == [1.0, 2.0]
    ckpt = _SEEN[0][0]
    assert ckpt == group_checkpoint([(r, store) for r in a]) and _SEEN[0][1:] == [None] and not ckpt.exists()
    failing = make_runs([4, 5], fail=True)
    list(BatchedExecutor().map([(r, store) for r in failing], p, "quick", progress=False))
    assert _SEEN[-1][0].read_text() == "saved"  # kept: the group resumes from it


def test_an_exploding_but_finite_gradient_is_not_a_divergence_in_a_group():
    """The group records what each solo run records: the float32 norm of these gradients would read inf."""
    draw = lambda k: (torch.full((2, 4), 1e25), torch.zeros(2))  # noqa: E731
    loss = lambda m, x, y: m(x).mean()  # noqa: E731
    solos = [Steep(s) for s in (0.0, 1.0)]
    refs = [fit(m, draw, loss, steps=3, lr=0.1, optimizer="sgd", clip=1.0, progress=False) for m in solos]
    models = [Steep(s) for s in (0.0, 1.0)]
    hists = fit_batched(
        models, draw, loss, steps=3, lr=0.1, optimizer="sgd", clip=1.0, in_dims=None, forward="vmap", progress=False
    )
    for ref, solo_model, model, hist in zip(refs, solos, models, hists):
        assert not hist.diverged and not ref.diverged
        assert hist.grad_norm == pytest.approx(ref.grad_norm, rel=1e-6) == [2e25] * 3
        assert torch.allclose(model.w, solo_model.w, rtol=1e-6)


def _gpu_counts(cfg, ctx):
    return {"n": float(cfg["n"])}


def _plain_counts(cfg, ctx):
    return {"n": float(cfg["n"])}


@runs.twin(_gpu_counts, key=lambda cfg: {}, devices=("cuda",))
def _gpu_group_counts(cfgs, ctxs):
    _SEEN.append(len(cfgs))
    return [{"n": float(c["n"])} for c in cfgs]


def test_a_twin_for_some_devices_groups_only_there(stores):
    """A twin that pays on a GPU only (``devices``): its runs group on ``cuda``, and on the CPU run one by one, each
    with its own checkpoint, with ``--executor batched`` too."""
    from lscnb.executors import BatchedExecutor
    from lscnb.results import store_for

    store = store_for("quick", "fakechapter")
    todo = [(runs.Run("fakechapter", "gpu", f"n{n}", _gpu_counts, {"n": n}), store) for n in (1, 2, 3)]
    assert runs.group_key(todo[0][0], "cuda:0") == runs.group_key(todo[1][0], "cuda") is not None
    assert runs.group_key(todo[0][0], "cpu") is None and runs.group_key(todo[0][0]) is not None
    alone = runs.Run("fakechapter", "gpu", "plain", _plain_counts, {"n": 4})
    assert list(runs.twin_groups([alone] + [r for r, _ in todo], "cuda").values()) == [[r for r, _ in todo]]
    assert runs.twin_groups([r for r, _ in todo], "cpu") == {}
    assert [len(j) for j in BatchedExecutor().jobs(todo, "cuda")] == [3]
    assert [len(j) for j in BatchedExecutor().jobs(todo, "cpu")] == [1, 1, 1]
    _SEEN.clear()
    done = list(BatchedExecutor().map(todo, config.resolve("quick", device="cpu"), "quick", progress=False))
    assert [o.metrics["n"] for _, o in done] == [1.0, 2.0, 3.0] and _SEEN == []  # the twin was not called
    with pytest.raises(TypeError, match="devices"):
        runs.twin(_gpu_counts, key=lambda cfg: {}, devices="cuda")


def test_a_twin_can_choose_its_devices_by_config():
    """``devices`` may be a function of a run's config: the runs it sends to a GPU only run one by one on a CPU, the
    others group everywhere; a function that returns a bad value is refused by name."""
    pick = lambda cfg: None if cfg["n"] < 3 else ("cuda",)  # noqa: E731
    runs.twin(_plain_counts, key=lambda cfg: {}, devices=pick)(lambda cfgs, ctxs: [{} for _ in cfgs])
    try:
        todo = [runs.Run("fakechapter", "plain", f"n{n}", _plain_counts, {"n": n}) for n in (1, 2, 3)]
        assert [len(g) for g in runs.twin_groups(todo, "cpu").values()] == [2]
        assert [len(g) for g in runs.twin_groups(todo, "cuda").values()] == [3]
        runs.twin(_plain_counts, key=lambda cfg: {}, devices=lambda cfg: "cuda")(lambda cfgs, ctxs: [])
        with pytest.raises(TypeError, match="devices"):
            runs.group_key(todo[0], "cpu")
    finally:
        runs.GROUPS.pop(_plain_counts, None)
