"""One entry per model: the duplicate check of a leaderboard.

Two results are the same entry when they have the same identity (:func:`.identity.identity`:
the weights' content fingerprint, the scorer settings that change the numbers, the revision; not
the name, nor the log-probabilities, which move slightly with the batch size) and cover the same
experiment or round.  The check runs within a group: verified results among the verified ones,
whose identity re-scoring proved (:func:`.verification.rescore` refuses a claimed fingerprint or
revision that the model re-scored here does not have), and unverified results among the
unverified ones, whose identity is only claimed.  So an unverified file that claims a verified
model's identity never blocks it: it stays in the unverified table, where it always was.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..results.io import ValidationError, load_file
from ..study import is_paper_experiment
from .. import names
from ..names import name_key
from .identity import display_name, identity


def entry_keys(result: dict) -> list[tuple[str, str]]:
    """(model identity (:func:`.identity.identity`), experiment) for every experiment or round of
    a result: what may appear once on a leaderboard."""
    key = identity(result)
    exps = result.get("experiments")
    return [(key, str(exp)) for exp in (exps if isinstance(exps, dict) else {"": None})]


def existing_keys(results_dir: str | os.PathLike, skip: Iterable[str | os.PathLike] = ()
                  ) -> dict[tuple[str, str], list[str]]:
    """(model identity, experiment) -> the files that have it, for every parseable ``*.json`` in
    ``results_dir`` (minus ``skip``), in name order."""
    if not Path(results_dir).is_dir():
        raise FileNotFoundError(f"results folder {results_dir} does not exist")
    out: dict[tuple[str, str], list[str]] = {}
    for path, result in folder_results(results_dir, skip):
        for key in entry_keys(result):
            out.setdefault(key, []).append(path)
    return out


SAME_NUMBERS = 1e-3
"""Two verified results whose log-probabilities agree within this many nats on every sentence
they share are one model, whatever their specs say (= ``validate.RESCORE_TOLERANCE``: the same
model re-scored with another batch size or CPU moves by about 1e-4; two different models differ
by far more on some sentence).  It catches the twins no option table can: the same weights under
two Hub ids or commits, a reference under another split, a copy with extra files."""


def same_numbers(a: dict, b: dict, tolerance: float = SAME_NUMBERS) -> bool:
    """Whether results ``a`` and ``b`` cover a common experiment and give every sentence they both
    score the same log-probability within ``tolerance`` nats."""
    exps_a, exps_b = a.get("experiments"), b.get("experiments")
    lp_a, lp_b = a.get("logprobs"), b.get("logprobs")
    if not all(isinstance(x, dict) for x in (exps_a, exps_b, lp_a, lp_b)) or not set(exps_a) & set(exps_b):
        return False
    shared = lp_a.keys() & lp_b.keys()
    try:
        return bool(shared) and all(abs(float(lp_a[s]) - float(lp_b[s])) <= tolerance for s in shared)
    except (TypeError, ValueError):
        return False


def folder_results(results_dir, skip: Iterable[str | os.PathLike] = ()) -> Iterator[tuple[str, dict]]:
    """(file, result) of every parseable ``*.json`` of ``results_dir`` (in name order) but ``skip``."""
    if results_dir is None:
        return
    skipped = {Path(p).resolve() for p in skip}
    for path in sorted(Path(results_dir).glob("*.json")):
        if path.resolve() in skipped:
            continue
        try:
            yield str(path), load_file(path)
        except ValidationError:
            continue


def listed_names(results_dir, skip: Iterable[str | os.PathLike] = ()) -> list[tuple[str, str, str]]:
    """(display name, identity, file) of every result of ``results_dir`` but ``skip``."""
    return [(display_name(r), identity(r), src) for src, r in folder_results(results_dir, skip)
            if isinstance(r.get("model"), dict)]


def name_clash(result: dict, listed: Iterable[tuple[str, str, str]]) -> str | None:
    """The problem of a result whose shown name looks like the name of another model of ``listed``
    (:func:`listed_names`): the same :func:`contstim_bench.names.name_key` (Unicode normalisation,
    case, whitespace, the TR39 confusable skeleton) and another identity; None when there is none."""
    shown = display_name(result)
    key, mine = name_key(shown), identity(result)
    # the same name exactly is another model of that name: listed with its revision, on its own page
    twin = next(((n, src) for n, ident, src in listed if ident != mine and n != shown and name_key(n) == key), None)
    if twin is None:
        return None
    return (f"model name {names.shown(shown)} looks like the name of the model listed as {names.shown(twin[0])} in "
            f"{Path(twin[1]).name} (the same after Unicode normalisation, case folding, whitespace and the TR39 "
            "confusable skeleton): submit under another name")


def check_duplicates(checked: list, results_dir: str | os.PathLike | None = None,
                     verified_file: Callable[[str], bool] | None = None) -> None:
    """Add a problem to every result (a :class:`.validate.Checked`) whose model another file of
    its group already has for the same experiment or round, among ``checked`` (in order) and the
    files of ``results_dir``, and to every verified result whose log-probabilities a verified
    file already has (:func:`same_numbers`).  A problem names the other file by its name only
    (the folder is the maintainer's).  ``verified_file(path)`` tells whether a file of ``results_dir``
    is verified (default: none is, every file is in one group, as when nothing is re-scored)."""
    held = existing_keys(results_dir, [c.source for c in checked]) if results_dir is not None else {}
    verified_here: dict[str, bool] = {}

    def held_verified(source: str) -> bool:
        if source not in verified_here:
            verified_here[source] = bool(verified_file(source)) if verified_file is not None else False
        return verified_here[source]

    def held_in_group(key: tuple[str, str], verified: bool) -> str | None:
        return next((source for source in held.get(key, []) if held_verified(source) == verified), None)

    seen: dict[tuple[tuple[str, str], bool], str] = {}
    verified_results: list[tuple[str, dict]] = []
    listed = listed_names(results_dir, [c.source for c in checked])
    for c in checked:
        if c.result is None or not isinstance(c.result.get("model"), dict):
            continue
        clash = name_clash(c.result, listed) if c.ok else None
        if clash is not None:
            c.problems.append(clash)
            continue
        keys = entry_keys(c.result)
        groups = (c.verified,) if c.ok else (False, True)  # a refused file is told of any twin
        clash = next(((k, src) for k in keys for g in groups for src in [seen.get((k, g)) or held_in_group(k, g)]
                      if src is not None), None)
        if clash is not None:
            (key, source), (name, rev) = clash, c.key
            what = f" on round contstim.{key[1]}" if key[1] and not is_paper_experiment(key[1]) else ""
            c.problems.append(f"duplicate: model {name!r} revision {rev!r}{what} is already in {Path(source).name}")
            continue
        if c.verified and c.ok:
            twin = next((src for src, other in verified_results if same_numbers(c.result, other)), None) or \
                next((src for src, other in folder_results(results_dir, [c.source for c in checked])
                      if same_numbers(c.result, other) and held_verified(src)), None)
            if twin is not None:
                c.problems.append(f"duplicate: model {c.key[0]!r} has the log-probabilities of {Path(twin).name} "
                                  f"(every shared sentence within {SAME_NUMBERS} nats): the same model")
                continue
            verified_results.append((c.source, c.result))
        if not c.ok:  # a refused file is told of its twins, but blocks no later file of the batch
            continue
        for key in keys:
            seen[(key, c.verified)] = c.source
        listed.append((display_name(c.result), identity(c.result), c.source))
