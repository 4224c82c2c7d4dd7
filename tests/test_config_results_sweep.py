import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from lscnb import config, results, sweep
from lscnb.__main__ import main


def test_resolve_profiles(monkeypatch):
    monkeypatch.delenv("LSCNB_PROFILE", raising=False)
    assert config.resolve().name == "replay"
    monkeypatch.setenv("LSCNB_PROFILE", "quick")
    p = config.resolve(None)
    assert p.name == "quick" and p.scale == "quick" and p.device == "cpu"
    assert config.resolve("FULL", device="cpu").scale == "full"
    assert config.resolve("replay").scale == "quick"
    assert config.pick(config.resolve("quick"), quick=1, full=2) == 1


def test_resolve_bad_input():
    with pytest.raises(ValueError, match="profile must be one of"):
        config.resolve("paper")
    with pytest.raises(TypeError, match="profile"):
        config.resolve(3)
    with pytest.raises(ValueError, match="seed"):
        config.resolve("quick", seed=-1)
    with pytest.raises(ValueError, match="device"):
        config.resolve("quick", device="tpu9")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA"):
            config.resolve("full", device="cuda")


def test_resolve_seeds_generators():
    config.resolve("quick", seed=5)
    a = torch.rand(3)
    config.resolve("quick", seed=5)
    assert torch.equal(a, torch.rand(3))


def _square(cfg, ctx):
    return {"value": cfg["x"] ** 2, "curve": np.arange(cfg["x"]), "seed_seen": ctx.seed}


CALLS = []


def _counted(cfg, ctx):
    CALLS.append(cfg["x"])
    if cfg.get("fail"):
        raise RuntimeError("planned failure")
    return {"value": cfg["x"]}


def _build(scale):
    n = 3 if scale == "quick" else 5
    return [sweep.Run("toy", "fig", f"x{x}", _square, {"x": x, "seed": 1}) for x in range(1, n + 1)]


def test_store_roundtrip_and_atomic_marker(stores):
    store = results.Store(stores / "s")
    r = results.Result("fig/a-1", {"x": 1}, {"m": 2.5}, {"arr": np.eye(2)}, {"profile": "quick"})
    store.save(r)
    assert store.has("fig/a-1") and list(store.keys()) == ["fig/a-1"]
    back = store.load("fig/a-1")
    assert back["m"] == 2.5 and np.array_equal(back["arr"], np.eye(2))
    assert not list((stores / "s").rglob("*.tmp"))
    with pytest.raises(ValueError, match="key"):
        store.has("../escape")
    with pytest.raises(KeyError, match="no entry"):
        back["missing"]


def test_run_names_with_dots_do_not_collide(stores):
    store = results.Store(stores / "dots")
    for name in ("fig/g1.0-abc", "fig/g1.5-def", "fig/g1"):
        store.save(results.Result(name, {}, {"name": name}, {"a": np.zeros(1)}))
    assert sorted(store.keys()) == ["fig/g1", "fig/g1.0-abc", "fig/g1.5-def"]
    assert [store.load(k)["name"] for k in sorted(store.keys())] == sorted(store.keys())


def test_provenance_fields(stores, monkeypatch):
    import datetime as dt
    import platform

    import lscnb

    monkeypatch.delenv("LSCNB_DEVICE", raising=False)
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    prov = results.provenance(config.resolve("quick", seed=3), seeds=[3, 4], wall_time_s=1.2344)
    after = dt.datetime.now(dt.timezone.utc)
    assert prov["profile"] == "quick" and prov["scale"] == "quick" and prov["device"] == "cpu"
    assert prov["device_name"] == config.device_name("cpu") and prov["seeds"] == [3, 4]
    assert prov["git_commit"] == "test-commit" and prov["code"] == results.code_digest()
    assert (prov["torch"], prov["numpy"], prov["lscnb"]) == (torch.__version__, np.__version__, lscnb.__version__)
    assert prov["python"] == platform.python_version() and prov["wall_time_s"] == 1.234
    assert before <= dt.datetime.fromisoformat(prov["date"]) <= after
    full = results.provenance(config.resolve("full", device="cpu"), seeds=7, wall_time_s=0, scale="full")
    assert full["profile"] == full["scale"] == "full" and full["seeds"] == [7]


