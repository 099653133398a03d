"""The figures and tables of Kauf & Ivanova (2023) for a ``pll-properties`` result: :func:`kauf_ivanova_items`.

Report items (``id``, ``kind``, ``title``, ``caption``, ``data``, as
:func:`contstim_bench.benchmarks.contstim_report.paper_report`), drawn by
:mod:`contstim_bench.report.kauf_ivanova`:

- ``KI-F3A`` (``pll_length``): sentence length against negative score, one panel per metric
  (Figs. 3A, 7-9, 18B), x = tokens (and a second row with words);
- ``KI-F3B`` (``pll_frequency``): word log frequency against the word's score, one panel per
  metric, dots coloured by the word's number of tokens (Figs. 3B, 10-13, 18A);
- ``KI-F4`` (``pll_causal``): a masked model's metrics against a causal model's log-probabilities
  on the same sentences (Figs. 4, 14-16, 19), when a ``reference`` result of a causal model is
  given;
- ``KI-T2`` (``oov_table``): the out-of-vocabulary ratio of each result's tokenizer beside the
  paper's Table 2;
- ``KI-F2``, ``KI-F5``, ``KI-F6`` (``pll_inflation_sentence``): the score inflation of a
  multi-token word in the paper's example sentences, each token's value under each PLL metric
  (Figs. 2, 5, 6 and, for PLL-sentence-l2r, 17), for a masked model's result;
- ``KI-F2P`` (``pll_inflation_positions``): the same over every word, the mean value of a token by
  its position in the word, one panel per word length in tokens (this package's aggregate of
  Figs. 2, 5, 6, not a figure of the paper).

The panels of a causal ``reference`` lead Figs. 3A and 3B, as the GPT-2 panel of the paper.
Nothing is scored here: every number comes from the results.
"""
from __future__ import annotations

from ..analysis.pll_properties import INFLATION_EXAMPLES, inflation_by_position, least_squares_line, score_agreement
from ..scoring.spec import spec_label
from .blimp_reference import METHOD_NAMES
from .pll_properties import CAUSAL_METRIC, FORMAT, SUBTLEX

PAPER_OOV = {("EventsAdapt", "BERT"): 19.6, ("EventsAdapt", "RoBERTa"): 40.3, ("EventsAdapt", "GPT"): 40.3,
             ("LibriSpeech", "BERT"): 8.0, ("LibriSpeech", "RoBERTa"): 24.3, ("LibriSpeech", "GPT"): 24.3,
             ("Brown", "BERT"): 8.0, ("Brown", "RoBERTa"): 25.0, ("Brown", "GPT"): 25.0}
"""Table 2 (percent of word occurrences split into 2 or more tokens): (dataset, model class) ->
percent.  Their notebook gives 19.60, 40.33 (EventsAdapt), 7.98, 24.29 (LibriSpeech), 8.14, 25.10
(Brown); bert-base-cased, roberta-base and gpt2-medium tokenizers."""
STARS_NOTE = "Pearson R; *** p < .001, ** p < .01, * p < .05, n.s. otherwise (two-sided)."


def _item(id_: str, kind: str, title: str, caption: str, data) -> dict:
    return {"id": id_, "kind": kind, "title": title, "caption": caption, "data": data}


def _check(result: dict, what: str) -> None:
    if not isinstance(result, dict) or result.get("format") != FORMAT:
        got = result.get("format") if isinstance(result, dict) else type(result).__name__
        raise ValueError(f"{what} must be a {FORMAT} result (contstim evaluate --benchmark pll-properties), got {got!r}")


def model_label(result: dict) -> str:
    """A result's model as the figures name it: its name, else its spec without options."""
    model = result["model"]
    return model.get("name") or spec_label(model["spec"])


def metric_label(metric: str) -> str:
    """The paper's name of a metric (``pll`` -> PLL-original); ``logprob`` -> LL."""
    return "LL" if metric == CAUSAL_METRIC else METHOD_NAMES.get(metric, metric)


def frequency_label(source: str) -> str:
    """The x axis of Fig. 3B for a result's ``frequency_source``."""
    if source == SUBTLEX:
        return "log word frequency (ln relative frequency, SUBTLEX)"
    if source == "mapping":
        return "log word frequency (as given)"
    return f"log word frequency (ln(count + 1), {source})"


