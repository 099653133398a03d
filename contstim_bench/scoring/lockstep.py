"""Several tasks (synthetic searches) run in lockstep, their causal-LM forward passes merged.

On a CPU a forward pass of a small causal LM costs a fixed 45-70 ms (every weight is read, and
the model's Python runs layer by layer) plus about 3 ms per position in float32 (1.6 ms in
bfloat16) for SmolLM2-135M; one search makes about 200 passes per triplet, most of them a
few rows wide, so the fixed part is a quarter to a half of its time.  :class:`Lockstep` runs
``workers`` tasks in threads that take turns, as coroutines do: one task at a time runs its
Python until it asks for a forward pass (:meth:`Lockstep.forward`), then the next task runs;
once every task waits, the coordinator runs their passes, merged (:func:`run_merged`) where a
model's passes can share one, and the tasks resume in order.  Only one thread runs at any
time, so the tasks may share scorers that are not thread-safe, and a round holds the same
requests whatever the operating system's scheduling: a run is deterministic.

A merged pass places each row of each request as a segment of a merged row: its key/value
cache slots and its new positions, with its own positions, under a 4-D mask that lets each
position see exactly the keys its own pass would have let it see (its segment's cache and the
earlier new positions of its segment).  Its values equal the separate passes' up to float
rounding (about 1e-6 nats in float32: the kernels see other shapes).  A request marked
``alone`` (the canonical ``scorer.score`` of a sentence, whose value is written out and must not
depend on what ran with it) runs by itself, exactly as outside a lockstep.

A round's mergeable requests for one model are grouped by width into as few passes as a cost
model (:data:`COST`) finds worth it, their rows placed first-fit in merged rows whose width the
same model chooses: narrow rows side by side save padding, but each position then attends to a
longer row of cache slots.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: tasks (searches) run at once by default: both searches of 8 triplets
DEFAULT_WORKERS = 16
#: new positions per row of a merged pass at most (the rows of narrower requests are placed one
#: after another in a row, each with its own cache slots)
ROW_WIDTH = 64
#: the cost model that places rows and groups requests, in positions' worth: a pass costs
#: ``pass`` + rows x width + ``row`` x rows + ``key`` x rows x width x (cache slots + width).
#: Measured with SmolLM2-135M on this project's CPU in float32: 70 ms a pass, 3.2 ms a
#: position, 0.5 ms a row (its cache and attention), 0.002 ms a key a position
COST = {"pass": 22.0, "row": 0.16, "key": 0.0006}
#: positions fed by one merged pass at most: its logits are positions x vocabulary floats
#: (4,096 x 49,152 x 4 bytes = 0.8 GB)
MAX_POSITIONS = 4096


class LockstepAborted(RuntimeError):
    """Raised inside the other tasks when one task of a lockstep run failed."""


@dataclass
class ForwardRequest:
    """One forward pass a task asks for.

    ``ids``: (rows, width) token ids; ``mask``: a 2-D padding mask over the cache and the new
    tokens (rows, past + width; causal order implied, positions ``past + 0..width-1``) or a
    4-D additive mask (rows, 1, width, past + width) with explicit ``positions``; ``cache``:
    the key/value cache the pass continues (extended in place, as the model would), or None;
    ``want_cache``: return a cache (a new one when none was given)."""

    model: Any
    ids: Any
    mask: Any
    positions: Any = None
    cache: Any = None
    want_cache: bool = False
    alone: bool = False
    cache_name: str = "past_key_values"
    #: the scorer's --max-tokens-per-batch: a merged pass holding this request feeds no more
    budget: int | None = None

    @property
    def past(self) -> int:
        return 0 if self.cache is None else int(self.cache.get_seq_length())

    def allowed(self):
        """(rows, width, past + width) bool: the keys each new position may attend to."""
        import torch

        rows, width = self.ids.shape
        past = self.past
        if self.mask.dim() == 4:
            return self.mask[:, 0] == 0
        keys = torch.arange(past + width, device=self.ids.device)
        causal = keys[None, :] <= (past + torch.arange(width, device=self.ids.device))[:, None]
        return causal[None] & self.mask.bool()[:, None, :]

    def position_ids(self):
        import torch

        if self.positions is not None:
            return self.positions
        rows, width = self.ids.shape
        return (self.past + torch.arange(width, device=self.ids.device)).expand(rows, width)


def run_alone(request: ForwardRequest) -> tuple[Any, Any]:
    """The request's pass by itself, as the scorer makes it outside a lockstep: (logits, cache)."""
    kwargs = {"input_ids": request.ids, "attention_mask": request.mask,
              "use_cache": request.want_cache or request.cache is not None}
    if request.positions is not None:
        kwargs["position_ids"] = request.positions
    if request.cache is not None:
        kwargs[request.cache_name] = request.cache
    out = request.model(**kwargs)
    return out.logits, (out[request.cache_name] if kwargs["use_cache"] else None)


