"""lscnb.results and lscnb.status pinned against answers they do not compute: the checkout's results folder from any
working directory, the temporary an atomic write makes, and status HTML and rows checked by their exact text (issue
27)."""

import re
import shutil
import subprocess
import types
from pathlib import Path

import pytest

from lscnb import results, status
from lscnb.figures import Item


# --------------------------------------------------------------------------------------------- results
def test_results_root_is_the_checkouts_from_any_working_directory(tmp_path, monkeypatch):
    """Inside a checkout (a folder with _toc.yml) results live in <checkout>/results, not under the cwd."""
    monkeypatch.delenv("LSCNB_RESULTS", raising=False)
    monkeypatch.chdir(tmp_path)
    checkout = Path(results.__file__).resolve().parent.parent
    assert (checkout / "_toc.yml").exists()
    assert results.results_root() == checkout / "results"


def test_atomic_write_goes_through_a_hidden_temporary_beside_the_target(tmp_path):
    """While writing, the only file is .<name>.<random>.tmp in the target's own folder; then only the target."""
    target = tmp_path / "fig" / "run.json"
    during = []

    def write(fh):
        during.extend(p.name for p in target.parent.iterdir())
        fh.write(b"{}")

    results._atomic_write(target, write)
    assert len(during) == 1 and re.fullmatch(r"\.run\.json\.[A-Za-z0-9_]+\.tmp", during[0]), during
    assert [p.name for p in target.parent.iterdir()] == ["run.json"] and target.read_bytes() == b"{}"


def _git(cwd, *args):
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    cmd = ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_repo_root_is_the_package_parent_holding_toc(tmp_path, monkeypatch):
    """The folder above the package when it holds _toc.yml, else None."""
    (tmp_path / "lscnb").mkdir()
    monkeypatch.setattr(results, "_PACKAGE_DIR", tmp_path / "lscnb")
    assert results.repo_root() is None
    (tmp_path / "_toc.yml").write_text("")
    assert results.repo_root() == tmp_path


def test_git_commit_is_head_plus_dirty_for_tracked_changes_only(tmp_path, monkeypatch):
    """HEAD's sha as git itself prints it; '+dirty' after a tracked file changes (an untracked file or a rewritten
    result under results/ is not a change);
    LSCNB_GIT_COMMIT wins over git; outside a repository or without git: 'unknown'."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "book"
    (repo / "lscnb").mkdir(parents=True)
    (repo / "_toc.yml").write_text("a\n")
    (repo / "results").mkdir()
    (repo / "results" / "r.json").write_text("{}\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "_toc.yml", "results/r.json")
    _git(repo, "commit", "-q", "-m", "one")
    head = _git(repo, "rev-parse", "HEAD")
    monkeypatch.setattr(results, "_PACKAGE_DIR", repo / "lscnb")
    monkeypatch.delenv("LSCNB_GIT_COMMIT", raising=False)
    monkeypatch.chdir(tmp_path)  # the checkout's repository, not the working directory's
    assert re.fullmatch(r"[0-9a-f]{40}", head) and results.git_commit() == head
    (repo / "new.txt").write_text("untracked")
    assert results.git_commit() == head
    (repo / "results" / "r.json").write_text('{"rerun": 1}\n')  # a result rewritten by a run is not a code change
    assert results.git_commit() == head
    (repo / "_toc.yml").write_text("b\n")
    assert results.git_commit() == head + "+dirty"
    monkeypatch.setenv("LSCNB_GIT_COMMIT", "abc")
    assert results.git_commit() == "abc"
    monkeypatch.setenv("LSCNB_GIT_COMMIT", "")
    (repo / "_toc.yml").unlink()  # no checkout: git runs in the working directory, here outside any repository
    assert results.git_commit() == "unknown"
    monkeypatch.chdir(repo)
    assert results.git_commit() == head + "+dirty"  # _toc.yml deleted is a change
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert results.git_commit() == "unknown"


def test_git_commit_gives_up_on_a_hung_git_after_ten_seconds(tmp_path, monkeypatch):
    """Both git calls carry a 10 s timeout; a git that hangs (here: sleeps 30 s, with the timeouts scaled by 1/100 so
    the test is fast) gives 'unknown', not a hang."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text("#!/bin/sh\nsleep 30\n")
    (fake / "git").chmod(0o755)
    real_run, asked = subprocess.run, []

    def run(*args, timeout=None, **kw):
        asked.append(timeout)
        return real_run(*args, timeout=None if timeout is None else timeout / 100, **kw)

    monkeypatch.setattr(
        results, "subprocess", types.SimpleNamespace(run=run, SubprocessError=subprocess.SubprocessError)
    )
    monkeypatch.delenv("LSCNB_GIT_COMMIT", raising=False)
    monkeypatch.setenv("PATH", f"{fake}:/usr/bin:/bin")
    assert results.git_commit() == "unknown" and asked == [10]
    (fake / "git").write_text("#!/bin/sh\necho cafe\n")
    assert results.git_commit() == "cafe+dirty" and asked == [10, 10, 10]


