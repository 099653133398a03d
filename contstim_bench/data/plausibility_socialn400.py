"""SocialN400 (Jouravlev et al. 2019), the ``socialn400`` and ``socialn400_judgments`` configs of
the ``plausibility`` dataset: the stimuli (context, target sentence split at the target word),
their presentation lists and comprehension questions, and the per-subject sensibility
judgments, checked against each other and against the upstream ``corpus.csv``.
"""
from __future__ import annotations

import re

import pandas as pd

from .plausibility_raw import (
    SN_ANNOTATED,
    SN_BEHAVIORAL,
    SN_CORPUS,
    SN_STIMULI,
    drop_blank_rows,
    int_column,
    read_csv,
    require,
    resolve,
)

SN_CONDITIONS = ("Control", "SemAnom", "Critical")
PERSPECTIVE = {0: "context", 1: "no_context"}
"""Behavioural ``Confederate`` flag -> perspective, as in Kauf et al.'s SocialN400-stats notebook."""

_TRAILING_PUNCT = ".,;:!?\"'"


def _split_target(sentence: str, position: int, where: str) -> tuple[str, str, str]:
    """``(prefix, target_word, spillover)`` with ``prefix + " " + target + spillover == sentence``.

    ``position`` is the 1-based index of the target among the whitespace-separated words; the
    target word excludes trailing punctuation, which starts the spill-over instead.
    """
    words = sentence.split(" ")
    if not 1 <= position <= len(words):
        raise ValueError(f"{where}: target word position {position} outside 1..{len(words)} in {sentence!r}")
    token = words[position - 1]
    target = token.rstrip(_TRAILING_PUNCT)
    if not target:
        raise ValueError(f"{where}: target word position {position} is punctuation in {sentence!r}")
    prefix = " ".join(words[: position - 1])
    spillover = token[len(target):] + "".join(" " + w for w in words[position:])
    return prefix, target, spillover


def _clean_question(q) -> object:
    if pd.isna(q):
        return pd.NA
    return re.sub(r"\s+", " ", str(q).replace("\\n", " ")).strip()


