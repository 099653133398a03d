"""Run the Kauf et al. (2024) plausibility benchmarks on one model: :func:`run_plausibility`.

Methods:

- ``logprobs``: the model's sentence log-probabilities (any scorer: causal, masked, ...).
  Experiment 1 compares the two sentences of each pair; Experiment 2 uses conditional
  log-probabilities of the target word and sentence (:mod:`.conditional`), with the Appendix E
  similarity of the model's pattern to the human one.
- ``prompt:<template>[?query=<query type>]``: zero-shot prompting of a causal LM with a Table 2
  template framed by a query type of Appendix C.2 (default "is plausible"), or with the Word
  Comparison prompt of Appendix B (``prompt:word-comparison``, DTFit only)
  (:mod:`contstim_bench.scoring.prompting`), read out by *constrained* generation (the most
  probable allowed answer; the pair templates show every pair in both orders) and, with
  ``free_generation=True``, by *free* (greedy) generation too (Appendix C).  With
  ``prompt:sentence-judgment``, Experiment 2 is the Appendix F sensibility-judgment prompting with
  its Appendix E similarity to the human pattern; the other templates have no Experiment 2.

The result is a JSON-ready dict: Experiment 1 accuracy per subset and voice with the human
accuracy beside it, Experiment 2 metrics with their human analogue, every score that produced
them, and provenance.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from .._version import __version__
from ..provenance import provenance
from ..results.schema import validate_result
from ..scoring.spec import ModelSpec
from .base import describe_model, device_dtype
from ..scoring.protocols import PromptedJudge, require_logprobs
from ..plausibility.conditional import DEFINITION, socialn400_values
from ..plausibility.metrics import (
    CHANCE,
    answer_accuracy,
    answer_hits,
    choice_answer_hits,
    choice_hit_vector,
    choice_order_averaged_hits,
    condition_means,
    context_metrics,
    experiment1_accuracy,
    experiment1_pairs,
    pair_hit_vector,
)
from ..plausibility.similarity import pattern_similarity

FORMAT = "contstim-bench-plausibility"
FORMAT_VERSION = 1
DATASET = "plausibility"
HUMAN_NO_CONTEXT = "human_sense_rate_no_context"
HUMAN_CONTEXT = "human_sense_rate_context"
EXPERIMENT2_SKIP_PROMPT = ("Experiment 2 metrics are LogProbs metrics (Kauf et al. 2024 §4.2) and its prompting "
                           "uses the Appendix F sensibility-judgment prompts: run with `contstim plausibility --method logprobs` or "
                           "`--method prompt:sentence-judgment`")
HUMAN_COLUMNS = {"context": HUMAN_CONTEXT, "no_context": HUMAN_NO_CONTEXT}
WORD_COMPARISON_SKIP = ("Word Comparison (Kauf et al. 2024 Appendix B, Table 7) asks which word comes next: it is "
                        "defined for DTFit, whose two sentences differ in their last word only")
FREE_RULE_NOTE = ("free generation (greedy, up to {n} new tokens): accuracy over the pairs whose answers are "
                  "valid (exactly one allowed answer in the text), as Kauf et al. 2024 Appendix C")


def parse_method(method: str | None) -> tuple[str, str | None]:
    """``None``/``"logprobs"`` -> ``("logprobs", None)``; ``"prompt:<template>[?query=<query>]"``
    -> ``("prompt", canonical template name)``.  ValueError names unknown methods, templates and
    query types (:func:`method_query` gives the query)."""
    from ..scoring.prompt_templates import TEMPLATES, get_template

    if method is None or method == "logprobs":
        return "logprobs", None
    if not isinstance(method, str):
        raise TypeError(f"method must be a str, got {type(method).__name__}")
    kind, sep, template = method.partition(":")
    if kind != "prompt" or not sep:
        raise ValueError(f"unknown plausibility method {method!r}; expected 'logprobs' or 'prompt:<template>' "
                         f"with template one of {', '.join(TEMPLATES)}")
    template, _, _ = template.partition("?")
    if not template:
        raise ValueError(f"method {method!r} names no template; templates: {', '.join(TEMPLATES)}")
    return "prompt", get_template(template, method_query(method)).name


def method_query(method: str | None) -> str | None:
    """The query type of ``prompt:<template>?query=<query>`` (Kauf et al. 2024 Appendix C.2), in
    its canonical name; None when the method names none."""
    from ..scoring.prompt_templates import canonical_query

    if method is None or "?" not in method:
        return None
    options = method.partition("?")[2]
    key, sep, value = options.partition("=")
    if key != "query" or not sep or "&" in value:
        raise ValueError(f"method {method!r}: the one option of a prompt method is ?query=<query type>")
    return canonical_query(value)


def with_query(method: str | None, query: str | None) -> str | None:
    """``method`` with a query type attached (``prompt:TEMPLATE?query=QUERY``; ``contstim
    plausibility --method M --query Q``); ValueError unless ``method`` is a prompt method."""
    if query is None:
        return method
    if parse_method(method)[0] != "prompt":
        raise ValueError(f"`contstim plausibility --query {query}` frames a prompt: give `contstim plausibility "
                         f"--method prompt:TEMPLATE` (got --method {method or 'logprobs'})")
    return f"{method}?query={query}"


def spec_for(spec: ModelSpec, method: str | None) -> ModelSpec:
    """The spec that reads ``spec`` out with ``method``: itself for ``logprobs`` (or None), the
    causal model wrapped in a ``prompt:`` spec for ``prompt:<template>[?query=<query>]``."""
    if method is None:
        return spec
    kind, template = parse_method(method)
    if kind == "logprobs":
        return spec
    if spec.family == "prompt":
        raise ValueError(f"model {spec.typed!r} is already a prompt: spec; leave out the method {method!r} "
                         "(`contstim plausibility --method`) or give the plain causal model")
    return spec.as_prompt(template, method_query(method))


def check_scorer_method(scorer, method: str) -> None:
    """ValueError unless a ready ``scorer`` reads out ``method`` (a prompted judge with the same
    template and query for ``prompt:<template>``, a log-probability scorer for ``logprobs``)."""
    kind, template = parse_method(method)
    is_prompt = _is_prompt_scorer(scorer)
    query = method_query(method)
    if (kind == "prompt") != is_prompt or (is_prompt and (scorer.template.name != template or (
            query is not None and scorer.template.query != query))):
        raise ValueError(f"method {method!r} does not match the given scorer {scorer.spec!r}")


def check_limit(limit) -> None:
    """ValueError unless ``limit`` is None or a positive integer."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1):
        raise ValueError(f"limit must be a positive integer, got {limit!r}")


