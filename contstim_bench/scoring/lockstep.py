"""Several tasks (synthetic searches) run in lockstep, their causal-LM forward passes merged.

On a CPU a forward pass of a small causal LM costs a fixed 45-70 ms (every weight is read, and
the model's Python runs layer by layer) plus about 3 ms per position in float32 (1.6 ms in
bfloat16) for SmolLM2-135M; one search makes about 200 passes per triplet, most of them a
few rows wide, so the fixed part is a quarter to a half of its time.  :class:`Lockstep` runs
``workers`` tasks in threads that take turns, as coroutines do: one task at a time runs its
Python until it asks for a forward pass (:meth:`Lockstep.forward`), then the next task runs;
once every task waits, the coordinator hands the round's requests to its ``execute`` (by default
:func:`.merged_passes.execute`: merged where a model's passes can share one), and the tasks resume
in order.  Only one thread runs at any time, so the tasks may share scorers that are not
thread-safe, and a round holds the same requests whatever the operating system's scheduling: a
run is deterministic.

The passes themselves (merging, the cost model, the key/value caches) are :mod:`.merged_passes`'s:
this module holds no tensor.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

#: tasks (searches) run at once by default: both searches of 8 triplets
DEFAULT_WORKERS = 16


class LockstepAborted(RuntimeError):
    """Raised inside the other tasks when one task of a lockstep run failed."""


class Lockstep:
    """Runs tasks ``workers`` at a time in turn-taking threads whose forward passes are merged
    (see the module docstring).  Scorers take part through views that send their passes to
    :meth:`forward` (``CausalScorer.lockstep_view``)."""

    def __init__(self, workers: int = DEFAULT_WORKERS,
                 execute: Callable[[dict[int, Any]], tuple[dict[int, Any], int]] | None = None):
        """``execute``: a round's requests (task index -> request) -> (result or exception per
        task, forward passes run); default :func:`.merged_passes.execute`."""
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"lockstep workers must be a positive integer, got {workers!r}")
        if execute is None:
            from .merged_passes import execute
        self.workers = workers
        self._execute = execute
        self._cv = threading.Condition()
        self._turn: int | None = None
        self._pending: dict[int, Any] = {}
        self._results: dict[int, Any] = {}
        self._local = threading.local()
        #: forward passes asked for and passes run (merged or alone), for benchmarks
        self.counts = {"requests": 0, "passes": 0}

    def forward(self, request) -> tuple[Any, Any]:
        """(logits, cache) of ``request`` (a :class:`.merged_passes.ForwardRequest`): from a task,
        once every task waits (merged with theirs); outside a task, at once."""
        index = getattr(self._local, "index", None)
        if index is None:
            result = self._execute({0: request})[0][0]
            if isinstance(result, BaseException):
                raise result
            return result
        with self._cv:
            self._pending[index] = request
            self._turn = None
            self._cv.notify_all()
            self._cv.wait_for(lambda: self._turn == index)
            result = self._results.pop(index)
        if isinstance(result, BaseException):
            raise result
        return result

    def run(self, tasks: Sequence[Callable[[], Any]]) -> list[Any]:
        """Each task's return value, in task order; a task's exception is raised here once the
        other tasks have stopped (they get :class:`LockstepAborted` at their next pass)."""
        tasks = list(tasks)
        results: list[Any] = [None] * len(tasks)
        queue = iter(enumerate(tasks))  # advanced only by the task holding the turn
        errors: list[BaseException] = []
        done: set[int] = set()

        def worker(index: int) -> None:
            self._local.index = index
            with self._cv:
                self._cv.wait_for(lambda: self._turn == index)
            try:
                for k, task in queue:
                    results[k] = task()
            except BaseException as exc:  # noqa: BLE001 - re-raised by run()
                if not isinstance(exc, LockstepAborted):
                    errors.append(exc)
            finally:
                with self._cv:
                    done.add(index)
                    self._turn = None
                    self._cv.notify_all()

        threads = [threading.Thread(target=worker, args=(i,), daemon=True, name=f"lockstep-{i}")
                   for i in range(min(self.workers, len(tasks)))]
        for t in threads:
            t.start()
        live = list(range(len(threads)))
        while live:
            for i in live:  # each task runs until it asks for a pass or ends
                with self._cv:
                    self._turn = i
                    self._cv.notify_all()
                    self._cv.wait_for(lambda: self._turn is None)
            live = [i for i in live if i not in done]
            if errors:
                aborted = LockstepAborted(f"another task failed: {errors[0]!r}")
                self._results.update({i: aborted for i in live})
            else:
                answers, passes = self._execute(self._pending)
                self._results.update(answers)
                self.counts["requests"] += len(self._pending)
                self.counts["passes"] += passes
            self._pending = {}
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return results

