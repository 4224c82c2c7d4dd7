"""The plan for the full runs still owed: ``python -m lscnb plan [--device cpu|cuda] [--budget 40m]``.

Which figures miss full-profile runs (:func:`lscnb.status.figure_state`), what their missing runs cost on the device
at hand (a short calibration, cached), in which order they buy the most status-page items per minute, and the
resumable commands (stored runs are skipped, long runs checkpoint) that run them in chunks of a few minutes.

Calibration (:mod:`lscnb.timing`). The runs of a figure that differ only by their seed share a *shape*. A shape is
timed for a few seconds at shrunk counts and full sizes, and the time is scaled to its full counts. A figure's shapes
are timed largest first, then most different (:func:`_diverse`), as many as fit its calibration time, and each
architecture at least once; each untimed shape takes the time per unit of the timed shape nearest it
(:func:`_distance`): per step counted, and per unit of length (a sequence's, a stack's depth: :func:`_work`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .timing import PER_EPOCH, WINDOW, _number, measure, time_run

SEEDS = ("seed", "seed_offset")  # runs that differ only in these share a shape
LENGTHS = ("T", "length", "lag", "depth")  # a step's work grows with these (_work); a figure whose runs' length
# other entries set (Fig. 3 of meanfield: repetitions, digits) states it in its data_counts
ARCHITECTURE = "model"  # the config entry that names a run's architecture, in every chapter
CHUNK_S = 540.0  # 9 minutes: one command of the plan
CPU_LIMIT_S = 3600.0  # a figure above this on the CPU is marked GPU
CALIBRATION_S = 5.0
CACHE_VERSION = 7  # 2: the real data is timed where it loads; 3: the largest shape first; 4: slow ones timed thrice;
# 5: every architecture timed, and steps timed past a fixed part that hides them; 6: a count of 1 that timed out
# twice gets a longer try, and the float64 gradient norm lets a run with an exploding gradient go on (meanfield Fig. 1);
# 7: a timing scaled whole is an upper bound (<=)
# (a figure's data_counts change its shapes' configs, so their old timings are not read: no new version)
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0}


def parse_duration(text: str) -> float:
    """Seconds of ``"40m"``, ``"1h30m"``, ``"90s"``, ``"2.5h"``; a bare number is minutes. Raises ValueError."""
    s = str(text).strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", s):
        s += "m"
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", s)
    if not s or "".join(a + u for a, u in parts) != s:
        raise ValueError(f"must be a duration such as 40m, 1h30m or 90s, got {text!r}")
    seconds = sum(float(a) * _UNITS[u] for a, u in parts)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"must be a positive duration, got {text!r}")
    return seconds


@dataclass
class Owed:
    """A figure whose full-profile runs are not all committed: its paper items, its missing runs and (``every``) all
    its full runs, committed ones too."""

    chapter: str
    figure: str
    items: int
    runs: int
    missing: list
    module: object = field(default=None, repr=False)
    every: list = field(default_factory=list, repr=False)
    provenance: dict = field(default_factory=dict, repr=False)


def owed(chapter_names=None) -> list[Owed]:
    """Every owed figure of the chapters (default: all), in the chapters' order."""
    from .experiments import chapter_module, chapters

    return [o for name in chapter_names or sorted(chapters()) for o in owed_in(name, chapter_module(name))]


def owed_in(name: str, module) -> list[Owed]:
    """The figures of chapter ``module`` without all their full results, each with the runs its store lacks."""
    from . import status
    from .figures import items

    out = []
    for figure in module.FIGURES:
        state = status.figure_state(module, figure)
        if state["results"] is not None:
            continue
        runs = list({r.key: r for r in module.FIGURES[figure]("full")}.values())
        missing = [r for r in runs if r.key not in state["provenance"]]
        n_items = sum(f == figure for _, f in items(module))
        out.append(Owed(name, figure, n_items, len(runs), missing, module, runs, state["provenance"]))
    return out


