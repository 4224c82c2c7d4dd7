"""Where the runs of a sweep execute: in this process (one at a time, or those with a batched twin together), in a
pool of local processes, on a Ray instance or cluster, or as SLURM jobs.

An executor's ``map(todo, profile, scale)`` takes ``(run, store)`` pairs and yields ``(run, outcome)`` as runs
finish, where ``outcome`` is a :class:`~lscnb.results.Result` or a :class:`Failure` holding the traceback. The
sweep stores each result as it arrives, so the driver owns the store and workers need no shared file system
(only a run's checkpoint is written where the worker runs). Any worker can run any missing run.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import as_completed
from dataclasses import dataclass
from pathlib import Path

from . import checks
from .config import Profile
from .runs import Run, compute, group_key, run_group


@dataclass
class Failure:
    """A run that raised, with its traceback."""

    error: str

    def __str__(self) -> str:
        return self.error


def _safe_compute(run: Run, profile: Profile, scale: str, checkpoint, progress: bool):
    try:
        return compute(run, profile, scale, checkpoint, progress)
    except Exception:  # noqa: BLE001 - returned to the driver, which records it
        return Failure(traceback.format_exc())


class LocalExecutor:
    """Runs one after another in this process."""

    def map(self, todo, profile: Profile, scale: str, *, progress: bool = True) -> Iterator:
        for run, store in todo:
            yield run, _safe_compute(run, profile, scale, store.checkpoint_path(run.key), progress)


def group_checkpoint(chunk) -> Path:
    """Where the group of ``chunk`` (``(run, store)`` pairs) keeps its checkpoint: beside its first run's, named for
    all its runs' keys, so a group made of other runs never resumes from it."""
    keys = "\n".join(run.key for run, _ in chunk)
    run, store = chunk[0]
    return store.checkpoint_path(f"{run.key}.group-{hashlib.sha1(keys.encode()).hexdigest()[:10]}")


class BatchedExecutor:
    """Runs whose function has a batched twin (:func:`lscnb.runs.twin`) and that agree in the twin's key are computed
    together, ``max_group`` at most at a time (:func:`lscnb.runs.run_group`: their models train as one,
    :func:`lscnb.batched.fit_batched`), the others one by one as ``local`` runs them. With ``workers`` 1 (the
    default) the groups run one after another in this process; with more, in that many spawned processes of
    ``threads_per_run`` torch threads, a group each (several groups on one GPU, or on a machine's cores). A group's
    results are each run's own, up to floating-point rounding; a group keeps one checkpoint, named for its runs (where
    its twin saves one), and a group that raises fails all its runs."""

    def __init__(self, max_group: int = 16, *, workers: int = 1, threads_per_run: int = 1):
        self.max_group = checks.positive_int(max_group, "max_group")
        self.workers = checks.positive_int(workers, "workers")
        self.threads = checks.positive_int(threads_per_run, "threads_per_run")

    def jobs(self, todo, device: str | None = None) -> list[list]:
        """``todo``'s ``(run, store)`` pairs cut into jobs: the runs of one group, ``max_group`` at most, or one run
        (as for a run whose twin does not pay on ``device``, :func:`lscnb.runs.group_key`)."""
        groups: dict = {}
        for run, store in todo:
            groups.setdefault(group_key(run, device) or ("single", run.key), []).append((run, store))
        return [
            members[i : i + self.max_group]
            for members in groups.values()
            for i in range(0, len(members), self.max_group)
        ]

    def map(self, todo, profile: Profile, scale: str, *, progress: bool = True) -> Iterator:
        jobs = [([run for run, _ in chunk], _job_checkpoint(chunk)) for chunk in self.jobs(todo, profile.device)]
        if self.workers == 1 or len(jobs) == 1:
            for runs, ckpt in jobs:
                yield from zip(runs, _safe_job(runs, profile, scale, ckpt, progress))
        else:
            yield from _pooled(jobs, profile, scale, self.workers, self.threads)


def _job_checkpoint(chunk) -> Path:
    run, store = chunk[0]
    return store.checkpoint_path(run.key) if len(chunk) == 1 else group_checkpoint(chunk)


def _safe_job(runs: list, profile: Profile, scale: str, checkpoint, progress: bool) -> list:
    """One job of :class:`BatchedExecutor`: a run alone, or a group (its checkpoint removed once it finishes)."""
    if len(runs) == 1:
        return [_safe_compute(runs[0], profile, scale, checkpoint, progress)]
    try:
        outcomes = run_group(runs, profile, scale, progress, checkpoint)
        Path(checkpoint).unlink(missing_ok=True)
        return outcomes
    except Exception:  # noqa: BLE001 - returned to the driver, which records it for every run
        return [Failure(traceback.format_exc())] * len(runs)