def _columns(section: dict) -> dict[str, list]:
    cols = section["columns"]
    return {c: [row[i] for row in section["rows"]] for i, c in enumerate(cols)}


def _length_panels(result: dict) -> list[dict]:
    sent = _columns(result["sentences"])
    panels = []
    for m in result["metrics"]:
        neg = [-v for v in sent[m]]
        a = result["analysis"][m]
        tokens = sent["n_tokens"] if "length_tokens" in a else None
        panels.append({"model": model_label(result), "metric": m, "label": metric_label(m), "negative_score": neg,
                       "n_words": sent["n_words"], "n_tokens": tokens,
                       "tokens": a.get("length_tokens"), "words": a["length_words"],
                       "fits": {"n_words": least_squares_line(sent["n_words"], neg),
                                "n_tokens": None if tokens is None else least_squares_line(tokens, neg)}})
    return panels


def _frequency_panels(result: dict) -> list[dict]:
    words = _columns(result["words"])
    keep = [i for i, f in enumerate(words["log_frequency"]) if f is not None]
    panels = []
    for m in result["metrics"]:
        corr = result["analysis"][m].get("frequency")
        if corr is None:
            continue
        panels.append({"model": model_label(result), "metric": m, "label": metric_label(m),
                       "template": result["benchmark"]["template"], "word": [words["word"][i] for i in keep],
                       "log_frequency": [words["log_frequency"][i] for i in keep],
                       "score": [words[m][i] for i in keep],
                       "n_tokens": [words["n_tokens"][i] for i in keep] if words["n_tokens"][0] is not None else None,
                       "correlation": corr,
                       "fit": least_squares_line([words["log_frequency"][i] for i in keep], [words[m][i] for i in keep])})
    return panels


def causal_panels(result: dict, reference: dict) -> list[dict]:
    """One panel per metric of ``result``: its scores against ``reference``'s log-probabilities on
    the sentences both scored, with :func:`~contstim_bench.analysis.pll_properties.score_agreement`."""
    ref = dict(zip(*(_columns(reference["sentences"])[c] for c in ("sentence", CAUSAL_METRIC))))
    sent = _columns(result["sentences"])
    both = [i for i, s in enumerate(sent["sentence"]) if s in ref]
    if len(both) < 3:
        raise ValueError(f"the two results share {len(both)} sentences; the correlation needs at least 3")
    x = [ref[sent["sentence"][i]] for i in both]
    panels = []
    for m in result["metrics"]:
        y = [sent[m][i] for i in both]
        panels.append({"metric": m, "label": metric_label(m), "causal": x, "score": y, **score_agreement(y, x),
                       "fit": least_squares_line(x, y)})
    return panels


def oov_rows(results: list[dict]) -> list[dict]:
    """One row per result whose model has a tokenizer: model, dataset, words, split words, percent."""
    rows = []
    for r in results:
        oov = r.get("oov")
        if oov is not None:
            rows.append({"model": model_label(r), "dataset": "EventsAdapt" + (" (subset)" if r["benchmark"].get("limit")
                                                                              else ""),
                         "n_words": oov["n_words"], "n_split": oov["n_split"], "percent": 100 * oov["ratio"]})
    return rows