def test_provenance_records_every_documented_field(monkeypatch):
    """Profile name, its scale (or the one given), device and its name, seeds as a list, the library versions read
    here, the commit, the code digest, the UTC date to the second and the wall time rounded to 1 ms."""
    import datetime
    import platform

    import numpy as np
    import torch

    import lscnb
    from lscnb import config

    monkeypatch.setenv("LSCNB_GIT_COMMIT", "feed")
    monkeypatch.setattr(results, "device_name", lambda device: f"name of {device}")
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    prov = results.provenance(config.Profile("replay", device="meta"), seeds=(5, 6), wall_time_s=2.00049)
    after = datetime.datetime.now(datetime.timezone.utc)
    date = prov.pop("date")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", date)
    assert before <= datetime.datetime.fromisoformat(date) <= after
    code = prov.pop("code")
    assert re.fullmatch(r"[0-9a-f]{16}", code)
    assert prov == {
        "profile": "replay",
        "scale": "quick",
        "device": "meta",
        "device_name": "name of meta",
        "seeds": [5, 6],
        "lscnb": lscnb.__version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "git_commit": "feed",
        "wall_time_s": 2.0,
    }
    assert results.provenance(config.Profile("full"), seeds=[7], wall_time_s=0.0015, scale="quick")["scale"] == "quick"
    assert results.provenance(config.Profile("full"), seeds=[7], wall_time_s=0.0016)["wall_time_s"] == 0.002
    assert results.provenance(config.Profile("full"), seeds=7, wall_time_s=0)["scale"] == "full"


def test_split_outputs_sends_arrays_to_npz_and_plain_values_to_json():
    """Tensors (detached) and arrays -> arrays; numpy scalars -> Python numbers; sets, tuples and paths pass (JSON
    stores them as lists and strings); anything else fails at once with the message naming its type."""
    import numpy as np
    import torch

    t = torch.tensor([1.0, 2.0], requires_grad=True) * 2
    outputs = {"t": t, "a": np.arange(3), "f": np.float32(1.5), "i": np.int64(4), "s": {3}, "p": Path("x"), "n": "k"}
    metrics, arrays = results.split_outputs(outputs)
    assert sorted(arrays) == ["a", "t"] and isinstance(arrays["t"], np.ndarray)
    assert arrays["t"].tolist() == [2.0, 4.0] and arrays["a"].tolist() == [0, 1, 2]
    assert metrics == {"f": 1.5, "i": 4, "s": {3}, "p": Path("x"), "n": "k"}
    assert type(metrics["f"]) is float and type(metrics["i"]) is int
    message = "cannot store object in a result's JSON: return numbers, strings, lists, dicts or arrays"
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        results.split_outputs({"x": object()})


# --------------------------------------------------------------------------------------------- status
def test_rows_without_a_plan_read_no_plan(monkeypatch):
    """plans=(): no estimate is looked up at all."""

    def no_plan(*args, **kwargs):
        raise AssertionError("estimates read")

    row = {"chapter": "c", "figure": "f", "status": "quick scale only (full run owed)"}
    monkeypatch.setattr(status, "estimates", no_plan)
    monkeypatch.setattr(status, "chapter_module", lambda name: None)
    monkeypatch.setattr(status, "chapter_rows", lambda name, module, states=None: [dict(row)])
    assert status.rows(["c"], plans=()) == [row]


class _Result:
    provenance: dict = {}


def test_gap_sees_a_question_mark_for_an_unrecorded_device():
    """A result without a device_name in its provenance gives the gap's collection the device "?"."""
    item = Item("Fig. 1", "w", "generated", gap=lambda col: f"on {col.device_name}")
    assert status._gap("ch", "fig", item, {"results": [_Result()], "runs": 1}) == "on ?"


def _row(chapter, gap="—", figure="f", source="S"):
    return {
        "chapter": chapter,
        "source": source,
        "what": "w",
        "data": "—",
        "note": "",
        "figure": figure,
        "status": "not reproduced",
        "hardware": "—",
        "gap": gap,
    }


def test_summary_rows_follow_each_other_directly():
    """Chapter a's line ends and chapter b's begins with nothing in between."""
    html = status.summary_html([_row("a"), _row("b")], style=False)
    assert "<td><code>a</code></td>" in html and '</tr><tr class=""><td><code>b</code></td>' in html


def test_widths_without_any_reference():
    """No reference text at all (every source a dash): the narrow reference column, no gap column to speak of."""
    assert status._widths([_row("c", source="—"), _row("c", source="")]) == (14, 56, 18, 12)


def test_an_empty_gap_shows_a_dash():
    """gap "" renders as the dimmed dash, as "—" does."""
    html = status.chapter_html([_row("c", gap="", figure="—")])
    assert '<td><span class="lscnb-st-none">—</span></td></tr></tbody>' in html


def test_a_long_gap_line_and_the_more_line_follow_each_other_directly():
    """A long gap's own line, then the figure's line, with nothing in between."""
    html = status.chapter_html([_row("c", gap="g" * 81)])
    assert (
        f'<tr class="lscnb-st-gap"><td colspan="3"><em>paper vs ours:</em> {"g" * 81}</td></tr>'
        '<tr class="lscnb-st-more"><td colspan="3">figure <code>f</code></td></tr></tbody>'
    ) in html
