"""Result records by value: where they go, what their files are named and hold, and what the status listing
makes of a fabricated store (issue 27: provenance checked by value, not for having its fields)."""

import json
from pathlib import Path

import numpy as np
import pytest

from lscnb import results
from lscnb.results import Result, Store


@pytest.fixture
def no_env(monkeypatch):
    for name in ("LSCNB_RESULTS", "LSCNB_CACHE", "LSCNB_GIT_COMMIT", "LSCNB_CODE_DIGEST"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_roots_in_a_checkout(no_env):
    repo = Path(results.__file__).resolve().parent.parent
    assert results.repo_root() == repo
    assert results.results_root() == repo / "results"
    assert results.cache_root() == repo / ".lscnb_cache"
    assert results.store_for("full", "memory").root == repo / "results" / "memory"
    assert results.store_for("quick", "memory").root == repo / ".lscnb_cache" / "quick" / "memory"


def test_roots_outside_a_checkout(no_env, tmp_path):
    no_env.setattr(results, "repo_root", lambda: None)
    no_env.chdir(tmp_path)
    no_env.setenv("HOME", str(tmp_path / "home"))
    assert results.results_root() == tmp_path / "results"
    assert results.cache_root() == tmp_path / "home" / ".cache" / "lscnb"


def test_roots_from_the_environment(no_env, tmp_path):
    no_env.setenv("LSCNB_RESULTS", str(tmp_path / "r"))
    no_env.setenv("LSCNB_CACHE", str(tmp_path / "c"))
    assert results.results_root() == tmp_path / "r"
    assert results.cache_root() == tmp_path / "c"
    assert results.store_for("quick", "lsc").root == tmp_path / "c" / "quick" / "lsc"
    with pytest.raises(ValueError, match="scale must be 'quick' or 'full', got 'paper'"):
        results.store_for("paper", "lsc")


def test_file_names(tmp_path):
    store = Store(tmp_path)
    key = "fig/run-g1.5-ab12"
    assert store.json_path(key) == tmp_path / "fig" / "run-g1.5-ab12.json"
    assert store.npz_path(key) == tmp_path / "fig" / "run-g1.5-ab12.npz"
    assert store.checkpoint_path(key) == tmp_path / "fig" / "run-g1.5-ab12.ckpt"
    assert store.failure_path(key) == tmp_path / "fig" / "run-g1.5-ab12.failed.json"
    assert repr(store) == f"Store({str(tmp_path)!r})"
    for bad in ("", "fig/.", "fig/..", "fig/a b", "fig//x"):
        with pytest.raises(ValueError, match="key must be"):
            store.json_path(bad)


def test_saved_json_is_sorted_with_one_space_indent(tmp_path):
    """Committed results diff cleanly: keys sorted, one space of indent, sets and paths stored as lists/strings."""
    store = Store(tmp_path)
    path = store.save(Result("f/r", {"b": 1, "a": (1, 2)}, {"m": np.float32(0.5), "p": Path("x/y")}, {}, {"z": 1}))
    expected = (
        '{\n "arrays": [],\n "config": {\n  "a": [\n   1,\n   2\n  ],\n  "b": 1\n },\n "key": "f/r",\n'
        ' "metrics": {\n  "m": 0.5,\n  "p": "x/y"\n },\n "provenance": {\n  "z": 1\n }\n}'
    )
    assert path.read_text() == expected
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["f", "r.json"]  # no temporary file left behind


def test_load_round_trip_and_missing_fields(tmp_path):
    store = Store(tmp_path)
    store.save(Result("f/r", {"a": 1}, {"m": 2.0}, {"x": np.arange(3)}, {"profile": "full"}))
    back = store.load("f/r")
    assert back.key == "f/r" and back.config == {"a": 1} and back.metrics == {"m": 2.0}
    assert back.provenance == {"profile": "full"} and np.array_equal(back["x"], [0, 1, 2])
    store.json_path("f/bare").write_text('{"key": "f/bare", "config": {}}')
    bare = store.load("f/bare")
    assert bare.metrics == {} and bare.provenance == {} and bare.arrays == {}
    assert bare.get("missing", 7) == 7
    with pytest.raises(FileNotFoundError, match=f"no result 'f/none' in {tmp_path}"):
        store.load("f/none")


def test_failure_record_and_keys(tmp_path, monkeypatch):
    store = Store(tmp_path)
    store.save_failure("f/bad", {"lr": 0.1}, "Traceback: boom")
    doc = json.loads(store.failure_path("f/bad").read_text())
    assert sorted(doc) == ["config", "date", "error", "key"]
    assert doc["key"] == "f/bad" and doc["config"] == {"lr": 0.1} and doc["error"] == "Traceback: boom"
    assert doc["date"].endswith("+00:00") and len(doc["date"]) == len("2026-01-01T00:00:00+00:00")
    assert store.failure_path("f/bad").read_text().startswith('{\n "key": "f/bad",\n "config": {\n  "lr": 0.1\n }')
    assert list(store.keys()) == []  # a failure is not a finished run
    store.save(Result("f/a", {}))
    store.save(Result("f/bad", {}))
    store.save(Result("g/c", {}))
    assert not store.failure_path("f/bad").exists()  # a successful rerun clears the failure
    store.save_failure("f/zz", {}, "again")
    assert list(store.keys()) == ["f/a", "f/bad", "g/c"]  # after a .failed.json, keys go on


def test_json_default_refuses_objects():
    with pytest.raises(TypeError, match="cannot store object in a result's JSON"):
        results.split_outputs({"x": object()})
    metrics, arrays = results.split_outputs({"s": {3}, "g": np.int64(4), "t": np.ones(2)})
    assert metrics == {"s": {3}, "g": 4} and list(arrays) == ["t"]


def _write(store, key, **prov):
    store.save(Result(key, {}, {}, {}, prov))


def test_status_rows_by_value(tmp_path):
    """The listing of a fabricated store: counts, sets, sums, first/last dates and failures, each by value."""
    lsc = Store(tmp_path / "lsc")
    _write(
        lsc,
        "ffn/a",
        profile="full",
        device_name="H100",
        git_commit="0123456789abcdef",
        date="2026-02-02",
        wall_time_s=1.5,
    )
    _write(
        lsc,
        "ffn/b",
        profile="full",
        device_name="Xeon",
        git_commit="0123456789abcdef",
        date="2026-01-01",
        wall_time_s=2.25,
    )
    _write(lsc, "ffn/c", profile="quick", date="2026-03-03", wall_time_s=0.25)
    _write(lsc, "ffn/d")  # no provenance at all
    lsc.save_failure("ffn/e", {}, "boom")
    lsc.save_failure("ffn/f", {}, "boom")
    lsc.save_failure("only_failed/g", {}, "boom")
    (tmp_path / "stray.txt").write_text("not a chapter")
    rows = {(r["chapter"], r["figure"]): r for r in results.status(tmp_path)}
    assert rows[("lsc", "ffn")] == {
        "chapter": "lsc",
        "figure": "ffn",
        "runs": 4,
        "profiles": ["?", "full", "quick"],
        "devices": ["?", "H100", "Xeon"],
        "commits": ["0123456789ab", "?"],
        "wall_time_s": 4.0,
        "failed": 2,
        "first": "2026-01-01",
        "last": "2026-03-03",
    }
    assert rows[("lsc", "only_failed")] == {
        "chapter": "lsc",
        "figure": "only_failed",
        "runs": 0,
        "profiles": [],
        "devices": [],
        "commits": [],
        "wall_time_s": 0.0,
        "failed": 1,
        "first": "?",
        "last": "?",
    }
    assert len(rows) == 2
    assert results.status(tmp_path / "absent") == []


def test_status_defaults_to_results_root(no_env, tmp_path):
    no_env.setenv("LSCNB_RESULTS", str(tmp_path))
    _write(Store(tmp_path / "ch"), "fig/x", date="2026-05-05")
    (row,) = results.status()
    assert row["chapter"] == "ch" and row["first"] == row["last"] == "2026-05-05"


def test_provenance_by_value(no_env):
    from lscnb import config

    no_env.setenv("LSCNB_GIT_COMMIT", "feedbeef")
    prov = results.provenance(config.resolve("quick", seed=3), seeds=(3, 4), wall_time_s=1.23456)
    assert prov["profile"] == "quick" and prov["scale"] == "quick" and prov["device"] == "cpu"
    assert prov["seeds"] == [3, 4] and prov["wall_time_s"] == 1.235 and prov["git_commit"] == "feedbeef"
    assert results.provenance(config.resolve("quick"), seeds=7, wall_time_s=0, scale="full")["seeds"] == [7]
    assert results.provenance(config.resolve("quick"), seeds=7, wall_time_s=0, scale="full")["scale"] == "full"


def test_a_sweep_records_the_code_it_started_with(no_env):
    """``pin_code`` (``python -m lscnb reproduce`` calls it first) fixes the commit and code digest that later
    results record, in this process and the workers it starts: a commit made while runs go on is not theirs."""
    from lscnb import config

    no_env.setattr(results.os, "environ", dict(results.os.environ))  # what pin_code exports goes with the test
    commits = iter(["aaaa", "bbbb"])
    no_env.setattr(results, "_git_head", lambda: next(commits))
    no_env.setattr(results, "_source_digest", lambda: "code-at-start")
    results.pin_code()
    no_env.setattr(results, "_source_digest", lambda: "code-later")
    prov = results.provenance(config.resolve("quick"), seeds=0, wall_time_s=0)
    assert (prov["git_commit"], prov["code"]) == ("aaaa", "code-at-start")
    assert results.os.environ["LSCNB_GIT_COMMIT"] == "aaaa"  # inherited by spawned workers


def test_an_interrupted_write_leaves_nothing_behind(tmp_path, monkeypatch):
    store = Store(tmp_path)

    def half_written(fh, **arrays):
        fh.write(b"PK partial")
        raise RuntimeError("disk full")

    monkeypatch.setattr(results.np, "savez_compressed", half_written)
    with pytest.raises(RuntimeError, match="disk full"):
        store.save(Result("f/r", {}, {}, {"x": np.zeros(2)}))
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []  # no temporary file, no result


def test_failure_records_store_tuples_and_paths(tmp_path):
    store = Store(tmp_path)
    store.save_failure("f/bad", {"sizes": (1, 2), "where": Path("a/b")}, "boom")
    assert json.loads(store.failure_path("f/bad").read_text())["config"] == {"sizes": [1, 2], "where": "a/b"}


def test_status_reads_a_result_without_provenance(tmp_path):
    (tmp_path / "ch" / "fig").mkdir(parents=True)
    (tmp_path / "ch" / "fig" / "x.json").write_text('{"key": "fig/x", "config": {}}')
    (row,) = results.status(tmp_path)
    assert row["profiles"] == ["?"] and row["runs"] == 1 and row["first"] == "?"