def run_merged(requests: Sequence[ForwardRequest]) -> list[tuple[Any, Any]]:
    """The requests' passes (one model, full-attention key/value caches) as one forward pass:
    (logits, cache) per request, each as its own pass gives it (see the module docstring)."""
    import torch
    from transformers import DynamicCache

    if len(requests) == 1:
        return [run_alone(requests[0])]
    model = requests[0].model
    device = requests[0].ids.device
    layout = _layout(requests)
    rows, width, past = layout.rows, layout.width, layout.past
    ids = torch.zeros((rows, width), dtype=torch.long, device=device)
    positions = torch.zeros((rows, width), dtype=torch.long, device=device)
    allowed = torch.zeros((rows, width, past + width), dtype=torch.bool, device=device)
    diagonal = torch.arange(width, device=device)
    allowed[:, diagonal, past + diagonal] = True  # unused positions see themselves (no empty row)
    template = next((r.cache for r in requests if r.past), None)
    layers = None
    if template is not None:
        layers = [(layer.keys.new_zeros((rows, layer.keys.shape[1], past, layer.keys.shape[-1])),
                   layer.values.new_zeros((rows, layer.values.shape[1], past, layer.values.shape[-1])))
                  for layer in template.layers]
    places = []
    for r, (row, new_at, cache_at) in zip(requests, layout.places):
        n, w = r.ids.shape
        p = r.past
        row = torch.tensor(row, dtype=torch.long, device=device)[:, None]  # (n, 1)
        new_at = torch.tensor(new_at, dtype=torch.long, device=device)[:, None]
        cache_at = torch.tensor(cache_at, dtype=torch.long, device=device)[:, None]
        cols = new_at + torch.arange(w, device=device)  # (n, w): the request's positions in its rows
        ids[row, cols] = r.ids
        positions[row, cols] = r.position_ids()
        keys = torch.cat([cache_at + torch.arange(p, device=device), past + cols], 1)  # (n, p + w)
        allowed[row[:, :, None], cols[:, :, None], keys[:, None, :]] = r.allowed()
        if p:
            slots = keys[:, :p]
            for (k, v), layer in zip(layers, r.cache.layers):
                k.transpose(1, 2)[row, slots] = layer.keys.transpose(1, 2)
                v.transpose(1, 2)[row, slots] = layer.values.transpose(1, 2)
        places.append((row, cols))
    mask = torch.zeros((rows, 1, width, past + width), dtype=model.dtype, device=device)
    mask.masked_fill_(~allowed[:, None], torch.finfo(model.dtype).min)
    wants = any(r.want_cache or r.cache is not None for r in requests)
    kwargs = {"input_ids": ids, "position_ids": positions, "attention_mask": mask, "use_cache": wants}
    if layers is not None:
        kwargs[requests[0].cache_name] = DynamicCache(ddp_cache_data=layers)
    out = model(**kwargs)
    merged = out[requests[0].cache_name] if wants else None
    results = []
    for r, (row, cols) in zip(requests, places):
        logits = out.logits[row, cols]
        cache = r.cache
        if r.want_cache or cache is not None:
            if cache is None:
                cache = DynamicCache()
            slots = past + cols
            for index, layer in enumerate(merged.layers):
                cache.update(layer.keys.transpose(1, 2)[row, slots].transpose(1, 2),
                             layer.values.transpose(1, 2)[row, slots].transpose(1, 2), index)
        results.append((logits, cache))
    return results


@dataclass
class _Layout:
    rows: int
    width: int
    past: int
    #: per request: (merged row, first new position, first cache slot) of each of its rows
    places: list[tuple[list[int], list[int], list[int]]]

    def cost(self) -> float:
        """Estimated time of the pass, in positions' worth (:data:`COST`)."""
        return (COST["pass"] + self.rows * self.width + COST["row"] * self.rows
                + COST["key"] * self.rows * self.width * (self.past + self.width))