def _digest(blob) -> str:
    return hashlib.sha1(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()[:12]


def shape_of(run) -> str:
    """The run's config without its seed, with its function: runs of one shape cost the same."""
    return _digest({"fn": run.fn_path, "config": {k: v for k, v in run.config.items() if k not in SEEDS}})


class Cache:
    """Calibrations by shape, in a JSON file (git-ignored under ``_build/``); another machine's are dropped."""

    def __init__(self, path, device: str, device_name: str, threads: int):
        self.path = Path(path)
        self.meta = {"version": CACHE_VERSION, "device": device, "device_name": device_name, "threads": threads}
        self.shapes: dict[str, dict] = {}
        self.dropped = False
        with contextlib.suppress(OSError, ValueError, AttributeError):
            doc = json.loads(self.path.read_text())
            if {k: doc.get(k) for k in self.meta} == self.meta:
                self.shapes = dict(doc.get("shapes", {}))
            else:
                self.dropped = True

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({**self.meta, "shapes": self.shapes}, indent=1, sort_keys=True))
        tmp.replace(self.path)


def seed_cache(cache: Cache, doc: dict, found: list[Owed]) -> tuple[int, int]:
    """Fill ``cache`` with the timings of a committed plan ``doc`` (``python -m lscnb plan --json``), so that a plan
    re-reads them for the runs owed now instead of timing again: each calibration goes under the shape of its run,
    found among the owed figures' runs by key, else by name (a re-keyed run keeps its timing). ``doc`` must have been
    timed on this machine with these threads (a shape the cache holds keeps its own). A timing that came to no
    estimate (its data set was not at hand to count) is not seeded: its shape is timed again. Returns how many it
    seeded and how many of the plan's timings it left to the cache's own."""
    theirs = {k: doc.get(k) for k in ("device_name", "threads")}
    if theirs != {k: cache.meta[k] for k in theirs}:
        raise ValueError(
            f"the plan was timed on {theirs}, not on this machine ({cache.meta['device_name']}, "
            f"{cache.meta['threads']} threads): time it here instead"
        )
    runs = {r.key: (o, r) for o in found for r in o.every}
    by_name = {key.rsplit("-", 1)[0]: v for key, v in runs.items()}
    seeded = kept = 0
    for f in doc.get("figures", []):
        for cal in f.get("calibrations", []):
            key = str(cal.get("run", ""))
            if (hit := runs.get(key) or by_name.get(key.rsplit("-", 1)[0])) is None or cal.get("measured"):
                continue  # a figure no longer owed, or a committed run's wall time (read from the results anyway)
            if cal.get("est_s") is None:
                continue  # nothing learned (e.g. PTB's length not counted): time it here, with what is at hand now
            (digest,) = _shapes(hit[0], [hit[1]])
            if digest not in cache.shapes:
                cache.shapes[digest] = {**cal, "run": hit[1].key}
                seeded += 1
            else:
                kept += 1
    return seeded, kept


def default_cache(device: str) -> Path:
    from .results import repo_root

    return (repo_root() or Path.cwd()) / "_build" / f"plan-calibration-{re.sub(r'[^a-z0-9]+', '', device)}.json"


def _distance(a: dict, b: dict) -> float:
    """How unlike two configs are: 1 per differing entry, a numeric one by its ratio (x2: 0.1, up to 1), and 2 for
    another architecture (the entry ``model``), which sets a run's cost more than its task or data do: an untimed
    CoRelNet run on task x takes the time of CoRelNet on task y, not of ESBN on task x."""
    d = 0.0
    for k in (set(a) | set(b)) - set(SEEDS):
        x, y = a.get(k), b.get(k)
        if x == y:
            continue
        numeric = _number(x) and _number(y) and x > 0 and y > 0
        d += min(1.0, abs(math.log2(x / y)) / 10) if numeric else 2.0 if k == ARCHITECTURE else 1.0
    return d


def _size(config: dict) -> float:
    """How large a config is: the sum of log2 of its positive integer entries (widths, lengths, counts)."""
    return sum(math.log2(v) for k, v in config.items() if k not in SEEDS and type(v) is int and v > 0)