def test_a_stored_result_keeps_its_provenance_by_value(stores):
    run = sweep.Run("toy", "fig", "x2", _square, {"x": 2, "seed": 1})
    [made] = sweep.run_sweep([run], config.resolve("full", device="cpu", seed=2), progress=False)
    loaded = results.store_for("full", "toy").load(made.key)
    assert loaded.provenance == made.provenance and loaded.provenance["seeds"] == [3]
    assert loaded.provenance["profile"] == "full" and loaded.provenance["git_commit"] == "test-commit"
    assert loaded.config == {"x": 2, "seed": 1, "seed_offset": 2} and loaded["value"] == 4


def test_run_key_is_stable_and_config_sensitive():
    a = sweep.Run("toy", "fig", "x1", _square, {"x": 1})
    assert a.key == sweep.Run("toy", "fig", "x1", _square, {"x": 1}).key
    assert a.key != sweep.Run("toy", "fig", "x1", _square, {"x": 2}).key
    assert a.key != sweep.Run("toy", "fig", "x1", _counted, {"x": 1}).key
    with pytest.raises(TypeError, match="JSON"):
        sweep.Run("toy", "fig", "bad", _square, {"x": object()})
    with pytest.raises(ValueError, match="figure"):
        sweep.Run("toy", "", "x", _square, {})


def test_full_sweep_resumes_and_skips_finished(stores):
    CALLS.clear()
    p = config.resolve("full", device="cpu")
    runs = [sweep.Run("toy", "fig", f"x{x}", _counted, {"x": x, "fail": x == 3}) for x in range(1, 5)]
    with pytest.raises(sweep.SweepError, match="1 of 4"):
        sweep.run_sweep(runs, p, progress=False)
    assert CALLS == [1, 2, 3, 4]
    store = results.store_for("full", "toy")
    failed = json.loads(store.failure_path(runs[2].key).read_text())
    assert "planned failure" in failed["error"]
    CALLS.clear()
    fixed = runs[:2] + [sweep.Run("toy", "fig", "x3", _counted, {"x": 3, "fail": False})] + runs[3:]
    out = sweep.run_sweep(fixed, p, progress=False)
    assert CALLS == [3] and [r["value"] for r in out] == [1, 2, 3, 4]


def test_sweep_removes_checkpoints_nothing_resumes_from(stores):
    """A group checkpoint whose first run is stored (the group was cut short, its runs then ran another way) and a
    stored run's own checkpoint go; a checkpoint of a missing run or group stays, and so does every result."""
    p = config.resolve("full", device="cpu")
    runs = [sweep.Run("toy", "fig", f"x{x}", _counted, {"x": x}) for x in (1, 2)]
    store = results.store_for("full", "toy")
    other = sweep.Run("toy", "other", "y", _counted, {"x": 9})  # another figure of the chapter, never run
    for path in (
        store.checkpoint_path(f"{runs[0].key}.group-0123456789"),
        store.checkpoint_path(runs[1].key),
        store.checkpoint_path(f"{other.key}.group-abcdef0123"),
        store.checkpoint_path(other.key),
    ):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"state")
    keep = [store.checkpoint_path(f"{other.key}.group-abcdef0123"), store.checkpoint_path(other.key)]
    assert sorted(store.orphaned_checkpoints()) == []  # nothing stored yet: every checkpoint may resume
    sweep.run_sweep(runs[:1], p, progress=False)
    assert store.orphaned_checkpoints() == [] and not store.checkpoint_path(f"{runs[0].key}.group-0123456789").exists()
    assert store.checkpoint_path(runs[1].key).exists()  # its run is still missing
    store.checkpoint_path(runs[0].key).write_bytes(b"state")  # a stored run's own (left by a crash after saving)
    sweep.run_sweep(runs, p, progress=False)  # runs[0] is not run again
    assert not store.checkpoint_path(runs[0].key).exists() and not store.checkpoint_path(runs[1].key).exists()
    assert all(k.exists() for k in keep)
    assert all(store.has(r.key) for r in runs)


def test_quick_reuse_only_from_the_code_on_disk(stores, monkeypatch):
    CALLS.clear()
    p = config.resolve("quick")
    runs = [sweep.Run("toy", "fig", f"x{x}", _counted, {"x": x}) for x in (1, 2)]
    sweep.run_sweep(runs, p, progress=False)
    sweep.run_sweep(runs, p, progress=False)  # quick runs are recomputed by default
    assert CALLS == [1, 2, 1, 2]
    monkeypatch.setenv("LSCNB_REUSE", "1")
    CALLS.clear()
    sweep.run_sweep(runs, p, progress=False)
    assert CALLS == []
    monkeypatch.setattr(sweep, "code_digest", lambda: "edited-code")
    sweep.run_sweep(runs, p, progress=False)
    assert CALLS == [1, 2]


