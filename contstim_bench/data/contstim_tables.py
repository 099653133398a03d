"""The non-trial tables of the ``contstim`` dataset, built from already-read raw objects.

Every function takes parsed raw data (data frames, lists, arrays) and returns a
:class:`pyarrow.Table` with an explicit schema and a deterministic row order, so the dataset
builder stays a thin sequence of "resolve, read, convert".  All log-probabilities are natural
logarithms, as in the upstream files.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from ..study import ALL_REFERENCE_MODELS


def _sentence_schema() -> pa.Schema:
    return pa.schema([("sentence", pa.string())] + [(m, pa.float64()) for m in ALL_REFERENCE_MODELS])


def sentences_from_probs_dict(probs: Mapping) -> pa.Table:
    """``sentences`` rows from ``contstim_stim_probs_dict.pkl`` ({model: {sentence: log-prob}}).

    One row per sentence scored by any model (sorted), one float64 column per reference model
    (null where the model did not score it).  Keys may be ``np.str_``; values numpy floats.
    ``-inf`` (probability 0 in float precision; XLM gives it to 3 sentences) is kept as published;
    ValueError names an unknown model, a NaN or a ``+inf``.
    """
    table: dict[str, dict[str, float]] = {}
    for model, per_sentence in probs.items():
        model = str(model)
        if model not in ALL_REFERENCE_MODELS:
            raise ValueError(f"contstim_stim_probs_dict.pkl: unknown model {model!r}")
        for sent, lp in per_sentence.items():
            val = float(lp)
            if np.isnan(val) or val == np.inf:
                raise ValueError(f"contstim_stim_probs_dict.pkl: {model} log-prob of {str(sent)!r} is {val}")
            table.setdefault(str(sent), {})[model] = val
    return _sentence_table(table)


def sentences_from_trial_columns(raw: pd.DataFrame, models: Sequence[str], source_name: str) -> pa.Table:
    """``sentences`` rows from the per-trial ``sentence{1,2}_<model>_prob`` columns of a raw export.

    Each unique sentence must carry the same value in every row and position; otherwise
    ValueError names the sentence, the model and the differing values.
    """
    table: dict[str, dict[str, float]] = {}
    for k in (1, 2):
        for model in models:
            col = f"sentence{k}_{model}_prob"
            if col not in raw.columns:
                raise ValueError(f"{source_name}: missing column {col!r}")
        for rec in raw[[f"sentence{k}"] + [f"sentence{k}_{m}_prob" for m in models]].itertuples(index=False):
            sent, values = rec[0], rec[1:]
            row = table.setdefault(sent, {})
            for model, val in zip(models, values):
                val = float(val)
                if np.isnan(val) or val == np.inf:
                    raise ValueError(f"{source_name}: {model} log-prob of {sent!r} is {val}")
                if model in row and row[model] != val:
                    raise ValueError(
                        f"{source_name}: sentence {sent!r} has two {model} log-probabilities "
                        f"({row[model]!r} and {val!r})"
                    )
                row[model] = val
    return _sentence_table(table)


def add_sentence_columns(base: pa.Table, extra: pa.Table, models: Sequence[str], source_name: str) -> pa.Table:
    """``base`` with the ``models`` columns filled from ``extra`` (both ``sentences`` tables).

    Every sentence of ``extra`` must be in ``base``; a value ``base`` already has must agree.
    ValueError names the sentence otherwise.
    """
    rows = {r["sentence"]: dict(r) for r in base.to_pylist()}
    for r in extra.to_pylist():
        row = rows.get(r["sentence"])
        if row is None:
            raise ValueError(f"{source_name}: sentence {r['sentence']!r} is not among the experiment's sentences")
        for m in models:
            if r[m] is None:
                continue
            if row[m] is not None and row[m] != r[m]:
                raise ValueError(f"{source_name}: sentence {r['sentence']!r} has two {m} log-probabilities "
                                 f"({row[m]!r} and {r[m]!r})")
            row[m] = r[m]
    return _sentence_table({s: {m: v for m, v in row.items() if m != "sentence" and v is not None}
                            for s, row in rows.items()})


def _sentence_table(table: dict[str, dict[str, float]]) -> pa.Table:
    sentences = sorted(table)
    cols = {"sentence": sentences}
    for m in ALL_REFERENCE_MODELS:
        cols[m] = [table[s].get(m) for s in sentences]
    return pa.Table.from_pydict(cols, schema=_sentence_schema())


NATURAL_PAIR_COLUMNS = (
    "pair_index",
    "pair_id",
    "sentence1",
    "sentence2",
    "model_1",
    "model_2",
    "s1_ranked_log_prob_model_1",
    "s1_ranked_log_prob_model_2",
    "s2_ranked_log_prob_model_1",
    "s2_ranked_log_prob_model_2",
    "sentence1_accept_model",
    "sentence1_reject_model",
    "sentence2_accept_model",
    "sentence2_reject_model",
)


def natural_pairs_table(nc: pd.DataFrame, pair_id_fn) -> pa.Table:
    """``natural_controversial_pairs`` from ``sents_reddit_natural_June2021_selected.csv``.

    ``sentence1`` is accepted by ``model_2`` and rejected by ``model_1`` (its rank under model_1
    is low, under model_2 high); ``sentence2`` the reverse.  ValueError when the published ranks
    contradict that reading for some row.
    """
    need = ["sentence1", "sentence2", "model_1", "model_2"] + list(NATURAL_PAIR_COLUMNS[6:10])
    missing = [c for c in need if c not in nc.columns]
    if missing:
        raise ValueError(f"natural controversial pairs: missing columns {missing}")
    index_col = nc.columns[0] if nc.columns[0] in ("", "Unnamed: 0") else None
    bad = nc[
        (nc.s1_ranked_log_prob_model_2 <= nc.s1_ranked_log_prob_model_1)
        | (nc.s2_ranked_log_prob_model_1 <= nc.s2_ranked_log_prob_model_2)
    ]
    if len(bad):
        raise ValueError(f"natural controversial pairs: rows {list(bad.index[:5])} are not controversial as coded")
    df = pd.DataFrame(
        {
            "pair_index": nc[index_col].astype("int64") if index_col else np.arange(len(nc), dtype="int64"),
            "pair_id": [pair_id_fn(a, b) for a, b in zip(nc.sentence1, nc.sentence2)],
            "sentence1": nc.sentence1.astype(str),
            "sentence2": nc.sentence2.astype(str),
            "model_1": nc.model_1.astype(str),
            "model_2": nc.model_2.astype(str),
            **{c: nc[c].astype("float64") for c in NATURAL_PAIR_COLUMNS[6:10]},
            "sentence1_accept_model": nc.model_2.astype(str),
            "sentence1_reject_model": nc.model_1.astype(str),
            "sentence2_accept_model": nc.model_1.astype(str),
            "sentence2_reject_model": nc.model_2.astype(str),
        }
    )
    schema = pa.schema(
        [(c, pa.int64() if c == "pair_index" else pa.float64() if "ranked" in c else pa.string()) for c in NATURAL_PAIR_COLUMNS]
    )
    return pa.Table.from_pandas(df, schema=schema, preserve_index=False)


TRIPLET_KEY = ("m1", "m2", "N_idx", "N", "S1", "S2")
TRIPLET_STRING_COLUMNS = ("m1", "m2", "N", "S1", "S2")
TRIPLET_INT_COLUMNS = ("N_idx", "p_N_given_m1_decile", "p_N_given_m2_decile")


def triplets_table(candidates: pd.DataFrame, selected: pd.DataFrame, name: str) -> pa.Table:
    """``synthetic_triplets`` rows: every candidate triplet with the published columns, in file
    order, plus ``selected`` (True for the triplets of the ``best`` file, matched on
    ``m1, m2, N_idx, N, S1, S2``).  ValueError if a selected triplet is not among the candidates
    or the published ``selected_for_human_testing`` flag disagrees.
    """
    missing = [c for c in TRIPLET_KEY if c not in candidates.columns or c not in selected.columns]
    if missing:
        raise ValueError(f"{name}: triplet files lack key columns {missing}")
    keys = set(map(tuple, selected[list(TRIPLET_KEY)].itertuples(index=False, name=None)))
    cand_keys = list(map(tuple, candidates[list(TRIPLET_KEY)].itertuples(index=False, name=None)))
    flag = np.array([k in keys for k in cand_keys], dtype=bool)
    if int(flag.sum()) != len(keys):
        raise ValueError(f"{name}: {len(keys) - int(flag.sum())} selected triplets are not among the candidates")
    if "selected_for_human_testing" in candidates.columns:
        published = candidates["selected_for_human_testing"].astype(bool).to_numpy()
        if (published != flag).any():
            raise ValueError(f"{name}: selected_for_human_testing disagrees with the best-triplet file")
    fields = []
    cols = {}
    for c in candidates.columns:
        if c in TRIPLET_STRING_COLUMNS:
            fields.append((c, pa.string()))
            cols[c] = candidates[c].astype(str).tolist()
        elif c in TRIPLET_INT_COLUMNS:
            fields.append((c, pa.int64()))
            cols[c] = candidates[c].astype("int64").tolist()
        elif c == "selected_for_human_testing":
            fields.append((c, pa.bool_()))
            cols[c] = candidates[c].astype(bool).tolist()
        else:
            fields.append((c, pa.float64()))
            cols[c] = candidates[c].astype("float64").tolist()
    fields.append(("selected", pa.bool_()))
    cols["selected"] = flag.tolist()
    return pa.Table.from_pydict(cols, schema=pa.schema(fields))


def vocabulary_table(low: Sequence[str], low_freqs, cap: Sequence[str], cap_freqs) -> pa.Table:
    """``vocabulary``: the ``vocab_low`` entries then the ``vocab_cap`` entries, in file order,
    with their frequencies and a ``capitalized`` flag (True for ``vocab_cap`` entries, the
    vocabulary of a sentence's first word; ``vocab_low`` serves the other positions).
    ValueError when a word list and its frequency array differ in length."""
    words, freqs, caps = [], [], []
    for lst, fr, is_cap, nm in ((low, low_freqs, False, "vocab_low"), (cap, cap_freqs, True, "vocab_cap")):
        fr = np.asarray(fr, dtype="float64").ravel()
        if len(lst) != len(fr):
            raise ValueError(f"{nm}.pkl has {len(lst)} words but {nm}_freqs.pkl {len(fr)} frequencies")
        words += [str(w) for w in lst]
        freqs += fr.tolist()
        caps += [is_cap] * len(lst)
    schema = pa.schema([("word", pa.string()), ("frequency", pa.float64()), ("capitalized", pa.bool_())])
    return pa.Table.from_pydict({"word": words, "frequency": freqs, "capitalized": caps}, schema=schema)


def function_words_table(words: Sequence[str]) -> pa.Table:
    """``function_words``: the words of ``preps.pkl`` that synthesis allows to repeat, in order."""
    if len(set(words)) != len(words):
        raise ValueError("preps.pkl: repeated function word")
    schema = pa.schema([("index", pa.int64()), ("word", pa.string())])
    return pa.Table.from_pydict({"index": list(range(len(words))), "word": [str(w) for w in words]}, schema=schema)


def read_lines(text: str, name: str) -> list[str]:
    """Lines of a sentence corpus (a last line without newline counts); ValueError on empty lines."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [ln.rstrip("\r") for ln in lines]
    empty = [i + 1 for i, ln in enumerate(lines) if not ln.strip()]
    if empty:
        raise ValueError(f"{name}: empty line(s) {empty[:5]}")
    return lines


def pool_table(
    lines: Sequence[str],
    models: Sequence[str],
    log_probs: Mapping[str, np.ndarray] | None = None,
    name: str = "pool",
) -> pa.Table:
    """``natural_pool`` rows: ``line`` (0-based line number), ``sentence`` and one float64 column
    per model, filled from ``log_probs`` joined by line number (null when ``log_probs`` is None).
    Each array must have one value per line and every model must be given: ValueError names the
    model and the lengths."""
    fields = [("line", pa.int64()), ("sentence", pa.string())]
    cols: dict[str, list] = {"line": list(range(len(lines))), "sentence": list(lines)}
    if log_probs is not None:
        unknown = sorted(set(log_probs) - set(models))
        if unknown:
            raise ValueError(f"{name}: log-probabilities of unknown models {unknown}")
    for model in models:
        fields.append((model, pa.float64()))
        if log_probs is None:
            cols[model] = [None] * len(lines)
            continue
        if model not in log_probs:
            raise ValueError(f"{name}: no log-probabilities for model {model!r}")
        arr = np.asarray(log_probs[model], dtype="float64").ravel()
        if len(arr) != len(lines):
            raise ValueError(f"{name}: {model} log-probabilities have {len(arr)} values for {len(lines)} lines")
        cols[model] = arr.tolist()
    return pa.Table.from_pydict(cols, schema=pa.schema(fields))
