"""Data-parallel scoring under ``accelerate launch``: the distinct sentences a scorer must compute
are split across processes (GPUs, machines), every process ends with every value.

``accelerate launch --num_processes N -m contstim_bench <command> ...`` starts N copies of the
command.  A scoring command runs its scoring inside :func:`data_parallel`: each copy runs the same
code, so each asks its scorer for the same sentences in the same order; :func:`shared_values`
(called by :func:`.base.cached_values` inside :func:`data_parallel` when there is more than one
process) then

1. looks the sentences up in this process's score cache and gathers what every process found
   (so a cache shared by all processes, or one per machine, both count);
2. splits the sentences nobody has into *work units* and deals them out round-robin: a unit is one
   batch of the scorer's own plan (:class:`BatchPlanner`: a unit scored alone is batched exactly as
   in a single-process run, so the values are bit-identical to one process), or a fixed-size block of
   sentences for scorers without a plan;
3. computes its units one at a time, writing each unit's values to its score cache as soon as they
   exist (an interrupted run, restarted with the same command, computes only what is missing);
4. gathers every process's values (``accelerate.utils.gather_object``), so every process returns
   all of them; a failure in one process (a non-finite score, an exception) is raised in all.

Only process 0 writes outputs (:func:`is_main_process`); the commands check it.  A single process
(no launcher) never imports accelerate here.  Outside :func:`data_parallel` every process scores
what it is asked on its own: ``generate synthetic`` shards whole jobs across processes instead,
and its processes must not wait on each other inside a job.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

#: sentences per work unit for scorers that have no batch plan
FALLBACK_UNIT = 64


@runtime_checkable
class BatchPlanner(Protocol):
    """A scorer whose ``_score_unique`` batches sentences by a deterministic plan: scoring the
    sentences of one planned batch on their own forms exactly that batch again."""

    def plan_batches(self, sentences: Sequence[str]) -> list[list[int]]:
        """Indices of ``sentences`` grouped in the batches ``_score_unique`` would run."""


@dataclass(frozen=True)
class Processes:
    """This process's index and the number of processes of the launch."""

    index: int
    count: int


_depth = 0


@contextlib.contextmanager
def data_parallel() -> Iterator[None]:
    """Within this block, scorers split the sentences they compute across the processes of the
    launch (:func:`shared_values`); every process must run the same scoring calls in it."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1


def sharding() -> bool:
    """True inside :func:`data_parallel` under a launcher with more than one process."""
    return _depth > 0 and launched_processes() > 1


def launched_processes() -> int:
    """The number of processes ``accelerate launch`` / torchrun started (1 without a launcher)."""
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1")))
    except ValueError:
        return 1


def single_process_note() -> str:
    """``"; note: ..."`` when ``accelerate launch --cpu`` started this one process (it starts one on a
    CPU whatever ``--num_processes`` says, and sets no ``WORLD_SIZE``), else ``""``."""
    if os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("true", "1", "yes") and "WORLD_SIZE" not in os.environ:
        return ("; note: `accelerate launch --cpu` starts one process on a CPU whatever --num_processes says: to split "
                "the work over CPU processes use `torchrun --nproc_per_node N -m contstim_bench ...` "
                "(docs/generation.md)")
    return ""


def launch_line(index: int, world: int, share: range, n_jobs: int) -> str:
    """What a process of a launch says at its start: the world size and its share of the jobs
    (with :func:`single_process_note` when one process runs them all)."""
    jobs = f"jobs {share.start + 1}-{share.stop} of {n_jobs}" if len(share) else f"no job (of {n_jobs})"
    return f"process {index} of {world}: {jobs}" + ("" if world > 1 else single_process_note())


def launch_state():
    """accelerate's :class:`~accelerate.PartialState` for this launch, which sets up the process
    group.  Without a GPU it is asked for CPU processes explicitly (``cpu=True``, gloo backend):
    ``PartialState()`` alone would see ``WORLD_SIZE=2`` but no accelerator and report one process,
    so every process would score every sentence."""
    import torch
    from accelerate import PartialState

    state = PartialState(cpu=not torch.cuda.is_available())
    atexit.unregister(end_launch)  # registered once however often this is called
    atexit.register(end_launch)
    return state


def end_launch() -> None:
    """Let gloo's worker threads finish, then tear down the launch's process group (registered to
    run at exit by :func:`launch_state`).

    A gloo worker thread drops a finished collective (and the Python tensors it holds) just after
    the caller's ``wait()`` returns, and needs the GIL to do so.  If the main thread goes straight
    on to interpreter shutdown, that thread finds the interpreter finalizing, exits mid-destructor
    and the process dies with SIGABRT ("terminate called without an active exception"; seen in a
    gdb backtrace as ``~AsyncAllgatherWork`` in ``ProcessGroupGloo::runLoop``).  torchrun then
    reports the whole launch as failed although every value was written (between one launch in
    three and one in seven here).  A short sleep releases the GIL so the worker can finish;
    destroying the group ends the collectives.  No barrier: a process leaving with an error must not wait for the others."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        time.sleep(0.05)
        dist.destroy_process_group()


