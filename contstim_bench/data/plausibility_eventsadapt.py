"""EventsAdapt (Fedorenko et al. 2020; human ratings from Kauf et al. 2023), the ``eventsadapt``
and ``eventsadapt_ratings`` configs of the ``plausibility`` dataset: the sentence set and the
individual ratings, checked against each other and against the upstream ``corpus.csv``.
"""
from __future__ import annotations

import re

import pandas as pd

from .plausibility_raw import (
    EA_CORPUS,
    EA_HUMAN,
    EA_SENTENCES,
    r_missing,
    read_csv,
    require,
    resolve,
)

TRIAL_TYPES = ("AI", "AAN", "AAR")


def _version_number(v) -> object:
    if pd.isna(v):
        return pd.NA
    m = re.fullmatch(r"Version(\d+)", str(v))
    if not m:
        raise ValueError(f"{EA_SENTENCES}: NumSyn value {v!r} is not of the form VersionN")
    return int(m.group(1))


def eventsadapt_tables(source=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(sentences, ratings)`` of EventsAdapt.

    ``sentences``: one row per sentence of ``clean_EventsAdapt_SentenceSet.csv`` (file order)
    with the mean (1-7 Likert scale) and count of its non-missing human ratings.
    ``ratings``: one row per line of ``clean_EventsAdapt_human_dat.csv`` (file order).
    """
    sent = read_csv(resolve(EA_SENTENCES, source))
    require(sent, ["ItemNum", "Sentence", "Plausibility", "Voice", "TrialType", "SynonymPair", "NumSyn"], EA_SENTENCES)
    sent = r_missing(r_missing(sent, ["SynonymPair"], EA_SENTENCES), ["NumSyn"], EA_SENTENCES, numeric=False)
    hum = read_csv(resolve(EA_HUMAN, source))
    require(hum, ["WorkerId", "Score", "Plausibility", "ItemNum", "Sentence", "TrialType", "Voice"], EA_HUMAN)
    hum = r_missing(hum, ["Score"], EA_HUMAN)

    if sent.Sentence.duplicated().any():
        raise ValueError(f"{EA_SENTENCES}: duplicated sentence {sent.Sentence[sent.Sentence.duplicated()].iloc[0]!r}")
    for col, allowed in (("TrialType", TRIAL_TYPES), ("Voice", ("active", "passive")),
                         ("Plausibility", ("Plausible", "Implausible"))):
        bad = sent[~sent[col].isin(allowed)]
        if len(bad):
            raise ValueError(f"{EA_SENTENCES}: row {bad.index[0] + 2}: {col} {bad[col].iloc[0]!r} not in {allowed}")
    cells = sent.groupby(["ItemNum", "Voice", "Plausibility"]).size()
    if (cells != 1).any():
        raise ValueError(f"{EA_SENTENCES}: item/voice/plausibility {cells[cells != 1].index[0]} "
                         "does not have exactly one sentence")

    # every rating must refer to a sentence of the set with the same item, trial type and voice
    known = sent.set_index("Sentence")
    unknown = hum[~hum.Sentence.isin(known.index)]
    if len(unknown):
        raise ValueError(f"{EA_HUMAN}: row {unknown.index[0] + 2}: sentence {unknown.Sentence.iloc[0]!r} "
                         f"is not in {EA_SENTENCES}")
    ref = known.loc[hum.Sentence]
    for col in ("ItemNum", "TrialType", "Voice"):
        diff = hum[col].to_numpy() != ref[col].to_numpy()
        if diff.any():
            i = diff.nonzero()[0][0]
            raise ValueError(f"{EA_HUMAN}: row {i + 2}: {col} {hum[col].iloc[i]!r} disagrees with "
                             f"{EA_SENTENCES} ({ref[col].iloc[i]!r}) for {hum.Sentence.iloc[i]!r}")
    # Known upstream difference: the human file labels *both* versions of AAR items "Plausible"
    # (reversible events); the sentence set labels the role-reversed one "Implausible".
    diff = hum.Plausibility.to_numpy() != ref.Plausibility.to_numpy()
    unexpected = diff & ~((hum.TrialType.to_numpy() == "AAR") & (hum.Plausibility.to_numpy() == "Plausible"))
    if unexpected.any():
        i = unexpected.nonzero()[0][0]
        raise ValueError(f"{EA_HUMAN}: row {i + 2}: Plausibility {hum.Plausibility.iloc[i]!r} disagrees "
                         f"with {EA_SENTENCES} for {hum.Sentence.iloc[i]!r}")
    scores = hum.Score.dropna()
    if not scores.between(1, 7).all() or (scores % 1 != 0).any():
        bad = scores[~scores.between(1, 7) | (scores % 1 != 0)]
        raise ValueError(f"{EA_HUMAN}: row {bad.index[0] + 2}: Score {bad.iloc[0]!r} is not an integer 1..7")

    raters = {w: f"R{i:03d}" for i, w in enumerate(dict.fromkeys(hum.WorkerId), start=1)}
    ratings = pd.DataFrame({
        "rater": hum.WorkerId.map(raters),
        "item": hum.ItemNum.astype("int64"),
        "sentence": hum.Sentence,
        "rating": hum.Score.astype("float64"),
    })

    stats = ratings.groupby("sentence").rating.agg(["mean", "count"])
    out = pd.DataFrame({
        "item": sent.ItemNum.astype("int64"),
        "trial_type": sent.TrialType,
        "voice": sent.Voice,
        "plausibility": sent.Plausibility.str.lower(),
        "sentence": sent.Sentence,
        "pair_id": [f"EA{int(i):03d}-{v}" for i, v in zip(sent.ItemNum, sent.Voice)],
        "synonym_pair": sent.SynonymPair.astype("Int64"),
        "synonym_version": sent.NumSyn.map(_version_number).astype("Int64"),
        "human_mean": sent.Sentence.map(stats["mean"]).astype("float64"),
        "human_n": sent.Sentence.map(stats["count"]).fillna(0).astype("int64"),
    })
    if (out.human_n == 0).any():
        raise ValueError(f"{EA_HUMAN}: no rating for sentence {out.sentence[out.human_n == 0].iloc[0]!r}")
    _check_eventsadapt_corpus(out, read_csv(resolve(EA_CORPUS, source)))
    return out, ratings


def _check_eventsadapt_corpus(sent: pd.DataFrame, corpus: pd.DataFrame) -> None:
    """The upstream model-input pairs (AI and AAN only) must match our sentences and means."""
    require(corpus, ["good_sentence", "bad_sentence", "good_human_score", "bad_human_score", "trial_type", "voice"], EA_CORPUS)
    by = sent.set_index("sentence")
    n_expected = int((sent.trial_type != "AAR").sum() // 2)
    if len(corpus) != n_expected:
        raise ValueError(f"{EA_CORPUS}: {len(corpus)} pairs, expected {n_expected} (AI + AAN)")
    for i, row in corpus.iterrows():
        for which in ("good", "bad"):
            s = row[f"{which}_sentence"]
            if s not in by.index:
                raise ValueError(f"{EA_CORPUS}: row {i + 2}: unknown sentence {s!r}")
            r = by.loc[s]
            want = "plausible" if which == "good" else "implausible"
            if r.plausibility != want or r.trial_type != row.trial_type or r.voice != row.voice:
                raise ValueError(f"{EA_CORPUS}: row {i + 2}: {s!r} is {r.plausibility}/{r.trial_type}/{r.voice}")
            if abs(r.human_mean - row[f"{which}_human_score"]) > 1e-9:
                raise ValueError(f"{EA_CORPUS}: row {i + 2}: human mean of {s!r} is {r.human_mean} here, "
                                 f"{row[f'{which}_human_score']} upstream")
