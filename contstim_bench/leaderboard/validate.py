"""Validate submitted result files: nothing in them is executed, every number is recomputed.

A submission is plain JSON, read with :func:`contstim_bench.results.io.parse_json` (size, depth
and duplicate-key limits; no pickle, no eval, no model is loaded).  :func:`check_result`
checks, in order:

1. the structure, with the package's one validator
   (:func:`contstim_bench.results.schema.result_problems`: a known format and version of the
   contstim benchmark, types, ranges, consistency);
2. the log-probabilities (natural log, one per sentence): every sentence of every evaluated
   experiment present, each a finite real number at most 0, and no sentence outside the benchmark;
3. the benchmark: dataset name, dataset fingerprint known (:mod:`.known`), and the dataset on
   this machine is the benchmark's (experiment fingerprints match the registry); for a round of
   the benchmark (``contstim.<round>``), the round is in the datasets folder and its fingerprint
   is the result's;
4. the names of the reference models (:data:`contstim_bench.study.ALL_REFERENCE_MODELS`: gpt2,
   roberta, ...) are reserved: only a result of the spec ``precomputed:<that name>`` may use one,
   and it must carry that model's own log-probabilities (otherwise it would be scored on the trials
   that target the reference model, or pass for the paper's model); a model named like a reference
   model of a round must likewise carry that model's own log-probabilities;
5. every score, recomputed with :func:`contstim_bench.benchmarks.contstim.recompute_sections` (one
   analysis gives the ``experiments`` and the ``panels`` sections) from the submitted
   log-probabilities and the local dataset, matches the submitted one within ``TOLERANCE`` (absolute), with the same keys,
   strings and booleans.

A step runs only when the earlier ones found nothing (a malformed file is not analysed).

:func:`validate_files` adds the duplicate check: no two results (among the files validated
together and those already in a results folder) of the same model, by the identity of
:mod:`.identity` (the weights' content fingerprint, the scorer settings and ``model.revision``),
that cover the same experiment or round (one model has one file per benchmark: the paper's
experiments and each round).

**Verification** (:mod:`.verification`: ``verify``, run by ``validate_and_rescore`` by default).  A file that
passes every check above is *valid*; it is *verified* only when its ``model.spec`` (which pins
the revision when it has one) was loaded here and re-scored every sentence to within
``RESCORE_TOLERANCE`` nats of the submitted log-probabilities.  A valid file whose re-scored
log-probabilities differ is refused; a valid file that could not be re-scored (its spec cannot be
loaded here, or re-scoring was skipped) is *unverified*, with the reason: the leaderboard lists it
in a separate table and never ranks it with the verified models.  One file's failure never stops
the others.
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import names
from ..results.io import MAX_BYTES, ValidationError, load_file, parse_json
from ..results.schema import result_problems
from ..study import ALL_REFERENCE_MODELS, is_paper_experiment
from . import known

__all__ = ["MAX_BYTES", "RESCORE_TOLERANCE", "Checked", "ValidationError", "check_file", "check_result", "load_file",
           "parse_json", "validate_files", "validate_or_raise"]

TOLERANCE = 1e-9
MAX_PROBLEMS_PER_KIND = 5


@dataclass
class Checked:
    """A result that passed :func:`check_result` (or the problems of one that did not), and its
    verification: ``verified`` (re-scored from its spec and matched) and ``verification`` (what
    was done, or why the valid result is unverified)."""

    source: str
    result: dict | None
    problems: list[str] = field(default_factory=list)
    verified: bool = False
    verification: str = "unverified: not re-scored from its model spec"

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def key(self) -> tuple[str, str] | None:
        return model_key(self.result) if self.result is not None else None


def model_key(result: dict) -> tuple[str, str]:
    """(model name, revision): the revision is ``model.revision`` or the scorer fingerprint."""
    model = result.get("model", {})
    revision = model.get("revision") or model.get("fingerprint") or ""
    return str(model.get("name", "")), str(revision)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# --------------------------------------------------------------------------- benchmark + log-probs


def _sample(items: Iterable[str], n: int = 3) -> str:
    items = list(items)
    head = ", ".join(repr(s) for s in items[:n])
    return head + (f" and {len(items) - n} more" if len(items) > n else "")


def check_round(result: dict, name: str, datasets_dir=None) -> list[str]:
    """Problems with a round result's benchmark: the round must be in the datasets folder, intact,
    and the result computed on it (same fingerprint and version)."""
    from ..data.rounds import RoundNotFound, find_round, load_round

    bench = result["benchmark"]
    try:
        data = load_round(find_round(name, datasets_dir))
    except (FileNotFoundError, ValueError) as exc:  # the message names local folders: not published
        why = "it is not in this leaderboard's datasets folder" if isinstance(exc, (RoundNotFound, FileNotFoundError)) \
            else "it is changed or unreadable"
        return [f"round {bench.get('identifier')} cannot be checked on this machine: {why}"]
    problems = []
    if bench["dataset_fingerprint"] != data.meta["fingerprint"]:
        problems.append(f"benchmark.dataset_fingerprint {bench['dataset_fingerprint']!r} is not the fingerprint of "
                        f"round {data.identifier} in this leaderboard's datasets folder ({data.meta['fingerprint']})")
    if bench.get("version") != data.meta["version"]:
        problems.append(f"benchmark.version {bench.get('version')!r} is not the version of round {data.identifier} "
                        f"in this leaderboard's datasets folder ({data.meta['version']!r})")
    return problems


def check_benchmark(result: dict, datasets_dir=None, dataset: str = "contstim") -> list[str]:
    """Problems with the declared benchmark (dataset, fingerprint) and the local dataset."""
    from ..results.schema import round_of

    problems = []
    bench = result["benchmark"]
    if bench["dataset"] != dataset:
        return [f"benchmark.dataset is {bench['dataset']!r}, this leaderboard is for {dataset!r}"]
    if round_of(result) is not None:
        return check_round(result, round_of(result), datasets_dir)
    accepted = known.known_dataset_fingerprints(datasets_dir, dataset)
    if bench["dataset_fingerprint"] not in accepted:
        problems.append(
            f"benchmark.dataset_fingerprint {bench['dataset_fingerprint']!r} is not a known build of the "
            f"{dataset} benchmark (known: {', '.join(accepted)})"
        )
    local = known.local_build(datasets_dir, dataset)
    for exp in result["experiments"]:
        if exp not in local["matches"]:
            problems.append(f"experiment {exp!r} is not part of the known {dataset} benchmark")
        elif not local["matches"][exp]:
            problems.append(
                f"the {dataset} dataset on this machine does not match the benchmark for experiment {exp!r} "
                f"(fingerprint {local['experiments'].get(exp)}); rebuild it with `contstim data build`"
            )
    return problems


def benchmark_sentences(experiment: str, datasets_dir=None) -> list[str]:
    """The distinct sentences of one experiment's (or round's) trials (what a result must score)."""
    from ..analysis.evaluation import unique_sentences
    from ..data.build_contstim import load_trials

    if not is_paper_experiment(experiment):
        from ..data.rounds import RoundNotFound, find_round, load_round

        try:
            return unique_sentences(load_round(find_round(experiment, datasets_dir)).trials)
        except ValueError as exc:
            raise FileNotFoundError(str(exc)) from None
    return unique_sentences(load_trials(experiment, datasets_dir))


def check_logprobs(result: dict, datasets_dir=None) -> list[str]:
    """Every benchmark sentence present and finite; no sentence outside the benchmark."""
    problems = []
    lp = result["logprobs"]
    wanted: dict[str, None] = {}
    for exp in result["experiments"]:
        try:
            wanted.update(dict.fromkeys(benchmark_sentences(exp, datasets_dir)))
        except FileNotFoundError:  # the message names local files: not published
            return [f"experiment {exp!r} cannot be checked on this machine (its human data is not available here)"]
    missing = [s for s in wanted if s not in lp]
    if missing:
        problems.append(f"logprobs lacks {len(missing)} benchmark sentence(s): {_sample(missing)}")
    bad_type = [s for s, v in lp.items() if not _is_number(v)]
    if bad_type:
        problems.append(f"logprobs has non-numeric value(s) for {_sample(bad_type)}")
    nonfinite = [s for s, v in lp.items() if _is_number(v) and not math.isfinite(v)]
    if nonfinite:
        problems.append(
            f"logprobs has NaN/infinite value(s) for {len(nonfinite)} sentence(s): "
            + ", ".join(f"{s!r}={lp[s]}" for s in nonfinite[:3])
        )
    positive = [s for s, v in lp.items() if _is_number(v) and math.isfinite(v) and v > 0]
    if positive:
        problems.append(
            f"logprobs has value(s) above 0 for {len(positive)} sentence(s) (a natural-log probability is at "
            "most 0): " + ", ".join(f"{s!r}={lp[s]}" for s in positive[:3])
        )
    extra = [s for s in lp if s not in wanted]
    if extra:
        problems.append(f"logprobs has {len(extra)} sentence(s) outside the benchmark: {_sample(extra)}")
    return problems


def is_reference_spec(spec: str, name: str) -> bool:
    """Whether ``spec`` is ``precomputed:<name>`` (options such as ``?split=`` allowed)."""
    from ..scoring.spec import parse_spec

    try:
        family, target, _ = parse_spec(spec)
    except (TypeError, ValueError):
        return False
    return family == "precomputed" and target == name


def _canonical(spec: str) -> str:
    """A spec's canonical text (short names expanded, options sorted); the text itself when it
    does not parse."""
    from ..scoring.spec import ModelSpec

    try:
        return ModelSpec.parse(spec).canonical
    except (TypeError, ValueError):
        return spec


def check_reference_name(result: dict, datasets_dir=None) -> list[str]:
    """A reference model's name is reserved: only a ``precomputed:<name>`` result may use it, and
    it must carry exactly that model's log-probabilities.

    On a benchmark round the reserved names are the models that round targeted; a result of the
    spec the round recorded for such a model (the candidate, re-evaluated) may use its name too, as
    long as its log-probabilities match the round's.

    The name checked is the one the model is shown under as well as the one it claims: a result
    named by its spec (``hf-causal:/any/roberta``) is shown by the spec's last path component
    (:func:`.identity.display_name`), and that too may not be a reserved name or look like one."""
    from .identity import display_name

    name = result["model"]["name"]
    shown = display_name(result)
    problems = _reserved_problems(result, name, None, datasets_dir)
    if shown != name and not problems:
        problems = _reserved_problems(result, shown, f"model.name {names.shown(name)}, shown as {names.shown(shown)},",
                                      datasets_dir)
    return problems


def _reserved_problems(result: dict, name: str, what: str | None, datasets_dir) -> list[str]:
    """The problems of ``name`` as a reserved name; ``what`` says which name it is (None: the
    claimed ``model.name``)."""
    from ..benchmarks.contstim import load_experiment
    from ..data.rounds import RoundNotFound, find_round, load_round

    spec = result["model"]["spec"]
    twin = names.lookalike(name, ALL_REFERENCE_MODELS)
    if twin is not None:
        subject = what or f"model.name {names.shown(name)}"
        return [f"{subject} looks like the reserved name of the paper's reference model {twin!r} "
                "(the same after Unicode normalisation, case folding, whitespace and the TR39 confusable skeleton: "
                "contstim_bench.names.name_key); submit under another name"]
    refs_by_exp: dict[str, dict] = {}
    allowed_specs: set[str] = set()
    reserved = name in ALL_REFERENCE_MODELS
    for exp in result["experiments"]:
        if is_paper_experiment(exp):
            if name in ALL_REFERENCE_MODELS:
                refs_by_exp[exp] = load_experiment(exp, datasets_dir)[1]
            continue
        data = load_round(find_round(exp, datasets_dir))
        recorded = data.model_specs()
        if name in recorded:
            reserved = True
            if recorded[name]:
                allowed_specs.add(recorded[name])
            refs_by_exp[exp] = data.reference_logprobs()
    if not reserved:
        return []
    if not (is_reference_spec(spec, name) or _canonical(spec) in {_canonical(a) for a in allowed_specs}):
        return [f"{what or 'model.name ' + repr(name)} is reserved for the reference model of the paper (spec "
                f"precomputed:{name}); a result of spec {spec!r} must be submitted under another name (NAME=SPEC)"]
    # a re-evaluated model agrees with its recorded scores up to batching noise, a copy exactly
    tol = TOLERANCE if is_reference_spec(spec, name) else RESCORE_TOLERANCE
    problems = []
    for exp, refs in refs_by_exp.items():
        if name not in refs:
            continue
        differ = [s for s, v in refs[name].items()
                  if math.isfinite(v) and not (abs(result["logprobs"].get(s, math.nan) - v) <= tol)]
        if differ:
            problems.append(
                f"{what or 'model.name ' + repr(name)} is a reference model of experiment {exp!r}, but {len(differ)} "
                f"log-probabilities differ from that model's (e.g. {_sample(differ, 1)}); submit under another name"
            )
    return problems


# --------------------------------------------------------------------------- scores


def compare_trees(submitted, recomputed, path: str, out: list[str], tol: float = TOLERANCE) -> None:
    """Append to ``out`` every difference between two JSON trees (numbers within ``tol``)."""
    if isinstance(recomputed, dict):
        if not isinstance(submitted, dict):
            out.append(f"{path}: expected an object, got {type(submitted).__name__}")
            return
        for key in recomputed:
            if key not in submitted:
                out.append(f"{path}.{key}: missing (recomputed {_short(recomputed[key])})")
        for key in submitted:
            if key not in recomputed:
                out.append(f"{path}.{key}: not a field of a recomputed result")
        for key in recomputed:
            if key in submitted:
                compare_trees(submitted[key], recomputed[key], f"{path}.{key}", out, tol)
    elif isinstance(recomputed, list):
        if not isinstance(submitted, list) or len(submitted) != len(recomputed):
            out.append(f"{path}: expected a list of {len(recomputed)}, got {_short(submitted)}")
            return
        for i, (a, b) in enumerate(zip(submitted, recomputed)):
            compare_trees(a, b, f"{path}[{i}]", out, tol)
    elif isinstance(recomputed, bool) or recomputed is None or isinstance(recomputed, str):
        if submitted != recomputed or type(submitted) is not type(recomputed):
            out.append(f"{path}: submitted {_short(submitted)}, recomputed {_short(recomputed)}")
    elif _is_number(recomputed):
        if not _is_number(submitted):
            out.append(f"{path}: submitted {_short(submitted)}, recomputed {recomputed!r}")
        elif not (math.isfinite(submitted) and abs(submitted - recomputed) <= tol):
            if not (math.isnan(submitted) and math.isnan(recomputed)):
                out.append(f"{path}: submitted {submitted!r}, recomputed {recomputed!r}")
    else:  # pragma: no cover - recompute only produces JSON types
        out.append(f"{path}: unexpected recomputed value of type {type(recomputed).__name__}")


def _short(v) -> str:
    text = json.dumps(v, allow_nan=True) if not isinstance(v, float) else repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


_RECOMPUTED: dict[str, dict] = {}
_RECOMPUTED_MAX = 16


def recomputed_sections(result: dict, datasets_dir=None) -> dict[str, dict]:
    """``{"experiments": ..., "panels": ...}`` recomputed from the log-probabilities with
    :func:`contstim_bench.benchmarks.contstim.recompute_sections` (one analysis gives both; ``panels``
    only when the result has that section), memoised on everything they depend on (model name, experiments,
    log-probabilities, dataset folder (resolved: ``datasets`` and its absolute path are one folder) and
    its experiment fingerprints), so files that share their log-probabilities are analysed once.  The
    returned dicts must not be modified."""
    import hashlib

    from ..benchmarks import contstim as contstim_benchmark
    from ..results.schema import round_of

    # the data the scores depend on: a round's fingerprint (checked by check_round), or the
    # paper's experiment fingerprints
    local = result["benchmark"]["dataset_fingerprint"] if round_of(result) else known.local_build(datasets_dir)["experiments"]
    want_panels = "panels" in result
    key_data = [
        result["model"]["name"], sorted(result["experiments"]),
        str(Path(datasets_dir).resolve()) if datasets_dir is not None else None, local,
        want_panels, result["logprobs"],
    ]
    key = hashlib.sha256(json.dumps(key_data, sort_keys=True, allow_nan=True).encode()).hexdigest()
    if key not in _RECOMPUTED:
        if len(_RECOMPUTED) >= _RECOMPUTED_MAX:
            _RECOMPUTED.pop(next(iter(_RECOMPUTED)))
        experiments, panels = contstim_benchmark.recompute_sections(result, datasets_dir)  # both in one analysis
        _RECOMPUTED[key] = {"experiments": experiments, "panels": panels} if want_panels else {"experiments": experiments}
    return _RECOMPUTED[key]


def check_scores(result: dict, datasets_dir=None) -> list[str]:
    """Differences between the submitted and the recomputed score sections (``experiments``,
    and ``panels`` when present)."""
    diffs: list[str] = []
    for section, recomputed in recomputed_sections(result, datasets_dir).items():
        compare_trees(result[section], recomputed, section, diffs)
    if len(diffs) > MAX_PROBLEMS_PER_KIND * 2:
        diffs = diffs[: MAX_PROBLEMS_PER_KIND * 2] + [f"... and {len(diffs) - MAX_PROBLEMS_PER_KIND * 2} more score differences"]
    return [f"score does not match the log-probabilities: {d}" for d in diffs]


def check_result(result: dict, source: str = "<submission>", datasets_dir=None) -> Checked:
    """Run every check of the module docstring on one parsed result; never raises for bad input."""
    problems = result_problems(result, dataset="contstim")
    if all(p.startswith("result.logprobs") for p in problems):  # the rest is sound: name the sentences
        problems = check_logprobs(result, datasets_dir) + problems
    if not problems:
        problems += check_benchmark(result, datasets_dir)
    if not problems:
        problems += check_reference_name(result, datasets_dir)
    if not problems:
        problems += check_scores(result, datasets_dir)
    return Checked(source, result, problems)


def check_file(path: str | os.PathLike, datasets_dir=None) -> Checked:
    """:func:`check_result` on a file; unreadable or malformed files become problems too."""
    try:
        result = load_file(path)
    except ValidationError as exc:
        return Checked(str(path), None, exc.problems)
    except FileNotFoundError as exc:
        return Checked(str(path), None, [str(exc)])
    return check_result(result, str(path), datasets_dir)


def result_paths(results_dir: str | os.PathLike) -> list[Path]:
    """Every ``*.json`` of a results folder, sorted by name; FileNotFoundError names a missing
    folder or one without a result file."""
    folder = Path(results_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"results folder {folder} does not exist")
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise FileNotFoundError(f"results folder {folder} has no *.json result file")
    return paths


def validate_files(
    paths: Sequence[str | os.PathLike], results_dir: str | os.PathLike | None = None, datasets_dir=None,
    duplicates: bool = True,
) -> list[Checked]:
    """Check every file (see the module docstring) and, with ``duplicates``, the duplicates among
    them and ``results_dir`` by their claimed identity (:func:`.duplicates.check_duplicates`;
    :func:`.verification.validate_and_rescore` checks them after re-scoring instead)."""
    from .duplicates import check_duplicates

    checked = [check_file(p, datasets_dir) for p in paths]
    if duplicates:
        check_duplicates(checked, results_dir)
    return checked


def validate_or_raise(path: str | os.PathLike, results_dir=None, datasets_dir=None) -> dict:
    """The parsed result of a valid file; ValidationError listing every problem otherwise."""
    [c] = validate_files([path], results_dir, datasets_dir)
    if not c.ok:
        raise ValidationError(c.source, c.problems)
    return c.result


# --------------------------------------------------------------------------- optional re-scoring

RESCORE_TOLERANCE = 1e-3
"""Default absolute tolerance (nats) when re-scoring: float32 runs of one model differ slightly
with the batch size (SmolLM2: up to 1.4e-4 nats between batch sizes; re-scoring uses the
scorer's default) and the CPU's kernels (up to about 7e-5), more across devices; 1e-3 is the
margin within which the synthetic search also treats values as equal
(:data:`contstim_bench.generate.replacement.DECISION_MARGIN`), far below what a faked score
needs to move a result."""
