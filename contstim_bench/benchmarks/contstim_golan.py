"""Golan et al. (2023) analyses for the reference models and for any scored model: the token-count
control (Table S2) and the most severe failures (Tables 1-3).

Report items (``id``, ``kind``, ``title``, ``caption``, ``data``) as :mod:`.contstim_report` makes
them; :func:`contstim_bench.report.paper.write_report` draws them.

- :func:`token_count_item` -- Table S2 of an experiment for models with log-probabilities and a
  token counter (the reference models' tokenizers: :func:`reference_token_counters`);
- :func:`result_token_counts` -- Table S2 for one result (a submitted model), each experiment it
  covers, with the model's own token counter (:func:`scorer_token_counter`).

Tables 1-3 of one result are on its page (:mod:`.model_report_contstim`).

Table S2 needs no human data: its pairs are the tested synthetic triplets (``synthetic_triplets``,
``selected``) and its values the models' log-probabilities and token counts.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict

import pyarrow.parquet as pq

from ..analysis.token_counts import token_count_control
from ..scoring.protocols import ContextLimited
from ..study import EXPERIMENTS, is_paper_experiment
from .contstim import DATASET

TokenCounter = Callable[[list[str]], Sequence[int]]

REFERENCE_TOKENIZERS = {
    "gpt2": "gpt2-xl", "roberta": "roberta-large", "electra": "google/electra-large-generator",
    "bert": "bert-large-cased", "xlm": "xlm-mlm-en-2048",
    "bert_has_a_mouth": "bert-large-cased", "roberta_has_a_mouth": "roberta-large",
    "electra_has_a_mouth": "google/electra-large-generator",
}
"""Reference model -> the Hugging Face tokenizer the paper's code counts its tokens with (the
word-level models, LSTM, RNN and the n-grams, have no word pieces and are not tested)."""

def selected_triplets(experiment: str, datasets_dir: str | os.PathLike | None = None):
    """The synthetic triplets of ``experiment`` that were tested on people (``selected``), as a
    DataFrame with ``m1``, ``m2``, ``N``, ``S1``, ``S2`` and the published log-probabilities."""
    from ..data.load import dataset_folder

    if not is_paper_experiment(experiment):
        raise ValueError(f"unknown experiment {experiment!r}; known: {', '.join(EXPERIMENTS)}")
    path = dataset_folder(DATASET, datasets_dir) / "synthetic_triplets" / f"{experiment}.parquet"
    frame = pq.read_table(path).to_pandas()
    return frame[frame["selected"]].reset_index(drop=True)


def reference_logprobs(experiment: str, datasets_dir: str | os.PathLike | None = None) -> dict[str, dict[str, float]]:
    """The reference models' published natural-log probabilities of the experiment's tested
    synthetic sentences (the ``sentences`` config; needs no human data), model -> {sentence:
    value}, for the models that have a value for every one of them."""
    from ..data.load import dataset_folder

    path = dataset_folder(DATASET, datasets_dir) / "sentences" / f"{experiment}.parquet"
    table = pq.read_table(path).to_pydict()
    needed = unique_sentences_of(selected_triplets(experiment, datasets_dir))
    out = {}
    for m in table:
        values = {s: v for s, v in zip(table["sentence"], table[m]) if v is not None}
        if m != "sentence" and all(s in values for s in needed):
            out[m] = {s: values[s] for s in needed}
    return out


def hf_token_counter(name_or_path: str) -> TokenCounter:
    """Token counts as the paper's code takes them: ``len(tokenizer.tokenize(sentence))`` with
    the Hugging Face tokenizer ``name_or_path`` (no special tokens).  OSError when the tokenizer
    cannot be loaded (offline and not in the Hugging Face cache)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name_or_path)
    return lambda sentences: [len(tokenizer.tokenize(s)) for s in sentences]


def _cached_offline(name: str) -> bool:
    """False when the session is offline (``$HF_HUB_OFFLINE`` or ``$CONTSTIM_OFFLINE``) and the
    Hugging Face cache has no file of tokenizer ``name`` (so loading it would only fail, slowly)."""
    if not (os.environ.get("HF_HUB_OFFLINE") or os.environ.get("CONTSTIM_OFFLINE")) or os.path.isdir(name):
        return True
    from huggingface_hub import try_to_load_from_cache

    return any(isinstance(try_to_load_from_cache(name, f), str) for f in ("tokenizer_config.json", "config.json"))


