"""The result file's formats, versions and the one structural validator: :func:`validate_result`.

Every benchmark writes the same envelope::

    {
      "format": <format>, "format_version": <int>,
      "model": {"spec", "spec_typed", "name", "method", "fingerprint", "dtype", "device", ...},
      "benchmark": {"dataset", "dataset_fingerprint", "package_version", ...},
      <benchmark-specific score sections>,
      "provenance": {"package_version", "git_commit", "libraries", "dataset_fingerprint",
                     "device", "dtype", "created", ...}
    }

with the score sections of its format (:data:`FORMATS`): the contstim benchmark's
``experiments``, ``panels``, ``scoring`` and ``logprobs`` (validated in full here, and recomputed
from ``logprobs`` by :mod:`contstim_bench.benchmarks.contstim`), BLiMP's ``accuracy`` and
``scores``, plausibility's ``experiment1``, ``experiment2`` and ``scores``, the Kauf & Ivanova
(2023) analyses' ``sentences``, ``words``, ``oov`` and ``analysis`` (``pll-properties``).

The contstim result in detail (``format_version`` is the schema version)::

        {
          "format": "contstim-bench-result", "format_version": 6,
          "model": {"spec", "name", "method", "fingerprint", "dtype", "device", ...},  # scorer.describe()
          "benchmark": {"dataset": "contstim", "dataset_fingerprint", "package_version"},
          "analysis": {"ties": "half"},                                  # conventions used
          "experiments": {"pll": {"synthetic_vs_synthetic": {...}, ..., "all": {...}}},
                         # each entry: scores, ceilings, p_vs_lower_ceiling, head_to_head, rank,
                         # comparisons, bh_families (contstim_bench.analysis.evaluation)
          "panels": {"pll": {"synthetic_vs_synthetic": {"models": {name: block}}, ...}},
          "skipped_experiments": {"main": "why"},                       # only when some were skipped
          # a round of the benchmark (contstim.<round>): experiments and panels keyed by the round's
          # name, benchmark.identifier "contstim.<round>", benchmark.round {name, date, ...}
          "scoring": {"n_sentences", "n_model_sentences", "n_from_cache", "seconds"},
          "logprobs": {sentence: natural-log probability},               # every scored sentence
          "provenance": {"package_version", "git_commit", "libraries", "dataset_fingerprint",
                         "device", "dtype", "created"}
        }

:func:`validate_result` checks types, required fields, value ranges (accuracy in [0, 1], SRCS in
[-1, 1], p-values in [0, 1], finite log-probabilities at most 0), that every condition key and experiment
is known, that per-unit values have ``n_units`` entries and that the dataset fingerprints agree,
and that ``model.name``, ``spec`` and ``spec_typed`` (what the leaderboard shows) hold no control or
invisible format character such as U+202E RIGHT-TO-LEFT OVERRIDE (:func:`contstim_bench.names.name_problem`).
It does not recompute scores (that needs the dataset: :mod:`contstim_bench.benchmarks`).

The files the package writes beside the results (the GLMM over plausibility results,
``contstim compare``'s ``comparison.json``) are checked by :mod:`.files`, chosen by ``format``.
"""
from __future__ import annotations

from ..analysis.accuracy import TIES
from ..analysis.selection import CONDITION_KEYS
from ..scoring.credentials import refuse_credentials
from ..names import MAX_NAME_LENGTH, MAX_TEXT_LENGTH, name_problem, shown
from ..study import EXPERIMENTS, is_paper_experiment
from .entry_checks import check_block, check_entry, check_rank_matches
from .files import FILE_FORMATS, file_problems
from .checks import Problems as _Problems, check_provenance, field as _field
from .checks import is_num as _is_num, typename as _typename

FORMAT = "contstim-bench-result"
FORMAT_VERSION = 6
"""Version 6 (``rank`` in every entry: the model's place among the models of the condition's panel, computed
when the result is made, :func:`contstim_bench.analysis.ranking.rank_in_panel`, so that no door ranks a result).
Version 5 (every head-to-head also tested by item, sentence pairs as units: ``share_items``,
``p_items``, ``p_items_bh``, ``significant_items`` and the ``head_to_head_by_item`` family in
``bh_families``).  Version 4 (``accuracy_stderr`` and ``srcs_stderr`` in every model block: the standard error
across units, :func:`contstim_bench.uncertainty.standard_error`).  Version 3 (``degenerate`` in every model block: a model whose predictions are all ties or one
presented position is never ranked).  Version 2 added head-to-head comparisons, the paper's
separate test families and ``analysis.ties``; version-1 files adjusted every p of a condition in
one family and compared models on different trial sets.  An older file is not read as the
current version: re-evaluate the model (its scores come from the score cache)."""
SUPPORTED_FORMAT_VERSIONS = (6,)
FORMATS: dict[str, dict] = {
    FORMAT: {"versions": SUPPORTED_FORMAT_VERSIONS, "dataset": "contstim",
             "sections": ("experiments", "logprobs")},
    "contstim-bench-blimp": {"versions": (1,), "dataset": "blimp", "sections": ("accuracy", "scores")},
    "contstim-bench-plausibility": {"versions": (1,), "dataset": "plausibility",
                                    "sections": ("experiment1", "scores")},
    "contstim-bench-pll-properties": {"versions": (1,), "dataset": "plausibility",
                                      "sections": ("sentences", "words", "analysis")},
}
"""Every result format the package writes: its supported versions, dataset and required score
sections.  The one list of formats (the leaderboard reads it from here)."""


