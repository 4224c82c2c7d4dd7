"""The benchmark scripts run at tiny sizes and their backends agree (the scripts assert it themselves)."""

import json
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from common import threads  # noqa: E402  (bench/ is not a package)


def test_scan_bench_backends_agree(tmp_path):
    import scan

    rows = scan.main(
        [
            "--device",
            "cpu",
            "--T",
            "16",
            "100",
            "--channels",
            "8",
            "--batch",
            "2",
            "--repeat",
            "1",
            "--out",
            str(tmp_path / "scan.json"),
        ]
    )
    assert {r["backend"] for r in rows} >= {"sequential", "parallel"}
    assert all(r["max rel. error"] < 1e-5 and r["ms"] > 0 for r in rows)
    saved = json.loads((tmp_path / "scan.json").read_text())
    assert saved["meta"]["device"] == "cpu" and len(saved["rows"]) == len(rows)


def test_scan_bench_backward(tmp_path):
    import scan

    rows = scan.main(
        [
            "--device",
            "cpu",
            "--T",
            "32",
            "--channels",
            "4",
            "--batch",
            "1",
            "--repeat",
            "1",
            "--backward",
            "--out",
            str(tmp_path / "scan.json"),
        ]
    )
    assert all(r["pass"] == "fwd+bwd" for r in rows)


def test_spectra_bench_methods_agree(tmp_path):
    import spectra

    rows = spectra.main(
        [
            "--device",
            "cpu",
            "--T",
            "6",
            "--width",
            "8",
            "--iters",
            "400",
            "--repeat",
            "1",
            "--out",
            str(tmp_path / "spectra.json"),
        ]
    )
    assert len(rows) == 9
    assert max(r["err vs dense"] for r in rows if r["method"].startswith("per-step")) < 1e-10


def test_cells_bench_runs(tmp_path):
    import cells

    rows = cells.main(
        [
            "--device",
            "cpu",
            "--T",
            "5",
            "--width",
            "8",
            "--batch",
            "4",
            "--repeat",
            "1",
            "--no-compile",
            "--out",
            str(tmp_path / "cells.json"),
        ]
    )
    assert [(r["cell"], r["variant"]) for r in rows] == [
        ("LSTM", "nn.LSTM (cuDNN on GPU)"),
        ("LSTM", "custom cell, Python loop"),
        ("GRU", "nn.GRU (cuDNN on GPU)"),
        ("GRU", "custom cell, Python loop"),
        ("ALIF", "custom cell, Python loop"),
    ]
    assert all(math.isfinite(r["ms per step"]) for r in rows)
    assert [r["vs baseline"] for r in rows if r["note"] == "baseline"] == [1.0, 1.0, 1.0]


def test_batched_bench_runs_and_agrees(tmp_path):
    import batched

    rows = batched.main(
        ["--device", "cpu", "--models", "3", "--T", "5", "--width", "8", "--batch", "4", "--steps", "3"]
        + ["--repeat", "1", "--threads", "1", "--out", str(tmp_path / "batched.json")]
    )
    assert [r["variant"] for r in rows] == [
        "one at a time (fit)",
        "one at a time (fit_batched, 1 model)",
        "batched (fit_batched)",
    ]
    assert rows[0]["speed-up"] == 1.0 and all(r["runs/s"] > 0 and r["threads"] == 1 for r in rows)
    assert all(r["max final-loss diff vs fit"] < 1e-5 for r in rows)
    assert json.loads((tmp_path / "batched.json").read_text())["meta"]["device"] == "cpu"


def test_relational_bench_runs_and_agrees(tmp_path):
    import relational

    with threads(2):  # run at 1 thread from 2: the caller's 2 come back after
        rows = relational.main(
            ["--device", "cpu", "--models", "corelnet", "--runs", "3", "--steps", "2", "--test", "96", "--repeat", "1"]
            + ["--threads", "1", "--out", str(tmp_path / "relational.json")]
        )
        assert torch.get_num_threads() == 2
    assert [r["variant"] for r in rows] == ["one at a time (task_run)", "batched (task_group)"]
    assert rows[0]["speed-up"] == 1.0 and all(r["runs/s"] > 0 and r["max accuracy diff"] <= 3 / 96 for r in rows)
    assert json.loads((tmp_path / "relational.json").read_text())["meta"]["device"] == "cpu"