def inflation_items(result: dict, label: str, template: str) -> tuple[list[dict], dict]:
    """``(items, skipped)``: Figs. 2, 5 and 6 (``KI-F2``, ``KI-F5``, ``KI-F6``: the paper's example
    sentences, each token's value under each PLL metric; PLL-sentence-l2r is its Fig. 17) from a
    masked model's ``inflation_examples``, and ``KI-F2P`` (every word, by token position and word
    length) from its ``word_tokens``; the reason for each when the result has none."""
    ids = [f"KI-{fig}" for fig, _, _ in INFLATION_EXAMPLES] + ["KI-F2P"]
    if result.get("word_tokens") is None or result.get("inflation_examples") is None:
        why = ("a causal model's result: it has no per-token PLL values" if CAUSAL_METRIC in result["metrics"]
               else "the result has no per-token values (written before they were recorded): re-run the benchmark")
        return [], dict.fromkeys(ids, why)
    items, skipped = [], {}
    labels = {m: metric_label(m) for m in result["word_tokens"]["values"]}
    for example in result["inflation_examples"]:
        n = len(example["word_tokens"])
        scores = {m: float(sum(v)) for m, v in example["values"].items()}
        items.append(_item(f"KI-{example['figure']}", "pll_inflation_sentence",
                           f"Figure {example['figure'][1:]}: score inflation of \u201c{example['word']}\u201d, {label}",
                           f"\u201c{example['sentence']}\u201d: each token's log-probability (natural log) under each "
                           f"PLL metric; shaded: the {n} token{'s' if n != 1 else ''} of \u201c{example['word']}\u201d; "
                           "dashed: the mean token score; the legend gives the sentence score (their sum). "
                           "PLL-original predicts each token of a word seeing its other tokens, so a multi-token word "
                           "scores high; PLL-word-l2r masks the word's later tokens, PLL-whole-word all of them "
                           "(the paper's Fig. 17: PLL-sentence-l2r).",
                           {**example, "labels": labels, "sentence_scores": scores,
                            "mean_token_scores": {m: scores[m] / len(example["pieces"]) for m in scores}}))
    rows = inflation_by_position(result["word_tokens"]["values"])
    if any(r["n_tokens"] > 1 for r in rows):
        items.append(_item("KI-F2P", "pll_inflation_positions",
                           f"Score inflation by token position and word length, {label}",
                           f"Every distinct word of EventsAdapt in the context {template!r}: one panel per word "
                           "length in tokens (up to 4); x: the token's position in the word; y: its mean "
                           "log-probability (natural log) over the words of that length, under each PLL metric. "
                           "PLL-original's later tokens of a word stay as probable as its first; the adjusted "
                           "metrics pay for the word's first tokens. Not a figure of the paper: Figs. 2, 5 and 6 "
                           "show single sentences; this is the same comparison over every word.",
                           {"rows": rows, "labels": labels}))
    else:
        skipped["KI-F2P"] = "no word of the result is split into two or more tokens"
    return items, skipped


def kauf_ivanova_items(result: dict, reference: dict | None = None, others: list[dict] = ()) -> dict:
    """``{"model", "items", "skipped"}``: every item above that ``result`` supports.

    ``reference``: a ``pll-properties`` result of a causal model (metric ``logprob``) for Fig. 4
    and the reference panels of Fig. 3; ``others``: more results whose tokenizers join Table 2.
    ValueError for a result of another format or a reference that is not a causal model's."""
    _check(result, "the result")
    for o in others:
        _check(o, "every other result")
    if reference is not None:
        _check(reference, "the reference")
        if reference["metrics"] != [CAUSAL_METRIC]:
            raise ValueError(f"the reference must be a causal (log-probability) model's result; "
                             f"{model_label(reference)} has the metrics {reference['metrics']}")
    items, skipped = [], {}
    label = model_label(result)
    masked = CAUSAL_METRIC not in result["metrics"]
    lead = [reference] if reference is not None and masked else []
    panels = [p for r in lead for p in _length_panels(r)] + _length_panels(result)
    items.append(_item("KI-F3A", "pll_length", f"Figure 3A: sentence length and negative (P)LL, {label}",
                       "Each dot is a sentence of EventsAdapt; x: its length in tokens (top row, as the paper; "
                       "special tokens not counted) and in words (bottom row); y: the negative score (surprisal, "
                       "natural log); line: least-squares fit. Longer sentences should be less probable (R > 0). "
                       + STARS_NOTE + (" PLL-sentence-l2r: Appendix G, Fig. 18B." if masked else ""),
                       {"panels": panels}))
    fpanels = [p for r in lead for p in _frequency_panels(r)] + _frequency_panels(result)
    template = result["benchmark"]["template"]
    if fpanels:
        items.append(_item("KI-F3B", "pll_frequency", f"Figure 3B: word frequency and word (P)LL, {label}",
                           f"Each dot is a distinct word of EventsAdapt, scored in the context {template!r} (its "
                           f"tokens' values summed); x: log word frequency ({result['benchmark']['frequency_source']}; "
                           f"{result['words']['n_with_frequency']} of {len(result['words']['rows'])} words have one); "
                           "colour: the word's number of tokens; line: least-squares fit. Frequent words should score "
                           "higher (R > 0). " + STARS_NOTE,
                           {"panels": fpanels, "template": template,
                            "frequency_label": frequency_label(result["benchmark"]["frequency_source"])}))
    else:
        skipped["KI-F3B"] = "fewer than 3 words of the result have a frequency"
    if reference is not None and masked:
        items.append(_item("KI-F4", "pll_causal", f"Figure 4: {label} against {model_label(reference)}",
                           "Each dot is a sentence of EventsAdapt scored by both models; x: the causal model's "
                           "log-probability, y: the masked model's score under each PLL metric (natural log); line: "
                           "least-squares fit. " + STARS_NOTE + " Spearman's rho beside it.",
                           {"causal_model": model_label(reference), "panels": causal_panels(result, reference)}))
    else:
        skipped["KI-F4"] = ("needs the pll-properties result of a causal model as the reference"
                            if masked else "this is a causal model's result; Fig. 4 is drawn for a masked model")
    inflation, why = inflation_items(result, label, template)
    items += inflation
    skipped.update(why)
    rows = oov_rows([result, *([reference] if reference is not None else []), *others])
    if rows:
        items.append(_item("KI-T2", "oov_table", "Table 2: out-of-vocabulary ratio",
                           "Share of word occurrences (lower-cased, letters only, repetitions counted) that the "
                           f"model's tokenizer splits into 2 or more tokens where the word is scored ({template!r}); "
                           "the paper's values below (their bert-base-cased, roberta-base and gpt2-medium tokenizers).",
                           {"rows": rows, "paper": [{"dataset": d, "model": m, "percent": v}
                                                    for (d, m), v in PAPER_OOV.items()]}))
    else:
        skipped["KI-T2"] = "no result's model has a subword tokenizer"
    return {"model": label, "items": items, "skipped": skipped}


