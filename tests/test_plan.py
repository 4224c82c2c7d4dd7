"""python -m lscnb plan: owed figures, calibration (extrapolation, lower bounds, cache), order by paper items per
minute, chunks, budget, GPU marks, and its command-line mistakes. A fabricated one-chapter registry keeps it fast;
no test depends on a measured time (the arithmetic is checked with a fake timer)."""

import json
import math
import types

import pytest
import torch

from lscnb import plan, timing
from lscnb.__main__ import main
from lscnb.figures import Figure, Item, declare
from lscnb.runs import Run

CALLS = []


def fake_run(config, ctx):
    """A run function that costs nothing and records each call."""
    CALLS.append(dict(config))
    return {"loss": float(config["steps"])}


def _runs(name, seeds=2, width=4):
    return lambda scale: [
        Run("planfake", name, f"w{width}-s{s}", fake_run, {"steps": 100, "width": width, "seed": s})
        for s in range(seeds)
    ]


def _chapter():
    module = types.ModuleType("planfake")
    module.SMOKE = {"steps": 2, "width": 2}
    module.FIGURES = declare(
        Figure("a", _runs("a"), items=(Item("Fig. 1", "one"),)),
        Figure("b", _runs("b", seeds=1, width=6), items=(Item("Fig. 2", "two"), Item("Table 1", "three"))),
        Figure("done", _runs("done"), items=(Item("Fig. 3", "four"),)),
    )
    return module


@pytest.fixture
def owed(monkeypatch, tmp_path):
    """The fake chapter's owed figures, with ``figure_state`` saying that ``done`` has all its results."""
    from lscnb import status

    monkeypatch.setenv("LSCNB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(
        status, "figure_state", lambda module, fig: {"results": [1] if fig == "done" else None, "provenance": {}}
    )
    return plan.owed_in("planfake", _chapter())


def _fig(name, items, minutes, chapter="ch"):
    return {"chapter": chapter, "figure": name, "items": items, "est_s": minutes * 60, "bound": "~"}


def test_owed_figures_and_their_missing_runs(owed):
    assert [(o.figure, o.items, o.runs, len(o.missing)) for o in owed] == [("a", 1, 2, 2), ("b", 2, 1, 1)]


def test_runs_that_differ_by_seed_share_a_shape():
    a0, a1 = _runs("a")("full")
    other = Run("planfake", "a", "w8", fake_run, {"steps": 100, "width": 8, "seed": 0})
    assert plan.shape_of(a0) == plan.shape_of(a1) != plan.shape_of(other)


def test_the_most_different_shapes_are_timed_first():
    configs = [{"model": m, "task": t, "seed": 0} for m in "ab" for t in "xyz"]
    assert plan._diverse(configs)[:2] == [0, 4]  # a-x, then b-y (both entries differ)
    assert sorted(plan._diverse(configs)) == list(range(6))
    lengths = [{"length": n, "width": 128} for n in (4, 16, 64, 256, 1024)]
    assert plan._diverse(lengths)[:3] == [4, 0, 2]  # the longest (untimed ones then err long), shortest, middle
    assert plan._diverse([{"lr": 0.1, "n": 8}, {"lr": 0.001, "n": 8}, {"lr": 0.1, "n": 16}])[0] == 2  # sizes only
    assert plan._distance(lengths[0], lengths[1]) < plan._distance(lengths[0], lengths[4]) < 1
    assert plan._distance(configs[0], {**configs[0], "seed": 5}) == 0


def test_an_untimed_shape_takes_the_time_of_its_architecture_before_that_of_its_task():
    untimed = {"model": "corelnet", "task": "rmts", "iters": 5000}
    same_model = {"model": "corelnet", "task": "dist3", "iters": 5000}
    same_task = {"model": "esbn", "task": "rmts", "iters": 5000}
    assert plan._distance(untimed, same_model) < plan._distance(untimed, same_task)
    assert (plan._distance(untimed, same_model), plan._distance(untimed, same_task)) == (1, 2)