def test_gather_replay_falls_back_to_quick_and_says_so(stores):
    replay = config.resolve("replay")
    col = sweep.gather(_build, replay, progress=False)
    assert col.scale == "quick" and len(col) == 3 and not col.is_paper_scale
    assert "has not been committed yet" in col.caption() and "0 of 5" in col.caption()
    # a full run makes replay show it, labelled as full
    sweep.gather(_build, config.resolve("full", device="cpu"), progress=False)
    col = sweep.gather(_build, replay, progress=False)
    assert col.scale == "full" and len(col) == 5 and col.is_paper_scale
    cap = col.caption(data="synthetic")
    assert "full" in cap and "not been committed" not in cap and "Data: synthetic" in cap
    assert col.one(x=4)["value"] == 16 and col.one(x=2)["seed_seen"] == 1


def test_quick_caption_never_claims_paper_scale(stores):
    col = sweep.gather(_build, config.resolve("quick"), progress=False)
    assert "quick" in col.caption() and "not paper scale" in col.caption()


def test_status_lists_results(stores, capsys):
    sweep.gather(_build, config.resolve("full", device="cpu"), progress=False)
    rows = results.status()
    assert rows[0]["chapter"] == "toy" and rows[0]["runs"] == 5 and rows[0]["profiles"] == ["full"]
    assert main(["status"]) == 0
    out = capsys.readouterr().out
    assert "toy" in out and "fig" in out and "test-commit" in out


