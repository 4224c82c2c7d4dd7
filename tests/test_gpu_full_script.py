"""scripts/gpu-full.sh, with python3 and nvidia-smi replaced by stubs: which commands its ITEMs and steps make, and
that at the end it kills the workers its own runs left behind and no other process."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# the stub python3: logs its arguments; a reproduce call leaves an orphaned "multiprocessing" worker behind
STUB = """#!/usr/bin/env bash
echo "python3 $*" >> "$STUB_LOG"
case "$*" in
  *" plan "*) mkdir -p _build; echo '{}' > _build/plan-calibration-cuda.json; echo '{"plan": 1}' ;;
  *reproduce*) nohup bash -c 'exec -a multiprocessing-orphan sleep 300' > /dev/null 2>&1 & echo $! >> "$STUB_PIDS" ;;
esac
"""


def _stubbed(tmp_path, python3: str):
    """A tree holding scripts/ and results/, and the environment that runs it with stub ``python3`` and nvidia-smi:
    (tree, out, env)."""
    bin_dir, tree, out = tmp_path / "bin", tmp_path / "tree", tmp_path / "out"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(python3)
    (bin_dir / "nvidia-smi").write_text("#!/usr/bin/env bash\necho stub\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    (tree / "results").mkdir(parents=True)
    shutil.copytree(ROOT / "scripts", tree / "scripts")
    return tree, out, dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", OUT=str(out), LSCNB_GIT_COMMIT="x")


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("pgrep") is None, reason="Linux, pgrep")
def test_items_and_steps_make_their_commands_and_only_this_calls_workers_are_killed(tmp_path):
    tree, out, env = _stubbed(tmp_path, STUB)
    log, pids = tmp_path / "log", tmp_path / "pids"
    bystander = subprocess.Popen(["bash", "-c", "exec -a multiprocessing-bystander sleep 300"])
    env.update(STUB_LOG=str(log), STUB_PIDS=str(pids))
    items = ["smoke:nnrnn,roarnn=30", "plan=60", "bench:fwd+bwd,batched", "memory:teacher@cuda*batched"]
    items += ["memory:theta0@cuda*batched3"]
    items += ["corelnet:mix,nhid@cpu*4"]
    try:
        done = subprocess.run(["bash", "scripts/gpu-full.sh", "60", *items], cwd=tree, env=env, capture_output=True)
        assert done.returncode == 0, done.stderr
        described = log.read_text().splitlines()
        assert "at_hand()" in described[1]  # the machine, then the real data this call carried
        calls = described[2:]
        cpu = (
            "python3 -m lscnb reproduce corelnet --profile full --no-notebook --figure mix --figure nhid --device cpu "
            "--executor processes --workers 4"
        )
        assert cpu in calls  # started at once, beside the GPU steps
        gpu = [c for c in calls if c != cpu]
        assert gpu[:3] == [
            "python3 -m lscnb smoke --device cuda nnrnn roarnn",
            "python3 -m lscnb plan --device cuda --json --cache _build/plan-calibration-cuda.json",
            "python3 bench/run_all.py --device cuda --tables fwd+bwd,batched",
        ]  # the GPU steps in order, then the GPU items, side by side (in either order)
        reproduce = "python3 -m lscnb reproduce memory --profile full --no-notebook --device cuda --executor batched"
        assert sorted(gpu[3:]) == [
            reproduce.replace("--device", "--figure teacher --device"),
            reproduce.replace("--device", "--figure theta0 --device") + " --workers 3",
        ]
        assert (out / "plan-cuda.json").read_text().strip() == '{"plan": 1}'
        assert (out / "plan-calibration-cuda.json").exists() and (out / "results.tgz").exists()
        orphans = [int(p) for p in pids.read_text().split()]
        assert len(orphans) == 3
        deadline = time.time() + 10
        while time.time() < deadline and any(Path(f"/proc/{p}").exists() for p in orphans):
            time.sleep(0.1)
        assert not any(Path(f"/proc/{p}").exists() for p in orphans)  # this call's leftovers are gone
        assert bystander.poll() is None  # another job's "multiprocessing" process lives on
    finally:
        bystander.kill()
        for p in pids.read_text().split() if pids.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(p), 9)


# the stub python3 of a plan: one given --reread answers $REREAD_RC (2: timed on another GPU, refused)
PLAN_STUB = """#!/usr/bin/env bash
echo "python3 $*" >> "$STUB_LOG"
case "$*" in
  *--reread*) echo '{"plan": "re-read"}'; exit "$REREAD_RC" ;;
  *" plan "*) echo '{"plan": "timed"}' ;;