def _diverse(configs: list[dict]) -> list[int]:
    """The order in which a figure's shapes are timed: the largest (:func:`_size`; the untimed shapes take the time
    per unit of the nearest timed one, so this errs towards too long, not too short), then each time the one
    farthest (:func:`_distance`) from all those before it."""
    order = [max(range(len(configs)), key=lambda i: (_size(configs[i]), -i))] if configs else []
    while len(order) < len(configs):
        rest = [i for i in range(len(configs)) if i not in order]
        order.append(max(rest, key=lambda i: (min(_distance(configs[i], configs[j]) for j in order), -i)))
    return order


def _shapes(o: Owed, runs=None) -> dict[str, list]:
    """Owed figure ``o``'s ``runs`` (default: its missing ones) by shape (their config up to the seed, and their
    shrunk entries): ``{digest: [(run, smoke entries), ...]}``; a run whose data set sets its length gets that length
    in its config."""
    from .figures import data_counts, smoke_entries

    groups: dict[str, list] = {}
    for run in o.missing if runs is None else runs:
        if counts := data_counts(o.module, o.figure, run.config):  # a run's length its data set sets, made explicit
            run = replace(run, config={**run.config, **counts})
        smoke = smoke_entries(o.module, o.figure, run.config)
        groups.setdefault(_digest([shape_of(run), smoke]), []).append((run, smoke, run.key))
    return groups


def _measured(o: Owed, device: str) -> dict:
    """The committed runs of owed figure ``o`` made on ``device``'s kind (``cpu``, ``cuda``), by shape: each shape's
    mean wall time a run (a run of a batched group records its share of the group's time). A full run timed to its
    end is the best rate an untimed neighbour can take (:func:`_per_shape`); these are read from the results, never
    cached."""
    seconds: dict[str, float] = {}
    for key, prov in o.provenance.items():
        if str(prov.get("device", "")).split(":")[0] == device.split(":")[0] and _number(prov.get("wall_time_s")):
            seconds[key] = float(prov["wall_time_s"])  # already a share in a batched group (runs.run_group)
    out = {}
    for k, members in _shapes(o, [r for r in o.every if r.key in seconds]).items():
        times = [seconds[key] for _, _, key in members]
        mean = sum(times) / len(times)
        how = f"measured: {len(times)} committed run{'s' if len(times) != 1 else ''}, {mean:.0f} s a run"
        out[k] = {"key": None, "n": [], "t": [], "est_s": mean, "bound": "~", "factor": None, "how": how}
        out[k].update(run=members[0][2], measured=True)
    return out


def _time_shapes(groups: dict, device: str, max_s: float, timer) -> dict:
    """Time the shapes of ``groups``, most different first, within ``max_s`` seconds, and each architecture (config
    entry ``model``) at least once with ``max_s`` of its own: ``{digest: measurement}`` (:func:`measure`)."""
    keys, timed, archs = list(groups), {}, set()
    start = time.perf_counter()
    for i in _diverse([dict(groups[k][0][0].config) for k in keys]):
        left = max_s - (time.perf_counter() - start)
        run, smoke, _ = groups[keys[i]][0]
        arch = run.config.get(ARCHITECTURE)
        new = arch not in archs
        if timed and not new and left < 0.4 * max_s:  # another shape only with time to learn something, but
            continue  # every architecture once: a MemRNN step costs more than an RNN's at the same T
        archs.add(arch)
        seconds = max(left, max_s if new else 0.2 * max_s)
        timed[keys[i]] = {**measure(run, smoke, device, seconds, timer), "run": run.key}
    return timed


def _work(config: dict) -> float:
    """A run's work per counted step, up to a constant: the product of its length-like entries (:data:`LENGTHS`: a
    sequence's length, a stack's depth). A language model's window is not one: its epoch counts tokens
    (``lscnb.timing.WINDOW``), however they are cut."""
    tokens = any(k in config for k in PER_EPOCH)
    return math.prod(
        float(v) for k, v in config.items() if k in LENGTHS and _number(v) and v > 0 and not (tokens and k in WINDOW)
    )


