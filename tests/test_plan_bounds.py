"""python -m lscnb plan: the bounds of a calibration (lower where a timing could not show the steps, upper where a
timing was scaled whole) and the committed runs' wall times that price their untimed neighbours. The registry and
fake run of ``test_plan``; the arithmetic is checked with a fake timer, never a measured time."""

import json
import math
import time
import types

import pytest
from test_plan import _chapter, fake_run

from lscnb import plan, timing
from lscnb.figures import Figure, Item, declare
from lscnb.runs import Run


def test_other_data_in_the_calibration_makes_a_lower_bound():
    """The real data is timed where it loads; where it does not, the smoke's switch of the data (8x8 digits for
    MNIST) changes what a step costs, so that estimate is only a bound."""
    run = Run("planfake", "a", "x", fake_run, {"steps": 100, "width": 4, "source": "mnist", "seed": 0})
    seen = []

    def timer(run, cfg, d, s):
        seen.append(cfg["source"])
        if cfg["source"] == "mnist" and offline:
            raise FileNotFoundError("no MNIST here")
        return (0.05 if cfg["source"] == "mnist" else 0.01) * cfg["steps"]

    offline = False
    real = plan.measure(run, {"steps": 2, "source": "digits"}, "cpu", 3.0, timer)
    assert real["bound"] in ("~", "=") and "other data" not in real["how"] and math.isclose(real["est_s"], 5.0)
    assert set(seen) == {"mnist"}
    offline, seen[:] = True, []
    out = plan.measure(run, {"steps": 2, "source": "digits"}, "cpu", 3.0, timer)
    assert out["bound"] == ">=" and "other data" in out["how"] and math.isclose(out["est_s"], 1.0)
    assert "the full data failed (FileNotFoundError: no MNIST here)" in out["how"] and seen[0] == "mnist"
    same = plan.measure(run, {"steps": 2, "source": "mnist"}, "cpu", 3.0, lambda run, cfg, d, s: 0.01 * cfg["steps"])
    assert same["bound"] in ("~", "=")


def test_a_fixed_part_that_hides_the_steps_is_timed_past():
    """50 s of evaluation (+-5 %, alternating) and 0.7 s a step: counts 1 and 2 differ by noise, so the calibration
    times 32 steps and estimates 5,000 steps within 10 %; a step too slow for the extra try is a lower bound."""
    seen = []

    def timer(run, cfg, device, seconds):
        seen.append(cfg["steps"])
        t = 50 * (1.05 if len(seen) % 2 else 0.95) + 0.7 * cfg["steps"]
        return t if t <= seconds else None

    run = Run("planfake", "a", "x", fake_run, {"steps": 5000, "width": 4, "seed": 0})
    out = plan.measure(run, {"steps": 2}, "cpu", 200.0, timer)
    assert seen[-1] == 32 and out["n"] == [1, 32] and out["bound"] == "~"
    assert math.isclose(out["est_s"], 50 + 0.7 * 5000, rel_tol=0.1)

    def slow(run, cfg, device, seconds):  # 10 s a step past 2: 32 steps outlast the extra try's 2 x 51 s + 1 s
        t = 50 + (1 if cfg["steps"] == 1 else 2) + (10 * cfg["steps"] if cfg["steps"] > 2 else 0)
        return t if t <= seconds else None

    out = plan.measure(run, {"steps": 2}, "cpu", 200.0, slow)
    assert out["bound"] == ">=" and "32: timed out" in out["how"] and out["est_s"] >= 5000 * 52 / 31


def test_steps_that_show_are_not_timed_again():
    seen = []

    def timer(run, cfg, device, seconds):
        seen.append(cfg["steps"])
        return 1.0 + 0.5 * cfg["steps"]

    out = plan.measure(
        Run("planfake", "a", "x", fake_run, {"steps": 500, "width": 4, "seed": 0}), {"steps": 2}, "cpu", 5.0, timer
    )
    assert 32 not in seen and math.isclose(out["est_s"], 1.0 + 0.5 * 500, rel_tol=1e-6)


def test_every_architecture_is_timed_once_beyond_the_budget(tmp_path):
    """Two models at two lengths, the cheap one largest: within a budget that fits one timing, the costly model is
    timed too (with the budget again), so its untimed shape does not take the cheap model's time per step."""
    cost = {"cheap": 0.01, "costly": 0.1}
    runs = [
        Run("planfake", "m", f"{m}{n}", fake_run, {"model": m, "steps": n, "seed": 0})
        for m, n in (("cheap", 1000), ("cheap", 500), ("costly", 400), ("costly", 200))
    ]
    seen = []

    def timer(run, cfg, device, seconds):
        seen.append(cfg["model"])
        time.sleep(0.02)
        return 0.1 + cost[cfg["model"]] * cfg["steps"]

    module = types.ModuleType("planfake")
    module.SMOKE = {"steps": 2}
    module.FIGURES = declare(Figure("m", lambda scale: runs, items=(Item("Fig. 1", "one"),)))
    o = plan.Owed("planfake", "m", 1, 4, runs, module)
    out = plan.calibrate(o, "cpu", plan.Cache(tmp_path / "c.json", "cpu", "test", 1), max_s=0.05, timer=timer)
    assert set(seen) == {"cheap", "costly"} and out["timed"] == 2
    want = sum(0.1 + cost[r.config["model"]] * r.config["steps"] for r in runs)
    assert math.isclose(out["est_s"], want, rel_tol=0.05)


