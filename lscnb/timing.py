"""Timing one run shape on the device at hand, for the plan (:mod:`lscnb.plan`).

A shape (the runs of a figure that differ only by their seed) is timed at its calibration config: its full config
with the count entries (:data:`COUNTS`: steps, iters, epochs, n_train, test, ...) and the non-numeric switches (a data
source, ``real_data``) of the smoke shrink (:func:`lscnb.figures.smoke_entries`), its sizes (width, batch, length,
...) kept at their full values; where the smoke switches the data, the full data is tried first (it is timed when it
is at hand). Its primary count (:data:`PRIMARY`) is timed at 1, at 1 again (the first timing carries the warm-up) and
at as many as fit half the time left: the two sizes give seconds per unit and a fixed part. While the two differ by
noise alone (:data:`NOISE`), a fixed part such as an evaluation hides the steps, and 16 times the count is timed, twice
at most. The estimate is the fixed part plus the per-unit time at the full count (for epochs, times the data per
epoch, ``n_train``). Other shrunk counts (a test set's size, say) stay as timed and are listed as unscaled.

The estimate is a lower bound (``>=``) when a timing ran out of calibration time (the time allowed, scaled; a count of 1
is tried a third time, :data:`LONGER` times as long, and if that runs out too the bound is on the whole run, not on each
step, since a fixed part may fill it, and the shape is not estimated), when the primary count shows no cost and other
counts stay unscaled (their cost is not in the estimate), when the full sizes failed and the fully shrunk smoke config
was timed instead, or when a smoke switch put other data in because the real data failed to load (the 8x8 digits' 64
steps for MNIST's 784: meanfield's Table 2 was estimated at 24 minutes on 2 CPU cores and needs about 15 hours); it is
an upper bound (``<=``) when no timing told the steps from the fixed part (one count timed, or a second no slower):
the timing is scaled whole, so start-up and evaluation count once a step (roarnn's adding task: 4.8 s for one step
scaled 5,000 times read 105 hours; timed for 60 s, 83); both causes give neither (``~``). It is
``open`` (not estimated) when the data set sets a run's length (``steps=None``, the whole data set per epoch) and
the figure's ``data_counts`` (:func:`lscnb.figures.data_counts`, filled in by the plan) could not count it.
"""

from __future__ import annotations

import contextlib
import io
import math
import signal
import threading
import time

PRIMARY = ("steps", "iters", "epochs", "batches", "samples", "chains")  # the count timed at two values, in this order
PER_EPOCH = ("n_train", "train_tokens")  # an epoch's work grows with these
WINDOW = ("bptt", "length")  # with a per-epoch count, a language model's window: that count is one of tokens
COUNTS = frozenset(
    PRIMARY
    + PER_EPOCH
    + ("pre_steps", "seeds", "networks", "n_eval", "n_test", "n_valid", "test", "held_out", "limit", "valid_tokens")
    + ("test_tokens", "eval_windows", "eval_every", "every", "eval_batch", "grad_batch", "radius_samples", "probe")
)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def calibration_config(full: dict, smoke: dict, sizes: bool = True, data: bool = False) -> dict:
    """``full`` with the ``smoke`` entries applied; ``sizes``: keep the full value of numeric entries that are not
    counts (width, batch, length, ...), so a step costs what it costs at paper scale; ``data``: keep the full value
    of the non-numeric switches too (the real data set, where it is at hand)."""
    cfg = dict(full)
    for k, v in smoke.items():
        if sizes and k not in COUNTS and _number(v) and _number(full.get(k)):
            continue
        if data and not _number(v):
            continue
        cfg[k] = v
    batch, window = cfg.get("batch"), next((cfg[k] for k in WINDOW if _number(cfg.get(k))), 0)
    least = batch * (window + 1) if _number(batch) else None  # a token stream: a row of window + 1 tokens
    for k in PER_EPOCH:  # an epoch holds at least one full batch (the per-epoch factor scales the rest)
        if sizes and least is not None and _number(cfg.get(k)) and cfg[k] < least:
            cfg[k] = min(least, full[k]) if _number(full.get(k)) else least
    return cfg