def processes() -> Processes:
    """Index and count of this process (``Processes(0, 1)`` without a launcher; accelerate's
    :class:`~accelerate.PartialState` under one, :func:`launch_state`)."""
    if launched_processes() == 1:
        return Processes(0, 1)
    state = launch_state()
    if state.num_processes != launched_processes():
        raise RuntimeError(f"the launcher started {launched_processes()} processes (WORLD_SIZE) but accelerate "
                           f"set up {state.num_processes}; the sentences would not be split")
    return Processes(state.process_index, state.num_processes)


def is_main_process() -> bool:
    """True in process 0 (and in a run without a launcher): the one that writes outputs."""
    return processes().index == 0


def wait_for_everyone() -> None:
    """Barrier across the launch's processes (nothing without a launcher)."""
    if launched_processes() > 1:
        launch_state().wait_for_everyone()


THREADS_PER_CPU = 4
"""``--threads`` may ask for at most this many torch threads per CPU of the machine
(:func:`max_threads`)."""


def max_threads() -> int:
    """The most torch CPU threads a run may ask for: :data:`THREADS_PER_CPU` x ``os.cpu_count()``.

    More threads than CPUs only make torch's threads wait on each other; a huge count (``--threads
    100000``) makes the first parallel operation start that many threads, whose stacks exhaust the
    address space, so that a later import of a compiled module fails for a reason unrelated to it."""
    return THREADS_PER_CPU * (os.cpu_count() or 1)


def check_threads(threads: object) -> int:
    """``threads`` if it is a thread count a run may use: an integer from 1 to :func:`max_threads`;
    ValueError naming the value otherwise."""
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    limit = max_threads()
    if threads > limit:
        raise ValueError(f"threads {threads} is more than {limit}, {THREADS_PER_CPU} per CPU of this machine "
                         f"({os.cpu_count() or 1} CPUs): more threads than CPUs only wait on each other")
    return threads


def set_threads(threads: int | None) -> None:
    """``torch.set_num_threads(threads)`` (None: leave torch's default).

    On a machine whose cores are busy with other work, one thread is often several times faster
    than torch's default of one thread per core (the threads wait on each other).  ValueError for
    a count that is not an integer from 1 to :func:`max_threads` (4 per CPU)."""
    if threads is None:
        return
    check_threads(threads)
    import torch

    torch.set_num_threads(threads)


def default_device():
    """This process's accelerator under a launcher (``cuda:<local rank>``), else None."""
    if launched_processes() == 1:
        return None
    device = launch_state().device
    return None if device.type == "cpu" else device  # CPU processes: the family's default, as in one process


def _gather(obj):
    from accelerate.utils import gather_object

    return gather_object([obj])


def work_units(keys: Sequence[str], plan: Callable[[Sequence[str]], list[list[int]]] | None) -> list[list[int]]:
    """Indices of ``keys`` in work units: the scorer's batches, or blocks of :data:`FALLBACK_UNIT`."""
    if plan is not None:
        units = [list(u) for u in plan(keys)]
        covered = sorted(i for u in units for i in u)
        if covered != list(range(len(keys))):
            raise RuntimeError("the scorer's batch plan does not cover every sentence exactly once")
        return units
    return [list(range(s, min(s + FALLBACK_UNIT, len(keys)))) for s in range(0, len(keys), FALLBACK_UNIT)]


def shared_values(owner, cache, method: str, unique: list[str], compute, *, plan=None, what: str = "score",
                  procs: Processes | None = None) -> tuple[dict[str, float], int]:
    """``({key: value} for every key of unique, number computed by all processes)``: see the
    module docstring.  ``compute(list_of_keys)`` returns float64 values; ``plan`` (optional)
    groups keys into the batches ``compute`` would form."""
    procs = procs or processes()
    fp = owner.fingerprint() if cache is not None else ""
    found = cache.get_many(fp, method, unique) if cache is not None else {}
    known: dict[str, float] = {}
    for part in _gather(found):
        for k, v in part.items():
            known.setdefault(k, v)
    todo = [k for k in unique if k not in known]
    mine: dict[str, float] = {}
    error = None
    if todo:
        units = work_units(todo, plan)
        try:
            for u in units[procs.index::procs.count]:
                keys = [todo[i] for i in u]
                values = np.asarray(compute(keys), dtype=np.float64)
                if values.shape != (len(keys),):
                    raise RuntimeError(f"{type(owner).__name__} returned {values.shape} scores for {len(keys)} inputs")
                bad = [keys[i] for i in np.flatnonzero(~np.isfinite(values))]
                if bad:
                    raise ValueError(f"{owner.spec}: non-finite {what} for sentence {bad[0]!r}")
                fresh = dict(zip(keys, values.tolist()))
                if cache is not None:
                    cache.put_many(fp, method, fresh)  # this unit survives an interruption
                mine.update(fresh)
        except Exception as exc:  # every process must reach the gather, or the others wait forever
            error = (type(exc).__name__, f"process {procs.index}: {exc}")
    parts = _gather({"values": mine, "error": error})
    failures = [p["error"] for p in parts if p["error"] is not None]
    if failures:
        kind, message = failures[0]
        raise (ValueError if kind == "ValueError" else RuntimeError)(message)
    for p in parts:
        known.update(p["values"])
    missing = [k for k in unique if k not in known]
    if missing:
        raise RuntimeError(f"{len(missing)} sentence(s) were scored by no process (first: {missing[0]!r})")
    return known, len(todo)