def _per_shape(groups: dict, timed: dict) -> dict:
    """Each shape's seconds a run: its own timing's, else the timed shape nearest it (:func:`_distance`) at that
    one's time per unit of its scaled entry and of its work per step (:func:`_work`: a copy task's lag of 10,000
    costs 25 times the time of one of 400); None where nothing was timed to an end."""
    ok = {k: m for k, m in timed.items() if m["est_s"] is not None}
    config = lambda k: groups[k][0][0].config

    def units(k, m):
        count = float(config(k)[m["key"]]) if m.get("key") and _number(config(k).get(m["key"])) else 1.0
        return count * _work(config(k))

    per_shape = {k: ok[k]["est_s"] if k in ok else None for k in groups}
    for k in groups:
        if k not in ok and (t := min(ok, key=lambda t: _distance(config(k), config(t)), default=None)) is not None:
            per_shape[k] = ok[t]["est_s"] / units(t, ok[t]) * units(k, ok[t])
    return per_shape


def calibrate(o: Owed, device: str, cache: Cache, max_s: float = CALIBRATION_S, recalibrate=False, timer=time_run):
    """The estimate of owed figure ``o``'s missing runs: its shapes timed within ``max_s`` seconds, and each
    architecture (config entry ``model``) at least once with ``max_s`` of its own (or read from ``cache``), each
    untimed shape at the time per unit of the timed shape nearest it. A cached timing of a shape whose runs are now
    committed still prices its untimed neighbours, and so do the committed runs' own wall times on this device's kind
    (:func:`_measured`), which take precedence. A JSON-able dict, with each missing run's estimate (``run_s``)."""
    from .runs import group_key

    groups = _shapes(o)
    keys = list(groups)
    known = {**_shapes(o, o.every), **groups}  # all the figure's shapes: any of them may hold a cached timing
    cached = not recalibrate and any(k in cache.shapes for k in keys)
    if cached:
        timed = {k: cache.shapes[k] for k in known if k in cache.shapes}
    else:
        timed = _time_shapes(groups, device, max_s, timer)
        cache.shapes.update(timed)
        cache.save()
    measured = {k: m for k, m in _measured(o, device).items() if k not in groups}  # committed shapes only
    scaled = next((m["key"] for m in timed.values() if m.get("key")), None)  # the count the calibrations scale
    for m in measured.values():
        m["key"] = scaled  # a measured rate is per unit of that count too
    per_shape = _per_shape(known, {**timed, **measured})
    opened = any(timed[k]["bound"] == "open" for k in keys if k in timed)  # a committed shape's does not count
    total = None if opened or None in [per_shape[k] for k in keys] else sum(per_shape[k] * len(groups[k]) for k in keys)
    ok = [(k, m) for k, m in timed.items() if m["est_s"] is not None]
    worst = max(ok, key=lambda kv: kv[1]["est_s"] * len(groups.get(kv[0], ())), default=(None, None))[1]
    if opened or not worst:
        worst = next(
            (timed[k] for k in keys if timed.get(k, {}).get("bound") == "open"), next(iter(timed.values()), None)
        )
    models = sorted({str(r.config[ARCHITECTURE]) for r in o.missing if r.config.get(ARCHITECTURE) is not None})
    costed = {str(known[k][0][0].config.get(ARCHITECTURE)) for k in {**timed, **measured}}
    untimed = [m for m in models if m not in costed]  # never timed, at another one's cost: no bound either way
    bound = "~" if untimed else figure_bound(m["bound"] for m in timed.values())
    return {
        "chapter": o.chapter,
        "figure": o.figure,
        "items": o.items,
        "runs": o.runs,
        "missing": len(o.missing),
        "shapes": len(keys),
        "timed": len(timed),
        "cached": cached,
        "est_s": total,
        "bound": bound if total is not None else "open" if opened else "?",
        "per_run_s": total / len(o.missing) if total is not None and o.missing else None,
        "seconds": sum(sum(m["t"]) for m in timed.values()),
        "factor": worst["factor"] if worst else None,
        "how": (worst or next(iter(timed.values()), {})).get("how", ""),
        "calibrations": list(timed.values()),
        "measured": len(measured),  # committed shapes whose wall times priced their untimed neighbours
        # each missing run's estimate: the status page sums those still missing
        "run_s": {} if total is None else {key: round(per_shape[k], 1) for k in keys for _, _, key in groups[k]},
        "models": models,
        "untimed": untimed,
        "batched": any(group_key(run, device) is not None for run in o.missing),  # train in groups: --executor batched
        "batched_cuda": any(group_key(run, "cuda") is not None for run in o.missing),  # so on a GPU (command_cuda)
    }