def test_an_untimed_shape_scales_by_its_counts_and_its_length():
    """Shapes of one model that differ in the copy task's lag (400 timed at 10 s for 1,000 steps) and in steps: a lag
    of 10,000 costs 25 times as much a step, 2,000 steps twice as much; a language model's window (its epoch counts
    tokens) and a width do not scale it."""
    shape = lambda **c: [(Run("planfake", "a", "r", fake_run, {"model": "rnn", "steps": 1000, **c}), {})]  # noqa: E731
    groups = {"t": shape(lag=400), "long": shape(lag=10000), "more": shape(lag=400, steps=2000)}
    groups |= {"wide": shape(lag=400, width=1024), "two": shape(lag=400, depth=2)}
    timed = {"t": {"est_s": 10.0, "key": "steps"}}
    per = plan._per_shape(groups, timed)
    assert per == pytest.approx({"t": 10.0, "long": 250.0, "more": 20.0, "wide": 10.0, "two": 20.0})
    lm = {"model": "lstm", "epochs": 40, "n_train": 929589, "length": 150}
    assert plan._work(lm) == plan._work({**lm, "length": 300}) == 1.0
    assert plan._work({"model": "x", "T": 500, "depth": 3, "repeat": 20}) == 1500.0
    assert plan._work({"T": 0, "name": "a"}) == 1.0


@pytest.mark.parametrize(
    "text,seconds", [("40m", 2400), ("1h30m", 5400), ("90s", 90), ("2", 120), ("2.5h", 9000), (" 9M ", 540)]
)
def test_durations(text, seconds):
    assert plan.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "x", "40 minutes", "0m", "m", "1h-5m", "-3"])
def test_bad_durations(text):
    with pytest.raises(ValueError, match="duration"):
        plan.parse_duration(text)


def test_calibration_keeps_sizes_and_shrinks_counts():
    full = {"steps": 100, "width": 4, "test": 5000, "source": "mnist", "seed": 0}
    smoke = {"steps": 2, "width": 2, "test": 10, "source": "digits"}
    assert timing.calibration_config(full, smoke) == {"steps": 2, "width": 4, "test": 10, "source": "digits", "seed": 0}
    assert timing.calibration_config(full, smoke, sizes=False)["width"] == 2
    assert timing.primary(full, timing.calibration_config(full, smoke)) == "steps"
    assert timing.calibration_config(full, smoke, data=True)["source"] == "mnist"  # the real data, where it loads


def test_calibration_keeps_a_full_batch_in_an_epoch():
    """A shrunk training set smaller than the full batch would fail (drop_last): it grows to one batch, and the
    per-epoch factor scales from there."""
    full = {"epochs": 10, "n_train": 50000, "batch": 100, "width": 512, "seed": 0}
    smoke = {"epochs": 1, "n_train": 20, "batch": 10, "width": 8}
    cfg = timing.calibration_config(full, smoke)
    assert cfg["n_train"] == 100 and cfg["batch"] == 100 and cfg["width"] == 512
    assert timing.calibration_config(full, smoke, sizes=False)["n_train"] == 20  # smoke sizes: its own batch of 10
    assert timing._per_epoch(full, cfg)[0] == 500


def test_two_sizes_give_the_per_step_time_and_the_fixed_part():
    """A timer that says 0.5 s + 0.01 s per step: the estimate at 100 steps is 1.5 s, timed at full width."""
    seen = []

    def timer(run, cfg, device, seconds):
        seen.append(cfg)
        return 0.5 + 0.01 * cfg["steps"]

    run = _runs("a")("full")[0]
    out = plan.measure(run, {"steps": 2, "width": 2}, "cpu", 5.0, timer)
    assert out["key"] == "steps" and math.isclose(out["est_s"], 1.5) and out["bound"] in ("~", "=")
    assert len(seen) >= 3 and {c["width"] for c in seen} == {4} and seen[0]["steps"] == 1