class RayExecutor:
    """Runs as Ray tasks, each with ``cpus_per_run`` CPUs and ``gpus_per_run`` GPUs (fractions allowed).

    ``address=None`` starts a local Ray instance (or joins the one ``RAY_ADDRESS`` names); ``"auto"`` or
    ``"ray://host:10001"`` joins an existing cluster, whose nodes must have ``lscnb`` installed (or pass
    ``runtime_env={"working_dir": ".", ...}``).
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        cpus_per_run: float = 1,
        gpus_per_run: float = 0,
        runtime_env: dict | None = None,
        max_in_flight: int | None = None,
    ):
        self.cpus = checks.positive_float(cpus_per_run, "cpus_per_run")
        self.gpus = checks.positive_float(gpus_per_run, "gpus_per_run", allow_zero=True)
        self.max_in_flight = None if max_in_flight is None else checks.positive_int(max_in_flight, "max_in_flight")
        import ray

        self.ray = ray
        if not ray.is_initialized():
            ray.init(
                address=address,
                runtime_env=runtime_env,
                include_dashboard=False,
                log_to_driver=False,
                ignore_reinit_error=True,
                configure_logging=False,
            )

    def map(self, todo, profile: Profile, scale: str, *, progress: bool = True) -> Iterator:
        task = self.ray.remote(num_cpus=self.cpus, num_gpus=self.gpus, max_retries=0)(_safe_compute)
        device = "cuda" if self.gpus > 0 else profile.device
        worker_profile = Profile(profile.name, device, profile.seed, profile.threads)
        pending = list(todo)
        limit = self.max_in_flight or len(pending) or 1
        in_flight = {}
        while pending or in_flight:
            while pending and len(in_flight) < limit:
                run, store = pending.pop(0)
                ref = task.remote(run, worker_profile, scale, str(store.checkpoint_path(run.key)), False)
                in_flight[ref] = run
            done, _ = self.ray.wait(list(in_flight), num_returns=1)
            for ref in done:
                run = in_flight.pop(ref)
                try:
                    outcome = self.ray.get(ref)
                except Exception:  # noqa: BLE001 - a worker that died, say
                    outcome = Failure(traceback.format_exc())
                yield run, outcome


def _init_worker(threads: int) -> None:
    import torch

    _die_with_parent()
    torch.set_num_threads(threads)


def _die_with_parent() -> None:
    """On Linux, have the kernel kill this worker when the process that started it dies (``PR_SET_PDEATHSIG``), so
    a sweep killed with SIGKILL leaves no worker computing on; elsewhere a no-op."""
    import ctypes
    import os
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


class ProcessExecutor:
    """Runs in ``workers`` local processes (spawned, so CUDA works in them), ``threads_per_run`` torch threads
    each: one machine's cores, or several processes sharing one GPU, without Ray."""

    def __init__(self, workers: int = 2, *, threads_per_run: int = 1):
        self.workers = checks.positive_int(workers, "workers")
        self.threads = checks.positive_int(threads_per_run, "threads_per_run")

    def map(self, todo, profile: Profile, scale: str, *, progress: bool = True) -> Iterator:
        if todo:
            jobs = [([run], store.checkpoint_path(run.key)) for run, store in todo]
            yield from _pooled(jobs, profile, scale, self.workers, self.threads)


def _pooled(jobs, profile: Profile, scale: str, workers: int, threads: int) -> Iterator:
    """Each job, ``(runs, checkpoint)``, through :func:`_safe_job` in a pool of ``workers`` spawned processes (so CUDA
    works in them) of ``threads`` torch threads each; ``(run, outcome)`` pairs as the jobs finish."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(threads,)) as pool:
        futures = {pool.submit(_safe_job, runs, profile, scale, str(ckpt), False): runs for runs, ckpt in jobs}
        for future in as_completed(futures):
            runs = futures[future]
            try:
                outcomes = future.result()
            except Exception:  # noqa: BLE001 - a worker that died, say
                outcomes = [Failure(traceback.format_exc())] * len(runs)
            yield from zip(runs, outcomes)


class SubmititExecutor:
    """Runs as jobs through submitit: SLURM when ``cluster`` is None on a SLURM login node, or ``"local"`` /
    ``"debug"`` to try it without one. ``parameters`` go to ``update_parameters`` (e.g. ``slurm_partition``,
    ``gpus_per_node``, ``timeout_min``)."""

    def __init__(
        self, folder: str = "_build/submitit", *, cluster: str | None = None, poll_s: float = 5.0, **parameters
    ):
        if cluster not in (None, "slurm", "local", "debug"):
            raise ValueError(f"cluster must be None (auto), 'slurm', 'local' or 'debug', got {cluster!r}")
        self.poll_s = checks.positive_float(poll_s, "poll_s")
        for name in ("timeout_min", "gpus_per_node"):
            if name in parameters:
                checks.positive_int(parameters[name], name, allow_zero=name == "gpus_per_node")
        import submitit

        self.executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
        if parameters:
            self.executor.update_parameters(**parameters)

    def map(self, todo, profile: Profile, scale: str, *, progress: bool = True) -> Iterator:
        jobs = [
            (run, self.executor.submit(_safe_compute, run, profile, scale, store.checkpoint_path(run.key), False))
            for run, store in todo
        ]
        while jobs:
            still = []
            for run, job in jobs:
                if job.done():
                    try:
                        outcome = job.result()
                    except Exception:  # noqa: BLE001 - the job itself failed
                        outcome = Failure(traceback.format_exc())
                    yield run, outcome
                else:
                    still.append((run, job))
            jobs = still
            if jobs:
                time.sleep(self.poll_s)


EXECUTORS = {
    "local": LocalExecutor,
    "batched": BatchedExecutor,
    "processes": ProcessExecutor,
    "ray": RayExecutor,
    "submitit": SubmititExecutor,
}


def make_executor(executor: str = "local", **options):
    """An executor by name: ``local``, ``batched``, ``processes``, ``ray`` or ``submitit`` (options go to its
    constructor)."""
    return EXECUTORS[checks.one_of(executor, EXECUTORS, "executor")](**options)