def test_status_names_every_device_of_a_figure(stores, capsys):
    """A figure whose runs ran on a GPU and on a CPU lists both, each short enough for the column."""
    sweep.gather(_build, config.resolve("full", device="cpu"), progress=False)
    names = ["NVIDIA H200", "Intel(R) Xeon(R) Processor (16 cores)"]
    for path, name in zip(sorted((stores / "results").rglob("*.json"))[:2], names):
        doc = json.loads(path.read_text())
        doc["provenance"]["device_name"] = name
        path.write_text(json.dumps(doc))
    assert main(["status"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("toy"))
    assert "H200" in line and "Xeon, 16 cores" in line


def test_cli_reproduce_no_notebook(stores):
    env = dict(os.environ, LSCNB_RESULTS=str(stores / "results"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lscnb",
            "reproduce",
            "gradients",
            "--profile",
            "full",
            "--device",
            "cpu",
            "--no-notebook",
            "--figure",
            "nope",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode != 0 and "no figure 'nope'" in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "lscnb", "reproduce", "chapter9"], capture_output=True, text=True, env=env
    )
    assert proc.returncode != 0 and "unknown chapter" in proc.stderr


def test_plot_show_emits_png_and_caption(stores, monkeypatch):
    from lscnb import plot

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    col = sweep.gather(_build, config.resolve("quick"), progress=False)
    fig, ax = plot.figure()
    ax[0, 0].plot([1, 2, 3])
    plot.show(fig, col, data="generated")
    assert shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    assert "quick" in shown[1].data and "Data: generated" in shown[1].data


def _build_other(scale):
    return [sweep.Run("toy", "other", f"y{x}", _square, {"x": x, "seed": 1}) for x in range(1, 3)]


def test_captions_name_each_figure_and_warn_of_mixed_scales(stores):
    """One collection: its caption alone. Several: each caption led by its figure's name; a full figure beside a
    quick one (a replay whose second figure is not committed) gets a warning naming both."""
    from lscnb import plot

    replay = config.resolve("replay")
    sweep.gather(_build, config.resolve("full", device="cpu"), progress=False)
    full, quick = sweep.gather(_build, replay, progress=False), sweep.gather(_build_other, replay, progress=False)
    assert (full.scale, quick.scale) == ("full", "quick")
    assert plot.captions([full], "d") == [full.caption(data="d")]
    assert plot.captions([full, full]) == [full.caption()]
    lines = plot.captions([quick, full])
    assert lines[0] == f"**Runs of figure `other`:** {quick.caption()}"
    assert lines[1] == f"**Runs of figure `fig`:** {full.caption()}"
    assert "Mixed scales" in lines[2] and "`fig` at paper scale, `other` at quick" in lines[2]
    both_quick = plot.captions([quick, sweep.gather(_build, config.resolve("quick"), progress=False)])
    assert len(both_quick) == 2 and not any("Mixed" in line for line in both_quick)


def test_at_scale_of_keeps_the_collections_at_the_first_ones_scale(stores):
    replay = config.resolve("replay")
    sweep.gather(_build, config.resolve("full", device="cpu"), progress=False)
    full, quick = sweep.gather(_build, replay, progress=False), sweep.gather(_build_other, replay, progress=False)
    plain = [full[0]]
    assert sweep.at_scale_of(full, quick, full, plain) == [full, plain]
    assert sweep.at_scale_of(quick, quick, full) == [quick]
    assert sweep.at_scale_of(plain, quick, full) == [quick, full]


def test_pool_groups_results_and_never_pools_two_scales(stores):
    replay = config.resolve("replay")
    sweep.gather(_build, config.resolve("full", device="cpu"), progress=False)
    full, quick = sweep.gather(_build, replay, progress=False), sweep.gather(_build_other, replay, progress=False)
    odd = lambda r: r.config["x"] % 2 or None  # noqa: E731 - even x left out
    assert {k: [r.config["x"] for r in rs] for k, rs in sweep.pool([full], odd).items()} == {1: [1, 3, 5]}
    cells = sweep.pool([full, quick], lambda r: (r.key.split("/")[0], r.config["x"]))
    assert len(cells) == 7 and all(
        len(rs) == 1 for rs in cells.values()
    )  # disjoint cells: both scales may sit side by side
    with pytest.raises(ValueError, match="1 cell.* would pool quick and full runs"):
        sweep.pool([full, quick], lambda r: r.config["x"] == 1 or None)
    assert (
        len(sweep.pool([list(full), quick], lambda r: r.config["x"] == 1 or None)[True]) == 2
    )  # a plain list: no scale


def test_show_table_puts_the_captions_under_the_table(stores, monkeypatch):
    from lscnb import plot

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    sweep.gather(_build, config.resolve("full", device="cpu"), progress=False)
    replay = config.resolve("replay")
    full, quick = sweep.gather(_build, replay, progress=False), sweep.gather(_build_other, replay, progress=False)
    plot.show_table([{"a": 1}], full, quick, title="T")
    text = shown[0].data
    assert text.startswith("**T**") and "Runs of figure `fig`" in text and "Mixed scales" in text


def test_grouped_bars_centre_each_series_on_its_group():
    """Three series over two groups: bars 0.8/3 wide at -w, 0, +w around ticks 0 and 1, heights by value, a nan
    for a missing bar, labels and colours by series."""
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt

    from lscnb import plot

    fig, ax = plot.figure()
    heights = {("a", "x"): 1.0, ("a", "y"): 2.0, ("a", "z"): 3.0, ("b", "x"): 4.0, ("b", "y"): float("nan")}
    value = lambda g, s: heights.get((g, s), 0.5)  # noqa: E731
    plot.grouped_bars(ax[0, 0], ["a", "b"], ["x", "y", "z"], value, label=str.upper, color=lambda s: f"C{ord(s) % 3}")
    bars = ax[0, 0].patches
    w = 0.8 / 3
    centres = [b.get_x() + b.get_width() / 2 for b in bars]  # series by series: x over both groups, then y, then z
    assert centres == pytest.approx([-w, 1 - w, 0, 1, w, 1 + w])
    assert [b.get_width() for b in bars] == pytest.approx([w] * 6)
    assert [b.get_height() for b in bars][:3] == [1.0, 4.0, 2.0] and np.isnan(bars[3].get_height())
    assert [c.get_label() for c in ax[0, 0].containers] == ["X", "Y", "Z"]
    assert mcolors.same_color(bars[0].get_facecolor(), f"C{ord('x') % 3}")
    plot.grouped_bars(ax[0, 0], ["a"], ["x", "y"], value)  # defaults: the series as its label, C0, C1, ...
    assert [c.get_label() for c in ax[0, 0].containers][-2:] == ["x", "y"]
    assert mcolors.same_color(ax[0, 0].patches[-1].get_facecolor(), "C1")
    plt.close(fig)


def test_markdown_table_escapes_pipes_in_cells_and_headers():
    """A header like "max |H|" must stay one cell: parsed by markdown-it (MyST's parser), the table keeps its
    shape."""
    from lscnb.plot import table

    text = table([{"max |H|": 1.5, "note": "a|b\nc"}, {"max |H|": 2.0, "note": "d"}])
    md = pytest.importorskip("markdown_it").MarkdownIt("commonmark").enable("table")
    html = md.render(text)
    assert html.count("<th>") == 2 and html.count("<td>") == 4, html
    assert "<th>max |H|</th>" in html and "<td>a|b c</td>" in html


def test_checked_says_what_was_checked_in_one_line(monkeypatch):
    from lscnb import plot

    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    plot.checked("the slope is -2 within 5%", "seeds 0-4 agree.")
    assert shown[0].data == "✓ **Checked:** the slope is -2 within 5%; seeds 0-4 agree."
    with pytest.raises(ValueError, match="claims"):
        plot.checked()


def test_colab_default_profile(monkeypatch):
    import types

    monkeypatch.delenv("LSCNB_PROFILE", raising=False)
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    p = config.resolve()
    assert p.name == "quick" and "Colab without a GPU" in p._repr_markdown_()
    monkeypatch.setenv("LSCNB_PROFILE", "replay")
    assert config.resolve().name == "replay"


# ----------------------------------------------------------------------------------- the reader's seed
def _draw(cfg, ctx):
    """A run that samples: its output depends on the seed it is seeded with, and says which one it got."""
    return {"x": torch.rand(3).numpy(), "ctx_seed": ctx.seed}


def test_reseeded_offsets_every_seed_and_keeps_seed_zero_as_is():
    from lscnb.sweep import Run

    run = Run("ch", "fig", "r", _draw, {"seed": 2, "width": 4})
    assert run.reseeded(0) is run and run.seed == 2
    moved = run.reseeded(3)
    assert moved.seed == 5 and moved.config == {"seed": 2, "width": 4, "seed_offset": 3} and moved.key != run.key
    assert Run("ch", "fig", "r", _draw, {}).reseeded(1).seed == 1
    for bad in (-1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="offset"):
            run.reseeded(bad)


def test_profile_seed_reaches_runs_and_their_provenance(tmp_path, monkeypatch):
    from lscnb import config
    from lscnb.sweep import Run, run_sweep

    monkeypatch.setenv("LSCNB_RESULTS", str(tmp_path / "full"))
    monkeypatch.setenv("LSCNB_CACHE", str(tmp_path / "quick"))
    runs = [Run("ch", "fig", f"s{s}", _draw, {"seed": s}) for s in (0, 1)]
    at0 = run_sweep(runs, config.resolve("quick", seed=0), progress=False)
    again = run_sweep(runs, config.resolve("quick", seed=0), progress=False)
    at5 = run_sweep(runs, config.resolve("quick", seed=5), progress=False)
    assert [r.metrics["ctx_seed"] for r in at0] == [0, 1] and [r.metrics["ctx_seed"] for r in at5] == [5, 6]
    assert [r.provenance["seeds"] for r in at5] == [[5], [6]]
    assert [r.config["seed"] for r in at5] == [0, 1]  # the figure's own seed names stay, for plot code
    assert np.array_equal(at0[0]["x"], again[0]["x"]) and not np.array_equal(at0[0]["x"], at5[0]["x"])


def test_seed_list_and_caption_name_the_seeds(stores):
    from lscnb.sweep import seed_list

    assert seed_list([5, 0, 1, 2]) == "0-2, 5" and seed_list([]) == "?" and seed_list([7]) == "7"
    sweep.gather(_build, config.resolve("full", device="cpu"), progress=False)
    at0 = sweep.gather(_build, config.resolve("replay"), progress=False)
    at3 = sweep.gather(_build, config.resolve("replay", seed=3), progress=False)
    assert "seeds 1;" in at0.caption() and "does not change committed" not in at0.caption()
    assert [r.key for r in at3] == [r.key for r in at0] and "SEED = 3 does not change committed" in at3.caption()
    quick = sweep.gather(_build, config.resolve("quick", seed=3), progress=False)
    assert "seeds 4;" in quick.caption() and [r.config.get("seed_offset") for r in quick] == [3, 3, 3]


def test_markdown_table_shows_every_rows_columns():
    """Rows with different keys (Fig. 5.4's panels, curves whose tasks have other m): every key gets a column, in
    the order it first appears, and a row without it a blank cell (the first row's keys alone hid the others)."""
    from lscnb.plot import table

    text = table([{"panel": "a", "x": 1}, {"panel": "b", "y": 2.5}])
    assert text.splitlines()[0] == "| panel | x | y |"
    assert text.splitlines()[2:] == ["| a | 1 |  |", "| b |  | 2.5 |"]
    assert table([{"panel": "a", "x": 1}, {"panel": "b", "y": 2}], columns=["panel"]).splitlines()[0] == "| panel |"
