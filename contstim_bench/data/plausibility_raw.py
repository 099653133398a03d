"""The raw files of the ``plausibility`` dataset (``carina-kauf/llm-plaus-prob``): their paths
inside the raw-source folder, and the CSV readers and checks every per-dataset reader
(:mod:`.plausibility_eventsadapt`, :mod:`.plausibility_dtfit`, :mod:`.plausibility_socialn400`)
shares.  Every file is read through :func:`contstim_bench.data.sources.resolve`.
"""
from __future__ import annotations

import io
import os
from pathlib import Path

import pandas as pd

from . import sources

ROOT = "llm-plaus-prob/datasets/"
EA_DIR = ROOT + "single_sentences/EventsAdapt/"
DT_DIR = ROOT + "single_sentences/DTFit/"
SN_DIR = ROOT + "context_plus_sentence/SocialN400/"
EA_SENTENCES = EA_DIR + "clean_EventsAdapt_SentenceSet.csv"
EA_HUMAN = EA_DIR + "clean_EventsAdapt_human_dat.csv"
EA_CORPUS = EA_DIR + "corpus.csv"
DT_SENTENCES = DT_DIR + "clean_DTFit_SentenceSet.csv"
DT_HUMAN = DT_DIR + "clean_DTFit_human_dat.csv"
DT_CORPUS = DT_DIR + "corpus.csv"
SN_STIMULI = SN_DIR + "SocialN400_stimuli.csv"
SN_CORPUS = SN_DIR + "corpus.csv"
SN_ANNOTATED = SN_DIR + "BehavioralData/SocialN400_stimuli_annotated.csv"
SN_BEHAVIORAL = SN_DIR + "BehavioralData/SocialN400_V1_Behavioral.csv"
ALL_FILES = (
    EA_SENTENCES, EA_HUMAN, EA_CORPUS, DT_SENTENCES, DT_HUMAN, DT_CORPUS,
    SN_STIMULI, SN_CORPUS, SN_ANNOTATED, SN_BEHAVIORAL,
)


def read_csv(path: str | os.PathLike, **kw) -> pd.DataFrame:
    """A raw CSV; bare-CR line endings are normalised and only empty cells count as missing."""
    text = Path(path).read_bytes().decode("utf-8-sig")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""], **kw)


def r_missing(df: pd.DataFrame, cols: list[str], name: str, numeric: bool = True) -> pd.DataFrame:
    """Turn R's ``NA`` marker into missing values in ``cols`` (numeric ones must then parse as numbers)."""
    df = df.copy()
    for col in cols:
        vals = df[col].where(df[col].astype("string") != "NA")
        if numeric:
            num = pd.to_numeric(vals, errors="coerce")
            bad = num.isna() & vals.notna()
            if bad.any():
                i = int(bad.to_numpy().argmax())
                raise ValueError(f"{name}: row {i + 2}: {col} {vals.iloc[i]!r} is neither a number nor NA")
            vals = num.astype("float64")
        df[col] = vals
    return df


def require(df: pd.DataFrame, columns: list[str], name: str) -> None:
    """ValueError naming the file (``name``) when ``df`` lacks any of ``columns``."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{name}: missing columns {missing} (found {list(df.columns)})")


def int_column(df: pd.DataFrame, col: str, name: str) -> pd.Series:
    """A column of whole numbers (read as float when the file has blank rows) as int64."""
    vals = df[col]
    if vals.isna().any() or (vals % 1 != 0).any():
        bad = df.index[vals.isna() | (vals % 1 != 0)][0]
        raise ValueError(f"{name}: row {bad + 2}: {col} {vals[bad]!r} is not a whole number")
    return vals.astype("int64")


def drop_blank_rows(df: pd.DataFrame, key: str, name: str) -> pd.DataFrame:
    """Drop trailing rows without ``key``: blank rows and the column-summary row some files end with.

    Only rows after the last keyed row may lack the key; a gap in the middle is an error.
    """
    keyed = df[key].notna()
    if keyed.all():
        return df
    last = keyed[keyed].index.max()
    if (~keyed.loc[:last]).any():
        bad = keyed.loc[:last][~keyed.loc[:last]].index[0]
        raise ValueError(f"{name}: row {bad + 2} has no {key}")
    return df.loc[:last].copy()


def resolve(rel: str, source) -> Path:
    """Local path of the raw file ``rel`` (:func:`.sources.resolve`).  The readers call it by this
    module-level name in their own module, where tests may replace it."""
    return sources.resolve(rel, source)