def test_a_timeout_is_a_lower_bound_and_a_failure_falls_back_to_the_smoke_sizes():
    run = _runs("a")("full")[0]
    out = plan.measure(run, {"steps": 2}, "cpu", 3.0, lambda *a: None)  # a bound on the run, not on each step
    assert out["bound"] == ">=" and out["est_s"] is None and "a run takes >= 12 s: not estimated" in out["how"]
    assert math.isclose(out["at_least_s"], timing.LONGER * 3.0, rel_tol=1e-3)
    calls = []

    def warm_up(run, cfg, device, seconds):  # the process's first run is all warm-up (on a GPU: cuDNN loaded)
        calls.append(seconds)
        return None if len(calls) == 1 else 0.01 * cfg["steps"]

    out = plan.measure(run, {"steps": 2}, "cpu", 3.0, warm_up)
    assert out["bound"] in ("~", "=") and math.isclose(out["est_s"], 1.0) and out["t"][0] == 0.01
    assert math.isclose(calls[1], 3.0, rel_tol=1e-3) and "timed out" not in out["how"]  # a second, full try

    def timer(run, cfg, device, seconds):
        if cfg["width"] != 2:
            raise RuntimeError("out of memory")
        return 0.01 * cfg["steps"]

    out = plan.measure(run, {"steps": 2, "width": 2}, "cpu", 3.0, timer)
    assert out["bound"] == ">=" and out["sizes"] == "smoke" and "out of memory" in out["how"]
    assert math.isclose(out["est_s"], 1.0)


def test_a_slow_first_step_gets_the_time_to_part_the_fixed_cost_from_the_steps():
    """4 s of pretraining and 0.01 s a step, against a 5 s budget: timed past the budget (at 1, 1 and 2 steps, then at
    32 and at the full 100, since 2 steps differ from 1 by less than noise), the estimate at 100 steps is 4 s + 1 s,
    not the first timing times 100."""
    seen = []

    def timer(run, cfg, device, seconds):
        seen.append((cfg["steps"], seconds))
        return 4.0 + 0.01 * cfg["steps"]

    out = plan.measure(_runs("a")("full")[0], {"steps": 2}, "cpu", 5.0, timer)
    assert math.isclose(out["est_s"], 5.0, rel_tol=1e-6) and out["bound"] in ("~", "=")
    assert [n for n, _ in seen] == [1, 1, 2, 32, 100]
    assert seen[1][1] > 5.0  # the second timing had more than the budget left
    fast = plan.measure(_runs("a")("full")[0], {"steps": 2}, "cpu", 5.0, lambda r, c, d, s: 1.0 + 0.01 * c["steps"])
    assert fast["n"][0] == 1 and math.isclose(fast["est_s"], 2.0, rel_tol=1e-6)  # a fast one is timed as before


def test_a_length_the_data_set_sets_is_not_estimated():
    run = Run("planfake", "a", "x", fake_run, {"steps": None, "epochs": 3, "width": 4, "seed": 0})
    out = plan.measure(run, {"steps": 2}, "cpu", 3.0, lambda run, cfg, d, s: 0.1 * cfg["steps"])
    assert out["est_s"] is None and out["bound"] == "open"


def test_the_counts_a_data_set_sets_are_filled_in_by_the_figure(tmp_path):
    """``steps=None`` with 3 epochs of 10 batches: a figure's ``data_counts`` says 30 steps, and the plan times and
    scales them (0.1 s a step: 3 s a run); where its data set is not at hand (FileNotFoundError), the cost stays
    open."""
    config = {"steps": None, "epochs": 3, "width": 4}
    runs = [Run("planfake", "d", f"s{s}", fake_run, {**config, "seed": s}) for s in (0, 1)]
    timer = lambda run, cfg, device, seconds: 0.1 * cfg["steps"]  # noqa: E731

    def calibrate(counts):
        module = types.ModuleType("planfake")
        module.SMOKE = {"steps": 2}
        fig = Figure("d", lambda scale: runs, items=(Item("Fig. 1", "one"),), data_counts=counts)
        module.FIGURES = declare(fig)
        o = plan.Owed("planfake", "d", 1, 2, runs, module)
        return plan.calibrate(o, "cpu", plan.Cache(tmp_path / f"{id(counts)}.json", "cpu", "t", 1), 1.0, timer=timer)

    out = calibrate(lambda cfg: {"steps": cfg["epochs"] * 10})
    assert math.isclose(out["est_s"], 2 * 3.0) and out["bound"] == "~"

    def absent(cfg):
        raise FileNotFoundError("PTB files not found")

    assert calibrate(absent)["est_s"] is None and calibrate(None)["est_s"] is None
    with pytest.raises(ValueError, match="data_counts must be callable"):
        Figure("d", lambda scale: runs, data_counts={"steps": 30})