MAX_PROBLEMS = 10


def _check_text_lengths(value, path: str, problems: _Problems, depth: int = 0) -> None:
    """Every string (keys included) in ``value`` at most :data:`~contstim_bench.names.MAX_TEXT_LENGTH`
    characters, so that whatever a door shows of a submission stays bounded in time and memory."""
    if isinstance(value, str):
        if len(value) > MAX_TEXT_LENGTH:
            problems.append(f"{path}: {shown(value)} is longer than the {MAX_TEXT_LENGTH} characters a shown text "
                            "may have")
    elif isinstance(value, dict) and depth < 8:
        for key, item in value.items():
            if isinstance(key, str) and len(key) > MAX_TEXT_LENGTH:
                problems.append(f"{path}: a key {shown(key)} is longer than {MAX_TEXT_LENGTH} characters")
                continue
            _check_text_lengths(item, f"{path}.{key}", problems, depth + 1)
    elif isinstance(value, list) and depth < 8:
        for i, item in enumerate(value[:1000]):
            _check_text_lengths(item, f"{path}[{i}]", problems, depth + 1)


def result_problems(result, dataset: str | None = None) -> list[str]:
    """Every structural problem of a result (empty: valid), each ``path: message``.

    The envelope is checked for every format of :data:`FORMATS`; the contstim format's score
    sections in full (see the module docstring).  ``dataset``: the dataset the result must be
    about (a leaderboard's).  TypeError when ``result`` is not a dict.
    """
    if not isinstance(result, dict):
        raise TypeError(f"a result must be a dict (parsed JSON object), got {_typename(result)}")
    problems = _Problems()
    fmt = _field(result, "format", str, "result", problems)
    if fmt in FILE_FORMATS:  # a file the package writes beside the results (GLMM, comparison)
        if dataset is not None:
            problems.append(f"result.format: {fmt!r} is not a result of the {dataset} benchmark (a file the package "
                            "writes beside the results)")
        else:
            file_problems(result, fmt, problems)
        return list(problems)
    spec = FORMATS.get(fmt) if fmt is not None else None
    if fmt is not None:
        problems.check(spec is not None, "result.format", f"{fmt!r} is not a known result format "
                       f"(known: {', '.join([*FORMATS, *FILE_FORMATS])})")
        if spec is not None and dataset is not None:
            problems.check(spec["dataset"] == dataset, "result.format", f"{fmt!r} is not a result of the "
                           f"{dataset} benchmark")
    version = _field(result, "format_version", "int", "result", problems)
    if version is not None and spec is not None:
        older = version < min(spec["versions"])
        problems.check(version in spec["versions"], "result.format_version",
                       f"{version} is not a supported version of {fmt} ({spec['versions']})"
                       + ("; the file was written by an earlier version of the package: evaluate the model again "
                          "(its scores come from the score cache)" if older else ""))
        if older:  # its missing fields follow from the version: the one problem says what to do
            return list(problems)
    contstim = fmt == FORMAT
    model = _field(result, "model", dict, "result", problems)
    model_name = None
    if model is not None:
        model_name = _field(model, "name", str, "result.model", problems, optional=not contstim)
        if model_name is not None:
            problems.check(bool(model_name.strip()), "result.model.name", "is empty")
        _field(model, "spec", str, "result.model", problems)
        _field(model, "spec_typed", str, "result.model", problems, optional=True)
        for key in ("name", "spec", "spec_typed"):  # what the leaderboard shows as the model's name
            text = model.get(key)
            # a model named by its spec (contstim evaluate's default) is held to the spec's limit
            named_by_spec = key == "name" and text in (model.get("spec"), model.get("spec_typed"))
            limit = MAX_NAME_LENGTH if key == "name" and not named_by_spec else MAX_TEXT_LENGTH
            problem = name_problem(text, limit) if isinstance(text, str) else None
            problems.check(problem is None, f"result.model.{key}", f"{shown(text) if problem else ''} {problem}")
            if key != "name" and problem is None and isinstance(text, str):
                try:  # a submitted spec never carries a credential: it would be published
                    refuse_credentials(text)
                except ValueError as exc:
                    problems.append(f"result.model.{key}: {exc}")
        _field(model, "method", str, "result.model", problems)
        for key in ("fingerprint", "revision", "dtype", "device"):
            _field(model, key, "str?", "result.model", problems, optional=key in ("revision", "dtype", "device"))
    bench = _field(result, "benchmark", dict, "result", problems)
    fp = None
    if bench is not None:
        ds = _field(bench, "dataset", str, "result.benchmark", problems)
        if ds is not None:
            want = dataset or (spec["dataset"] if spec is not None else None)
            problems.check(want is None or ds == want, "result.benchmark.dataset", f"{ds!r} is not {want!r}")
        fp = _field(bench, "dataset_fingerprint", str, "result.benchmark", problems)
        _field(bench, "package_version", str, "result.benchmark", problems)
        for key in ("identifier", "version"):
            _field(bench, key, str, "result.benchmark", problems, optional=True)
    if contstim:
        _check_contstim_sections(result, model_name, problems)
    elif spec is not None:
        for section in spec["sections"]:
            _field(result, section, dict, "result", problems)
        if "word_tokens" in result:
            _check_word_tokens(result, problems)
        if "inflation_examples" in result:
            _check_inflation_examples(result, problems)
    check_provenance(result, "result", problems, fp)
    for section in ("model", "provenance"):  # every other string a page or table may show: bounded
        if isinstance(result.get(section), dict):
            rest = {k: v for k, v in result[section].items()  # name and specs are checked above
                    if not (section == "model" and k in ("name", "spec", "spec_typed"))}
            _check_text_lengths(rest, f"result.{section}", problems)
    return list(problems)