def limit_pairs(pairs, limit: int | None):
    """The first ``limit`` pairs of each subset and voice (all when ``limit`` is None)."""
    check_limit(limit)
    if limit is None:
        return pairs
    return pairs.groupby(["subset", "voice"], sort=False).head(int(limit)).reset_index(drop=True)


def _is_prompt_scorer(scorer) -> bool:
    return isinstance(scorer, PromptedJudge)


def _n_model_inputs(scorer) -> int:
    """Sentences (and, for a prompted judge, pairs) the model ran on, not from the cache."""
    return int(scorer.n_model_sentences + (scorer.n_model_pairs if _is_prompt_scorer(scorer) else 0))


def _scores(scorer, sentences: list[str]) -> dict[str, float]:
    """Per-sentence values: log-probabilities, or a prompted judge's sentence judgments."""
    unique = list(dict.fromkeys(sentences))
    values = scorer.judge(unique) if _is_prompt_scorer(scorer) else require_logprobs(scorer, "plausibility").score(unique)
    return dict(zip(unique, np.asarray(values, dtype=np.float64).tolist()))


def _experiment1(scorer, pairs, log) -> tuple[dict, dict]:
    """(accuracy dict, scores) of Experiment 1 for a log-prob or prompt scorer (constrained
    answers for a prompt scorer)."""
    if _is_prompt_scorer(scorer) and scorer.template.pair:
        log(f"Experiment 1: {len(pairs)} pairs x 2 orders with {scorer.spec} ...")
        ab = list(zip(pairs.sentence_plausible, pairs.sentence_implausible))
        first = scorer.choose_many(ab)
        second = scorer.choose_many([(b, a) for a, b in ab])
        hits = choice_hit_vector(pairs, first, second)
        scores = {"pair_log_odds": [
            {"pair_id": pid, "plausible_first": float(f), "plausible_second": float(s)}
            for pid, f, s in zip(pairs.pair_id, first, second)]}
        acc = experiment1_accuracy(pairs, hits, CHANCE["choice"])
        averaged = experiment1_accuracy(pairs, choice_order_averaged_hits(pairs, first, second))
        for subset, voices in acc.items():
            for voice, entry in voices.items():
                entry["accuracy_order_averaged"] = averaged[subset][voice]["accuracy"]
        return acc, scores
    rule = "judgment" if _is_prompt_scorer(scorer) and scorer.template.name == "sentence-judgment" else "higher"
    sentences = list(pairs.sentence_plausible) + list(pairs.sentence_implausible)
    log(f"Experiment 1: scoring {len(set(sentences))} sentences with {scorer.spec} ...")
    lp = _scores(scorer, sentences)
    hits = pair_hit_vector(pairs, pairs.sentence_plausible.map(lp), pairs.sentence_implausible.map(lp), rule)
    scores = {"sentence_scores": lp, "rule": rule,
              "pair_hits": {pid: bool(h) for pid, h in zip(pairs.pair_id, hits)}}
    return experiment1_accuracy(pairs, hits, CHANCE[rule]), scores