@pytest.mark.parametrize("window", ["length", "bptt"])
def test_a_token_streams_calibration_epoch_holds_a_full_window_per_row(window):
    """PTB characters by truncated BPTT (batch 128, windows of 150): a shrunk text of 20 characters cannot fill one
    row (nnRNN's PTB runs failed to calibrate at full sizes); it grows to 128 x 151, at most the full text."""
    full = {"epochs": 100, "n_train": 5_000_000, "batch": 128, window: 150, "width": 1024, "seed": 0}
    smoke = {"epochs": 1, "n_train": 20, "batch": 10, window: 3, "width": 8}
    cfg = timing.calibration_config(full, smoke)
    assert cfg["n_train"] == 128 * 151 and cfg[window] == 150 and cfg["batch"] == 128
    assert math.isclose(timing._per_epoch(full, cfg)[0], 5_000_000 / (128 * 151))
    assert timing.calibration_config({**full, "n_train": 10_000}, smoke)["n_train"] == 10_000  # never past the full


def test_the_calibration_cache_is_reused(owed, tmp_path):
    path = tmp_path / "cal.json"
    CALLS.clear()
    first = [plan.calibrate(o, "cpu", plan.Cache(path, "cpu", "test cpu", 1), max_s=0.3) for o in owed]
    n = len(CALLS)
    assert n > 0 and not any(f["cached"] for f in first) and path.exists()
    again = [plan.calibrate(o, "cpu", plan.Cache(path, "cpu", "test cpu", 1), max_s=0.3) for o in owed]
    assert len(CALLS) == n and all(f["cached"] for f in again)
    assert [f["est_s"] for f in again] == [f["est_s"] for f in first]
    plan.calibrate(owed[0], "cpu", plan.Cache(path, "cpu", "test cpu", 1), max_s=0.3, recalibrate=True)
    assert len(CALLS) > n
    assert plan.Cache(path, "cpu", "another machine", 1).dropped


def test_an_architecture_the_cache_never_timed_is_named_and_leaves_no_bound(tmp_path):
    """A cache from before every architecture was timed (the H200 plan of 2026-11-26 timed 1 of relevancy's 6 models)
    holds only the fast model's shape: the slow one is costed at the fast one's rate, named as untimed, and the
    figure's bound is neither way, though the fast one's alone would be an upper bound."""
    runs = [
        Run("planfake", "a", "a", fake_run, {"steps": 5000, "model": "fast", "seed": 0}),
        Run("planfake", "a", "b", fake_run, {"steps": 5000, "model": "slow", "seed": 0}),
    ]
    o = plan.Owed("ch", "a", 1, 2, runs[:1], _chapter())
    cache = plan.Cache(tmp_path / "c.json", "cpu", "test", 1)
    first = plan.calibrate(o, "cpu", cache, 5.0, timer=lambda r, cfg, d, s: 1.0)  # the step shows no cost: whole
    assert first["bound"] == "<=" and first["models"] == ["fast"] and first["untimed"] == []
    both = plan.calibrate(plan.Owed("ch", "a", 1, 2, runs, _chapter()), "cpu", cache, 5.0, timer=None)
    assert both["cached"] and both["models"] == ["fast", "slow"] and both["untimed"] == ["slow"]
    assert both["bound"] == "~" and math.isclose(both["est_s"], 2 * first["est_s"])


