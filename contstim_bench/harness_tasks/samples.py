"""``contstim import lm-eval OUTPUT_DIR``: an lm-evaluation-harness run of the contstim task
group back into a contstim result file (:func:`import_run`).

lm-eval writes ``OUTPUT_DIR/<model>/results_<time>.json`` and, with ``--log_samples``,
``samples_<task>_<time>.jsonl`` beside it.  For every contstim task of the run the samples give
each sentence's log-likelihood (the two ``filtered_resps`` of a pair's document); those go through
the one driver (:func:`contstim_bench.driver.evaluate` on a
:class:`~contstim_bench.scoring.given.GivenScores`), so the result file holds the same numbers the
run reported and every section ``contstim evaluate`` writes.  The model block records the run:
``spec`` (``lm-eval:<model>?<model args>``, refused when an argument holds a credential),
``backend``, ``model_args`` and ``lm_eval`` (lm-eval version, task, task version and hash,
results and samples files, date).  A leaderboard treats such a result as any other: verified
only when its spec may be re-scored on the maintainer's machine.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

from ..results.io import MAX_BYTES, parse_json
from ..staging import read_bounded, regular_file

MAX_SAMPLES_BYTES = 512 * 1024 * 1024
"""Largest samples file read (bytes)."""


def _results_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise FileNotFoundError(f"lm-eval output folder {folder} {what}")
    found = sorted(folder.rglob("results_*.json"), key=lambda p: (p.name, str(p)))
    if not found:
        raise FileNotFoundError(f"{folder} holds no lm-eval results file (results_*.json): run lm_eval with "
                                f"--output_path {folder} --log_samples")
    return found


def _contstim_tasks(results: dict) -> dict[str, dict]:
    """Task name -> its config, for the tasks of the contstim task group in an lm-eval results JSON."""
    configs = results.get("configs")
    if not isinstance(configs, dict):
        return {}
    return {name: cfg for name, cfg in configs.items()
            if isinstance(cfg, dict) and isinstance(cfg.get("metadata"), dict)
            and isinstance(cfg["metadata"].get("contstim_benchmark"), str)}


def find_run(folder: str | os.PathLike, tasks: list[str] | None = None) -> tuple[Path, dict, dict[str, dict]]:
    """(results file, its JSON, {task: config}) of the newest lm-eval run in ``folder`` with
    contstim tasks (those named in ``tasks`` when given).  FileNotFoundError / ValueError say what
    is missing."""
    folder = Path(folder)
    candidates = []
    for path in _results_files(folder):
        data = parse_json(read_bounded(path, MAX_BYTES, "lm-eval results file"), str(path))
        found = _contstim_tasks(data)
        if tasks:
            unknown = [t for t in tasks if t not in found]
            if unknown:
                continue
            found = {t: found[t] for t in tasks}
        if found:
            candidates.append((path, data, found))
    if not candidates:
        what = f"the task(s) {', '.join(tasks)}" if tasks else "a contstim task (contstim_pll, contstim_main, ...)"
        raise ValueError(f"no lm-eval results file in {folder} has {what}")
    return candidates[-1]  # results_<time>.json: the newest run last


def samples_file(results_path: Path, task: str) -> Path:
    """``samples_<task>_<time>.jsonl`` of the run whose results file is ``results_path``."""
    stamp = results_path.stem.removeprefix("results_")
    path = results_path.with_name(f"samples_{task}_{stamp}.jsonl")
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: lm_eval ran {task} without --log_samples, whose per-sentence "
                                "log-likelihoods the import needs (run lm_eval again with --log_samples)")
    return regular_file(path, MAX_SAMPLES_BYTES, "lm-eval samples file")


def sample_logprobs(path: Path) -> dict[str, float]:
    """{sentence: log-likelihood} of one samples file.  ValueError names the line of a record that
    is not a contstim document with two finite log-likelihoods of its two sentences from an empty
    context, and a sentence given two different values."""
    regular_file(path, MAX_SAMPLES_BYTES, "lm-eval samples file")
    out: dict[str, float] = {}
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            where = f"{path} line {number}"
            record = parse_json(raw, where)
            doc, resps, args = record.get("doc"), record.get("filtered_resps"), record.get("arguments")
            if not (isinstance(doc, dict) and isinstance(doc.get("sentence1"), str) and isinstance(doc.get("sentence2"), str)):
                raise ValueError(f"{where}: not a document of a contstim task (no sentence1 and sentence2)")
            sentences = (doc["sentence1"], doc["sentence2"])
            if not (isinstance(resps, list) and len(resps) == 2):
                raise ValueError(f"{where}: expected the log-likelihoods of the pair's 2 sentences in filtered_resps")
            if isinstance(args, dict):
                asked = [a.get("arg_1") for a in args.values() if isinstance(a, dict)]
                contexts = [a.get("arg_0") for a in args.values() if isinstance(a, dict)]
                if asked != list(sentences) or any(c != "" for c in contexts):
                    raise ValueError(f"{where}: the requests were not the pair's two sentences from an empty context")
            for sentence, resp in zip(sentences, resps):
                first = resp[0] if isinstance(resp, list) and resp else resp
                try:
                    if isinstance(first, bool):  # JSON true/false is no log-likelihood (float(False) would be 0.0)
                        raise TypeError
                    value = float(first)
                except (TypeError, ValueError, IndexError):
                    raise ValueError(f"{where}: log-likelihood of {sentence!r} is not a number: {resp!r}") from None
                if not math.isfinite(value) or value > 0:
                    raise ValueError(f"{where}: log-likelihood of {sentence!r} is {value!r}, not a finite value <= 0")
                known = out.setdefault(sentence, value)
                if known != value:
                    raise ValueError(f"{where}: {sentence!r} has two log-likelihoods in the run ({known!r}, {value!r})")
    if not out:
        raise ValueError(f"{path} holds no sample")
    return out


def _model_args(config: dict) -> dict[str, str]:
    """The run's model arguments as spec options.  A nested value (lm-eval records
    ``--model_args '{"model_kwargs": {...}}'`` as a dict) is written as JSON, and a name that carries
    a credential at any depth is refused (:func:`~contstim_bench.scoring.credentials.nested_secret`)."""
    import json

    from ..scoring.credentials import ENV_HINT, nested_secret

    args = config.get("model_args")
    if isinstance(args, str):  # lm-eval's command-line form: a=1,b=2
        pairs = [a.split("=", 1) for a in args.split(",") if a]
        args = {k.strip(): v.strip() for k, v in (p if len(p) == 2 else (p[0], "") for p in pairs)}
    if not isinstance(args, dict):
        return {}
    secret = nested_secret(args)
    if secret is not None:
        raise ValueError(f"the run's model arguments hold {secret!r}, a credential that would be copied into the result "
                         f"file; {ENV_HINT}")
    return {str(k): v if isinstance(v, str) else json.dumps(v, sort_keys=True) if isinstance(v, (dict, list))
            else str(v) for k, v in args.items()}


def run_scorer(results_path: Path, results: dict, tasks: dict[str, dict]):
    """The :class:`~contstim_bench.scoring.given.GivenScores` of the run's samples (every contstim
    task of ``tasks``), with the run's provenance in its description."""
    from ..scoring.given import GivenScores
    from ..scoring.spec import ModelSpec, format_spec

    config = results.get("config") if isinstance(results.get("config"), dict) else {}
    model = str(config.get("model") or "unknown")
    args = _model_args(config)
    if config.get("limit") not in (None, "None"):
        raise ValueError(f"{results_path}: lm_eval was limited to {config['limit']} documents per task (--limit): "
                         "the benchmark needs every sentence pair")
    spec = ModelSpec.parse(format_spec("lm-eval", model, args)).canonical  # a credential in an argument is refused
    logprobs: dict[str, float] = {}
    samples = {}
    for task in tasks:
        path = samples_file(results_path, task)
        samples[task] = path.name
        for sentence, value in sample_logprobs(path).items():
            if logprobs.setdefault(sentence, value) != value:
                raise ValueError(f"{path}: {sentence!r} has another log-likelihood in another task of the run")
    dtype = str(config.get("model_dtype") or "").removeprefix("torch.") or None
    details = {
        "backend": model, "model_args": args, "dtype": dtype,
        "device": None if config.get("device") is None else str(config["device"]),
        "lm_eval": {
            "version": results.get("lm_eval_version"),
            "tasks": {t: {"benchmark": cfg["metadata"]["contstim_benchmark"],
                          "version": str((results.get("versions") or {}).get(t, cfg["metadata"].get("version"))),
                          "task_hash": (results.get("task_hashes") or {}).get(t), "samples_file": samples[t]}
                      for t, cfg in tasks.items()},
            "results_file": results_path.name,
            "date": results.get("date"),
            "git_hash": results.get("git_hash"),
            "transformers_version": results.get("transformers_version"),
        },
    }
    return GivenScores(logprobs, spec=spec, method="causal", details=details)