def _experiment1_free(scorer, pairs, log, max_new_tokens: int) -> tuple[dict, dict]:
    """(accuracy over valid answers, generated texts) of Experiment 1 by free generation."""
    from ..scoring.prompting import parse_answer

    template = scorer.template
    if template.pair:
        ab = list(zip(pairs.sentence_plausible, pairs.sentence_implausible))
        log(f"Experiment 1, free generation: {len(ab)} pairs x 2 orders with {scorer.spec} ...")
        texts = scorer.generate(ab + [(b, a) for a, b in ab], max_new_tokens=max_new_tokens)
        first, second = texts[:len(ab)], texts[len(ab):]
        hits, valid = choice_answer_hits([parse_answer(template, t) for t in first],
                                         [parse_answer(template, t) for t in second])
        scores = {"pair_texts": [{"pair_id": pid, "plausible_first": f, "plausible_second": t}
                                 for pid, f, t in zip(pairs.pair_id, first, second)]}
        chance = CHANCE["choice"]
    else:
        unique = list(dict.fromkeys(list(pairs.sentence_plausible) + list(pairs.sentence_implausible)))
        log(f"Experiment 1, free generation: {len(unique)} sentences with {scorer.spec} ...")
        text = dict(zip(unique, scorer.generate(unique, max_new_tokens=max_new_tokens)))
        answer = {s: parse_answer(template, t) for s, t in text.items()}
        hits, valid = answer_hits(template.name, [answer[s] for s in pairs.sentence_plausible],
                                  [answer[s] for s in pairs.sentence_implausible])
        scores = {"sentence_texts": text}
        chance = CHANCE["judgment" if template.name == "sentence-judgment" else "higher"]
    return answer_accuracy(pairs, hits, valid, chance), scores


def _similarity(values, stimuli, nc: str, cx: str) -> dict:
    """Appendix E similarity of the model's ``nc``/``cx`` values to the human sense rates."""
    return pattern_similarity(values, {"no_context": nc, "context": cx}, stimuli, HUMAN_COLUMNS)


def _human_experiment2(stimuli) -> dict:
    return {"metrics": context_metrics(stimuli, HUMAN_NO_CONTEXT, HUMAN_CONTEXT),
            "condition_means": condition_means(stimuli, HUMAN_NO_CONTEXT, HUMAN_CONTEXT)}


def _experiment2(scorer, stimuli, log) -> tuple[dict, dict]:
    log(f"Experiment 2: scoring SocialN400 ({len(stimuli)} stimuli) with {scorer.spec} ...")
    values, texts = socialn400_values(scorer, stimuli)
    levels = {}
    for level in ("word", "sentence"):
        nc, cx = f"{level}_no_context", f"{level}_context"
        levels[level] = {"metrics": context_metrics(values, nc, cx), "condition_means": condition_means(values, nc, cx),
                         "similarity": _similarity(values, stimuli, nc, cx)}
    res = {**levels, "human": _human_experiment2(stimuli), "definition": DEFINITION,
           "human_definition": "the same comparisons on the proportion of 'makes sense' judgments per item "
                               "(no_context: Confederate = 1 trials; context: Confederate = 0 trials)",
           "similarity_definition": "Kauf et al. 2024 Appendix E: min-max scaled responses, per-item Euclidean "
                                    "similarity 1 - d/sqrt(3) of the (Control, SemAnom, Critical) vectors, matched "
                                    "vs unmatched perspectives, paired t-test (word level: Table 8)"}
    rows = values.to_dict(orient="records")
    return res, {"logprobs": texts, "values": [{k: (int(v) if k == "item" else v) for k, v in r.items()} for r in rows]}