esac
"""


@pytest.mark.parametrize("reread_rc, plan", [(0, "re-read"), (2, "timed")])
def test_the_plan_step_re_reads_the_committed_gpu_plan_and_times_anew_on_another_gpu(tmp_path, reread_rc, plan):
    """With results/plan-cuda.json in the tree the plan step re-reads its timings; where the plan refuses them
    (status 2: another GPU's), it calibrates from scratch, and that plan is what comes back."""
    tree, out, env = _stubbed(tmp_path, PLAN_STUB)
    (tree / "results" / "plan-cuda.json").write_text("{}")
    env.update(STUB_LOG=str(tmp_path / "log"), REREAD_RC=str(reread_rc))
    done = subprocess.run(["bash", "scripts/gpu-full.sh", "60", "plan=30"], cwd=tree, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    command = "python3 -m lscnb plan --device cuda --json --cache _build/plan-calibration-cuda.json"
    calls = [c for c in (tmp_path / "log").read_text().splitlines() if " plan " in c]
    assert calls == [f"{command} --reread results/plan-cuda.json"] + ([command] if reread_rc == 2 else [])
    assert json.loads((out / "plan-cuda.json").read_text()) == {"plan": plan}


# the stub python3 of a run that finishes one run and leaves two checkpoints, one too large to come back
RUNS_STUB = """#!/usr/bin/env bash
case "$*" in
  *reproduce*) mkdir -p results/corelnet/unseen; echo '{"new": 1}' > results/corelnet/unseen/run.json
               truncate -s 20M results/corelnet/unseen/small.group-1.ckpt
               truncate -s 50M results/corelnet/unseen/large.group-2.ckpt ;;
esac
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="GNU tar, split and truncate")
def test_what_comes_back_fits_the_device_limits_and_unpacks_into_a_tree(tmp_path):
    tree, out, env = _stubbed(tmp_path, RUNS_STUB)
    fresh = tmp_path / "fresh"
    old = tree / "results" / "meanfield" / "old.json"  # committed before the call: it stays out of what comes back
    old.parent.mkdir(parents=True)
    old.write_text("{}")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    done = subprocess.run(
        ["bash", "scripts/gpu-full.sh", "30", "corelnet:unseen@cuda*batched"], cwd=tree, env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    back = sorted(f for f in out.rglob("*") if f.is_file())
    assert len(back) <= 8 and sum(f.stat().st_size for f in back) <= 64 * 2**20
    assert all(f.stat().st_size <= 16 * 2**20 for f in back)
    parts = [f.name for f in back if f.name.startswith("ckpt.tar.part")]
    assert parts == ["ckpt.tar.part00", "ckpt.tar.part01"]  # the 20 MiB checkpoint, in two parts

    fresh.mkdir()
    shutil.copytree(ROOT / "scripts", fresh / "scripts")
    unpacked = subprocess.run(["bash", "scripts/gpu-unpack.sh", str(out)], cwd=fresh, capture_output=True, text=True)
    assert unpacked.returncode == 0, unpacked.stderr
    got = sorted(str(f.relative_to(fresh)) for f in (fresh / "results").rglob("*") if f.is_file())
    assert got == ["results/corelnet/unseen/run.json", "results/corelnet/unseen/small.group-1.ckpt"]
    assert (fresh / "results/corelnet/unseen/small.group-1.ckpt").stat().st_size == 20 * 2**20
    assert "large.group-2.ckpt" in unpacked.stdout  # named as left on the machine

    bad = subprocess.run(["bash", "scripts/gpu-unpack.sh", str(tmp_path)], cwd=fresh, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


# the stub python3 of a run that finishes a run the first time and notes, each time, whether that run is in the tree
WARM_STUB = """#!/usr/bin/env bash
case "$*" in
  *reproduce*) mkdir -p results/corelnet/unseen
               if [ -f results/corelnet/unseen/run.json ]; then echo found >> "$STUB_LOG"
               else echo '{"new": 1}' > results/corelnet/unseen/run.json; echo made >> "$STUB_LOG"; fi ;;
esac
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="GNU tar and cp")
def test_a_next_call_on_a_warm_machine_finds_the_runs_an_earlier_call_finished(tmp_path):
    tree, out, env = _stubbed(tmp_path, WARM_STUB)
    env["STUB_LOG"] = str(tmp_path / "log")
    call = ["bash", "scripts/gpu-full.sh", "30", "corelnet:unseen@cuda"]
    assert subprocess.run(call, cwd=tree, env=env, capture_output=True).returncode == 0
    first = subprocess.run(["tar", "tzf", str(out / "results.tgz")], capture_output=True, text=True).stdout
    assert "results/corelnet/unseen/run.json" in first.split()
    (tree / "results/corelnet/unseen/run.json").unlink()  # the next call's copy of the tree has no such file
    shutil.rmtree(out)
    assert subprocess.run(call, cwd=tree, env=env, capture_output=True).returncode == 0
    assert (tmp_path / "log").read_text().split() == ["made", "found"]
    again = subprocess.run(["tar", "tzf", str(out / "results.tgz")], capture_output=True, text=True).stdout
    assert "results/corelnet/unseen/run.json" not in again.split()  # it came back once, with the first call