def validate_result(result, dataset: str | None = None) -> None:
    """:func:`result_problems`, raised: ValueError ``invalid result: <problems>`` (the first
    :data:`MAX_PROBLEMS` of them); TypeError when ``result`` is not a dict."""
    problems = result_problems(result, dataset)
    if problems:
        shown = problems[:MAX_PROBLEMS]
        more = f"; ... and {len(problems) - MAX_PROBLEMS} more" if len(problems) > MAX_PROBLEMS else ""
        raise ValueError("invalid result: " + "; ".join(shown) + more)


def round_of(result: dict) -> str | None:
    """The round name of a result on a round of the contstim benchmark (``benchmark.identifier``
    ``contstim.<round>`` with a ``benchmark.round`` block naming it), else None."""
    from ..data.rounds import round_name

    bench = result.get("benchmark")
    if not isinstance(bench, dict) or not isinstance(bench.get("round"), dict):
        return None
    name = round_name(bench.get("identifier"))
    return name if name is not None and bench["round"].get("name") == name else None


def _check_word_tokens(result: dict, problems: _Problems) -> None:
    """A pll-properties result's optional ``word_tokens``: per word of ``words``, its token strings
    (``pieces``) and, per PLL metric, one natural-log probability (finite, <= 0) per token."""
    path = "result.word_tokens"
    section = _field(result, "word_tokens", dict, "result", problems)
    words = result.get("words", {}).get("rows") if isinstance(result.get("words"), dict) else None
    if section is None or not isinstance(words, list):
        return
    pieces = _field(section, "pieces", list, path, problems)
    values = _field(section, "values", dict, path, problems)
    if pieces is None or values is None:
        return
    if not problems.check(len(pieces) == len(words), f"{path}.pieces", f"has {len(pieces)} words, words has {len(words)}"):
        return
    for metric, per_word in values.items():
        where = f"{path}.values.{metric}"
        if not problems.check(isinstance(per_word, list) and len(per_word) == len(words), where,
                              f"expected one list per word ({len(words)})"):
            continue
        for i, (got, toks) in enumerate(zip(per_word, pieces)):
            ok = (isinstance(got, list) and isinstance(toks, list) and len(got) == len(toks) > 0
                  and all(_is_num(v) and v <= 0 for v in got))
            if not problems.check(ok, f"{where}[{i}]", "expected one finite log-probability <= 0 per token of the word"):
                break


def _check_inflation_examples(result: dict, problems: _Problems) -> None:
    """A pll-properties result's optional ``inflation_examples``: per example sentence, its
    ``pieces``, the positions of its word's tokens among them, and per PLL metric one natural-log
    probability (finite, <= 0) per piece."""
    examples = _field(result, "inflation_examples", list, "result", problems)
    for i, example in enumerate(examples or []):
        path = f"result.inflation_examples[{i}]"
        if not problems.check(isinstance(example, dict), path, "expected an object"):
            continue
        pieces = _field(example, "pieces", list, path, problems)
        where = _field(example, "word_tokens", list, path, problems)
        values = _field(example, "values", dict, path, problems)
        if pieces is None or where is None or values is None:
            continue
        problems.check(bool(where) and all(isinstance(k, int) and 0 <= k < len(pieces) for k in where),
                       f"{path}.word_tokens", "expected positions among the pieces")
        for metric, got in values.items():
            problems.check(isinstance(got, list) and len(got) == len(pieces) and all(_is_num(v) and v <= 0 for v in got),
                           f"{path}.values.{metric}", "expected one finite log-probability <= 0 per piece")


