"""Kauf & Ivanova (2023) §4-5 and Appendix C on their main dataset, EventsAdapt: :func:`run_pll_properties`.

For one model, on the 1,564 EventsAdapt sentences (the ``eventsadapt`` config of the
``plausibility`` dataset; the paper's 782 pairs, 5-9 words):

- every sentence's score, its length in words and in tokens (the tokens of the sentence without
  special tokens: the paper counted ``[CLS]`` and ``[SEP]`` too, a constant that changes no
  correlation);
- every distinct word's score in a neutral template (``My word is "souvenir".``, Appendix B;
  :data:`~contstim_bench.analysis.pll_properties.TEMPLATES`), its number of tokens there, and
  its log frequency;
- the out-of-vocabulary ratio of the model's tokenizer (Table 2);
- for a masked LM, ``word_tokens``: each word's tokens in the template and every PLL metric's value
  of each, and ``inflation_examples``: the same for every token of the paper's three example
  sentences (the per-token score inflation of Figs. 2, 5, 6 and 17);
- the length and frequency correlations of :mod:`contstim_bench.analysis.pll_properties`.

A masked LM (any ``hf-masked:`` spec; its own ``method`` does not matter) is read out with all
four PLL metrics: ``pll`` (PLL-original), ``pll-word-l2r``, ``pll-whole-word`` and
``pll-sentence-l2r`` (Appendix G), a word's score being the sum of its tokens' values inside the
template sentence.  Any other log-probability scorer (the causal reference of their figures) gives
one metric, ``logprob``; a word's score is then ``log p(template up to the word's end) - log
p(template up to the word)``: the chain rule for a causal LM whose tokenizer starts a token at the
word (byte-level BPE: the ``"`` before it is a token of its own), the word's own score for the
template ``none``.  The agreement of a masked model's metrics with a causal model (§5) needs both
results: :func:`contstim_bench.benchmarks.pll_properties_report.kauf_ivanova_items`.

Word frequency: the paper used Google Books 2012 unigram counts, ``ln(count + 1)``, words of
count 0 left out; those counts are not shipped.  Default here: the SUBTLEX relative frequencies
of the shared vocabulary of Golan et al. 2023 (the ``vocabulary`` config of the ``contstim``
dataset), ``ln(frequency)``, which covers 880 of the 1,204 EventsAdapt words (the rarer words are
missing from it); or a file of word counts (:func:`read_frequencies`), as the paper.
"""
from __future__ import annotations

import csv
import math
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .._version import __version__
from ..analysis.pll_properties import (INFLATION_EXAMPLES, TEMPLATES, dataset_words, fill_template, frequency_effect,
                                      length_effect, oov_ratio)
from ..provenance import provenance
from ..results.schema import validate_result
from ..scoring.protocols import PLLTokenScorer, Tokenized, require_logprobs
from ..scoring.spec import ModelSpec
from ..scoring.word_pieces import content_token_counts, span_tokens
from .base import describe_model, device_dtype, no_method

FORMAT = "contstim-bench-pll-properties"
FORMAT_VERSION = 1
DATASET = "plausibility"
CONFIG = "eventsadapt"
PLL_METRICS = ("pll", "pll-word-l2r", "pll-whole-word", "pll-sentence-l2r")
CAUSAL_METRIC = "logprob"
SUBTLEX = "subtlex"


def load(datasets_dir=None) -> pd.DataFrame:
    """The EventsAdapt sentences (one row per sentence, file order)."""
    from ..data.load import load_config

    return load_config(DATASET, CONFIG, split="test", datasets_dir=datasets_dir).to_pandas()


def sentences(datasets_dir=None) -> list[str]:
    """The EventsAdapt sentences, in file order."""
    return list(load(datasets_dir).sentence)


def spec_for(spec: ModelSpec, method: str | None) -> ModelSpec:
    """The model as given: a masked LM is read out with every PLL metric, whatever its method."""
    return no_method(spec, method, "pll-properties")


def subtlex_frequencies(datasets_dir=None) -> dict[str, float]:
    """``ln(relative frequency)`` of each lower-case word of the shared SUBTLEX vocabulary of
    Golan et al. 2023 (``contstim`` dataset, ``vocabulary`` config)."""
    from ..data.load import load_config

    table = load_config("contstim", "vocabulary", split="train", datasets_dir=datasets_dir).to_pandas()
    table = table[~table.capitalized]
    return {w: math.log(f) for w, f in zip(table.word, table.frequency) if f > 0}