def read_run(folder: str | os.PathLike, tasks: list[str] | None = None):
    """(the :class:`~contstim_bench.scoring.given.GivenScores` of the newest lm-eval run in
    ``folder``, its benchmark identifiers, its results file): the run read once (its contstim tasks,
    or those named in ``tasks``)."""
    results_path, results, found = find_run(folder, tasks)
    scorer = run_scorer(results_path, results, found)
    return scorer, [cfg["metadata"]["contstim_benchmark"] for cfg in found.values()], results_path


def run_name(scorer) -> str:
    """The name an imported run's model gets unless one is given: the last component of its
    ``pretrained`` argument (a local folder ``/x/smollm2-135m-0.1.2-c3`` is ``smollm2-135m-0.1.2-c3``;
    a Hub id ``org/model`` is kept whole), else its backend; the spec, which holds the whole path,
    would make every page heading and file name as long."""
    pretrained = scorer.details.get("model_args", {}).get("pretrained")
    if not pretrained:
        return scorer.details.get("backend") or scorer.spec
    path = Path(pretrained)
    return path.name if path.is_absolute() or path.exists() else pretrained


def evaluate_run(scorer, benchmarks: list[str], results_path: Path, *, name: str | None = None,
                 datasets_dir: str | os.PathLike | None = None, output: str | os.PathLike | None = None,
                 log=None) -> dict[str, dict]:
    """{benchmark identifier: contstim result} of a run read by :func:`read_run`, evaluated by the
    one driver, the model named ``name`` (default :func:`run_name`); written to ``output`` by its convention (a ``.json`` file for one benchmark, else a
    folder).  ValueError names the samples files of a run whose samples lack sentences."""
    from ..driver import RunOptions, evaluate
    from ..scoring.given import MissingLogProbs

    try:
        return evaluate(scorer, benchmarks, datasets_dir=datasets_dir, name=name or run_name(scorer),
                        options=RunOptions(cache=False, progress=False), output=output, log=log)
    except MissingLogProbs as exc:
        files = ", ".join(t["samples_file"] for t in scorer.details["lm_eval"]["tasks"].values())
        raise ValueError(f"the samples of {results_path.parent} ({files}) are incomplete: {exc}; the run was cut "
                         "short or its samples file was truncated: run lm_eval again with --log_samples") from None


def import_run(folder: str | os.PathLike, *, tasks: list[str] | None = None, name: str | None = None,
               datasets_dir: str | os.PathLike | None = None, output: str | os.PathLike | None = None,
               log=None) -> dict[str, dict]:
    """:func:`evaluate_run` of :func:`read_run`: the newest lm-eval run in ``folder`` as contstim
    results."""
    scorer, benchmarks, results_path = read_run(folder, tasks)
    return evaluate_run(scorer, benchmarks, results_path, name=name, datasets_dir=datasets_dir, output=output,
                        log=log)


def describe_run(result: dict) -> str:
    """One line on where an imported result came from."""
    lm = result["model"].get("lm_eval", {})
    tasks = ", ".join(f"{t} v{v['version']}" for t, v in lm.get("tasks", {}).items())
    return f"lm-eval {lm.get('version')} run {lm.get('results_file')} ({tasks}) of {result['model']['spec']}"