def figure_bound(bounds) -> str:
    """A figure's bound from its shapes' (a shape that ran out counts too, whether or not it has an estimate): ``>=``
    where one is a lower bound and none an upper, ``<=`` the reverse, else ``~`` (both, or neither)."""
    kinds = {b for b in bounds if b in (">=", "<=")}
    return kinds.pop() if len(kinds) == 1 else "~"


def build(figs: list[dict], device: str, chunk_s=CHUNK_S, budget_s=None, cpu_limit_s=CPU_LIMIT_S) -> dict:
    """The plan from the figures' estimates (:func:`calibrate`): order, budget, commands. Pure: no timing here.

    Figures go cheapest per paper item first; on the CPU, one above ``cpu_limit_s`` is marked GPU and not planned.
    The budget is filled in that order, a figure that does not fit is left out and the next ones still tried.
    Consecutive figures of one chapter share a command while their sum fits ``chunk_s``; a command estimated above
    a chunk is called again (it resumes) ``calls`` times."""
    figs = [dict(f) for f in figs]
    unknown = [f for f in figs if f.get("est_s") is None]
    known = [f for f in figs if f.get("est_s") is not None]
    gpu = [f for f in known if device == "cpu" and f["est_s"] > cpu_limit_s]
    for f in known:
        f["items_per_min"] = f["items"] / max(f["est_s"] / 60, 1e-6)
    order = sorted((f for f in known if f not in gpu), key=lambda f: (-f["items_per_min"], f["est_s"]))
    planned, left_out, spent = [], [], 0.0
    for f in order:
        if budget_s is not None and spent + f["est_s"] > budget_s:
            left_out.append(f)
            continue
        spent += f["est_s"]
        f["cum_s"] = spent
        planned.append(f)
    commands: list[dict] = []
    for f in planned:
        last = commands[-1] if commands else None
        kind = f["chapter"], bool(f.get("batched"))  # one executor a command
        if last and (last["chapter"], last["batched"]) == kind and last["est_s"] + f["est_s"] <= chunk_s:
            last["figures"].append(f["figure"])
            last["est_s"] += f["est_s"]
        else:
            commands.append({"chapter": kind[0], "figures": [f["figure"]], "est_s": f["est_s"], "batched": kind[1]})
        f["command"] = len(commands)
    for c in commands:
        c["calls"] = max(1, math.ceil(c["est_s"] / chunk_s - 1e-9))
        c["command"] = command(c["chapter"], c["figures"], device, chunk_s, c["batched"])
        c["item"] = f"{c['chapter']}:{','.join(c['figures'])}@{device}" + ("*batched" if c["batched"] else "")
    for f in gpu:
        f["command_cuda"] = command(
            f["chapter"], [f["figure"]], "cuda", chunk_s, bool(f.get("batched_cuda", f.get("batched")))
        )
    gpu.sort(key=lambda f: -f["items_per_min"])
    return {
        "device": device,
        "chunk_s": chunk_s,
        "budget_s": budget_s,
        "cpu_limit_s": cpu_limit_s if device == "cpu" else None,
        "planned": planned,
        "commands": commands,
        "left_out": left_out,
        "gpu": gpu,
        "unknown": unknown,
        "planned_s": spent,
    }


