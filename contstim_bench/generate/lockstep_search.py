"""Synthetic triplets in lockstep (issue 43): many searches at once, sharing forward passes.

A triplet is two searches (S1 accepted by ``m1`` and rejected by ``m2``, S2 the reverse).
:func:`synthesize_triplets` runs the searches of many triplets as tasks of a
:class:`~contstim_bench.scoring.lockstep.Lockstep`, ``workers`` at a time: each search asks a
causal LM for a forward pass where it would run one, and the passes the searches ask for at
the same time run as one (a CPU reads every weight once for all of them).  Each search keeps
its own kept prefix states and evaluation counts (a view of the scorer); scorers that cannot
share passes (n-gram, RNN) are shared as they are, since only one search runs at a time.  A
triplet is complete once both its searches are, whatever the others are doing (``on_row``).

The triplets are those of :func:`.synthetic.synthesize_triplet` run one at a time, bit for
bit: every value that decides or is written out is a canonical score (``scorer.score`` of the
sentence), which a lockstep runs alone, and the merged passes' values (which round differently
by about 1e-6 nats) only rank candidates, with every decision within
:data:`.replacement.DECISION_MARGIN` of a threshold taken on canonical scores.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..scoring.lockstep import DEFAULT_WORKERS, Lockstep
from ..scoring.protocols import LockstepScorer
from .inputs import Vocabulary
from .search_records import AttemptReport, SearchModel, SearchSettings
from .synthetic import search_seeds, synthesize, triplet_row


@dataclass(frozen=True)
class TripletTask:
    """One triplet to synthesise: the start sentence, the ordered model pair and its seed."""

    natural: str
    m1: SearchModel
    m2: SearchModel
    seed: int
    natural_index: int = -1


def synthesize_triplets(tasks: Sequence[TripletTask], vocabulary: Vocabulary, function_words: Iterable[str],
                        settings: SearchSettings | None = None, *, workers: int = DEFAULT_WORKERS,
                        report: Callable[[int, AttemptReport], None] | None = None,
                        on_row: Callable[[int, dict], None] | None = None,
                        lockstep: Lockstep | None = None) -> list[dict]:
    """The triplet rows of ``tasks`` (in task order), their ``2 * len(tasks)`` searches run
    ``workers`` at a time in lockstep (see the module docstring).

    ``report(k, attempt)``: every position attempt of task ``k``'s searches; ``on_row(k, row)``:
    called as soon as task ``k``'s triplet is complete (to write it out before the others end);
    ``lockstep``: the coordinator to use (default: a new one of ``workers``)."""
    tasks = list(tasks)
    fw = frozenset(function_words)
    lockstep = lockstep or Lockstep(workers)
    halves: dict[int, list] = {k: [None, None] for k in range(len(tasks))}

    def view(m: SearchModel) -> SearchModel:
        """A search's own view of ``m`` (its own kept prefix states and counts, which its
        attempt reports count), or ``m`` itself when it cannot share passes."""
        if not isinstance(m.scorer, LockstepScorer):
            return m
        return SearchModel(name=m.name, scorer=m.scorer.lockstep_view(lockstep), mode=m.mode, spec=m.spec)

    def search(k: int, half: int, seed) -> None:
        t = tasks[k]
        accept, reject = (t.m1, t.m2) if half == 0 else (t.m2, t.m1)
        attempt = None if report is None else (lambda r: report(k, r))
        halves[k][half] = synthesize(t.natural, view(accept), view(reject), vocabulary, fw, seed,
                                     settings, attempt)
        if None not in halves[k]:
            row = triplet_row(*halves[k], t.m1, t.m2, t.seed, t.natural_index)
            rows[k] = row
            if on_row is not None:
                on_row(k, row)

    rows: list[dict | None] = [None] * len(tasks)
    searches = []
    for k, t in enumerate(tasks):
        for half, seed in enumerate(search_seeds(t.seed)):
            searches.append(lambda k=k, half=half, seed=seed: search(k, half, seed))
    lockstep.run(searches)
    return rows