def _check_contstim_sections(result: dict, model_name, problems: _Problems) -> None:
    """The score sections of the contstim format: analysis conventions, experiments, panels,
    skipped experiments, scoring, log-probabilities."""
    analysis = _field(result, "analysis", dict, "result", problems)
    if analysis is not None:
        ties = _field(analysis, "ties", str, "result.analysis", problems)
        if ties is not None:
            problems.check(ties in TIES, "result.analysis.ties", f"{ties!r} is not one of {', '.join(TIES)}")
    exps = _field(result, "experiments", dict, "result", problems)
    known = (*EXPERIMENTS, *filter(None, [round_of(result)]))
    if exps is not None:
        problems.check(bool(exps), "result.experiments", "is empty")
        problems.check(round_of(result) is None or set(exps) == {round_of(result)}, "result.experiments",
                       "a round's result holds that round only")
        for exp, conds in exps.items():
            path = f"result.experiments.{exp}"
            if not problems.check(exp in known, path, f"unknown experiment (known: {', '.join(known)})"):
                continue
            if not problems.check(isinstance(conds, dict) and bool(conds), path, "expected a non-empty object of conditions"):
                continue
            for cond, e in conds.items():
                cpath = f"{path}.{cond}"
                if not problems.check(cond in CONDITION_KEYS, cpath, f"unknown condition (known: {', '.join(CONDITION_KEYS)})"):
                    continue
                if not problems.check(isinstance(e, dict), cpath, f"expected an object, got {_typename(e)}"):
                    continue
                check_entry(e, model_name, cpath, problems)
    panels = _field(result, "panels", dict, "result", problems, optional=True)
    if panels is not None and exps is not None:
        problems.check(set(panels) == set(exps), "result.panels",
                       f"experiments {sorted(panels)} differ from those of result.experiments {sorted(exps)}")
        for exp, conds in panels.items():
            if not isinstance(conds, dict) or not isinstance(exps.get(exp), dict):
                problems.append(f"result.panels.{exp}: expected an object of conditions")
                continue
            problems.check(set(conds) == set(exps[exp]), f"result.panels.{exp}",
                           "conditions differ from those of result.experiments")
            for cond, panel in conds.items():
                ppath = f"result.panels.{exp}.{cond}"
                models = _field(panel, "models", dict, ppath, problems) if isinstance(panel, dict) else None
                if models is None:
                    problems.check(isinstance(panel, dict), ppath, "expected an object")
                    continue
                problems.check(model_name in models, f"{ppath}.models", f"lacks the evaluated model {model_name!r}")
                for m, block in models.items():
                    if problems.check(isinstance(block, dict), f"{ppath}.models.{m}", "expected an object"):
                        check_block(block, f"{ppath}.models.{m}", problems)
                entry = exps[exp].get(cond)
                if not problems and isinstance(entry, dict) and model_name in models:
                    check_rank_matches(entry, models, model_name, (analysis or {}).get("ties"), f"result.experiments.{exp}.{cond}",
                                       problems)
    skipped = _field(result, "skipped_experiments", dict, "result", problems, optional=True)
    for exp, why in (skipped or {}).items():
        problems.check(is_paper_experiment(exp) and isinstance(why, str), f"result.skipped_experiments.{exp}",
                       "expected a known experiment and a string reason")
    scoring = _field(result, "scoring", dict, "result", problems, optional=True)
    if scoring is not None:
        for key in ("n_sentences", "n_model_sentences", "n_from_cache"):
            _field(scoring, key, "int", "result.scoring", problems)
        _field(scoring, "seconds", "number", "result.scoring", problems)
    logprobs = _field(result, "logprobs", dict, "result", problems)
    if logprobs is not None:
        problems.check(bool(logprobs), "result.logprobs", "is empty")
        bad = [(s, v) for s, v in logprobs.items() if not _is_num(v)]
        if bad:
            s, v = bad[0]
            problems.append(f"result.logprobs: {len(bad)} value(s) are not finite numbers, "
                            f"e.g. sentence {s!r}: {v!r}")
        above = [(s, v) for s, v in logprobs.items() if _is_num(v) and v > 0]
        if above:
            s, v = above[0]
            problems.append(f"result.logprobs: {len(above)} value(s) are above 0 (a natural-log probability is at "
                            f"most 0), e.g. sentence {s!r}: {v!r}")
