"""Plausibility metrics of Kauf et al. (2024) as pure functions of scores (hand-checkable).

Experiment 1 (single sentences, §3.3): for each minimal pair a *hit* when the plausible sentence
gets the strictly higher score (a tie is a miss); binary accuracy = hits / pairs, chance 0.5.
Two prompting read-outs have their own rule:

- ``judgment`` (Sentence Judgment; Hu & Levy 2023): the score of a sentence is the log-odds
  ``log p(Yes) - log p(No)``; a hit needs *both* answers right, plausible > 0 and
  implausible < 0 (chance 0.25).
- ``choice`` (Sentence Choice I): the score of a presentation is ``log p("1") - log p("2")``;
  each pair is shown twice, plausible first (hit when > 0) and plausible second (hit when
  < 0); accuracy is the mean over the 2 x n presentations (chance 0.5), so a model that always
  answers "1" scores 0.5, not 1.

Experiment 2 (SocialN400, §4.2): one row per item x condition (``Control``, ``SemAnom``,
``Critical``) with a value without context and a value in the condition's own context; per item

- General Plausibility: ``no_context[Control] > no_context[Critical]``
- Context-Dependent Plausibility: ``context[Critical] > no_context[Critical]``
- Context Sensitivity: ``context[Critical] > context[SemAnom]``

(as Kauf et al.'s ``SocialN400-analysis`` notebook: each condition's own target sentence in its
own context; the SemAnom target equals the Critical one in 93 of the 100 items, the other 7
differ by a typo or one word).  The values are natural-log probabilities for models and the
proportions of "makes sense" answers for humans (``context`` / ``no_context`` perspectives).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..data.plausibility_human import eventsadapt_pairs, pair_hits

RULES = ("higher", "judgment")
CHANCE = {"higher": 0.5, "judgment": 0.25, "choice": 0.5}

EXPERIMENT1_SUBSETS = ("eventsadapt_ai", "eventsadapt_aa", "dtfit")
"""Experiment 1 subsets: EventsAdapt AI, EventsAdapt AA (trial type ``AAN``; ``AAR`` excluded), DTFit."""

SUBSET_TITLES = {"eventsadapt_ai": "EventsAdapt AI (impossible)", "eventsadapt_aa": "EventsAdapt AA (unlikely)",
                 "dtfit": "DTFit (AI, unlikely)"}
_TRIAL_TYPE_SUBSET = {"AI": "eventsadapt_ai", "AAN": "eventsadapt_aa"}

CONDITIONS = ("Control", "SemAnom", "Critical")
METRICS = ("general_plausibility", "context_dependent_plausibility", "context_sensitivity")
METRIC_TITLES = {"general_plausibility": "General Plausibility",
                 "context_dependent_plausibility": "Context-Dependent Plausibility",
                 "context_sensitivity": "Context Sensitivity"}

PAIR_COLUMNS = ("subset", "pair_id", "item", "voice", "sentence_plausible", "sentence_implausible",
                "human_mean_plausible", "human_mean_implausible")


# --------------------------------------------------------------------------- Experiment 1


def _subsets(pairs):
    """(subset, its rows as a boolean mask) for each Experiment 1 subset that has pairs, in the
    order of :data:`EXPERIMENT1_SUBSETS`."""
    for subset in EXPERIMENT1_SUBSETS:
        sel = (pairs.subset == subset).to_numpy()
        if sel.any():
            yield subset, sel

def experiment1_pairs(eventsadapt: Any = None, dtfit: Any = None) -> pd.DataFrame:
    """All Experiment 1 minimal pairs in one frame (columns :data:`PAIR_COLUMNS`).

    ``eventsadapt`` / ``dtfit``: the ``eventsadapt`` / ``dtfit`` configs of the ``plausibility``
    dataset (DataFrame, ``datasets.Dataset`` or pyarrow Table; ``None`` loads the built dataset).
    EventsAdapt gives 514 pairs (AI and AAN items x active/passive; ``AAR`` control items are
    left out as in the paper), DTFit 395 (all active voice).  Pair ids: ``EA<item>-<voice>``
    and ``DT<item>``.
    """
    ea = eventsadapt_pairs(eventsadapt, trial_types=tuple(_TRIAL_TYPE_SUBSET))
    ea = ea.assign(subset=ea.trial_type.map(_TRIAL_TYPE_SUBSET))
    if dtfit is None:
        from ..data.load import load_config

        dtfit = load_config("plausibility", "dtfit", split="test")
    dt = dtfit.copy() if isinstance(dtfit, pd.DataFrame) else dtfit.to_pandas()
    missing = [c for c in ("item", "sentence_plausible", "sentence_implausible", "human_mean_plausible",
                           "human_mean_implausible") if c not in dt.columns]
    if missing:
        raise ValueError(f"DTFit pairs: missing columns {missing}")
    dt = dt.assign(subset="dtfit", voice="active", pair_id=[f"DT{int(i):03d}" for i in dt["item"]])
    out = pd.concat([ea[list(PAIR_COLUMNS)], dt[list(PAIR_COLUMNS)]], ignore_index=True)
    return out


def _check_scores(values: Any, n: int, what: str, ids: pd.Series) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape != (n,):
        raise ValueError(f"{what}: expected {n} scores, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(bad.argmax())
        raise ValueError(f"{what}: score of pair {ids.iloc[i]} is {arr[i]} (not a finite number)")
    return arr


def pair_hit_vector(pairs: pd.DataFrame, score_plausible: Any, score_implausible: Any,
                    rule: str = "higher") -> np.ndarray:
    """Boolean hit per pair under ``rule`` (``higher`` or ``judgment``, see module doc)."""
    if rule not in RULES:
        raise ValueError(f"unknown pair rule {rule!r}; expected one of {RULES}")
    good = _check_scores(score_plausible, len(pairs), "plausible-sentence scores", pairs.pair_id)
    bad = _check_scores(score_implausible, len(pairs), "implausible-sentence scores", pairs.pair_id)
    if rule == "judgment":
        return (good > 0) & (bad < 0)
    return pair_hits(good, bad, "pairs")


def choice_hit_vector(pairs: pd.DataFrame, odds_plausible_first: Any, odds_plausible_second: Any) -> np.ndarray:
    """(n, 2) hits of Sentence Choice I: column 0 plausible shown as "1" (hit when the log-odds
    ``log p(1) - log p(2)`` > 0), column 1 plausible shown as "2" (hit when < 0)."""
    first = _check_scores(odds_plausible_first, len(pairs), "choice log-odds (plausible first)", pairs.pair_id)
    second = _check_scores(odds_plausible_second, len(pairs), "choice log-odds (plausible second)", pairs.pair_id)
    return np.stack([first > 0, second < 0], axis=1)


def choice_order_averaged_hits(pairs: pd.DataFrame, odds_plausible_first: Any, odds_plausible_second: Any) -> np.ndarray:
    """Sentence Choice I hit per pair on the log-odds averaged over both orders (the reading of
    ``order=both``): ``(odds_first - odds_second) / 2 > 0``, which cancels a constant preference
    for the answer "1"."""
    first = _check_scores(odds_plausible_first, len(pairs), "choice log-odds (plausible first)", pairs.pair_id)
    second = _check_scores(odds_plausible_second, len(pairs), "choice log-odds (plausible second)", pairs.pair_id)
    return (first - second) > 0


def _summary(hits: np.ndarray, human_hits: np.ndarray, chance: float) -> dict:
    """Counts and accuracy of one subset; ``hits`` (n,) per pair or (n, 2) per presentation."""
    out = {"n_pairs": int(hits.shape[0]), "hits": int(hits.sum()), "accuracy": float(hits.mean()),
           "human_accuracy": float(human_hits.mean()), "chance": chance}
    if hits.ndim == 2:  # Sentence Choice I: two presentations per pair
        out["n_presentations"] = int(hits.size)
        out["accuracy_plausible_first"] = float(hits[:, 0].mean())
        out["accuracy_plausible_second"] = float(hits[:, 1].mean())
    return out


def experiment1_accuracy(pairs: pd.DataFrame, hits: np.ndarray, chance: float = 0.5) -> dict[str, dict]:
    """Binary accuracy per subset and voice, with the human accuracy of the same pairs.

    ``hits``: boolean per pair (or (n, 2) per presentation for Sentence Choice I) in the row
    order of ``pairs``.  Returns ``{subset: {"active"|"passive"|"both": {n_pairs, hits,
    accuracy, human_accuracy, chance, ...}}}``; DTFit has only ``active`` and ``both``.  The human
    accuracy is the same comparison on the mean human ratings (§3.2): on active-voice EventsAdapt
    pairs it is the paper's 1.0 (AI) and 0.95 (AA); DTFit 0.99.
    """
    missing = [c for c in PAIR_COLUMNS if c not in pairs.columns]
    if missing:
        raise ValueError(f"Experiment 1 pairs: missing columns {missing}")
    hits = np.asarray(hits, dtype=bool)
    if hits.shape[0] != len(pairs):
        raise ValueError(f"Experiment 1: {hits.shape[0]} hits for {len(pairs)} pairs")
    human = pair_hits(pairs.human_mean_plausible, pairs.human_mean_implausible, "human mean ratings")
    out: dict[str, dict] = {}
    for subset, sel in _subsets(pairs):
        res = {}
        for voice in ("active", "passive"):
            v = sel & (pairs.voice == voice).to_numpy()
            if v.any():
                res[voice] = _summary(hits[v], human[v], chance)
        res["both"] = _summary(hits[sel], human[sel], chance)
        out[subset] = res
    unknown = sorted(set(pairs.subset) - set(EXPERIMENT1_SUBSETS))
    if unknown:
        raise ValueError(f"Experiment 1 pairs: unknown subsets {unknown}; known: {EXPERIMENT1_SUBSETS}")
    return out


def answer_hits(template: str, answer_plausible, answer_implausible) -> tuple[np.ndarray, np.ndarray]:
    """(hits, valid) per pair from the *answers* of a single-sentence template (free or
    constrained generation, Appendix C): ``None`` is no valid answer.

    - ``likert``: hit when the plausible sentence's rating is strictly higher (a tie is a miss);
    - ``sentence-judgment``: hit when the plausible sentence gets "Yes" and the implausible "No";
    - ``sentence-choice-2``: the same comparison with Yes > No (binary answers: the same hits).

    A pair is valid when both answers are; invalid pairs are no hits.
    """
    good = list(answer_plausible)
    bad = list(answer_implausible)
    if len(good) != len(bad):
        raise ValueError(f"{len(good)} plausible vs {len(bad)} implausible answers")
    valid = np.array([g is not None and b is not None for g, b in zip(good, bad)], dtype=bool)
    if template == "likert":
        hits = [v and int(g) > int(b) for g, b, v in zip(good, bad, valid)]
    elif template in ("sentence-judgment", "sentence-choice-2"):
        hits = [v and g == "Yes" and b == "No" for g, b, v in zip(good, bad, valid)]
    else:
        raise ValueError(f"no single-sentence answer rule for template {template!r}")
    return np.asarray(hits, dtype=bool), valid


def choice_answer_hits(answer_plausible_first, answer_plausible_second) -> tuple[np.ndarray, np.ndarray]:
    """(hits, valid), each (n, 2), of Sentence Choice I answers: column 0 the plausible sentence
    shown as "1" (hit when the answer is "1"), column 1 shown as "2" (hit when "2")."""
    first = list(answer_plausible_first)
    second = list(answer_plausible_second)
    if len(first) != len(second):
        raise ValueError(f"{len(first)} vs {len(second)} answers of the two presentation orders")
    valid = np.array([[a is not None, b is not None] for a, b in zip(first, second)], dtype=bool).reshape(-1, 2)
    hits = np.array([[a == "1", b == "2"] for a, b in zip(first, second)], dtype=bool).reshape(-1, 2)
    return hits, valid


def answer_accuracy(pairs: pd.DataFrame, hits: np.ndarray, valid: np.ndarray, chance: float) -> dict[str, dict]:
    """Accuracy over the *valid* answers per subset and voice (the paper's free-generation
    analysis drops pairs without a valid answer): ``{subset: {voice: {n_pairs, n_answers,
    n_valid, valid_share, hits, accuracy, chance}}}``; ``accuracy`` is None when nothing is valid.
    ``hits``/``valid``: (n,) per pair or (n, 2) per presentation (Sentence Choice I)."""
    hits = np.asarray(hits, dtype=bool)
    valid = np.asarray(valid, dtype=bool)
    if hits.shape != valid.shape or hits.shape[0] != len(pairs):
        raise ValueError(f"hits {hits.shape} and valid {valid.shape} must match {len(pairs)} pairs")
    out: dict[str, dict] = {}
    for subset, sel in _subsets(pairs):
        res = {}
        for voice in ("active", "passive", "both"):
            v = sel if voice == "both" else sel & (pairs.voice == voice).to_numpy()
            if not v.any():
                continue
            h, ok = hits[v], valid[v]
            n_valid = int(ok.sum())
            res[voice] = {"n_pairs": int(v.sum()), "n_answers": int(ok.size), "n_valid": n_valid,
                          "valid_share": n_valid / ok.size, "hits": int((h & ok).sum()),
                          "accuracy": float((h & ok).sum() / n_valid) if n_valid else None, "chance": chance}
        out[subset] = res
    return out


# --------------------------------------------------------------------------- Experiment 2

def _by_condition(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """items x conditions table of ``column``; ValueError names a missing or non-finite cell."""
    for c in ("item", "condition", column):
        if c not in frame.columns:
            raise ValueError(f"SocialN400 values: missing column {c!r}")
    unknown = sorted(set(frame.condition) - set(CONDITIONS))
    if unknown:
        raise ValueError(f"SocialN400 values: unknown conditions {unknown}; expected {CONDITIONS}")
    dup = frame.duplicated(["item", "condition"])
    if dup.any():
        r = frame[dup].iloc[0]
        raise ValueError(f"SocialN400 values: item {r['item']} {r['condition']} appears twice")
    vals = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    bad = ~np.isfinite(vals.to_numpy())
    if bad.any():
        r = frame[bad].iloc[0]
        raise ValueError(f"SocialN400 values: {column} of item {r['item']} {r['condition']} is "
                         f"{r[column]!r} (not a finite number)")
    table = frame.assign(_v=vals).pivot(index="item", columns="condition", values="_v")
    for cond in CONDITIONS:
        if cond not in table.columns:
            raise ValueError(f"SocialN400 values: no {cond} rows")
        if table[cond].isna().any():
            raise ValueError(f"SocialN400 values: item {table.index[table[cond].isna()][0]} has no {cond} row")
    return table[list(CONDITIONS)]


def context_metric_hits(frame: pd.DataFrame, no_context: str, context: str) -> pd.DataFrame:
    """Per-item hits of the three Experiment 2 metrics (columns :data:`METRICS`, index item).

    ``frame``: one row per item x condition with columns ``item``, ``condition`` and the two
    value columns named by ``no_context`` and ``context`` (higher = more plausible).
    """
    nc = _by_condition(frame, no_context)
    cx = _by_condition(frame, context)
    return pd.DataFrame({
        "general_plausibility": nc.Control > nc.Critical,
        "context_dependent_plausibility": cx.Critical > nc.Critical,
        "context_sensitivity": cx.Critical > cx.SemAnom,
    })


def context_metric_ties(frame: pd.DataFrame, no_context: str, context: str) -> dict[str, int]:
    """Number of items whose two compared values are equal, per metric (a tie is a miss)."""
    nc = _by_condition(frame, no_context)
    cx = _by_condition(frame, context)
    return {
        "general_plausibility": int((nc.Control == nc.Critical).sum()),
        "context_dependent_plausibility": int((cx.Critical == nc.Critical).sum()),
        "context_sensitivity": int((cx.Critical == cx.SemAnom).sum()),
    }


def context_metrics(frame: pd.DataFrame, no_context: str, context: str) -> dict[str, dict]:
    """``{metric: {n_items, hits, accuracy, ties}}`` of :func:`context_metric_hits`."""
    hits = context_metric_hits(frame, no_context, context)
    ties = context_metric_ties(frame, no_context, context)
    return {m: {"n_items": int(len(hits)), "hits": int(hits[m].sum()), "accuracy": float(hits[m].mean()),
                "ties": ties[m]} for m in METRICS}


def condition_means(frame: pd.DataFrame, no_context: str, context: str) -> dict[str, dict[str, float]]:
    """Mean value per condition without and with context (the bars of the paper's Figure 3)."""
    nc = _by_condition(frame, no_context)
    cx = _by_condition(frame, context)
    return {"no_context": {c: float(nc[c].mean()) for c in CONDITIONS},
            "context": {c: float(cx[c].mean()) for c in CONDITIONS}}