def socialn400_tables(source=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(stimuli, judgments)`` of SocialN400.

    ``stimuli``: one row per item x condition of ``SocialN400_stimuli.csv`` (file order), with
    the presentation list and comprehension question of ``SocialN400_stimuli_annotated.csv``
    and the proportion of "makes sense" judgments per perspective.
    ``judgments``: one row per trial of ``SocialN400_V1_Behavioral.csv`` (file order).
    """
    stim = read_csv(resolve(SN_STIMULI, source))
    require(stim, ["ItemNum", "Condition", "Sentence1_Context", "Sentence2_Main", "Target_word_position"], SN_STIMULI)
    stim = drop_blank_rows(stim, "ItemNum", SN_STIMULI)
    ann = read_csv(resolve(SN_ANNOTATED, source))
    require(ann, ["ItemNum", "Condition", "List", "Question", "Response", "Target_Position"], SN_ANNOTATED)
    ann = drop_blank_rows(ann, "ItemNum", SN_ANNOTATED)
    beh = read_csv(resolve(SN_BEHAVIORAL, source))
    require(beh, ["SubjID", "Subj", "List", "Run", "Confederate", "Question", "TrialNum", "Onset",
                   "Condition", "Tag", "ItemNum", "Response", "RT"], SN_BEHAVIORAL)

    items = int_column(stim, "ItemNum", SN_STIMULI)
    positions = int_column(stim, "Target_word_position", SN_STIMULI)
    bad = stim[~stim.Condition.isin(SN_CONDITIONS)]
    if len(bad):
        raise ValueError(f"{SN_STIMULI}: row {bad.index[0] + 2}: unknown condition {bad.Condition.iloc[0]!r}")
    keys = list(zip(items, stim.Condition))
    if len(set(keys)) != len(keys):
        raise ValueError(f"{SN_STIMULI}: duplicated item/condition {pd.Series(keys)[pd.Series(keys).duplicated()].iloc[0]}")
    contexts = stim.Sentence1_Context.str.strip()
    targets = stim.Sentence2_Main.str.strip()
    split = [_split_target(t, int(p), f"{SN_STIMULI} row {i + 2}")
             for i, (t, p) in enumerate(zip(targets, positions))]

    ann_items = int_column(ann, "ItemNum", SN_ANNOTATED)
    ann_lists = int_column(ann, "List", SN_ANNOTATED)
    ann_pos = int_column(ann, "Target_Position", SN_ANNOTATED)
    ann_by = {(i, c): (l, p, q, r) for i, c, l, p, q, r in
              zip(ann_items, ann.Condition, ann_lists, ann_pos, ann.Question, ann.Response)}
    missing = [k for k in keys if k not in ann_by]
    if missing or len(ann_by) != len(keys):
        raise ValueError(f"{SN_ANNOTATED}: item/conditions differ from {SN_STIMULI} (e.g. {missing[:1]})")
    for k, p in zip(keys, positions):
        if ann_by[k][1] != p:
            raise ValueError(f"{SN_ANNOTATED}: item {k[0]} {k[1]}: target position {ann_by[k][1]} != {p} in {SN_STIMULI}")
    answers = {"Yes": "yes", "No": "no"}
    for k in keys:
        if ann_by[k][3] not in answers:
            raise ValueError(f"{SN_ANNOTATED}: item {k[0]} {k[1]}: comprehension answer {ann_by[k][3]!r} not Yes/No")

    judgments = _socialn400_judgments(beh, {k: v[0] for k, v in ann_by.items()})
    rate = judgments.groupby(["item", "condition", "perspective"]).response.agg(["mean", "count"])

    def _rate(item, cond, persp, what):
        key = (item, cond, persp)
        return rate.loc[key, what] if key in rate.index else (float("nan") if what == "mean" else 0)

    out = pd.DataFrame({
        "item": items,
        "condition": stim.Condition,
        "context": contexts,
        "target_sentence": targets,
        "target_word": [s[1] for s in split],
        "target_word_position": positions,
        "prefix": [s[0] for s in split],
        "spillover": [s[2] for s in split],
        "list": [ann_by[k][0] for k in keys],
        "comprehension_question": [_clean_question(ann_by[k][2]) for k in keys],
        "comprehension_answer": [answers[ann_by[k][3]] for k in keys],
        "human_sense_rate_context": [float(_rate(i, c, "context", "mean")) for i, c in keys],
        "human_n_context": [int(_rate(i, c, "context", "count")) for i, c in keys],
        "human_sense_rate_no_context": [float(_rate(i, c, "no_context", "mean")) for i, c in keys],
        "human_n_no_context": [int(_rate(i, c, "no_context", "count")) for i, c in keys],
    }).astype({"item": "int64", "target_word_position": "int64", "list": "int64"})
    _check_socialn400_corpus(out, read_csv(resolve(SN_CORPUS, source)))
    return out, judgments


def _socialn400_judgments(beh: pd.DataFrame, item_list: dict[tuple[int, str], int]) -> pd.DataFrame:
    """The behavioural trials, validated against the stimulus lists."""
    name = SN_BEHAVIORAL
    for col in ("Subj", "List", "Run", "Confederate", "Question", "TrialNum", "Tag", "ItemNum", "Response"):
        int_column(beh, col, name)
    checks = [
        (beh.Confederate.isin(PERSPECTIVE), "Confederate must be 0 or 1"),
        (beh.Response.isin((0, 1)), "Response must be 0 or 1"),
        (beh.Condition.isin(SN_CONDITIONS), f"Condition must be one of {SN_CONDITIONS}"),
        (beh.Tag == beh.Condition.map({"Control": 1, "SemAnom": 2, "Critical": 3}), "Tag must code Condition (1 Control, 2 SemAnom, 3 Critical)"),
        (beh.Run == beh.List, "Run must equal List"),
        (beh.Question == 1, "Question must be 1"),
        (beh.RT.notna(), "RT is missing"),
    ]
    for ok, msg in checks:
        if not ok.all():
            i = int((~ok).to_numpy().argmax())
            raise ValueError(f"{name}: row {i + 2}: {msg}")
    for i, (item, cond, lst) in enumerate(zip(beh.ItemNum, beh.Condition, beh.List)):
        if item_list.get((int(item), cond)) != int(lst):
            raise ValueError(f"{name}: row {i + 2}: item {item} {cond} shown in list {lst}, but "
                             f"{SN_ANNOTATED} puts it in list {item_list.get((int(item), cond))}")
    return pd.DataFrame({
        "subject": beh.SubjID,
        "run": beh.Run.astype("int64"),
        "confederate": beh.Confederate.astype("int64"),
        "perspective": beh.Confederate.map(PERSPECTIVE),
        "trial": beh.TrialNum.astype("int64"),
        "onset_s": beh.Onset.astype("float64"),
        "item": beh.ItemNum.astype("int64"),
        "condition": beh.Condition,
        "response": beh.Response.astype("int64"),
        "rt_s": beh.RT.astype("float64"),
    })


def _check_socialn400_corpus(stim: pd.DataFrame, corpus: pd.DataFrame) -> None:
    require(corpus, ["item_id", "condition", "context", "prefix", "continuation", "sentence"], SN_CORPUS)
    if len(corpus) != len(stim):
        raise ValueError(f"{SN_CORPUS}: {len(corpus)} rows, expected {len(stim)}")
    ours = stim.set_index(["item", "condition"])
    for i, row in corpus.iterrows():
        key = (int(row.item_id), row.condition)
        if key not in ours.index:
            raise ValueError(f"{SN_CORPUS}: row {i + 2}: unknown item/condition {key}")
        r = ours.loc[key]
        ok = (r.context == str(row.context).strip() and r.target_sentence == str(row.sentence).strip()
              and r.prefix == row.prefix and r.target_word == str(row.continuation).rstrip(_TRAILING_PUNCT))
        if not ok:
            raise ValueError(f"{SN_CORPUS}: row {i + 2}: item {key[0]} {key[1]} disagrees with {SN_STIMULI}")