def test_a_committed_shapes_timing_still_prices_its_untimed_neighbours(tmp_path):
    """A plan timed shapes a (the fast model, 1,000 steps) and c (the slow one) and priced b (fast, 3,000 steps) from
    a. Once a's runs are committed, b keeps a's rate from the cache, not the slow model's (the one shape left timed),
    and nothing is timed again (``timer=None`` would fail)."""
    spec = (("a", 1000, "fast"), ("b", 3000, "fast"), ("c", 1000, "slow"))
    runs = {n: Run("planfake", "a", n, fake_run, {"steps": k, "model": m, "seed": 0}) for n, k, m in spec}
    every = list(runs.values())
    timer = lambda run, cfg, d, s: (0.1 if cfg["model"] == "fast" else 1.0) * cfg["steps"]  # noqa: E731
    cache = plan.Cache(tmp_path / "c.json", "cpu", "test", 1)
    first = plan.calibrate(
        plan.Owed("ch", "a", 1, 3, [runs["a"], runs["c"]], _chapter(), every), "cpu", cache, 5.0, timer=timer
    )
    est = {n: c["est_s"] for c in first["calibrations"] for n, r in runs.items() if c["run"] == r.key}
    assert est["a"] < est["c"]
    later = plan.Owed("ch", "a", 1, 3, [runs["b"], runs["c"]], _chapter(), every)
    after = plan.calibrate(later, "cpu", cache, 5.0, timer=None)
    assert after["cached"] and after["missing"] == 2 and after["untimed"] == []
    assert math.isclose(after["est_s"], 3 * est["a"] + est["c"])


def test_order_is_by_paper_items_per_minute():
    figs = [_fig("slow", 1, 10), _fig("many", 3, 10), _fig("fast", 1, 1), _fig("none", 0, 0.5)]
    out = plan.build(figs, "cuda", chunk_s=540)
    assert [f["figure"] for f in out["planned"]] == ["fast", "many", "slow", "none"]
    assert [round(f["cum_s"] / 60) for f in out["planned"]] == [1, 11, 21, 22]


def test_chunks_respect_the_limit():
    figs = [_fig(f"f{i}", 1, 2 + i % 3) for i in range(8)] + [_fig("big", 10, 40), _fig("other", 1, 1, chapter="x")]
    out = plan.build(figs, "cuda", chunk_s=540)
    for c in out["commands"]:
        assert c["calls"] == max(1, math.ceil(c["est_s"] / 540 - 1e-9))
        assert c["est_s"] <= 540 or len(c["figures"]) == 1
        assert len({f["chapter"] for f in out["planned"] if f["command"] == out["commands"].index(c) + 1}) == 1
        assert c["command"].startswith("timeout --signal=INT") and "--device cuda" in c["command"]
    big = next(c for c in out["commands"] if c["figures"] == ["big"])
    assert big["calls"] == 5 and sum(len(c["figures"]) for c in out["commands"]) == 10


def test_figures_whose_runs_batch_get_the_batched_executor():
    figs = [{**_fig("grouped", 1, 2), "batched": True}, _fig("alone", 1, 2.5), {**_fig("slow", 1, 90), "batched": True}]
    out = plan.build(figs, "cpu", chunk_s=540, cpu_limit_s=3600)
    grouped, alone = out["commands"]  # one chapter, but not one command: one executor a command
    assert grouped["figures"] == ["grouped"] and grouped["command"].endswith("--executor batched")
    assert grouped["item"].endswith("@cpu*batched") and "--executor" not in alone["command"]
    assert out["gpu"][0]["command_cuda"].endswith("--device cuda --executor batched")


