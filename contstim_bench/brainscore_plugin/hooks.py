"""What the Brain-Score Language plugin's ``benchmark.py`` calls (:mod:`.folder` writes it).

Brain-Score's subjects have no sentence log-probability task; their ``reading_times`` task
returns a text's summed surprisal in bits (``-log2 P``), one value per ``digest_text`` call.  The
plugin asks for one sentence per call, and these functions take it from there:

- :func:`sentences`: the sentences of a benchmark (``contstim.pll``, ``contstim.main`` or a
  round ``contstim.<round>``), read from the data shipped in the plugin folder;
- :func:`logprobs_from_surprisal`: bits of surprisal -> natural-log probabilities
  (``-bits * ln 2``), every bad value named by its sentence;
- :func:`evaluate_logprobs`: the contstim result of those log-probabilities through
  :func:`contstim_bench.driver.evaluate` (the one driver and analysis of ``contstim evaluate``:
  trial selection, ties, per-unit accuracy, SRCS, noise ceilings, standard errors);
- :func:`score_values`: what the Brain-Score ``Score`` of one measure carries.

The first-word convention.  ``contstim evaluate`` scores a sentence from the model's start
token: ``log P(w1 ... wn | <s>)``.  Brain-Score's ``HuggingfaceSubject`` scores every token after
the first one its tokenizer returns.  A tokenizer that adds a start token (Llama, Gemma, Mistral,
or any tokenizer set up to add one) therefore gives the same sum as the package, to float
precision; a tokenizer that adds none (GPT-2, SmolLM2 as published) leaves the first token out
and conditions the rest on it: ``log P(w2 ... wn | w1)``, a different measure (on SmolLM2,
4-12 nats a sentence lower in magnitude).  A sentence of one token then has no reading time at
all (NaN), which :func:`logprobs_from_surprisal` refuses by name.
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

MEASURES: dict[str, tuple[str, str, str]] = {
    "accuracy": ("accuracy", "accuracy_noise_ceiling", "accuracy_stderr"),
    "srcs": ("srcs", "srcs_noise_ceiling", "srcs_stderr"),
}
"""A benchmark's measure -> (its value, its noise ceiling, its standard error) in a contstim
result's condition entry."""

SUBJECT_NAME = "brain-score subject"
"""The name the evaluated subject gets in the contstim result: a model no trial targets, so every
condition is evaluated on all of its trials, as ``contstim evaluate`` does for a new model."""

LN2 = math.log(2.0)


def _folder(datasets_dir: str | os.PathLike | None) -> str | None:
    return None if datasets_dir in (None, "") else str(datasets_dir)


def sentences(benchmark: str, datasets_dir: str | os.PathLike | None) -> list[str]:
    """Every distinct sentence of ``benchmark``'s trials, in the order the pairs first show
    them (pair-id order): what the subject reads, one ``digest_text`` call each."""
    from ..harness_tasks.hooks import load_benchmark_trials, pairs_of

    out: dict[str, None] = {}
    for pair in pairs_of(load_benchmark_trials(benchmark, _folder(datasets_dir))):
        out.setdefault(pair["sentence1"])
        out.setdefault(pair["sentence2"])
    return list(out)


def logprobs_from_surprisal(surprisal_bits: Mapping[str, float]) -> dict[str, float]:
    """{sentence: natural-log probability} of ``surprisal_bits`` ({sentence: summed surprisal in
    bits, ``-log2 P``}, what a subject's ``reading_times`` task returns).  ValueError naming the
    sentence for a value that is not a finite number of bits >= 0 (NaN is what Brain-Score's
    Hugging Face subject returns for a sentence of a single token when its tokenizer adds no
    start token)."""
    out: dict[str, float] = {}
    for sentence, bits in surprisal_bits.items():
        try:
            value = float(bits)
        except (TypeError, ValueError):
            raise ValueError(f"the subject's reading time (surprisal) of {sentence!r} is {bits!r}, not a number") from None
        if not math.isfinite(value) or value < 0:
            hint = (" (a subject whose tokenizer adds no start token gives no surprisal for a sentence of one token: "
                    "give it a tokenizer that adds one, see docs/brainscore.md)") if math.isnan(value) else ""
            raise ValueError(f"the subject's reading time (surprisal) of {sentence!r} is {value!r}: expected a finite "
                             f"number of bits >= 0{hint}")
        out[sentence] = -value * LN2
    return out


def evaluate_logprobs(benchmark: str, datasets_dir: str | os.PathLike | None, logprobs: Mapping[str, float],
                      subject: str, details: Mapping | None = None) -> dict:
    """The contstim result of ``logprobs`` ({sentence: natural-log probability}) on
    ``benchmark``, through the one driver, as ``contstim evaluate`` computes it for a new model.
    The result's model spec is ``brainscore:<subject>``; ``details`` join its description.
    ValueError for a sentence of the benchmark ``logprobs`` lacks."""
    from ..driver import RunOptions, evaluate
    from ..scoring.given import GivenScores

    scorer = GivenScores(logprobs, spec=f"brainscore:{subject}", method="causal",
                         details={"source": "brain-score reading_times", **dict(details or {})})
    return evaluate(scorer, [benchmark], datasets_dir=_folder(datasets_dir), name=SUBJECT_NAME,
                    options=RunOptions(cache=False, progress=False), log=lambda msg: None)[benchmark]