def read_frequencies(path: str | os.PathLike) -> dict[str, float]:
    """``ln(count + 1)`` per word (lower-cased) of a CSV or tab-separated file with the columns
    ``word`` and ``count``, words of count 0 left out: the paper's operationalisation (with their
    Google Books counts).  ValueError names a missing column or a count that is not a number >= 0."""
    with open(path, newline="", encoding="utf-8") as fh:
        first = fh.readline()
        fh.seek(0)
        rows = list(csv.DictReader(fh, delimiter="\t" if "\t" in first else ","))
    if not rows or not {"word", "count"} <= set(rows[0]):
        raise ValueError(f"{path}: a word-frequency file needs the columns word and count")
    out = {}
    for i, row in enumerate(rows, start=2):
        try:
            count = float(row["count"])
        except (TypeError, ValueError):
            count = -1.0
        if not count >= 0 or not math.isfinite(count):
            raise ValueError(f"{path}: line {i}: count {row['count']!r} is not a number >= 0")
        if count > 0:
            out[row["word"].strip().lower()] = math.log(count + 1)
    return out


def _masked_scores(scorer, texts: list[str], spans: list[tuple[int, int]] | None,
                   tokens: dict | None = None) -> dict[str, list[float]]:
    """Per PLL metric, the sum of the tokens' values of each text (``spans``: of the word only).
    ``tokens``, when given, receives the word's own tokens (``pieces``: their strings) and each
    metric's value of each of them (``values``: natural log, in token order): the numbers of
    Kauf & Ivanova's score-inflation figures (Figs. 2, 5, 6)."""
    where = span_tokens(scorer.tokenizer, texts, spans) if spans is not None else None
    out = {}
    for metric in PLL_METRICS:
        got = scorer.pll_token_logprobs(texts, metric)
        out[metric] = [float(t.values.sum() if where is None else t.values[where[i]].sum()) for i, t in enumerate(got)]
        if tokens is not None and where is not None:
            tokens.setdefault("values", {})[metric] = [[float(v) for v in t.values[where[i]]] for i, t in enumerate(got)]
            if "pieces" not in tokens:
                tokens["pieces"] = [scorer.tokenizer.convert_ids_to_tokens([t.tokens.content_ids[k] for k in where[i]])
                                    for i, t in enumerate(got)]
    return out


def inflation_examples(scorer) -> list[dict]:
    """Each sentence of :data:`~contstim_bench.analysis.pll_properties.INFLATION_EXAMPLES` as the
    masked ``scorer`` reads it: ``figure``, ``word``, ``sentence``, ``pieces`` (its content
    tokens), ``word_tokens`` (the positions among them of the example word's tokens) and
    ``values``: per PLL metric, each token's log-probability (natural log)."""
    texts = [sentence for _, _, sentence in INFLATION_EXAMPLES]
    spans = [(t.index(word), t.index(word) + len(word)) for (_, word, _), t in zip(INFLATION_EXAMPLES, texts)]
    where = span_tokens(scorer.tokenizer, texts, spans)
    values = {metric: scorer.pll_token_logprobs(texts, metric) for metric in PLL_METRICS}
    first = values[PLL_METRICS[0]]
    return [{"figure": fig, "word": word, "sentence": text,
             "pieces": scorer.tokenizer.convert_ids_to_tokens(list(first[i].tokens.content_ids)),
             "word_tokens": list(where[i]),
             "values": {m: [float(v) for v in got[i].values] for m, got in values.items()}}
            for i, (fig, word, text) in enumerate(INFLATION_EXAMPLES)]


def _causal_word_scores(scorer, texts: list[str], spans: list[tuple[int, int]]) -> list[float]:
    """log p(word | text before it) from sentence scores (the module docstring's definition)."""
    heads = [t[:s].rstrip() for t, (s, _) in zip(texts, spans)]
    upto = [t[:e] for t, (_, e) in zip(texts, spans)]
    full = np.asarray(scorer.score(upto), dtype=np.float64)
    if not any(heads):
        return full.tolist()
    if not all(heads):
        raise ValueError("a word template either has text before the word in every case or in none")
    return (full - np.asarray(scorer.score(heads), dtype=np.float64)).tolist()


