"""DTFit (Vassallo et al. 2018), the ``dtfit`` config of the ``plausibility`` dataset: one
plausible/implausible sentence pair per item with the human typicality means, checked against the
upstream ``corpus.csv``.
"""
from __future__ import annotations

import pandas as pd

from .plausibility_raw import DT_CORPUS, DT_HUMAN, DT_SENTENCES, read_csv, require, resolve


def dtfit_table(source=None) -> pd.DataFrame:
    """One row per DTFit item: plausible and implausible sentence with their human means (1-7)."""
    sent = read_csv(resolve(DT_SENTENCES, source))
    require(sent, ["ItemNum", "Sentence", "Plausibility", "Voice"], DT_SENTENCES)
    hum = read_csv(resolve(DT_HUMAN, source))
    require(hum, ["Sentence", "Plausibility", "Score", "ItemNum"], DT_HUMAN)
    if len(sent) != len(hum):
        raise ValueError(f"{DT_HUMAN}: {len(hum)} rows but {DT_SENTENCES} has {len(sent)}")
    for col in ("Sentence", "Plausibility", "ItemNum"):
        diff = sent[col].to_numpy() != hum[col].to_numpy()
        if diff.any():
            i = diff.nonzero()[0][0]
            raise ValueError(f"{DT_HUMAN}: row {i + 2}: {col} {hum[col].iloc[i]!r} != {sent[col].iloc[i]!r} "
                             f"in {DT_SENTENCES}")
    if (sent.Voice != "active").any():
        raise ValueError(f"{DT_SENTENCES}: row {int((sent.Voice != 'active').to_numpy().argmax()) + 2} is not active voice")
    if hum.Score.isna().any() or not hum.Score.between(1, 7).all():
        i = int((hum.Score.isna() | ~hum.Score.between(1, 7)).to_numpy().argmax())
        raise ValueError(f"{DT_HUMAN}: row {i + 2}: Score {hum.Score.iloc[i]!r} outside 1..7")
    df = sent.assign(Score=hum.Score)
    rows = []
    for item, grp in df.groupby("ItemNum", sort=False):
        labels = sorted(grp.Plausibility)
        if labels != ["Implausible", "Plausible"]:
            raise ValueError(f"{DT_SENTENCES}: item {item} has plausibility labels {labels}, "
                             "expected one Plausible and one Implausible sentence")
        good = grp[grp.Plausibility == "Plausible"].iloc[0]
        bad = grp[grp.Plausibility == "Implausible"].iloc[0]
        rows.append((int(item), good.Sentence, bad.Sentence, float(good.Score), float(bad.Score)))
    out = pd.DataFrame(rows, columns=["item", "sentence_plausible", "sentence_implausible",
                                      "human_mean_plausible", "human_mean_implausible"])
    _check_dtfit_corpus(out, read_csv(resolve(DT_CORPUS, source)))
    return out


def _check_dtfit_corpus(pairs: pd.DataFrame, corpus: pd.DataFrame) -> None:
    require(corpus, ["good_sentence", "bad_sentence", "good_human_score", "bad_human_score"], DT_CORPUS)
    ours = pairs.set_index("sentence_plausible")
    if len(corpus) != len(pairs):
        raise ValueError(f"{DT_CORPUS}: {len(corpus)} pairs, expected {len(pairs)}")
    for i, row in corpus.iterrows():
        if row.good_sentence not in ours.index:
            raise ValueError(f"{DT_CORPUS}: row {i + 2}: unknown sentence {row.good_sentence!r}")
        r = ours.loc[row.good_sentence]
        if (r.sentence_implausible != row.bad_sentence
                or abs(r.human_mean_plausible - row.good_human_score) > 1e-9
                or abs(r.human_mean_implausible - row.bad_human_score) > 1e-9):
            raise ValueError(f"{DT_CORPUS}: row {i + 2}: pair {row.good_sentence!r} / {row.bad_sentence!r} "
                             "disagrees with the sentence set or human means")