def summary_lines(result: dict) -> list[str]:
    """One line per metric: the length and frequency correlations (for terminal summaries)."""
    _check(result, "the result")
    out = []
    for m in result["metrics"]:
        a = result["analysis"][m]
        parts = [f"{metric_label(m):<17}"]
        for key, what in (("length_tokens", "length (tokens)"), ("length_words", "length (words)"),
                          ("frequency", "frequency")):
            c = a.get(key)
            r = "-" if c is None or c["r"] is None else f"{c['r']:+.2f} {c['stars']}"
            parts.append(f"{what} R = {r:<9}")
        out.append("  ".join(parts))
    return out


def items_for_results(results: list[dict]) -> list[dict]:
    """:func:`kauf_ivanova_items` of every ``pll-properties`` result of ``results`` (other formats are
    ignored), in order: a masked model's Fig. 4 against the first causal model among them, and Table 2
    with every result's tokenizer (the page of each model shows all of them)."""
    mine = [r for r in results if isinstance(r, dict) and r.get("format") == FORMAT]
    causal = [r for r in mine if r["metrics"] == [CAUSAL_METRIC]]
    out = []
    for r in mine:
        ref = next((c for c in causal if c is not r), None) if r["metrics"] != [CAUSAL_METRIC] else None
        out.append(kauf_ivanova_items(r, reference=ref, others=[o for o in mine if o is not r and o is not ref]))
    return out


def page_items(result: dict, datasets_dir=None, seed: int = 0) -> tuple[dict, list]:
    """(headline, items) of a ``pll-properties`` result's page (``contstim report RESULT``): its
    length and frequency correlations in the index, the items of :func:`kauf_ivanova_items` (no
    causal reference: Fig. 4 needs two results) and the reason for each item it cannot show.
    ``datasets_dir`` and ``seed`` are unused (the result holds every score)."""
    from .report_items import unavailable

    section = "Kauf & Ivanova (2023): PLL metrics, sentence length and word frequency"
    made = kauf_ivanova_items(result)
    items = [{**item, "section": section} for item in made["items"]]
    items += [unavailable(id_, id_, why, section) for id_, why in made["skipped"].items()]
    headline: dict = {}
    for m in result["metrics"]:
        a = result["analysis"][m]
        for key, what in (("length_tokens", "length R"), ("frequency", "frequency R")):
            c = a.get(key)
            headline[f"{metric_label(m)} {what}"] = None if c is None else c["r"]
    return headline, items