def _experiment2_prompting(scorer, stimuli, log) -> tuple[dict, dict]:
    """Appendix F: the sensibility-judgment prompts without and with the context; the answer is
    Yes when log p(Yes) > log p(No) (constrained); condition means (Figure 4) and the Appendix E
    similarity of the Yes answers to the human sense rates (Tables 9, 11)."""
    from ..scoring.prompting import PromptScorer

    cache = scorer.cache if scorer.cache is not None else False  # the judge's own cache, or none
    plain = PromptScorer(scorer.lm, "sense-judgment", chat=scorer.chat, cache=cache, progress=scorer.progress)
    withc = PromptScorer(scorer.lm, "sense-judgment-context", chat=scorer.chat, cache=cache,
                         progress=scorer.progress)
    log(f"Experiment 2 (Appendix F prompts): {len(stimuli)} stimuli x 2 with {scorer.spec} ...")
    odds_nc = plain.judge(list(stimuli.target_sentence))
    odds_cx = withc.judge_in_context(list(zip(stimuli.context, stimuli.target_sentence)))
    scorer.n_model_sentences += plain.n_model_sentences
    scorer.n_model_pairs += withc.n_model_pairs
    frame = stimuli[["item", "condition"]].reset_index(drop=True).assign(
        yes_no_context=(odds_nc > 0).astype(float), yes_context=(odds_cx > 0).astype(float))
    res = {"prompts": {"no_context": plain.template.text, "context": withc.template.text},
           "condition_means": condition_means(frame, "yes_no_context", "yes_context"),
           "similarity": _similarity(frame, stimuli, "yes_no_context", "yes_context"),
           "human": _human_experiment2(stimuli),
           "definition": "share of Yes answers (log p(Yes) > log p(No)) per condition, without and with the "
                         "context (Kauf et al. 2024 Appendix F, Figure 4); similarity as Appendix E (Table 9)"}
    rows = [{"item": int(i), "condition": c, "log_odds_no_context": float(a), "log_odds_context": float(b)}
            for i, c, a, b in zip(stimuli["item"], stimuli.condition, odds_nc, odds_cx)]
    return res, {"values": rows}


