"""Turn a raw Gorilla export of the contstim experiments into ``trials`` rows.

One raw row is one response (``Zone Name`` ``resp1``..``resp6``) of one participant to one
sentence pair.  This module maps it onto :data:`contstim_bench.study.TRIAL_COLUMNS`:

* ``rating`` is the number of the response button (``resp1`` = very confident ``sentence1``,
  ``resp6`` = very confident ``sentence2``) and ``confidence`` is 3/2/1 for resp1|6, resp2|5,
  resp3|4.  Sentences stay in display order (``sentence1`` = left), so no rating is flipped.
* ``trial_type`` comes from the pair of raw stimulus type codes (Golan et al. 2023, Methods;
  the codes are those of the upstream analysis code): ``{N1, N2}`` natural controversial,
  ``{N, S1}``/``{N, S2}`` natural vs synthetic, ``{S1, S2}`` synthetic vs synthetic, ``{C1, C2}``
  natural vs shuffled (C1 the natural sentence, C2 its shuffled version) and ``{R1, R2}``
  randomly sampled natural sentences.
* the targeted models come from the stimulus files: in a synthetic triplet ``(m1, m2, N, S1,
  S2)`` S1 is accepted by m1 and rejected by m2 and S2 the reverse; in a natural controversial
  pair ``(sentence1, sentence2, model_1, model_2)`` sentence1 is accepted by model_2 and rejected
  by model_1, sentence2 the reverse.  Natural, shuffled and randomly sampled sentences target
  no model (null).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from ..study import TRIAL_COLUMNS, TRIAL_TYPES

RATING_BY_ZONE = {f"resp{i}": i for i in range(1, 7)}
CONFIDENCE_BY_RATING = {1: 3, 2: 2, 3: 1, 4: 1, 5: 2, 6: 3}
RESPONSE_TEXT_BY_CONFIDENCE = {1: "Somewhat confident", 2: "Confident", 3: "Very confident"}

REQUIRED_RAW_COLUMNS = (
    "Trial Number",
    "Zone Name",
    "Reaction Time",
    "counterbalance-o1ql",
    "sentence1",
    "sentence2",
    "sentence1_type",
    "sentence2_type",
)
"""Columns every raw export must have (plus ``subject`` or ``Participant Private ID``)."""

PARTICIPANT_COLUMNS = ("Participant Private ID", "subject")

TYPE_CODES_TO_TRIAL_TYPE = {
    frozenset({"N1", "N2"}): "natural_controversial",
    frozenset({"N", "S1"}): "natural_vs_synthetic",
    frozenset({"N", "S2"}): "natural_vs_synthetic",
    frozenset({"S1", "S2"}): "synthetic_vs_synthetic",
    frozenset({"C1", "C2"}): "natural_vs_shuffled",
    frozenset({"R1", "R2"}): "randomly_sampled_natural",
}
assert set(TYPE_CODES_TO_TRIAL_TYPE.values()) == set(TRIAL_TYPES)

_GROUP_RE = re.compile(r"^\s*set\s+(\d+)")


def pair_id(sentence_a: str, sentence_b: str) -> str:
    """Stable id of an unordered sentence pair: first 16 hex digits of
    sha1(the two sentences sorted and joined by a newline)."""
    joined = "\n".join(sorted((sentence_a, sentence_b)))
    return hashlib.sha1(joined.encode("utf-8")).hexdigest()[:16]


def trial_type_of(type1: str, type2: str, where: str = "") -> str:
    """Trial type of a pair of raw stimulus type codes (ValueError names unknown pairs)."""
    try:
        return TYPE_CODES_TO_TRIAL_TYPE[frozenset({type1, type2})]
    except KeyError:
        raise ValueError(
            f"{where}unknown pair of sentence type codes ({type1!r}, {type2!r}); known: "
            + ", ".join("/".join(sorted(k)) for k in TYPE_CODES_TO_TRIAL_TYPE)
        ) from None


def group_of(counterbalance: str, where: str = "") -> int:
    """Participant group from a ``counterbalance-o1ql`` value (``set N`` or ``set N_...``)."""
    m = _GROUP_RE.match(str(counterbalance))
    if not m:
        raise ValueError(f"{where}counterbalance-o1ql value {counterbalance!r} is not 'set N...'")
    return int(m.group(1))


@dataclass
class Targeting:
    """Which model each stimulus sentence was optimised/selected to be accepted and rejected by.

    ``synthetic`` maps a synthetic sentence to ``(accept, reject, natural seed, other synthetic)``;
    ``natural`` maps a natural controversial sentence to ``(accept, reject, partner sentence)``.
    """

    synthetic: dict[str, tuple[str, str, str, str]] = field(default_factory=dict)
    natural: dict[str, tuple[str, str, str]] = field(default_factory=dict)


def targeting_from_stimuli(triplets: pd.DataFrame, natural_pairs: pd.DataFrame | None) -> Targeting:
    """Build the sentence -> targeted models maps from the tested triplets and natural pairs.

    ValueError when a sentence occurs twice with different roles (it could not be resolved).
    """
    tgt = Targeting()
    for col in ("m1", "m2", "N", "S1", "S2"):
        if col not in triplets.columns:
            raise ValueError(f"synthetic triplet table lacks column {col!r}")
    for row in triplets.itertuples(index=False):
        for sent, acc, rej, other in ((row.S1, row.m1, row.m2, row.S2), (row.S2, row.m2, row.m1, row.S1)):
            val = (acc, rej, row.N, other)
            if tgt.synthetic.setdefault(sent, val) != val:
                raise ValueError(f"synthetic sentence {sent!r} occurs in two tested triplets")
    if natural_pairs is not None:
        for col in ("sentence1", "sentence2", "model_1", "model_2"):
            if col not in natural_pairs.columns:
                raise ValueError(f"natural controversial pair table lacks column {col!r}")
        for row in natural_pairs.itertuples(index=False):
            for sent, acc, rej, other in (
                (row.sentence1, row.model_2, row.model_1, row.sentence2),
                (row.sentence2, row.model_1, row.model_2, row.sentence1),
            ):
                val = (acc, rej, other)
                if tgt.natural.setdefault(sent, val) != val:
                    raise ValueError(f"natural controversial sentence {sent!r} occurs in two pairs")
    return tgt


def _participant_ids(raw: pd.DataFrame, experiment: str) -> pd.Series:
    """``<experiment>-sNN`` from the sorted unique raw participant ids (numeric order if numeric)."""
    col = next((c for c in PARTICIPANT_COLUMNS if c in raw.columns), None)
    if col is None:
        raise ValueError(f"raw results have no participant column (one of {PARTICIPANT_COLUMNS})")
    values = raw[col]
    if values.isna().any():
        raise ValueError(f"raw results: {int(values.isna().sum())} rows without {col!r}")
    numeric = pd.to_numeric(values, errors="coerce")
    keys = numeric if not numeric.isna().any() else values.astype(str)
    uniq = np.unique(keys.to_numpy())
    width = max(2, len(str(len(uniq) - 1)))
    names = {u: f"{experiment}-s{i:0{width}d}" for i, u in enumerate(uniq)}
    return keys.map(names)


@dataclass
class TrialsResult:
    """The trials table plus what the alignment found (for the dataset card)."""

    table: pa.Table
    n_raw_rows: int
    n_repeated_dropped: int
    raw_model_column_agreement: tuple[int, int]  # (agreeing, compared) sentence*_model cells


def trials_schema() -> pa.Schema:
    return pa.schema([(name, pa.type_for_alias(typ)) for name, typ in TRIAL_COLUMNS.items()])


def align_trials(raw: pd.DataFrame, experiment: str, targeting: Targeting, source_name: str) -> TrialsResult:
    """Map a raw Gorilla export onto the trials schema (see the module docstring).

    Raises ValueError naming the raw row (1-based data line of ``source_name``) for unknown
    response zones, type codes, untargetable sentences, inconsistent confidence texts or groups.
    Repeated presentations of the same pair to the same participant (upstream: "one subject
    with two extra trials") keep the earliest trial; their number is reported.
    """
    missing = [c for c in REQUIRED_RAW_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"{source_name}: missing raw columns {missing}")
    raw = raw.reset_index(drop=True)
    participants = _participant_ids(raw, experiment)
    rows = []
    agree = compared = 0
    for i, r in enumerate(raw.to_dict("records")):
        where = f"{source_name} row {i + 1}: "
        zone = r["Zone Name"]
        if zone not in RATING_BY_ZONE:
            raise ValueError(f"{where}Zone Name {zone!r} is not a response button resp1..resp6")
        rating = RATING_BY_ZONE[zone]
        confidence = CONFIDENCE_BY_RATING[rating]
        resp = r.get("Response")
        if isinstance(resp, str) and resp != RESPONSE_TEXT_BY_CONFIDENCE[confidence]:
            raise ValueError(f"{where}Response {resp!r} contradicts {zone} ({RESPONSE_TEXT_BY_CONFIDENCE[confidence]!r})")
        s = {1: r["sentence1"], 2: r["sentence2"]}
        for k in (1, 2):
            if not isinstance(s[k], str) or not s[k].strip():
                raise ValueError(f"{where}empty sentence{k}")
        types = {1: str(r["sentence1_type"]), 2: str(r["sentence2_type"])}
        ttype = trial_type_of(types[1], types[2], where)
        acc: dict[int, str | None] = {1: None, 2: None}
        rej: dict[int, str | None] = {1: None, 2: None}
        if ttype in ("natural_vs_synthetic", "synthetic_vs_synthetic"):
            naturals = [k for k in (1, 2) if types[k] == "N"]
            for k in (1, 2):
                if types[k] == "N":
                    continue
                if s[k] not in targeting.synthetic:
                    raise ValueError(f"{where}synthetic sentence{k} {s[k]!r} is in no tested triplet")
                acc[k], rej[k], seed, other = targeting.synthetic[s[k]]
                partner = s[3 - k]
                if naturals and partner != seed:
                    raise ValueError(f"{where}natural sentence {partner!r} is not the seed of {s[k]!r}")
                if not naturals and partner != other:
                    raise ValueError(f"{where}{s[k]!r} and {partner!r} are not from one triplet")
        elif ttype == "natural_controversial":
            for k in (1, 2):
                if s[k] not in targeting.natural:
                    raise ValueError(f"{where}sentence{k} {s[k]!r} is in no natural controversial pair")
                acc[k], rej[k], other = targeting.natural[s[k]]
                if other != s[3 - k]:
                    raise ValueError(f"{where}sentences are not one natural controversial pair")
        for k in (1, 2):
            raw_model = r.get(f"sentence{k}_model")
            if acc[k] is not None and isinstance(raw_model, str):
                compared += 1
                agree += raw_model == acc[k]
        rows.append(
            {
                "experiment": experiment,
                "participant": participants.iloc[i],
                "group": group_of(r["counterbalance-o1ql"], where),
                "trial": int(r["Trial Number"]),
                "pair_id": pair_id(s[1], s[2]),
                "sentence1": s[1],
                "sentence2": s[2],
                "sentence1_type": types[1],
                "sentence2_type": types[2],
                "trial_type": ttype,
                "sentence1_accept_model": acc[1],
                "sentence1_reject_model": rej[1],
                "sentence2_accept_model": acc[2],
                "sentence2_reject_model": rej[2],
                "rating": rating,
                "confidence": confidence,
                "reaction_time_ms": float(r["Reaction Time"]),
            }
        )
    df = pd.DataFrame(rows, columns=list(TRIAL_COLUMNS))
    groups = df.groupby("participant")["group"].nunique()
    if (groups > 1).any():
        raise ValueError(f"{source_name}: participants in several groups: {list(groups[groups > 1].index)}")
    df = df.sort_values(["participant", "trial"], kind="stable")
    dup = df.duplicated(["participant", "pair_id"], keep="first")
    df = df[~dup].reset_index(drop=True)
    if df.duplicated(["participant", "trial"]).any():
        bad = df[df.duplicated(["participant", "trial"], keep=False)].iloc[0]
        raise ValueError(f"{source_name}: participant {bad.participant} has two rows for trial {bad.trial}")
    table = pa.Table.from_pandas(df, schema=trials_schema(), preserve_index=False)
    return TrialsResult(table, len(raw), int(dup.sum()), (int(agree), int(compared)))
