"""The checks of one model on one condition of a contstim result (an ``experiments`` entry or a
``panels`` block): :func:`check_block`, :func:`check_entry` (the evaluated model's entry: its block,
comparisons, head-to-heads, test families and rank).  Used by :mod:`.schema`."""
from __future__ import annotations

from ..analysis.inference import ALPHA
from ..analysis.panel import FAMILIES, MEASURES
from ..analysis.ranking import ALL_TRIALS, OWN_TRIALS
from ..uncertainty import standard_error
from .checks import Problems as _Problems, check_range as _check_range, field as _field
from .checks import is_num as _is_num, typename as _typename

SELECTIONS = ("targeted", "targeted_accept", "targeted_reject", "all")
HEAD_TO_HEAD_SELECTIONS = ("targeted_both", "all")
BASES = ("same_trials", "own_selection")
FAMILY_OF = {"p_vs_lower_ceiling": "model_vs_lower_ceiling", "comparisons": "model_vs_model",
             "head_to_head": "head_to_head", "head_to_head_by_item": "head_to_head_by_item"}
UNITS = ("participant", "group")


def _check_by_unit(obj: dict, key: str, n_units, lo: float, hi: float, path: str, problems: _Problems) -> None:
    values = _field(obj, key, dict, path, problems)
    if values is None:
        return
    if n_units is not None:
        problems.check(len(values) == n_units, f"{path}.{key}",
                       f"has {len(values)} units, n_units is {n_units}")
    for unit, v in values.items():
        if not _is_num(v):
            problems.append(f"{path}.{key}.{unit}: expected a finite number, got {_typename(v)}")
            return
        _check_range(v, lo, hi, f"{path}.{key}.{unit}", problems)


def check_block(e: dict, path: str, problems: _Problems) -> None:
    """One model on one condition: selection, counts, accuracy / SRCS with ceilings and p."""
    sel = _field(e, "selection", str, path, problems)
    if sel is not None:
        problems.check(sel in SELECTIONS, f"{path}.selection", f"{sel!r} is not one of {', '.join(SELECTIONS)}")
    unit = _field(e, "unit", str, path, problems)
    if unit is not None:
        problems.check(unit in UNITS, f"{path}.unit", f"{unit!r} is not one of {', '.join(UNITS)}")
    n_units = _field(e, "n_units", "int", path, problems)
    for key in ("n_trials", "n_pairs"):
        _field(e, key, "int", path, problems)
    for measure, lo in (("accuracy", 0.0), ("srcs", -1.0)):
        _check_range(_field(e, measure, "number", path, problems), lo, 1.0, f"{path}.{measure}", problems)
        _check_by_unit(e, f"{measure}_by_unit", n_units, lo, 1.0, path, problems)
        _check_stderr(e, measure, n_units, path, problems)
        ceiling = _field(e, f"{measure}_noise_ceiling", dict, path, problems)
        if ceiling is not None:
            cpath = f"{path}.{measure}_noise_ceiling"
            for bound in ("lower", "upper"):
                _check_range(_field(ceiling, bound, "number", cpath, problems), lo, 1.0, f"{cpath}.{bound}", problems)
                _check_by_unit(ceiling, f"{bound}_by_unit", n_units, lo, 1.0, cpath, problems)
    _field(e, "degenerate", "str?", path, problems)
    for key in ("p_vs_lower_ceiling", "p_vs_lower_ceiling_uncorrected"):
        ps = _field(e, key, dict, path, problems)
        if ps is not None:
            for measure in ("accuracy", "srcs"):
                _check_range(_field(ps, measure, "number", f"{path}.{key}", problems), 0.0, 1.0,
                             f"{path}.{key}.{measure}", problems)