def test_a_figure_whose_twin_pays_on_a_gpu_only_is_batched_in_its_gpu_command():
    figs = [{**_fig("cpu-alone", 1, 2), "batched_cuda": True}, {**_fig("gpu-grouped", 1, 90), "batched_cuda": True}]
    out = plan.build(figs, "cpu", chunk_s=540, cpu_limit_s=3600)
    assert "--executor" not in out["commands"][0]["command"] and not out["commands"][0]["item"].endswith("*batched")
    assert out["gpu"][0]["command_cuda"].endswith("--device cuda --executor batched")


def test_the_budget_cuts_and_fills():
    figs = [_fig("a", 2, 10), _fig("b", 2, 30), _fig("c", 1, 10), _fig("d", 1, 50)]
    out = plan.build(figs, "cuda", chunk_s=540, budget_s=25 * 60)
    assert [f["figure"] for f in out["planned"]] == ["a", "c"]
    assert [f["figure"] for f in out["left_out"]] == ["b", "d"] and out["planned_s"] <= 25 * 60


def test_cpu_marks_long_figures_gpu_and_leaves_the_unknown_out():
    figs = [_fig("short", 1, 5), _fig("long", 5, 90), {**_fig("open", 1, 1), "est_s": None}]
    cpu = plan.build(figs, "cpu", cpu_limit_s=3600)
    assert [f["figure"] for f in cpu["planned"]] == ["short"] and [f["figure"] for f in cpu["gpu"]] == ["long"]
    assert "--device cuda" in cpu["gpu"][0]["command_cuda"] and [f["figure"] for f in cpu["unknown"]] == ["open"]
    gpu = plan.build(figs, "cuda", cpu_limit_s=3600)
    assert [f["figure"] for f in gpu["planned"]] == ["short", "long"] and not gpu["gpu"]