def command(chapter: str, figures: list[str], device: str, chunk_s: float, batched: bool = False) -> str:
    """One resumable call: stored runs are skipped, long runs checkpoint; ``timeout`` ends it within a chunk.
    ``batched``: the figures' runs have a batched twin and train in groups (``--executor batched``)."""
    figs = " ".join(f"--figure {f}" for f in figures)
    return (
        f"timeout --signal=INT --kill-after=20 {int(chunk_s)} python -m lscnb reproduce {chapter} --profile full "
        f"--no-notebook {figs} --device {device}" + (" --executor batched" if batched else "")
    )


def _min(seconds) -> str:
    return "?" if seconds is None else f"{seconds / 60:.1f}" if seconds < 600 * 60 else f"{seconds / 60:.0f}"


def _est(f: dict) -> str:
    return _mark(f["bound"], "~") + _min(f["est_s"]) if f["est_s"] is not None else "?"


def _mark(bound: str, approx: str = "") -> str:
    """How an estimate's ``bound`` prefixes its number: ``>=``, ``<=`` or ``approx``."""
    return bound if bound in (">=", "<=") else approx


def render(plan: dict, figs: list[dict], header: str) -> str:
    """The plan as text: the calibration, the ordered table, the commands, what the budget and the CPU leave out."""
    lines = [header, "", "calibration (per owed figure; shapes: run configs up to the seed, timed/all)"]
    w = max([len(f"{f['chapter']}/{f['figure']}") for f in figs] + [6]) + 2
    lines.append(f"{'figure':<{w}}{'shapes':>9}{'timed s':>9}{'scale':>10}{'est s/run':>12}  how")
    for f in figs:
        name = f"{f['chapter']}/{f['figure']}"
        per = f["per_run_s"]
        per_text = "?" if per is None else _mark(f["bound"]) + f"{per:.4g}"
        scale = "" if not f["factor"] else f"x{f['factor']:.3g}"
        how = f["how"] + (" [cached]" if f["cached"] else "")
        lines.append(f"{name:<{w}}{f['timed']:>4}/{f['shapes']:<4}{f['seconds']:>9.2f}{scale:>10}{per_text:>12}  {how}")
    lines += ["", "plan (cheapest per paper item first; est. min on this device, >= a lower bound, <= an upper one)"]
    head = f"{'#':>3}  {'figure':<{w}}{'items':>6}{'missing':>9}{'est. min':>10}{'cum. min':>10}{'cmd':>5}"
    lines += [head, "-" * len(head)]
    for i, f in enumerate(plan["planned"], 1):
        lines.append(
            f"{i:>3}  {f['chapter'] + '/' + f['figure']:<{w}}{f['items']:>6}{f['missing']:>5}/{f['runs']:<3}"
            f"{_est(f):>10}{_min(f['cum_s']):>10}{f['command']:>5}"
        )
    chunk = plan["chunk_s"] / 60
    lines += ["", f"commands (each at most {chunk:g} min; call one again until it finishes: stored runs are skipped)"]
    for i, c in enumerate(plan["commands"], 1):
        calls = f"{c['calls']} calls" if c["calls"] > 1 else "1 call"
        lines.append(f"{i:>3}  [{calls}, ~{_min(c['est_s'])} min]  {c['command']}")
    if plan["left_out"]:
        lines += ["", f"left out by the budget ({_min(plan['budget_s'])} min):"]
        lines += [f"     {f['chapter']}/{f['figure']}: {_est(f)} min, {f['items']} items" for f in plan["left_out"]]
        lines.append(f"     total {_min(sum(f['est_s'] for f in plan['left_out']))} min")
    if plan["gpu"]:
        lines += ["", f"GPU: more than {_min(plan['cpu_limit_s'])} min on this CPU (CPU estimate; run on a GPU):"]
        lines += [f"     {f['chapter']}/{f['figure']}: {_est(f)} min  {f['command_cuda']}" for f in plan["gpu"]]
    if plan["unknown"]:
        lines += ["", "not estimated (the calibration failed, or the data set that sets a run's length was absent):"]
        lines += [f"     {f['chapter']}/{f['figure']}: {f['how']}" for f in plan["unknown"]]
    total = f"{_min(plan['planned_s'])} min planned in {sum(c['calls'] for c in plan['commands'])} calls"
    lines += ["", f"{len(plan['planned'])} figures, {sum(f['items'] for f in plan['planned'])} paper items, {total}"]
    if low := [f["figure"] for f in plan["planned"] if f["bound"] == ">="]:
        lines.append(f"{len(low)} of them have only a lower bound (>=): the plan may take longer")
    if high := [f["figure"] for f in plan["planned"] + plan["gpu"] if f["bound"] == "<="]:
        lines.append(
            f"{len(high)} have only an upper bound (<=: start-up scaled with the steps; "
            "a longer calibration, --max-calibration-s, tells them apart)"
        )
    return "\n".join(lines)