def _check_stderr(e: dict, measure: str, n_units, path: str, problems: _Problems) -> None:
    """``<measure>_stderr``: null for fewer than two units, otherwise the standard error of the
    block's own per-unit values (:func:`~contstim_bench.uncertainty.standard_error`, within
    1e-9): a file whose standard error was edited is refused at every door that reads it, with the
    recomputed value named (the leaderboard's validator also recomputes the per-unit values)."""
    key = f"{measure}_stderr"
    if key not in e:
        problems.append(f"{path}.{key}: missing")
        return
    value = e[key]
    if isinstance(n_units, int) and n_units < 2:
        problems.check(value is None, f"{path}.{key}", "must be null for fewer than two units")
        return
    if not problems.check(_is_num(value) and value >= 0, f"{path}.{key}",
                          f"expected a finite number >= 0, got {value!r}"):
        return
    units = e.get(f"{measure}_by_unit")
    if isinstance(units, dict) and len(units) >= 2 and all(_is_num(v) for v in units.values()):
        expected = standard_error(list(units.values()))
        problems.check(abs(value - expected) <= 1e-9, f"{path}.{key}",
                       f"{value!r} is not the standard error of {measure}_by_unit (recomputed {expected!r})")


COMPARISON_FIELDS = {
    "basis": str, "selection": str, "n_trials": "int", "n_units": "int",
    **{f"{m}{suffix}": kind for m in ("accuracy", "srcs") for suffix, kind in
       (("", "number"), ("_delta", "number"), ("_p", "number"), ("_p_bh", "number"),
        ("_better", str), ("_significant", bool))},
}


def _check_comparisons(comps: dict, model_name, path: str, problems: _Problems) -> None:
    for ref, c in comps.items():
        cpath = f"{path}.{ref}"
        if not problems.check(isinstance(c, dict), cpath, f"expected an object, got {_typename(c)}"):
            continue
        for key, kind in COMPARISON_FIELDS.items():
            _field(c, key, kind, cpath, problems)
        basis = c.get("basis")
        if isinstance(basis, str):
            problems.check(basis in BASES, f"{cpath}.basis", f"{basis!r} is not one of {', '.join(BASES)}")
        for m in ("accuracy", "srcs"):
            better = c.get(f"{m}_better")
            if isinstance(better, str):
                problems.check(better in (model_name, ref, "tie"), f"{cpath}.{m}_better",
                               f"{better!r} is neither the model, the reference nor 'tie'")
            p = c.get(f"{m}_p_bh")
            sig = c.get(f"{m}_significant")
            if _is_num(p) and isinstance(sig, bool):
                problems.check(sig == (p < ALPHA), f"{cpath}.{m}_significant",
                               f"{sig} does not match {m}_p_bh = {p}")


def _check_head_to_head(matches: dict, model_name, path: str, problems: _Problems) -> None:
    """Each entry: selection, counts, share (null when the models never disagree) with its
    per-unit values, p and p_bh (null likewise), better and significant consistent with them."""
    for other, h in matches.items():
        hpath = f"{path}.{other}"
        if not problems.check(isinstance(h, dict), hpath, f"expected an object, got {_typename(h)}"):
            continue
        sel = _field(h, "selection", str, hpath, problems)
        if sel is not None:
            problems.check(sel in HEAD_TO_HEAD_SELECTIONS, f"{hpath}.selection",
                           f"{sel!r} is not one of {', '.join(HEAD_TO_HEAD_SELECTIONS)}")
        n = _field(h, "n_trials", "int", hpath, problems)
        _field(h, "n_pairs", "int", hpath, problems)
        _field(h, "n_pairs_selected", "int", hpath, problems)
        _field(h, "share_by_unit", dict, hpath, problems)
        for key in ("share", "p", "p_bh", "share_items", "p_items", "p_items_bh"):
            if key not in h:
                problems.append(f"{hpath}.{key}: missing")
                continue
            v = h[key]
            if n == 0:
                problems.check(v is None, f"{hpath}.{key}", "must be null when the models never disagree")
            elif problems.check(_is_num(v), f"{hpath}.{key}", f"expected a finite number, got {_typename(v)}"):
                _check_range(v, 0.0, 1.0, f"{hpath}.{key}", problems)
        if n:
            _check_by_unit(h, "share_by_unit", None, 0.0, 1.0, hpath, problems)
        better = h.get("better")
        problems.check(better in (model_name, other, "tie") if n else better is None, f"{hpath}.better",
                       f"{better!r} is neither the model, the other model, 'tie' nor null without disagreement")
        for sig_key, q_key in (("significant", "p_bh"), ("significant_items", "p_items_bh")):
            sig = _field(h, sig_key, bool, hpath, problems)
            q = h.get(q_key)
            if sig is not None:
                problems.check(sig == (_is_num(q) and q < ALPHA), f"{hpath}.{sig_key}",
                               f"{sig} does not match {q_key} = {q}")