def test_the_command_line(owed, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(plan, "owed", lambda names=None: owed)
    args = ["plan", "--device", "cpu", "--cache", str(tmp_path / "c.json"), "--max-calibration-s", "0.3"]
    assert main([*args, "--json", "--budget", "1h"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f["figure"] for f in doc["planned"]] == ["b", "a"] and doc["budget_s"] == 3600
    assert doc["version"] == plan.CACHE_VERSION  # the timing rules the plan was made by
    assert main([*args, "--items"]) == 0
    assert capsys.readouterr().out.split() == ["planfake:b,a@cpu"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "planfake/a" in text and "est. min" in text and "reproduce planfake --profile full" in text


def test_the_plan_names_the_real_data_it_lacks(owed, monkeypatch, tmp_path, capsys):
    """A plan timed without a data set (a GPU call that did not carry PTB) says so, on stderr, in its text and in its
    JSON: the plan of 2026-11-26 left three figures (four items) open that way, and nothing said why."""
    import lscnb.data

    monkeypatch.setattr(plan, "owed", lambda names=None: owed)
    monkeypatch.setattr(lscnb.data, "at_hand", lambda: {"mnist": True, "ptb": False, "esbn_objects": True})
    args = ["plan", "--device", "cpu", "--cache", str(tmp_path / "c.json"), "--max-calibration-s", "0.3"]
    assert main([*args, "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["data"] == {"mnist": True, "ptb": False, "esbn_objects": True}
    assert "real data absent: ptb" in out.err and "../shared/data/ptb" in out.err and "mnist" not in out.err
    assert main(args) == 0
    assert "real data absent: ptb" in capsys.readouterr().out
    monkeypatch.setattr(lscnb.data, "at_hand", lambda: {"mnist": True, "ptb": True, "esbn_objects": True})
    assert main(args) == 0
    out = capsys.readouterr()
    assert "absent" not in out.out + out.err


def test_a_committed_plan_is_re_read_without_timing(owed, monkeypatch, tmp_path, capsys):
    """``--reread`` prices the runs owed now from a committed plan's timings (each under its run's shape, a re-keyed
    run by name), timing nothing; a plan timed on another machine or with other threads is refused, status 2."""
    monkeypatch.setattr(plan, "owed", lambda names=None: owed)
    base = ["plan", "--device", "cpu", "--max-calibration-s", "0.3", "--json"]
    assert main([*base, "--cache", str(tmp_path / "first.json")]) == 0
    doc = json.loads(capsys.readouterr().out)
    for f in doc["figures"]:  # as if the runs were re-keyed since: the name is kept, the hash is new
        for cal in f["calibrations"]:
            cal["run"] = cal["run"].rsplit("-", 1)[0] + "-0000000000"
    (tmp_path / "plan-cpu.json").write_text(json.dumps(doc))
    monkeypatch.setattr(plan, "measure", lambda *a, **k: pytest.fail("re-read, not timed"))
    again = [*base, "--cache", str(tmp_path / "second.json"), "--reread", str(tmp_path / "plan-cpu.json")]
    assert main(again) == 0
    out = capsys.readouterr()
    assert "re-read 2 timings" in out.err
    new = json.loads(out.out)
    assert [f["est_s"] for f in new["figures"]] == [f["est_s"] for f in doc["figures"]]
    (tmp_path / "other.json").write_text(json.dumps({**doc, "device_name": "another CPU"}))
    other = [*base, "--cache", str(tmp_path / "third.json"), "--reread", str(tmp_path / "other.json")]
    assert main(other) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "--reread" in err[0] and "another CPU" in err[0]
    first = [*base, "--cache", str(tmp_path / "first.json"), "--reread", str(tmp_path / "plan-cpu.json")]
    assert main(first) == 0  # the first cache holds the shapes, timed: it keeps its own, and says so
    assert "re-read 0 timings" in (err := capsys.readouterr().err) and "kept 2 timings of the cache" in err


def test_a_timing_that_came_to_no_estimate_is_timed_again_not_re_read(owed, monkeypatch, tmp_path, capsys):
    """A committed plan's calibration with no estimate (its data set was not at hand to count, as PTB on the H200 of
    2026-11-26) is not seeded: the re-reading plan times that shape itself, and re-reads the others."""
    monkeypatch.setattr(plan, "owed", lambda names=None: owed)
    base = ["plan", "--device", "cpu", "--max-calibration-s", "0.3", "--json"]
    assert main([*base, "--cache", str(tmp_path / "first.json")]) == 0
    doc = json.loads(capsys.readouterr().out)
    blank = doc["figures"][0]["calibrations"][0]
    blank["est_s"] = None
    (tmp_path / "plan-cpu.json").write_text(json.dumps(doc))
    timed = []
    real = plan.measure
    monkeypatch.setattr(plan, "measure", lambda run, *a, **k: timed.append(run.key) or real(run, *a, **k))
    again = [*base, "--cache", str(tmp_path / "second.json"), "--reread", str(tmp_path / "plan-cpu.json")]
    assert main(again) == 0
    assert "re-read 1 timings" in capsys.readouterr().err
    assert timed == [blank["run"]]


BAD = {
    "bad budget": (["--budget", "soon"], "--budget: must be a duration"),
    "zero budget": (["--budget", "0"], "--budget: must be a positive duration"),
    "bad chunk": (["--chunk=-9m"], "--chunk: must be a duration"),
    "unknown device": (["--device", "warp9"], "--device: must be cpu or cuda, got 'warp9'"),
    "zero calibration": (["--max-calibration-s", "0"], "--max-calibration-s: must be positive"),
    "two outputs": (["--json", "--items"], "--json and --items"),
    "unknown chapter": (["chapter9"], "unknown chapter 'chapter9'"),
    "missing plan to re-read": (["--reread", "/nonexistent/plan-cpu.json"], "--reread /nonexistent/plan-cpu.json"),
}
if not torch.cuda.is_available():
    BAD["cuda without a GPU"] = (["--device", "cuda"], "no CUDA GPU is visible")


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_are_one_line_and_status_2(name, capsys):
    args, piece = BAD[name]
    with pytest.raises(SystemExit) as exit_:
        main(["plan", *args])
    lines = capsys.readouterr().err.splitlines()
    assert exit_.value.code == 2 and len(lines) == 1 and lines[0].startswith("python -m lscnb: error: ")
    assert piece in lines[0], lines[0]