def primary(full: dict, cfg: dict) -> str | None:
    """The count to time at two values: the first of :data:`PRIMARY` that the calibration config shrinks (from a
    larger number, or from ``None``: a length the data set sets)."""
    for k in PRIMARY:
        if _number(cfg.get(k)) and cfg[k] >= 1 and (full.get(k) is None or (_number(full[k]) and cfg[k] < full[k])):
            return k
    return None


class _OutOfTime(BaseException):  # not an Exception: a run's own ``except Exception`` must not swallow it
    pass


@contextlib.contextmanager
def _deadline(seconds: float):
    """Raise :class:`_OutOfTime` in the main thread after ``seconds`` (no limit outside the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(*_):
        raise _OutOfTime

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def time_run(run, config: dict, device: str, seconds: float) -> float | None:
    """Seconds ``run.fn`` took at ``config`` on ``device`` (its output silenced); None past ``seconds``."""
    import torch

    from .config import Profile, seed_everything
    from .runs import RunContext

    seed_everything(run.seed)
    ctx = RunContext(Profile("full", device), device, run.seed, None, False)
    sink = io.StringIO()
    start = time.perf_counter()
    try:
        with _deadline(seconds), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            run.fn(dict(config), ctx)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
    except _OutOfTime:
        return None
    return time.perf_counter() - start


def _diff(full: dict, cfg: dict, keys) -> list[str]:
    return [f"{k}={cfg[k]!r} (full {full.get(k)!r})" for k in keys if k in cfg and cfg[k] != full.get(k)]


def _per_epoch(full: dict, cfg: dict) -> tuple[float, list[str], bool]:
    """The data-per-epoch factor of an epoch count, its description, and whether it is known."""
    factor, text, known = 1.0, [], True
    for k in PER_EPOCH:
        if k not in cfg or cfg[k] == full.get(k):
            continue
        if _number(full.get(k)) and _number(cfg[k]) and cfg[k] > 0:
            factor *= full[k] / cfg[k]
            text.append(f"{k} {cfg[k]} -> {full[k]} (x{full[k] / cfg[k]:g} per epoch)")
        else:
            known = False
            text.append(f"{k} {cfg[k]} -> {full.get(k)!r} (the whole data set: size unknown, not scaled)")
    return factor, text, known


def measure(run, smoke: dict, device: str, seconds: float, timer=time_run) -> dict:
    """Time one shape (``run`` stands for it) and extrapolate to its full config; ``smoke``: its smoke entries.

    Tries the calibration config with full sizes and, where the smoke switches the data, the full data first (the
    real data set, where it is at hand); then, if that raises, the smoke's data (a lower bound); then the fully
    shrunk smoke config (a lower bound). Returns a JSON-able dict: ``est_s`` (seconds per run, or None), ``bound``
    (``=`` the full run timed, ``~`` extrapolated, ``>=`` a lower bound, ``<=`` an upper bound, ``open`` the
    data set sets the length, ``?`` both failed), ``key``, ``n``, ``t`` (the counts and their timings), ``factor``
    (full count over the first timed one) and ``how``."""
    full = dict(run.config)
    start = time.perf_counter()
    notes = []
    switched = [k for k in smoke if not _number(smoke[k]) and smoke[k] != full.get(k)]
    for sizes, data in ([(True, True)] if switched else []) + [(True, False), (False, False)]:
        cfg = calibration_config(full, smoke, sizes, data)
        try:
            out = _measure_config(run, full, cfg, device, seconds - (time.perf_counter() - start), timer)
        except Exception as err:  # noqa: BLE001 - a failing calibration is reported, not fatal
            why = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}".strip(": ")
            what = "the full data" if data else "full sizes" if sizes else "smoke config"
            notes.append(f"{what} failed ({why[:100]})")
            continue
        if not sizes:
            shrunk = [k for k in smoke if k not in COUNTS and _number(smoke[k]) and smoke[k] != full.get(k)]
            notes.append("sizes shrunk to the smoke config: " + ", ".join(_diff(full, cfg, shrunk)))
            out["bound"] = lower(out["bound"])
        if switched and not data:  # other data (8x8 digits for MNIST: T = 64 for 784): the full run may cost far more
            notes.append("smoke switches: " + ", ".join(_diff(full, cfg, switched)) + " (other data: a lower bound)")
            out["bound"] = lower(out["bound"])
        flat = out.pop("flat", False)  # the primary count showed no cost
        keys = [k for k in COUNTS if k != out["key"] and not (out["key"] == "epochs" and k in PER_EPOCH)]
        if unscaled := _diff(full, cfg, sorted(keys)):
            notes.append("unscaled: " + ", ".join(unscaled))
            if flat and out["bound"] in ("~", "=", "<="):  # its cost lies in counts left as timed
                notes.append(f"{out['key']} show no cost, so the unscaled counts carry it: a lower bound")
                out["bound"] = ">="
        out["how"] = "; ".join([out["how"], *notes])
        out["sizes"] = "full" if sizes else "smoke"
        return out
    return {"est_s": None, "bound": "?", "key": None, "n": [], "t": [], "factor": None, "how": "; ".join(notes)}


def _measure_config(run, full: dict, cfg: dict, device: str, seconds: float, timer) -> dict:
    """Time ``cfg``: once when it has no :func:`primary` count, else at count 1 (or the smoke value, if 1 fails),
    again at 1 (the first timing carries the warm-up: imports, data, caches), then at the largest count that
    should fit half the time left (at most the full count), and extrapolate linearly. A first timing over a third of
    ``seconds`` extends them by three times its length, for the two timings that part the fixed cost from the
    per-step one (else all of it would be scaled: 400 h for a run whose pretraining took the 5 s)."""
    key = primary(full, cfg)
    start = time.perf_counter()
    left = lambda: seconds - (time.perf_counter() - start)
    if key is None:
        t1 = timer(run, cfg, device, max(left(), 0.01))
        if t1 is None:
            return _result(None, [], [], seconds, ">=", 1.0, f"timed out after {seconds:.1f} s (no count to shrink)")
        how = "the full run itself, timed" if cfg == full else "timed once, not scaled (no step count)"
        return _result(None, [], [t1], t1, "=" if cfg == full else "~", 1.0, how)
    tries = list(dict.fromkeys([1, int(cfg[key])]))
    for n1 in tries:
        try:
            t1 = timer(run, {**cfg, key: n1}, device, max(left(), 0.01))
            break
        except Exception:
            if n1 == tries[-1]:
                raise
    if t1 is None:  # the first run of a process can be all warm-up (cuDNN loaded, kernels compiled): once more, afresh
        t1 = timer(run, {**cfg, key: n1}, device, seconds)
    warm, tried = False, f"{key} {n1}: timed out twice after {seconds:.1f} s, then given {LONGER * seconds:.1f} s"
    if t1 is None and (t1 := timer(run, {**cfg, key: n1}, device, LONGER * seconds)) is not None:
        warm, start, seconds = True, time.perf_counter(), 2.5 * t1 + 1  # room for one more count and a try past it
    full_n = full[key]
    factor, per_epoch, known = _per_epoch(full, cfg) if key == "epochs" else (1.0, [], True)
    if full_n is None or not known:
        full_text = f"{key} at full: {full_n!r}" if full_n is None else f"{key} {full_n}"
        per_epoch.append(f"{full_text}, the data set sets the length: not estimated")
        factor, known = 1.0, False
    units = (full_n or n1) * factor  # the full count, in units of the timed one
    scale = f"{key} {n1} -> {full_n} (x{units / n1:.4g})"
    if t1 is None:  # a bound on the run, not per step (a fixed part may have filled every try): no estimate
        long = LONGER * seconds
        how = f"{tried} (timed out), so a run takes >= {long:.3g} s: not estimated"
        out = _result(key, [n1], [], None, ">=" if known else "open", 1.0, "; ".join([how, scale, *per_epoch]))
        return {**out, "at_least_s": long}
    if t1 > seconds / 3 and not warm:  # slow (a warm-up, or a fixed part such as pretraining): room for two more
        seconds += 3 * t1 + 1  # timings, past the budget, so that the fixed part is told from the per-step cost
    if left() > 0.05 and not warm:  # bounded by the deadline: a warm-up can be most of the first timing
        again = timer(run, {**cfg, key: n1}, device, left())
        t1 = min(t1, again) if again is not None else t1
    n2 = int(min(full_n or math.inf, n1 * max(2, left() / 2 / max(t1, 1e-3)), 10**6))
    t2 = timer(run, {**cfg, key: n2}, device, left()) if n2 > n1 and left() > 1.5 * t1 else None
    late = None  # (count, per-step time at least) of an extra timing that ran out
    if t2 is not None:
        n2, t2, late = _past_the_fixed_part(run, cfg, key, device, timer, (n1, t1), (n2, t2), full_n or n2)
    whole = True  # no per-step cost told apart from the fixed part: a timing scaled whole, an upper bound
    if t2 is None:
        per, fixed, how = t1 / n1, 0.0, f"{key} {n1}: {t1:.3g} s, all of it scaled (over by the fixed part)"
    else:
        per = (t2 - t1) / (n2 - n1)
        whole = per <= 0
        per, fixed = (t2 / n2, 0.0) if whole else (per, max(0.0, t1 - per * n1))
        how = f"{key} {n1}: {t1:.3g} s, {n2}: {t2:.3g} s ({per:.3g} s per {key.rstrip('s')} + {fixed:.3g} s)"
    if late is not None:
        per = max(per, late[1])
        how += f"; {key} {late[0]}: timed out, so >= {late[1]:.3g} s per {key.rstrip('s')}"
    ns, ts = ([n1, n2], [t1, t2]) if t2 is not None else ([n1], [t1])
    bound = ">=" if late is not None else "<=" if whole else "~"
    est, bound = (fixed + per * units, bound) if known else (None, "open")
    if t2 is not None and {**cfg, key: n2} == full:
        est, bound, how = t2, "=", f"the full run itself, timed: {t2:.3g} s"
    out = _result(key, ns, ts, est, bound, units / n1, "; ".join(([tried] if warm else []) + [how, scale, *per_epoch]))
    out["flat"] = t2 is not None and late is None and t2 - t1 <= NOISE * t1  # the count showed no cost
    return out


def lower(bound: str) -> str:
    """``bound`` after a cause of underestimating (other data, shrunk sizes): a lower bound, or neither (``~``) where
    it was an upper one; ``open`` stays open."""
    return {"open": "open", "<=": "~"}.get(bound, ">=")


NOISE = 0.25  # two timings closer than this fraction of the first do not tell the steps from the fixed part
LONGER = 4.0  # a count of 1 that timed out twice is timed once more, this many times as long


def _past_the_fixed_part(run, cfg, key, device, timer, first, second, full_n, tries=2):
    """Time 16 times the count, ``tries`` times at most, while ``second`` is within :data:`NOISE` of ``first``: a
    fixed part (an evaluation of 50 s) hides a per-step cost (0.7 s) that two counts of 1 and 2 cannot show. Each try
    may take the fixed part again and as long for its steps. Returns the last (count, time) and, if a try timed out,
    its count and the per-step time it implies at least, else None."""
    (n1, t1), (n2, t2) = first, second
    for _ in range(tries):
        if t2 - t1 > NOISE * t1 or n2 >= full_n:
            break
        n3 = int(min(full_n, 16 * n2))
        t3 = timer(run, {**cfg, key: n3}, device, 2 * t1 + 1)
        if t3 is None:
            return n2, t2, (n3, (t1 + 1) / (n3 - n1))
        n2, t2 = n3, t3
    return n2, t2, None


def _result(key, n, t, est, bound, factor, how) -> dict:
    return {"key": key, "n": n, "t": t, "est_s": est, "bound": bound, "factor": factor, "how": how}