def measure(scorer, sents: Sequence[str], *, template: str = TEMPLATES["my-word-is"],
            frequencies: Mapping[str, float] | None = None, log: Callable[[str], None] = lambda m: None) -> dict:
    """The ``metrics``, ``sentences``, ``words``, ``oov`` and ``analysis`` sections of a result
    for ``scorer`` on ``sents`` (see the module docstring)."""
    sents = list(sents)
    if len(set(sents)) != len(sents):
        raise ValueError("the sentences must be distinct")
    masked = isinstance(scorer, PLLTokenScorer)
    tokenizer = scorer.tokenizer if isinstance(scorer, Tokenized) else None
    metrics = list(PLL_METRICS) if masked else [CAUSAL_METRIC]
    vocab = sorted(set(dataset_words(sents)))
    filled = [fill_template(template, w) for w in vocab]
    texts, spans = [t for t, _ in filled], [s for _, s in filled]
    log(f"pll-properties: {len(sents)} sentences, {len(vocab)} words in {template!r} with {scorer.spec} "
        f"({', '.join(metrics)}) ...")
    per_token: dict | None = {} if masked else None
    if masked:
        sent_scores, word_scores = _masked_scores(scorer, sents, None), _masked_scores(scorer, texts, spans, per_token)
    else:
        lp = require_logprobs(scorer, "pll-properties")
        sent_scores = {CAUSAL_METRIC: np.asarray(lp.score(sents), dtype=np.float64).tolist()}
        word_scores = {CAUSAL_METRIC: _causal_word_scores(lp, texts, spans)}
    n_words = [len(s.split()) for s in sents]
    n_tokens = content_token_counts(tokenizer, sents) if tokenizer is not None else None
    word_tokens = [len(t) for t in span_tokens(tokenizer, texts, spans)] if tokenizer is not None else None
    freq = [frequencies.get(w) if frequencies is not None else None for w in vocab]

    oov = None
    if tokenizer is not None:
        letters = dataset_words(sents, letters_only=True)
        oov = {**oov_ratio(letters, dict(zip(vocab, word_tokens))),
               "definition": "word occurrences (lower-cased, letters only, repetitions counted) split into 2 or "
                             "more tokens where the word is scored (the word template), over all word occurrences"}
    analysis = {}
    with_freq = [i for i, f in enumerate(freq) if f is not None]
    for m in metrics:
        s = np.asarray(sent_scores[m])
        a = {"length_words": length_effect(s, n_words)}
        if n_tokens is not None:
            a["length_tokens"] = length_effect(s, n_tokens)
        if len(with_freq) >= 3:
            a["frequency"] = frequency_effect([word_scores[m][i] for i in with_freq], [freq[i] for i in with_freq])
        analysis[m] = a
    return {
        "metrics": metrics,
        "sentences": {"columns": ["sentence", "n_words", "n_tokens", *metrics],
                      "rows": [[s, n_words[i], None if n_tokens is None else n_tokens[i],
                                *(sent_scores[m][i] for m in metrics)] for i, s in enumerate(sents)]},
        "words": {"columns": ["word", "n_tokens", "log_frequency", *metrics],
                  "rows": [[w, None if word_tokens is None else word_tokens[i], freq[i],
                            *(word_scores[m][i] for m in metrics)] for i, w in enumerate(vocab)],
                  "n_with_frequency": len(with_freq)},
        "oov": oov,
        "analysis": analysis,
        **({"word_tokens": per_token, "inflation_examples": inflation_examples(scorer)} if per_token else {}),
    }


def run_pll_properties(scorer, *, datasets_dir=None, template: str = "my-word-is",
                       frequencies: str | os.PathLike | Mapping[str, float] | None = None, limit: int | None = None,
                       progress: bool = True, log=None) -> dict:
    """The result of ``scorer`` (a loaded scorer) on EventsAdapt (module docstring), validated.

    ``template``: a name of :data:`TEMPLATES` or a text with one ``{word}``; ``frequencies``:
    None (SUBTLEX, see the module docstring), a word-count file (:func:`read_frequencies`) or a
    ``{word: log frequency}`` mapping; ``limit``: the first N sentences only (quick runs).
    ``progress`` is the scorer's own setting (accepted for the registry's common options)."""
    from ..data.load import fingerprint

    log = log or (lambda msg: print(msg, file=sys.stderr))
    started = time.time()
    text = TEMPLATES.get(template, template)
    fill_template(text, "x")  # a template without one {word} fails before any model runs
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive integer, got {limit!r}")
    if frequencies is None:
        freq, source = subtlex_frequencies(datasets_dir), SUBTLEX
    elif isinstance(frequencies, Mapping):
        freq, source = dict(frequencies), "mapping"
    else:
        freq, source = read_frequencies(frequencies), os.path.basename(os.fspath(frequencies))
    sents = sentences(datasets_dir)[:limit]
    fp = fingerprint(DATASET, datasets_dir)
    result = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": describe_model(scorer),
        "benchmark": {"identifier": "pll-properties", "version": "1", "dataset": DATASET, "config": CONFIG,
                      "dataset_fingerprint": fp, "package_version": __version__, "limit": limit,
                      "template": text, "frequency_source": source},
        **measure(scorer, sents, template=text, frequencies=freq, log=log),
        "provenance": {**provenance(fp, **device_dtype(scorer)), "elapsed_s": round(time.time() - started, 3)},
    }
    validate_result(result)
    return result


def evaluate(scorer, *, datasets_dir=None, log=None, **options) -> dict:
    """:func:`run_pll_properties` for the benchmark registry (options: ``template``,
    ``frequencies``, ``limit``, ``progress``)."""
    return run_pll_properties(scorer, datasets_dir=datasets_dir, log=log, **options)