def _check_families(families: dict, path: str, problems: _Problems) -> None:
    for key, family in FAMILY_OF.items():
        f = _field(families, key, dict, path, problems)
        if f is None:
            continue
        name = _field(f, "family", str, f"{path}.{key}", problems)
        if name is not None:
            problems.check(name == family and name in FAMILIES, f"{path}.{key}.family",
                           f"{name!r} is not {family!r}")
        _field(f, "size", "int", f"{path}.{key}", problems)


RANK_FIELDS = {"rank": "int?", "among": "int", "tied": bool, "group": str, "reason": "str?"}


def _check_rank(ranks: dict, path: str, problems: _Problems) -> None:
    """``rank``: per measure the model's place among the panel (:func:`contstim_bench.analysis.ranking.rank_in_panel`):
    ``rank`` an integer from 1 to ``among`` or null with a ``reason``, ``tied``, and the like-for-like ``group``."""
    problems.check(set(ranks) == set(MEASURES), path, f"expected the measures {', '.join(MEASURES)}, got {sorted(ranks)}")
    for m in MEASURES:
        r = _field(ranks, m, dict, path, problems)
        if r is None:
            continue
        rpath = f"{path}.{m}"
        got = {key: _field(r, key, kind, rpath, problems) for key, kind in RANK_FIELDS.items()}
        problems.check(set(r) <= set(RANK_FIELDS), rpath, f"unknown keys {sorted(set(r) - set(RANK_FIELDS))}")
        group = got["group"]
        if isinstance(group, str):
            problems.check(group.startswith((ALL_TRIALS, OWN_TRIALS)), f"{rpath}.group", f"{group!r} is not a like-for-like group")
        rank, among = got["rank"], got["among"]
        if isinstance(rank, int) and isinstance(among, int):
            problems.check(1 <= rank <= among, f"{rpath}.rank", f"{rank} is not between 1 and among = {among}")
        if "rank" in r and "reason" in r:
            problems.check((rank is None) == (got["reason"] is not None), f"{rpath}.reason",
                           "a model is either ranked or has a reason why not")


def check_entry(e: dict, model_name, path: str, problems: _Problems) -> None:
    """The evaluated model's entry of one condition: its block, ``comparisons``, ``head_to_head``,
    ``bh_families`` and ``rank``."""
    check_block(e, path, problems)
    comps = _field(e, "comparisons", dict, path, problems)
    if comps is not None:
        _check_comparisons(comps, model_name, f"{path}.comparisons", problems)
    matches = _field(e, "head_to_head", dict, path, problems)
    if matches is not None:
        _check_head_to_head(matches, model_name, f"{path}.head_to_head", problems)
    families = _field(e, "bh_families", dict, path, problems)
    if families is not None:
        _check_families(families, f"{path}.bh_families", problems)
    ranks = _field(e, "rank", dict, path, problems)
    if ranks is not None:
        _check_rank(ranks, f"{path}.rank", problems)


def check_rank_matches(entry: dict, models: dict, model_name: str, ties, path: str, problems: _Problems) -> None:
    """The entry's ``rank`` is the model's place among the condition's panel ``models``, ranked
    again here (:func:`contstim_bench.analysis.ranking.rank_in_panel`): a file whose rank was edited
    is refused at every door that reads it, with the recomputed rank named."""
    from ..analysis.accuracy import DEFAULT_TIES
    from ..analysis.ranking import rank_in_panel

    recorded = entry.get("rank")
    if not isinstance(recorded, dict):
        return
    expected = rank_in_panel(models, model_name, MEASURES, ties if isinstance(ties, str) else DEFAULT_TIES)
    for m in MEASURES:
        problems.check(recorded.get(m) == expected[m], f"{path}.rank.{m}",
                       f"{recorded.get(m)!r} is not the model's rank among the panel (ranked again: {expected[m]!r})")