def score_values(result: dict, measure: str, condition: str = "all") -> dict:
    """What the Brain-Score score of ``measure`` (``accuracy`` or ``srcs``) carries, read from one
    condition of a contstim result: ``raw`` (the measure, mean over units: participants in
    ``pll``, participant groups in ``main``), ``ceiling`` (its lower noise ceiling, what the
    score is normalised by), ``ceiling_upper``, ``error`` (its standard error across units; None
    for a single unit) and ``units``."""
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; known: {', '.join(MEASURES)}")
    (entries,) = result["experiments"].values()
    if condition not in entries:
        raise ValueError(f"no condition {condition!r} in the result; present: {', '.join(entries)}")
    entry = entries[condition]
    value, ceiling, stderr = MEASURES[measure]
    return {"raw": float(entry[value]), "ceiling": float(entry[ceiling]["lower"]),
            "ceiling_upper": float(entry[ceiling]["upper"]),
            "error": None if entry.get(stderr) is None else float(entry[stderr]),
            "units": int(entry["n_units"])}


def conditions(result: dict) -> list[str]:
    """The conditions of a contstim result, ``all`` first."""
    (entries,) = result["experiments"].values()
    return list(entries)


def measures_by_condition(result: dict) -> dict[str, dict[str, dict]]:
    """{condition: {measure: :func:`score_values`}} of every condition of ``result``."""
    return {c: {m: score_values(result, m, c) for m in MEASURES} for c in conditions(result)}


def surprisal_of(values: Sequence) -> float:
    """The one value of a ``digest_text`` answer's ``behavior`` values (a 1-element array, a
    0-d tensor inside it, ...) as a float; ValueError when it does not hold exactly one."""
    import numpy as np

    array = np.asarray(values, dtype=object).ravel()
    if array.size != 1:
        raise ValueError(f"expected one reading time per digested sentence, got {array.size}")
    return float(np.asarray(array[0], dtype=np.float64))


CEILING_TOLERANCE = 1e-9


def check_ceiling(values: dict, spec: Mapping) -> None:
    """ValueError when the noise ceiling of a run (``values``, :func:`score_values`) is not the one
    the plugin was written with (``spec``, a benchmark of ``reference.json``): its data changed
    since, and the benchmark's stated ceiling would be wrong."""
    for key in ("ceiling", "ceiling_upper"):
        if abs(values[key] - float(spec[key])) > CEILING_TOLERANCE:
            raise ValueError(f"the noise ceiling ({key}) of this run is {values[key]!r}, the plugin was written with "
                             f"{spec[key]!r}: its data changed; write the plugin again (`contstim brainscore plugin`)")


def reference_subject(benchmark: str, datasets_dir: str | os.PathLike | None,
                      name: str | None = None) -> tuple[str, dict[str, float]]:
    """A reference model's {sentence: natural-log probability} for every sentence of
    ``benchmark``, from the data: for an experiment of the paper the published scores of ``name``
    (default: the first of :data:`~contstim_bench.study.ALL_REFERENCE_MODELS` that scored them
    all: ``gpt2`` for ``main``, ``roberta`` for ``pll``), for a round the scores of ``name`` among its targeted models (default
    the first).  ``(name, logprobs)``; ValueError when that model lacks a sentence."""
    from ..data.rounds import find_round, load_round, round_name
    from ..scoring.precomputed import reference_table
    from ..study import ALL_REFERENCE_MODELS

    needed = sentences(benchmark, datasets_dir)
    folder = _folder(datasets_dir)
    if round_name(benchmark) is None:
        split = benchmark.removeprefix("contstim.")
        if name is None:  # the first reference model the experiment's stimuli were scored by
            name = next((m for m in ALL_REFERENCE_MODELS if _covers(m, folder, split, needed)), None)
            if name is None:
                raise ValueError(f"{benchmark}: no reference model of the dataset scored every sentence")
        table = reference_table(name, folder, split=split)
    else:
        refs = load_round(find_round(benchmark, folder)).reference_logprobs()
        if not refs:
            raise ValueError(f"{benchmark}: the round stores no model's log-probabilities")
        name = name or next(iter(refs))
        if name not in refs:
            raise ValueError(f"{benchmark}: no stored log-probabilities of {name!r}; stored: {', '.join(refs)}")
        table = refs[name]
    missing = [s for s in needed if s not in table or table[s] is None]
    if missing:
        raise ValueError(f"{benchmark}: {name} has no log-probability of {len(missing)} sentence(s), e.g. {missing[0]!r}")
    return name, {s: float(table[s]) for s in needed}


def _covers(model: str, folder: str | None, split: str, needed: Sequence[str]) -> bool:
    from ..scoring.precomputed import reference_table

    try:
        table = reference_table(model, folder, split=split)
    except ValueError:  # the dataset holds no values of this model
        return False
    return all(table.get(s) is not None for s in needed)