def test_a_fixed_part_that_fills_the_budget_is_timed_longer_once():
    """12 s of evaluation and 0.01 s a step, against 5 s: count 1 times out twice, then gets LONGER x 5 s, and 2 steps
    and 32 (noise) are timed past it, so 5,000 steps are 12 s + 50 s, not 5 s a step (the old bound: 7 hours)."""
    seen = []

    def timer(run, cfg, device, seconds):
        seen.append((cfg["steps"], seconds))
        t = 12.0 + 0.01 * cfg["steps"]
        return t if t <= seconds else None

    run = Run("planfake", "a", "x", fake_run, {"steps": 5000, "width": 4, "seed": 0})
    out = plan.measure(run, {"steps": 2}, "cpu", 5.0, timer)
    assert [n for n, _ in seen] == [1, 1, 1, 2, 32, 512] and math.isclose(seen[2][1], timing.LONGER * 5.0, rel_tol=1e-3)
    assert out["bound"] == "~" and math.isclose(out["est_s"], 12.0 + 0.01 * 5000, rel_tol=1e-6)
    assert out["how"].startswith("steps 1: timed out twice after 5.0 s, then given 20.0 s; steps 1: 12 s, 512:")


def test_a_count_that_shows_no_cost_leaves_a_lower_bound_while_other_counts_stay_unscaled():
    """Iterations that cost nothing (meanfield Fig. 1 when a run diverged at its first step) while a held-out set
    of 50 stands for 10,000: the estimate is the timed cost, marked a lower bound; with nothing unscaled, it is not."""
    run = Run("planfake", "a", "x", fake_run, {"steps": 2000, "held_out": 10_000, "width": 4, "seed": 0})
    out = plan.measure(run, {"steps": 3, "held_out": 50}, "cpu", 5.0, lambda r, cfg, d, s: 1.0)
    assert out["bound"] == ">=" and "show no cost" in out["how"] and "held_out=50 (full 10000)" in out["how"]
    assert math.isclose(out["est_s"], 2000 * out["t"][-1] / out["n"][-1]) and "flat" not in out  # t2 all scaled
    alone = plan.measure(run, {"steps": 3}, "cpu", 5.0, lambda r, cfg, d, s: 1.0)
    assert alone["bound"] == "<=" and "show no cost" not in alone["how"]  # the 1 s scaled 2,000 times: at most


def test_a_timing_scaled_whole_is_an_upper_bound():
    """One step timed (3 s, the longer counts ran out): the 3 s are scaled 5,000 times, start-up and all, so the
    estimate is an upper bound (the H200 plan of 2026-11-26 read 60 hours for runs its CPU twin put near 12); other
    data beside it makes it neither."""
    run = Run("planfake", "a", "x", fake_run, {"steps": 5000, "width": 4, "seed": 0})
    timer = lambda r, cfg, d, s: 3.0 if cfg["steps"] == 1 else None  # noqa: E731
    out = plan.measure(run, {"steps": 2}, "cpu", 5.0, timer)
    assert out["bound"] == "<=" and out["n"] == [1] and math.isclose(out["est_s"], 3.0 * 5000)
    assert "all of it scaled" in out["how"]
    two = plan.measure(run, {"steps": 2}, "cpu", 5.0, lambda r, cfg, d, s: 3.0 + 0.01 * cfg["steps"])
    assert two["bound"] == "~" and math.isclose(two["est_s"], 3.0 + 0.01 * 5000, rel_tol=1e-6)  # told apart

    def no_mnist(run, cfg, device, seconds):
        if cfg["source"] == "mnist":
            raise FileNotFoundError("mnist")
        return timer(run, cfg, device, seconds)

    full = Run("planfake", "a", "x", fake_run, {"steps": 5000, "source": "mnist", "seed": 0})
    other = plan.measure(full, {"steps": 2, "source": "digits"}, "cpu", 5.0, no_mnist)
    assert other["bound"] == "~" and "other data" in other["how"]  # an upper bound on a lower one: neither


@pytest.mark.parametrize(
    "bounds, want",
    [(["~", "<="], "<="), (["~", ">="], ">="), (["<=", ">="], "~"), (["~", "="], "~"), ([], "~"), (["open"], "~")],
)
def test_a_figures_bound_is_one_way_only_where_its_shapes_agree(bounds, want):
    assert plan.figure_bound(bounds) == want