def run_plausibility(
    scorer,
    method: str | None = None,
    *,
    datasets_dir: str | os.PathLike | None = None,
    progress: bool = True,
    log=None,
    limit: int | None = None,
    free_generation: bool = False,
    max_new_tokens: int = 20,
) -> dict:
    """Evaluate ``model`` on Experiments 1 and 2 of Kauf et al. (2024); see the module doc.

    ``limit``: evaluate only the first ``limit`` pairs of each subset and voice (Experiment 1)
    and the first ``limit`` SocialN400 items (Experiment 2), for quick runs; recorded in the
    result (``benchmark.limit``).

    ``scorer``: a loaded log-probability scorer or prompted judge (:func:`contstim_bench.driver.evaluate`
    loads it; the ``method`` of a spec, ``prompt:<template>``, wraps the causal model there,
    :func:`spec_for`).  ``method`` given with a ready scorer is checked against it.
    ``free_generation``: prompting only: also read Experiment 1 out by free greedy generation of
    at most ``max_new_tokens`` tokens (``experiment1_free``; Appendix C).  Free generation is not
    cached: it runs the model every time.
    """
    from ..data.load import fingerprint, load_config

    log = log or (lambda msg: print(msg, file=sys.stderr))
    started = time.time()
    if method is not None:
        check_scorer_method(scorer, method)
    check_limit(limit)
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a positive integer, got {max_new_tokens!r}")
    if _is_prompt_scorer(scorer):
        method_name = f"prompt:{scorer.template.name}"
        if free_generation and scorer.template.word_choice:
            raise ValueError("free generation has no answer labels to parse for prompt:word-comparison (each pair's "
                             "two words are its answers): run `contstim plausibility --method prompt:word-comparison` "
                             "without --free-generation")
    else:
        method_name = "logprobs"
        if free_generation:
            raise ValueError(f"free generation reads out a prompt: give a prompt method (`contstim plausibility "
                             f"--method prompt:<template>`); {scorer.spec} is a log-probability scorer")

    ea = load_config(DATASET, "eventsadapt", split="test", datasets_dir=datasets_dir).to_pandas()
    dt = load_config(DATASET, "dtfit", split="test", datasets_dir=datasets_dir).to_pandas()
    pairs = limit_pairs(experiment1_pairs(ea, dt), limit)
    skipped: dict[str, str] = {}
    if method_name == "prompt:word-comparison":  # Appendix B: DTFit, whose pairs differ in the last word
        skipped.update({f"experiment1_{s}": WORD_COMPARISON_SKIP for s in sorted(set(pairs.subset) - {"dtfit"})})
        pairs = pairs[pairs.subset == "dtfit"].reset_index(drop=True)
    exp1, scores1 = _experiment1(scorer, pairs, log)

    result: dict = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": describe_model(scorer),
        "method": method_name,
        "benchmark": {"identifier": "plausibility", "version": "1", "dataset": DATASET, "paper": "Kauf et al. 2024 (BlackboxNLP)", "package_version": __version__,
                      "limit": limit},
        "experiment1": exp1,
    }
    if method_name != "logprobs":
        result["readout"] = {"experiment1": "constrained: the most probable allowed answer"}
        t = scorer.template
        result["prompt"] = {"template": t.name, "title": t.title, "query": t.query, "text": t.text}
    scores: dict = {"experiment1": scores1}
    if free_generation:
        result["experiment1_free"], scores["experiment1_free"] = _experiment1_free(scorer, pairs, log, max_new_tokens)
        result["readout"]["experiment1_free"] = FREE_RULE_NOTE.format(n=max_new_tokens)
    stimuli = None
    if method_name in ("logprobs", "prompt:sentence-judgment"):
        stimuli = load_config(DATASET, "socialn400", split="test", datasets_dir=datasets_dir).to_pandas()
        if limit is not None:
            stimuli = stimuli[stimuli["item"].isin(sorted(stimuli["item"].unique())[:limit])].reset_index(drop=True)
    if method_name == "logprobs":
        result["experiment2"], scores["experiment2"] = _experiment2(scorer, stimuli, log)
    elif method_name == "prompt:sentence-judgment":
        result["experiment2_prompting"], scores["experiment2_prompting"] = _experiment2_prompting(scorer, stimuli, log)
    else:
        skipped["experiment2"] = EXPERIMENT2_SKIP_PROMPT
    if skipped:
        result["skipped"] = skipped
    result["scores"] = scores
    fp = fingerprint(DATASET, datasets_dir)
    result["benchmark"]["dataset_fingerprint"] = fp
    result["provenance"] = {**provenance(fp, **device_dtype(scorer)), "elapsed_s": round(time.time() - started, 3),
                            "model_sentences_scored": _n_model_inputs(scorer)}
    validate_result(result)  # the one validator of every result the package writes
    return result


def load(datasets_dir=None) -> dict:
    """``{"experiment1": pairs (EventsAdapt + DTFit), "socialn400": stimuli}`` as DataFrames."""
    from ..data.load import load_config

    ea = load_config(DATASET, "eventsadapt", split="test", datasets_dir=datasets_dir).to_pandas()
    dt = load_config(DATASET, "dtfit", split="test", datasets_dir=datasets_dir).to_pandas()
    stimuli = load_config(DATASET, "socialn400", split="test", datasets_dir=datasets_dir).to_pandas()
    return {"experiment1": experiment1_pairs(ea, dt), "socialn400": stimuli}


def sentences(datasets_dir=None) -> list[str]:
    """The distinct sentences of Experiment 1 (the texts of Experiment 2 are built per item)."""
    pairs = load(datasets_dir)["experiment1"]
    return list(dict.fromkeys(list(pairs.sentence_plausible) + list(pairs.sentence_implausible)))


def evaluate(scorer, *, datasets_dir=None, log=None, **options) -> dict:
    """:func:`run_plausibility` for the benchmark registry (options: ``limit``, ``progress``,
    ``free_generation``, ``max_new_tokens``; the driver applies ``method`` with :func:`spec_for`)."""
    return run_plausibility(scorer, datasets_dir=datasets_dir, log=log, **options)