def reference_token_counters(models: Iterable[str]) -> tuple[dict[str, TokenCounter], dict[str, str]]:
    """``(counters, missing)``: a token counter for each of ``models`` that has a tokenizer in
    :data:`REFERENCE_TOKENIZERS` and can be loaded, and why each other one has none."""
    counters: dict[str, TokenCounter] = {}
    missing: dict[str, str] = {}
    loaded: dict[str, TokenCounter | str] = {}
    for m in models:
        name = REFERENCE_TOKENIZERS.get(m)
        if name is None:
            continue  # a word-level model: no word pieces, nothing to test
        if name not in loaded and not _cached_offline(name):
            loaded[name] = f"tokenizer {name} is not in the Hugging Face cache and this session is offline"
        if name not in loaded:
            try:
                loaded[name] = hf_token_counter(name)
            except (OSError, ValueError, ImportError) as exc:
                loaded[name] = f"tokenizer {name} could not be loaded ({str(exc).splitlines()[0][:160]})"
        value = loaded[name]
        if isinstance(value, str):
            missing[m] = value
        else:
            counters[m] = value
    return counters, missing


def scorer_token_counter(scorer) -> TokenCounter | None:
    """A scored model's own token count of each sentence (:class:`ContextLimited`
    ``token_lengths``: the tokens of its input, special tokens included, which adds the same
    number to both sentences of a pair); None for a model without word pieces (n-grams, RNNs)."""
    return scorer.token_lengths if isinstance(scorer, ContextLimited) else None


def token_count_item(experiment: str, logprobs: Mapping[str, Mapping[str, float]], counters: Mapping[str, TokenCounter],
                     datasets_dir: str | os.PathLike | None = None) -> dict:
    """Table S2 of ``experiment`` (report item ``TS2``, kind ``token_counts``) for the models of
    ``counters``, with ``logprobs`` model -> {sentence: natural-log probability}."""
    rows = token_count_control(selected_triplets(experiment, datasets_dir), logprobs, counters)
    return {
        "id": "TS2", "kind": "token_counts",
        "title": f"Table S2: token-count control ({experiment} experiment)",
        "caption": "For each model that splits words into tokens: the synthetic sentence pairs made to contrast it "
                   "with another such model (every tested synthetic pair for a model the design did not include); "
                   "in each, the sentence the model assigns the higher probability (accepted) and the other "
                   "(rejected), counted in the model's own tokens. Columns: pairs where the accepted sentence has "
                   "more tokens, equal counts, the rejected one more. p: two-sided binomial test (H0: pi = 0.5) of "
                   "'accepted has more' among the pairs whose counts differ; q: Benjamini-Hochberg over the models "
                   "of the table; * q < .05.",
        "data": {"experiment": experiment, "rows": [asdict(r) for r in rows]},
    }


def result_token_counts(result: dict, counter: TokenCounter | None,
                        datasets_dir: str | os.PathLike | None = None) -> tuple[list[dict], dict[str, str]]:
    """``(items, skipped)``: Table S2 of the result's model for each experiment of the paper that
    the result covers (``counter``: the model's token counter, :func:`scorer_token_counter`), and
    why each other experiment has none."""
    name = result["model"]["name"]
    items: list[dict] = []
    skipped: dict[str, str] = {}
    for experiment in result.get("experiments", {}):
        key = f"TS2/{experiment}"
        if not is_paper_experiment(experiment):
            skipped[key] = f"{experiment} is a round of the benchmark, not an experiment of the paper"
        elif counter is None:
            skipped[key] = f"{name} has no word pieces (a word-level model): its sentences all have 8 tokens"
        else:
            triplets = selected_triplets(experiment, datasets_dir)
            lacking = [s for s in unique_sentences_of(triplets) if s not in result["logprobs"]]
            if lacking:
                skipped[key] = (f"the result has no log-probability of {len(lacking)} tested synthetic sentence(s) of "
                                f"the {experiment} experiment, e.g. {lacking[0]!r}")
                continue
            item = token_count_item(experiment, {name: result["logprobs"]}, {name: counter}, datasets_dir)
            item["title"] = f"Table S2: token-count control, {name} ({experiment} experiment)"
            items.append(item)
    return items, skipped


def unique_sentences_of(triplets) -> list[str]:
    """The distinct synthetic sentences of a triplets table."""
    return list(dict.fromkeys([*triplets["S1"], *triplets["S2"]]))