def test_a_shape_that_ran_out_is_not_planned_as_cheap(tmp_path):
    """A figure whose only shape timed out (a run takes at least 20 s, steps unknown) is not estimated, so the CPU
    plan does not put it first; beside a timed shape, it takes that shape's time per step, as a lower bound."""
    o = plan.Owed("ch", "a", 1, 1, [Run("planfake", "a", "x", fake_run, {"steps": 5000, "seed": 0})])
    o.module = _chapter()
    cache = plan.Cache(tmp_path / "c.json", "cpu", "test", 1)
    f = plan.calibrate(o, "cpu", cache, 5.0, timer=lambda *a: None)
    assert f["est_s"] is None and f["bound"] == "?" and "not estimated" in f["how"]
    built = plan.build([f], "cpu")
    assert not built["planned"] and built["unknown"] == [f]
    runs = [
        Run("planfake", "a", "a", fake_run, {"steps": 100, "model": "slow", "seed": 0}),
        Run("planfake", "a", "b", fake_run, {"steps": 100, "model": "fast", "seed": 0}),
    ]
    o = plan.Owed("ch", "a", 1, 2, runs, _chapter())
    timer = lambda r, cfg, d, s: None if r.config["model"] == "slow" else 0.01 * cfg["steps"]  # noqa: E731
    f = plan.calibrate(o, "cpu", plan.Cache(tmp_path / "d.json", "cpu", "test", 1), 5.0, timer=timer)
    assert f["bound"] == ">=" and math.isclose(f["est_s"], 2 * 0.01 * 100, rel_tol=1e-6)


def test_committed_runs_wall_times_price_their_untimed_neighbours(tmp_path, monkeypatch):
    """A cached plan timed shape x (fast model) only; shape y (slow model, 3,000 steps) was priced at x's rate. Once a
    run z of the slow model (1,000 steps) is committed from this device's kind, y takes z's measured rate per step (a
    batched run's recorded wall time is already its share of the group's); a run made on another device's kind is not
    read. The plan lists each missing run's estimate, and the status page sums those still missing."""
    from lscnb.results import Result, store_for
    from lscnb.status import estimates

    monkeypatch.setenv("LSCNB_RESULTS", str(tmp_path / "results"))
    spec = (("x", 1000, "fast"), ("y", 3000, "slow"), ("z", 1000, "slow"))
    runs = {n: Run("planfake", "a", n, fake_run, {"steps": k, "model": m, "seed": 0}) for n, k, m in spec}
    every = list(runs.values())
    cache = plan.Cache(tmp_path / "c.json", "cpu", "test", 1)
    timer = lambda run, cfg, d, s: 0.001 * cfg["steps"]  # noqa: E731
    plan.calibrate(plan.Owed("ch", "a", 1, 3, [runs["x"]], _chapter(), every), "cpu", cache, 5.0, timer=timer)
    owed_now = plan.Owed("ch", "a", 1, 3, [runs["x"], runs["y"]], _chapter(), every)
    before = plan.calibrate(owed_now, "cpu", cache, 5.0, timer=None)
    x_s = before["run_s"][runs["x"].key]
    assert before["measured"] == 0 and math.isclose(before["run_s"][runs["y"].key], 3 * x_s)
    store = store_for("full", "planfake")
    z = runs["z"]

    def committed(provenance):  # z committed with this provenance, read back as owed_in reads it
        store.save(Result(z.key, dict(z.config), {}, {}, provenance))
        return plan.Owed(
            "ch", "a", 1, 3, [runs["x"], runs["y"]], _chapter(), every, {z.key: store.load(z.key).provenance}
        )

    assert (
        plan.calibrate(committed({"device": "cuda", "wall_time_s": 1.0}), "cpu", cache, 5.0, timer=None)["measured"]
        == 0
    )  # another device's kind
    owed_now = committed({"device": "cpu", "wall_time_s": 100.0, "batched": 2})
    after = plan.calibrate(owed_now, "cpu", cache, 5.0, timer=None)
    assert after["measured"] == 1 and after["cached"] and after["untimed"] == []
    assert math.isclose(after["run_s"][runs["y"].key], 300.0) and after["run_s"][runs["x"].key] == x_s
    assert math.isclose(after["est_s"], 300.0 + x_s)
    doc = {"figures": [{**after, "chapter": "ch", "figure": "a"}]}
    (tmp_path / "plan-cpu.json").write_text(json.dumps(doc))
    left = estimates("cpu", root=tmp_path, missing={("ch", "a"): [runs["y"].key]})
    assert left[("ch", "a")] == "the 1 missing run est. ~5 min on cpu, plan of ?"  # y's 300 s, not the mean
    assert estimates("cpu", root=tmp_path, missing={("ch", "a"): 1})[("ch", "a")].startswith("the 1 missing run")
