"""Executors: local, Ray (a local instance on the CPU) and submitit (its debug cluster), and resuming a killed
Ray sweep to the same results as an uninterrupted one."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from lscnb import config, executors, results, sweep


def _work(cfg, ctx):
    rng = np.random.default_rng(cfg["x"])
    if cfg.get("fail"):
        raise ValueError("planned failure in a worker")
    return {"value": float(rng.normal()), "x": cfg["x"], "trace": rng.normal(size=4)}


def _runs(n=6, fail_at=None):
    return [sweep.Run("toy", "fig", f"x{x}", _work, {"x": x, "fail": x == fail_at}) for x in range(n)]


def test_make_executor_rejects_unknown():
    with pytest.raises(ValueError, match="executor"):
        executors.make_executor("dask")


def test_local_executor_matches_direct_compute(stores):
    p = config.resolve("full", device="cpu")
    out = sweep.run_sweep(_runs(3), p, progress=False)
    assert [r["x"] for r in out] == [0, 1, 2]
    assert np.allclose(out[1]["trace"], np.random.default_rng(1).normal(size=5)[1:])


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason="ray is not installed: the Ray executor cannot be tested here")
    import ray.cloudpickle  # noqa: F811 (the submodule, after importorskip gave the package)

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import this test module
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_ray_executor_runs_and_records_failures(stores, ray_local):
    p = config.resolve("full", device="cpu")
    with pytest.raises(sweep.SweepError, match="1 of 5"):
        sweep.run_sweep(_runs(5, fail_at=2), p, executor="ray", progress=False)
    store = results.store_for("full", "toy")
    failed = json.loads(store.failure_path(_runs(5, fail_at=2)[2].key).read_text())
    assert "planned failure in a worker" in failed["error"]
    local = {
        r.key: r for r in sweep.run_sweep(_runs(5), config.resolve("full", device="cpu"), progress=False, force=True)
    }
    got = sweep.run_sweep(_runs(5), p, executor="ray", progress=False)
    assert [r["value"] for r in got] == [local[r.key]["value"] for r in got]
    assert got[0].provenance["profile"] == "full"


def test_submitit_debug_executor(stores):
    pytest.importorskip("submitit", reason="submitit is not installed")
    p = config.resolve("full", device="cpu")
    out = sweep.run_sweep(
        _runs(3), p, executor="submitit", folder=str(stores / "submitit"), cluster="debug", poll_s=0.01, progress=False
    )
    assert [r["x"] for r in out] == [0, 1, 2]


KILL_SCRIPT = textwrap.dedent("""
    import sys, time
    import numpy as np
    from lscnb import config, sweep

    def slow(cfg, ctx):
        time.sleep(cfg["sleep"])
        return {"value": float(np.random.default_rng(cfg["x"]).normal()), "x": cfg["x"]}

    runs = [sweep.Run("toy", "slow", f"x{x}", slow, {"x": x, "sleep": float(sys.argv[1])}) for x in range(8)]
    sweep.run_sweep(runs, config.resolve("full", device="cpu"), executor="ray", progress=False,
                    address=None, max_in_flight=1)
    print("SWEEP DONE")
""")


def _run_script(tmp_path, sleep, env, timeout=300):
    script = tmp_path / "sweep_script.py"
    script.write_text(KILL_SCRIPT)
    return subprocess.Popen(
        [sys.executable, str(script), str(sleep)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def test_killed_ray_sweep_resumes_to_the_same_results(tmp_path):
    pytest.importorskip("ray", reason="ray is not installed: the Ray executor cannot be tested here")
    root = Path(__file__).resolve().parent.parent
    base = dict(os.environ, PYTHONPATH=str(root), LSCNB_GIT_COMMIT="test", RAY_ADDRESS="")
    killed_env = dict(base, LSCNB_RESULTS=str(tmp_path / "killed"))
    store = results.Store(tmp_path / "killed" / "toy")
    proc = _run_script(tmp_path, 1.0, killed_env)
    deadline = time.time() + 240
    while time.time() < deadline and len(list(store.keys())) < 3:
        time.sleep(0.5)
    proc.kill()
    proc.wait()
    finished = len(list(store.keys()))
    assert 3 <= finished < 8, f"expected a sweep killed halfway, found {finished} finished runs"
    stamps = {k: store.json_path(k).stat().st_mtime for k in store.keys()}
    resumed = _run_script(tmp_path, 1.0, killed_env)
    out, _ = resumed.communicate(timeout=300)
    assert "SWEEP DONE" in out, out[-2000:]
    assert len(list(store.keys())) == 8
    assert all(store.json_path(k).stat().st_mtime == t for k, t in stamps.items()), "finished runs were redone"
    straight_env = dict(base, LSCNB_RESULTS=str(tmp_path / "straight"))
    out, _ = _run_script(tmp_path, 0.0, straight_env).communicate(timeout=300)
    assert "SWEEP DONE" in out, out[-2000:]
    straight = results.Store(tmp_path / "straight" / "toy")
    values = lambda s: {k.split("-")[0]: s.load(k)["value"] for k in s.keys()}  # noqa: E731
    assert values(store) == values(straight)


def test_process_executor_matches_local_and_records_failures(stores):
    p = config.resolve("full", device="cpu")
    with pytest.raises(sweep.SweepError, match="1 of 4"):
        sweep.run_sweep(_runs(4, fail_at=1), p, executor="processes", workers=2, progress=False)
    failed = list(stores.rglob("*.failed.json"))
    assert len(failed) == 1 and "planned failure" in failed[0].read_text()
    got = sweep.run_sweep(_runs(4), p, executor="processes", workers=2, progress=False)
    assert [r["x"] for r in got] == [0, 1, 2, 3]
    assert np.allclose(got[2]["trace"], np.random.default_rng(2).normal(size=5)[1:])


def test_process_executor_rejects_bad_workers():
    with pytest.raises(ValueError, match="workers"):
        executors.make_executor("processes", workers=0)


ORPHAN_SCRIPT = textwrap.dedent("""
    import os, sys, time
    from lscnb import config, sweep

    def slow(cfg, ctx):
        with open(cfg["pid_file"], "w") as f:
            f.write(str(os.getpid()))
        time.sleep(120)
        return {"x": 1.0}

    if __name__ == "__main__":
        runs = [sweep.Run("toy", "slow", "x0", slow, {"pid_file": sys.argv[1]})]
        sweep.run_sweep(runs, config.resolve("full", device="cpu"), executor="processes", workers=1, progress=False)
""")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie has stopped computing; only its exit status is left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_process_sweep_killed_with_sigkill_leaves_no_worker(tmp_path):
    """kill -9 of a sweep must not leave its workers computing on (they held two cores here for an hour)."""
    root = Path(__file__).resolve().parent.parent
    script, pid_file = tmp_path / "orphan.py", tmp_path / "worker.pid"
    script.write_text(ORPHAN_SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(root), LSCNB_GIT_COMMIT="test", LSCNB_RESULTS=str(tmp_path / "results"))
    proc = subprocess.Popen([sys.executable, str(script), str(pid_file)], env=env)
    deadline = time.time() + 120
    while time.time() < deadline and not (pid_file.exists() and pid_file.read_text()):
        time.sleep(0.2)
    assert pid_file.exists(), "the worker never started"
    worker = int(pid_file.read_text())
    assert _alive(worker)
    proc.kill()
    proc.wait()
    deadline = time.time() + 20
    while time.time() < deadline and _alive(worker):
        time.sleep(0.2)
    alive = _alive(worker)
    if alive:
        os.kill(worker, 9)
    assert not alive, "the worker outlived its killed sweep"