def test_encoder_bench_runs_and_agrees(tmp_path):
    import encoder

    rows = encoder.main(
        ["--device", "cpu", "--tasks", "same_different", "--splits", "extreme", "--steps", "2", "--repeat", "1"]
        + ["--threads", "1", "--out", str(tmp_path / "encoder.json")]
    )
    assert [(r["m"], r["variant"]) for r in rows] == [(98, "every image"), (98, "distinct objects (Encoded.codes)")]
    assert rows[0]["images a batch"] == 192 and rows[0]["distinct"] == 2  # two training objects at m = 98
    assert rows[0]["speed-up"] == 1.0 and all(r["ms a step"] > 0 and r["max loss diff"] <= 1e-4 for r in rows)
    assert json.loads((tmp_path / "encoder.json").read_text())["meta"]["device"] == "cpu"


def test_optimizer_step_bench_foreach_is_bit_equal(tmp_path):
    import optimizer_step

    with threads(2):  # run at 1 thread from 2: the record must name the 1 it ran with, and the 2 come back after
        rows = optimizer_step.main(
            ["--device", "cpu", "--width", "4", "--steps", "3", "--repeat", "1", "--threads", "1"]
            + ["--out", str(tmp_path / "optimizer_step.json")]
        )
        assert torch.get_num_threads() == 2
    assert {r["optimiser"] for r in rows} == {"Adam", "AdamW", "RMSprop", "SGD + momentum"}
    assert {r["variant"] for r in rows if r["optimiser"] == "Adam"} == {"per-tensor loop", "foreach", "fused"}
    assert all(r["ms per step"] > 0 for r in rows)
    assert all(r["max diff vs loop"] == 0 for r in rows if r["variant"] != "fused")  # the same numbers, bit for bit
    assert all(r["max diff vs loop"] < 1e-5 for r in rows)
    assert json.loads((tmp_path / "optimizer_step.json").read_text())["meta"]["threads"] == 1


def test_twins_bench_runs_and_agrees(tmp_path):
    import twins

    rows = twins.main(
        ["--device", "cpu", "--smoke", "--cases", "roarnn/adding", "lsc/lr_grid:alif", "--threads", "1"]
        + ["--out", str(tmp_path / "twins.json")]
    )
    assert [(r["figure"], r["runs"]) for r in rows[::2]] == [("roarnn/adding", 5), ("lsc/lr_grid:alif", 7)]
    assert all(r["runs/s"] > 0 and r["max final-loss rel. diff"] < 1e-3 for r in rows) and rows[0]["speed-up"] == 1.0
    assert json.loads((tmp_path / "twins.json").read_text())["meta"]["device"] == "cpu"


def test_twins_bench_leaves_out_the_cases_whose_data_is_absent(monkeypatch, capsys):
    import twins

    monkeypatch.setattr(twins, "have_mnist", lambda: False)
    monkeypatch.setattr(twins, "have_objects", lambda: False)
    row = lambda name, runs, device, repeat: [{"figure": name, "runs": len(runs), "max final-loss rel. diff": 0.0}]  # noqa: E731
    monkeypatch.setattr(twins, "bench", row)
    monkeypatch.setattr(twins, "report", lambda *a, **k: "")
    rows = twins.main(["--device", "cpu", "--cases", "roarnn/copy", "roarnn/psmnist", "corelnet/baselines:rn"])
    assert [(r["figure"], r["runs"]) for r in rows] == [("roarnn/copy", 5)]
    err = capsys.readouterr().err
    assert "left out roarnn/psmnist" in err and "left out corelnet/baselines:rn" in err