def _fit(requests: Sequence[ForwardRequest], limit: int, keep: bool = True) -> _Layout:
    """Each row of each request as a segment (its cache slots and its new positions) in merged
    rows of at most ``limit`` new positions: widest requests first, each segment in the first
    row with room for it (first-fit decreasing).  ``keep``: record where each segment goes."""
    used: list[int] = []  # new positions used per merged row
    cached: list[int] = []  # cache slots used per merged row
    places: list[tuple[list[int], list[int], list[int]]] = [([], [], []) for _ in requests]
    for i in sorted(range(len(requests)), key=lambda i: (-requests[i].ids.shape[1], i)):
        n, w = requests[i].ids.shape
        p = requests[i].past
        row_of, new_of, cache_of = places[i]
        left, row = n, 0
        while left:
            if row == len(used):
                used.append(0)
                cached.append(0)
            k = min(left, (limit - used[row]) // w if used[row] else max(1, limit // w))
            if k > 0:
                if keep:
                    row_of.extend([row] * k)
                    new_of.extend(range(used[row], used[row] + k * w, w))
                    cache_of.extend(cached[row] + j * p for j in range(k))
                used[row] += k * w
                cached[row] += k * p
                left -= k
            row += 1
    return _Layout(rows=len(used), width=max(used), past=max(cached), places=places)


def _layout(requests: Sequence[ForwardRequest], keep: bool = True) -> _Layout:
    """The cheapest :func:`_fit` of ``requests`` (:meth:`_Layout.cost`) over row widths of 1, 2,
    4, ... times the widest request, up to :data:`ROW_WIDTH`: side by side, narrow segments
    save padding; too many side by side, each position attends to a long row of cache slots."""
    widest = max(r.ids.shape[1] for r in requests)
    limits = [widest]
    while limits[-1] * 2 <= max(ROW_WIDTH, widest):
        limits.append(limits[-1] * 2)
    if len(limits) > 1:
        limits.sort(key=lambda limit: _fit(requests, limit, keep=False).cost())
    return _fit(requests, limits[0], keep)


def merge_groups(requests: Sequence[ForwardRequest]) -> list[list[int]]:
    """Indices of ``requests`` (one model's mergeable passes) in groups that each run as one
    pass: by width, a request joining the group before it when the merged pass is estimated to
    cost no more than the two apart (:meth:`_Layout.cost`) and feeds at most
    :data:`MAX_POSITIONS` positions, and at most the token budget of any request in it."""
    order = sorted(range(len(requests)), key=lambda i: (requests[i].ids.shape[1], i))
    groups: list[list[int]] = []
    cost = 0.0
    for i in order:
        alone = _fit([requests[i]], requests[i].ids.shape[1], keep=False).cost()  # as run_alone runs it
        if groups:
            members = [requests[j] for j in groups[-1] + [i]]
            cap = min([MAX_POSITIONS] + [r.budget for r in members if r.budget])
            merged = _layout(members, keep=False)
            if merged.cost() <= cost + alone and merged.rows * merged.width <= cap:
                groups[-1].append(i)
                cost = merged.cost()
                continue
        groups.append([i])
        cost = alone
    return [sorted(g) for g in groups]


def execute(requests: dict[int, ForwardRequest]) -> tuple[dict[int, Any], int]:
    """Run one round's requests (task index -> request): ``alone`` ones by themselves, the
    others merged per model (:func:`merge_groups`), in task order.  (Result or exception per
    task, forward passes run.)"""
    import torch

    results: dict[int, Any] = {}
    passes = 0
    by_model: dict[int, list[int]] = {}
    with torch.inference_mode():
        for i in sorted(requests):
            r = requests[i]
            if r.alone:
                passes += 1
                try:
                    results[i] = run_alone(r)
                except Exception as exc:  # noqa: BLE001 - handed to the task that asked
                    results[i] = exc
            else:
                by_model.setdefault(id(r.model), []).append(i)
        for tasks in by_model.values():
            for group in merge_groups([requests[i] for i in tasks]):
                passes += 1
                members = [tasks[g] for g in group]
                try:
                    for i, value in zip(members, run_merged([requests[i] for i in members])):
                        results[i] = value
                except Exception as exc:  # noqa: BLE001
                    for i in members:
                        results[i] = exc
    return results, passes


class Lockstep:
    """Runs tasks ``workers`` at a time in turn-taking threads whose forward passes are merged
    (see the module docstring).  Scorers take part through views that send their passes to
    :meth:`forward` (``CausalScorer.lockstep_view``)."""

    def __init__(self, workers: int = DEFAULT_WORKERS):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"lockstep workers must be a positive integer, got {workers!r}")
        self.workers = workers
        self._cv = threading.Condition()
        self._turn: int | None = None
        self._pending: dict[int, ForwardRequest] = {}
        self._results: dict[int, Any] = {}
        self._local = threading.local()
        #: forward passes asked for and passes run (merged or alone), for benchmarks
        self.counts = {"requests": 0, "passes": 0}

    def forward(self, request: ForwardRequest) -> tuple[Any, Any]:
        """(logits, cache) of ``request``: from a task, once every task waits (merged with
        theirs); outside a task, at once."""
        index = getattr(self._local, "index", None)
        if index is None:
            return run_alone(request)
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
                answers, passes = execute(self._pending)
                self._results.update(answers)
                self.counts["requests"] += len(self._pending)
                self.counts["passes"] += passes
            self._pending = {}
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return results

