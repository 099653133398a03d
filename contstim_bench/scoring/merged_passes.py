"""Forward passes of a causal LM merged into one: the causal scorer's side of a lockstep
(:mod:`.lockstep` runs the tasks; this module runs their passes).

A merged pass places each row of each request as a segment of a merged row: its key/value
cache slots and its new positions, with its own positions, under a 4-D mask that lets each
position see exactly the keys its own pass would have let it see (its segment's cache and the
earlier new positions of its segment).  The rows are placed by the package's one row placement,
:func:`.packing.first_fit`, and the mask made by :func:`.packing.additive_mask`, as a scorer's
packed rows are.  Its values equal the separate passes' up to float rounding (about 1e-6 nats in
float32: the kernels see other shapes).  A request marked ``alone`` (the canonical
``scorer.score`` of a sentence, whose value is written out and must not depend on what ran with
it) runs by itself, exactly as outside a lockstep.

A round's mergeable requests for one model are grouped by width into as few passes as a cost
model (:data:`COST`) finds worth it, their rows placed first-fit in merged rows whose width the
same model chooses: narrow rows side by side save padding, but each position then attends to a
longer row of cache slots.  The requests' key/value caches are placed in the merged pass and
each request's part taken back by :mod:`.kv_cache`, the one module that reads a cache's layers.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .kv_cache import as_cache, merged_layers, place_cache, take_rows
from .packing import additive_mask, first_fit

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
    layers = None if template is None else merged_layers(template, rows, past)
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
            place_cache(layers, r.cache, row, keys[:, :p])
        places.append((row, cols))
    mask = additive_mask(allowed, model.dtype)
    wants = any(r.want_cache or r.cache is not None for r in requests)
    kwargs = {"input_ids": ids, "position_ids": positions, "attention_mask": mask, "use_cache": wants}
    if layers is not None:
        kwargs[requests[0].cache_name] = as_cache(layers)
    out = model(**kwargs)
    merged = out[requests[0].cache_name] if wants else None
    results = []
    for r, (row, cols) in zip(requests, places):
        logits = out.logits[row, cols]
        cache = r.cache
        if r.want_cache or cache is not None:
            cache = take_rows(merged, row, past + cols, into=cache)
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


def _fit(requests: Sequence[ForwardRequest], limit: int) -> _Layout:
    """Each row of each request as a segment (its cache slots and its new positions) in merged
    rows of at most ``limit`` new positions: widest requests first, each segment in the first row
    with room for it (:func:`.packing.first_fit`; a segment wider than ``limit`` gets a row of its
    own)."""
    segments = [(i, j) for i, r in enumerate(requests) for j in range(r.ids.shape[0])]
    widths = [requests[i].ids.shape[1] for i, _ in segments]
    order = sorted(range(len(segments)), key=lambda k: (-widths[k], segments[k]))
    places: list[tuple[list[int], list[int], list[int]]] = [([], [], []) for _ in requests]
    used, cached = [], []
    for row, members in enumerate(first_fit(widths, order, limit)):
        new_at = cache_at = 0
        for k in members:
            i, _ = segments[k]
            row_of, new_of, cache_of = places[i]
            row_of.append(row)
            new_of.append(new_at)
            cache_of.append(cache_at)
            new_at += widths[k]
            cache_at += requests[i].past
        used.append(new_at)
        cached.append(cache_at)
    return _Layout(rows=len(used), width=max(used), past=max(cached), places=places)


def _layout(requests: Sequence[ForwardRequest]) -> _Layout:
    """The cheapest :func:`_fit` of ``requests`` (:meth:`_Layout.cost`) over row widths of 1, 2,
    4, ... times the widest request, up to :data:`ROW_WIDTH`: side by side, narrow segments
    save padding; too many side by side, each position attends to a long row of cache slots."""
    widest = max(r.ids.shape[1] for r in requests)
    limits = [widest]
    while limits[-1] * 2 <= max(ROW_WIDTH, widest):
        limits.append(limits[-1] * 2)
    if len(limits) > 1:
        limits.sort(key=lambda limit: _fit(requests, limit).cost())
    return _fit(requests, limits[0])


def merge_groups(requests: Sequence[ForwardRequest]) -> list[list[int]]:
    """Indices of ``requests`` (one model's mergeable passes) in groups that each run as one
    pass: by width, a request joining the group before it when the merged pass is estimated to
    cost no more than the two apart (:meth:`_Layout.cost`) and feeds at most
    :data:`MAX_POSITIONS` positions, and at most the token budget of any request in it."""
    order = sorted(range(len(requests)), key=lambda i: (requests[i].ids.shape[1], i))
    groups: list[list[int]] = []
    cost = 0.0
    for i in order:
        alone = _fit([requests[i]], requests[i].ids.shape[1]).cost()  # as run_alone runs it
        if groups:
            members = [requests[j] for j in groups[-1] + [i]]
            cap = min([MAX_POSITIONS] + [r.budget for r in members if r.budget])
            merged = _layout(members)
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