def absent_data(names: list[str]) -> str:
    """The warning for the real data sets ``names`` (folders of ``shared/data``) that this machine lacks."""
    folders = " ".join(f"../shared/data/{n}" for n in names)
    return (
        f"real data absent: {', '.join(names)}; the figures whose run length it sets are left open, and the others are "
        f"timed on stand-ins (copy {folders} into data/ and, on a GPU machine, carry data/)"
    )


def main(args, owed_figures=None) -> int:
    """``python -m lscnb plan``: ``args`` from its parser; ``owed_figures`` replaces :func:`owed` (tests)."""
    import torch

    from .config import device_name
    from .data import at_hand

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    found = owed(args.chapter or None) if owed_figures is None else owed_figures
    cache = Cache(args.cache or default_cache(device), device, device_name(device), torch.get_num_threads())
    log = sys.stderr
    if cache.dropped:
        print(f"calibration cache {cache.path} is another machine's: recalibrating", file=log)
    if reread := args.reread:
        try:
            n, kept = seed_cache(cache, json.loads(Path(reread).read_text()), found)
        except ValueError as err:
            print(f"python -m lscnb plan: --reread {reread}: {err}", file=log)
            return 2
        print(f"re-read {n} timings from {reread}", file=log)
        if kept:
            print(
                f"kept {kept} timings of the cache {cache.path} in place of the plan's (--recalibrate times anew)",
                file=log,
            )
    data = at_hand()
    if absent := [name for name, here in data.items() if not here]:
        print(absent_data(absent), file=log, flush=True)
    timed_now, start = [], time.perf_counter()
    for o in found:
        t = time.perf_counter()
        timed_now.append(not calibrate(o, device, cache, args.max_calibration_s, args.recalibrate)["cached"])
        if timed_now[-1]:
            print(f"calibrated {o.chapter}/{o.figure} in {time.perf_counter() - t:.1f} s", file=log, flush=True)
    # again from the cache: a shape timed for a later figure serves an earlier one too, as on the next call
    figs = [{**calibrate(o, device, cache), "cached": not now} for o, now in zip(found, timed_now)]
    plan = build(figs, device, args.chunk, args.budget, args.cpu_limit)
    if args.items:
        print(" ".join(c["item"] for c in plan["commands"]))
    elif args.json:
        meta = {k: cache.meta[k] for k in ("device_name", "threads", "version")}  # version: the timing rules
        meta.update(date=time.strftime("%Y-%m-%d"), cache=str(cache.path), data=data)
        print(json.dumps({**plan, **meta, "figures": figs}, indent=1, default=str))
    else:
        spent = time.perf_counter() - start
        cached = sum(f["cached"] for f in figs)
        header = (
            f"plan for {device} ({cache.meta['device_name']}, {cache.meta['threads']} torch threads): "
            f"{len(figs)} owed figures, chunks of {args.chunk / 60:g} min"
            + (f", budget {args.budget / 60:g} min" if args.budget else "")
            + f"\ncalibration: {cached} figures from {cache.path}, {len(figs) - cached} timed now ({spent:.0f} s)"
            + ("\n" + absent_data(absent) if absent else "")
        )
        print(render(plan, figs, header))
    return 0
