"""Distributed, resumable runs of the synthetic-triplet search (``contstim generate synthetic``).

A run is a list of **jobs**, one per (unordered model pair, start sentence); a job synthesises
S1 and S2 of one triplet (:func:`contstim_bench.generate.synthetic.synthesize_triplet`).  The
output folder holds::

    OUTPUT/run.json                         the run's arguments (a resume must match them)
    OUTPUT/jobs/<i>-<j>_<line>.json         one file per finished job (the only completion record):
                                            its triplet, the content fingerprint of both models and
                                            a sha256 checksum of the record
    OUTPUT/running/p<k>.json                the job process k is working on (progress display)
    OUTPUT/triplets/                        the triplet dataset (config ``synthetic_triplets``)

Jobs are split into contiguous shards, one per process of ``accelerate launch -m contstim_bench
generate synthetic ...`` (process index and count from :class:`accelerate.PartialState`; a plain
``contstim generate synthetic ...`` is one process).  A job's seed is derived from the global seed
and the job key (model specs, pool line and sentence), never from process order, and a job file
is written atomically (a temporary file renamed into place), so a run killed at any point and
restarted with the same arguments, on any number of processes, skips the finished jobs, redoes
only the unfinished ones and ends with output identical to an uninterrupted run.  After a
barrier, process 0 assembles the triplet table from the job files in job order.

A resume trusts nothing it did not check: a job file whose checksum fails (edited or damaged) is
refused with its name, and so is a run in which a model's content changed (e.g. an ``.arpa``
retrained at the same path): every model a process loads is compared with the fingerprint the
finished job files recorded for it, and the assembly checks that every job of a model used the
same content, so one output never mixes two versions of a model.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..results.io import MAX_BYTES, ValidationError, parse_json
from ..staging import read_bounded
from ..scoring.run_options import RunOptions
from .inputs import StartSentence, Vocabulary, choose_start_sentences, load_pool, load_vocabulary
from .pairing import ModelEntry, check_can_synthesize, pairing
from .search_records import AttemptReport, SearchModel, SearchSettings, attempt_display
from .lockstep_search import DEFAULT_WORKERS, TripletTask, synthesize_triplets
from .synthetic import synthesize_triplet
from .triplet_table import RUN_FILE, PairSummary, pair_summaries, triplets_frame, write_triplets_dataset

JOBS_DIR = "jobs"
RUNNING_DIR = "running"
# 2: job files carry model fingerprints and a checksum; 3: also the Eq. 2 ranking of replacements and the
# Methods' stopping rule of the Eq. 3 search (issue 16), which change the triplets (a format 1 or 2 run
# folder is not resumed)
RUN_FORMAT = 3


@dataclass(frozen=True)
class Job:
    """One triplet to synthesise: model pair (indices into the run's models) x start sentence."""

    i: int
    j: int
    start: StartSentence

    @property
    def key(self) -> str:
        return f"{self.i:02d}-{self.j:02d}_{self.start.index:06d}"


def job_seed(global_seed: int, m1: ModelEntry, m2: ModelEntry, start: StartSentence) -> int:
    """Seed of one job: 63 bits of sha256 over the global seed and the job's identity."""
    text = "\x00".join([str(int(global_seed)), m1.spec, m2.spec, str(start.index), start.sentence])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


def make_jobs(n_models: int, starts: Sequence[StartSentence],
              pairs: Sequence[tuple[int, int]] | None = None) -> list[Job]:
    """All jobs in job order: model pairs (``pairs``, default every pair i < j in ``--models``
    order; see :mod:`.pairing`), then start sentences."""
    pairs = itertools.combinations(range(n_models), 2) if pairs is None else pairs
    return [Job(i, j, s) for i, j in pairs for s in starts]


def shard(n_jobs: int, n_processes: int, index: int) -> range:
    """The contiguous block of job positions handled by process ``index`` of ``n_processes``."""
    base, extra = divmod(n_jobs, n_processes)
    start = index * base + min(index, extra)
    return range(start, start + base + (1 if index < extra else 0))


def write_json_atomic(path: Path, data) -> None:
    """Write JSON to ``path`` via a temporary file in the same folder and ``os.replace``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True, allow_nan=True)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _vocabulary_digest(vocab: Vocabulary) -> str:
    h = hashlib.sha256()
    for part in (vocab.first, vocab.rest):
        h.update("\n".join(part).encode("utf-8"))
        h.update(b"\x01")
    return h.hexdigest()


@dataclass
class RunPlan:
    """Everything a run needs, and the record written to ``run.json``."""

    output: Path
    models: list[ModelEntry]
    starts: list[StartSentence]
    vocabulary: Vocabulary
    function_words: frozenset[str]
    seed: int
    settings: SearchSettings
    record: dict
    datasets_dir: str | os.PathLike | None = None  # built datasets (precomputed: models); not in the record
    pairs: list[tuple[int, int]] | None = None  # contrasted model pairs (None: every pair); see .pairing

    @property
    def jobs(self) -> list[Job]:
        return make_jobs(len(self.models), self.starts, self.pairs)


def plan_run(output: str | os.PathLike, models: str | Sequence[str] | None, start_sentences: int, *,
             pool: str | None = None, vocabulary: str | None = None, seed: int = 0,
             settings: SearchSettings | None = None, options: RunOptions = RunOptions(),
             datasets_dir: str | os.PathLike | None = None, vocabulary_size: int | None = None,
             candidates: str | Sequence[str] | None = None,
             references: str | Sequence[str] | None = None) -> RunPlan:
    """Resolve the run's inputs (models and the pairs they form, start sentences, vocabulary)
    and its ``run.json`` record (which records ``options``' device and dtype, so that a resume
    with other weights is refused).  ``models``: every pair; or ``candidates`` x ``references``
    (:func:`.pairing.pairing`).  ValueError for a model that cannot score new sentences.
    ``vocabulary_size``: only the N most frequent words of each vocabulary list, the function
    words kept (:func:`contstim_bench.generate.inputs.load_vocabulary`)."""
    from .natural_ilp import load_function_words

    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"--seed must be a non-negative integer, got {seed!r}")
    chosen = pairing(models, candidates=candidates, references=references)
    entries = chosen.models
    check_can_synthesize(entries)
    settings = settings or SearchSettings()
    sentences, pool_desc = load_pool(pool, datasets_dir)
    starts = choose_start_sentences(sentences, start_sentences, int(seed))
    fw = frozenset(w.lower() for w in load_function_words())
    vocab = load_vocabulary(vocabulary, datasets_dir, size=vocabulary_size, keep=fw)
    record = {
        "format": RUN_FORMAT,
        "command": "contstim generate synthetic",
        "models": [{"name": m.name, "spec": m.spec} for m in entries],
        "start_sentences": int(start_sentences),
        "pool": pool_desc,
        "starts": [{"index": s.index, "sentence": s.sentence} for s in starts],
        "vocabulary": vocab.source,
        "vocabulary_size": [len(vocab.first), len(vocab.rest)],
        "vocabulary_sha256": _vocabulary_digest(vocab),
        "function_words": sorted(fw),
        "seed": int(seed),
        "settings": settings.to_dict(),
        "device": options.device,
        "dtype": options.dtype,
        **chosen.record(),
    }
    return RunPlan(Path(output), entries, starts, vocab, fw, int(seed), settings, record, datasets_dir,
                   chosen.pairs if chosen.explicit else None)


def check_or_write_run_record(plan: RunPlan) -> bool:
    """Write ``run.json``, or compare it with an existing one; returns True when resuming.

    ValueError naming the differing arguments when the folder holds a different run.
    """
    path = plan.output / RUN_FILE
    if path.exists():
        try:
            old = parse_json(read_bounded(path, MAX_BYTES, "run record"), str(path))
        except ValidationError as exc:
            raise ValueError(f"{path} is not a valid run record ({'; '.join(exc.problems)}); remove the folder or "
                             f"choose another `contstim generate synthetic --output`") from None
        diff = sorted(k for k in set(old) | set(plan.record) if old.get(k) != plan.record.get(k))
        if diff:
            details = "; ".join(f"{k}: was {_short(old.get(k))}, now {_short(plan.record.get(k))}" for k in diff)
            raise ValueError(f"{plan.output} holds a run with different arguments ({details}); resume with the "
                             f"same arguments or choose another `contstim generate synthetic --output`")
        return True
    plan.output.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, plan.record)
    return False


def _short(value) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


class _ModelPool:
    """Scorers loaded on demand and dropped once no remaining job of this process needs them.

    ``recorded`` maps a model name to ``(content fingerprint, job file)`` as the finished jobs
    recorded it; a model whose content differs is refused when it is loaded."""

    def __init__(self, models: list[ModelEntry], loader, recorded: dict[str, tuple[str, str]] | None = None):
        self.models = models
        self.loader = loader
        self.loaded: dict[int, SearchModel] = {}
        self.recorded = dict(recorded or {})

    def get(self, i: int) -> SearchModel:
        if i not in self.loaded:
            m = self.models[i]
            scorer = self.loader(m.spec)
            fp = scorer.fingerprint()
            if m.name in self.recorded and self.recorded[m.name][0] != fp:
                old, path = self.recorded[m.name]
                raise ValueError(
                    f"model {m.name!r} ({m.spec}) changed since this run started: its content fingerprint is now "
                    f"{fp[:16]}, but the finished job file {path} was computed with {old[:16]}; one output must not "
                    f"mix two versions of a model: choose another `contstim generate synthetic --output`, or delete {Path(path).parent} to redo "
                    f"every job with the new model"
                )
            self.recorded.setdefault(m.name, (fp, "(this run)"))
            self.loaded[i] = SearchModel(name=m.name, scorer=scorer, spec=m.spec)
        return self.loaded[i]

    def fingerprint(self, i: int) -> str:
        return self.recorded[self.models[i].name][0]

    def keep_only(self, needed: set[int]) -> None:
        for i in [k for k in self.loaded if k not in needed]:
            del self.loaded[i]


def run_job(plan: RunPlan, job: Job, pool: _ModelPool, report: Callable[[AttemptReport], None] | None = None) -> dict:
    """Synthesise one job's triplet and return its job record (JSON-serialisable, with the
    models' content fingerprints and the record's :func:`record_checksum`); ``report`` receives
    every position attempt (:class:`.synthetic.AttemptReport`)."""
    t0 = time.perf_counter()
    a, b = pool.get(job.i), pool.get(job.j)
    row = synthesize_triplet(job.start.sentence, a, b, plan.vocabulary, plan.function_words, job_seed_of(plan, job),
                             plan.settings, natural_index=job.start.index, report=report)
    return job_record(plan, job, row, pool, time.perf_counter() - t0)


def job_seed_of(plan: RunPlan, job: Job) -> int:
    return job_seed(plan.seed, plan.models[job.i], plan.models[job.j], job.start)


def job_record(plan: RunPlan, job: Job, row: dict, pool: _ModelPool, seconds: float) -> dict:
    """A finished job's record: its triplet row, ``seconds``, both models' content
    fingerprints and the record's :func:`record_checksum`."""
    m1, m2 = plan.models[job.i], plan.models[job.j]
    record = {"key": job.key, "row": row, "seconds": round(seconds, 3),
              "models": {m1.name: pool.fingerprint(job.i), m2.name: pool.fingerprint(job.j)}}
    return {**record, "sha256": record_checksum(record)}


def run_jobs_in_lockstep(plan: RunPlan, jobs: Sequence[Job], pool: _ModelPool, workers: int, write: Callable,
                         report: Callable[[Job], Callable[[AttemptReport], None] | None]) -> None:
    """Synthesise ``jobs`` with their searches ``workers`` at a time in lockstep
    (:mod:`.lockstep_search`: the same triplets, causal-LM forward passes shared); ``write(job,
    record)`` as each job's triplet is complete (its record's ``seconds``: from the lockstep's
    start, since its searches shared passes with the others); ``report(job)``: its attempts'
    display."""
    tasks = [TripletTask(job.start.sentence, pool.get(job.i), pool.get(job.j), job_seed_of(plan, job),
                         job.start.index) for job in jobs]
    shows = [report(job) for job in jobs]
    t0 = time.perf_counter()
    synthesize_triplets(tasks, plan.vocabulary, plan.function_words, plan.settings, workers=workers,
                        report=lambda k, r: shows[k](r) if shows[k] is not None else None,
                        on_row=lambda k, row: write(jobs[k], job_record(plan, jobs[k], row, pool,
                                                                        time.perf_counter() - t0)))


def record_checksum(record: dict) -> str:
    """sha256 over a job record's canonical JSON (sorted keys; the ``sha256`` field excluded)."""
    body = {k: v for k, v in record.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, allow_nan=True, separators=(",", ":")).encode()).hexdigest()


def read_job(path: Path, job: Job, models: Sequence[ModelEntry] | None = None) -> dict:
    """A finished job's record; ValueError naming the file when it is unreadable, fails its
    checksum (edited or damaged), belongs to another job or does not record the fingerprints of
    the job's two models (``models``: the run's models)."""
    try:
        record = parse_json(read_bounded(path, MAX_BYTES, "job file"), str(path))  # size, depth, duplicate keys
    except OSError as exc:
        raise ValueError(f"job file {path} is unreadable ({exc}); delete it to redo the job") from None
    except ValidationError as exc:
        raise ValueError(f"job file {path} is unreadable ({'; '.join(exc.problems)}); delete it to redo the job") from None
    if not isinstance(record, dict) or record.get("sha256") != record_checksum(record):
        raise ValueError(f"job file {path} fails its checksum: it was edited or damaged after it was written "
                         f"(or by an older version); delete it to redo the job")
    if record.get("key") != job.key or not isinstance(record.get("row"), dict):
        raise ValueError(f"job file {path} does not hold job {job.key}; delete it to redo the job")
    if models is not None:
        names = {models[job.i].name, models[job.j].name}
        fps = record.get("models")
        if not isinstance(fps, dict) or set(fps) != names or not all(isinstance(v, str) for v in fps.values()):
            raise ValueError(f"job file {path} does not record the fingerprints of models {sorted(names)}; "
                             f"delete it to redo the job")
    return record


def recorded_fingerprints(plan: RunPlan) -> dict[str, tuple[str, str]]:
    """``{model name: (content fingerprint, first job file)}`` over the finished job files (each
    read with :func:`read_job`); ValueError naming two job files whose fingerprints of one model
    differ (the run already mixes two versions of it)."""
    jobs_dir = plan.output / JOBS_DIR
    found: dict[str, tuple[str, str]] = {}
    for job in plan.jobs:
        path = jobs_dir / f"{job.key}.json"
        if not path.exists():
            continue
        for name, fp in read_job(path, job, plan.models)["models"].items():
            if name in found and found[name][0] != fp:
                raise ValueError(f"job files {found[name][1]} and {path} were computed with different contents of "
                                 f"model {name!r} ({found[name][0][:16]} vs {fp[:16]}); delete the jobs of one of "
                                 f"them (or {jobs_dir}) to redo them with one version of the model")
            found.setdefault(name, (fp, str(path)))
    return found


def run(plan: RunPlan, *, options: RunOptions = RunOptions(), loader=None,
        lockstep: int = DEFAULT_WORKERS) -> Path | None:
    """Run (or resume) ``plan`` on this process's shard; process 0 writes the triplet dataset and
    returns its folder (other processes return None).  ``options``: how the models run, with the
    device the launch gives this process when it names none (``progress``: the jobs' bar; the
    models draw none), the device and dtype the plan records (ValueError otherwise; a resume with
    other ones than ``run.json`` records is refused);
    ``loader``: spec -> scorer (default:
    :func:`contstim_bench.scoring.registry.load_scorer` with those options);
    ``lockstep``: searches run at once, sharing causal-LM forward passes (1: one job at a time;
    the triplets are the same)."""
    if isinstance(lockstep, bool) or not isinstance(lockstep, int) or lockstep < 1:
        raise ValueError(f"lockstep must be a positive number of searches, got {lockstep!r}")
    if (options.device, options.dtype) != (plan.record["device"], plan.record["dtype"]):
        raise ValueError(f"the run options (device {options.device!r}, dtype {options.dtype!r}) are not the ones the plan "
                         f"records (device {plan.record['device']!r}, dtype {plan.record['dtype']!r}): plan_run with them")
    from ..progress import interactive, progress_bar
    from ..scoring.parallel import launch_line, launch_state, single_process_note

    state = launch_state()  # CPU processes too (a bare PartialState() would see one process without a GPU)
    main = state.is_main_process
    jobs_dir = plan.output / JOBS_DIR
    running_dir = plan.output / RUNNING_DIR
    if main:
        check_or_write_run_record(plan)
        jobs_dir.mkdir(parents=True, exist_ok=True)
        running_dir.mkdir(parents=True, exist_ok=True)
        for stale in running_dir.glob("*.json"):
            stale.unlink()
    state.wait_for_everyone()
    if not main:
        check_or_write_run_record(plan)

    jobs = plan.jobs
    recorded = recorded_fingerprints(plan)  # every finished job file checked before any work
    share = shard(len(jobs), state.num_processes, state.process_index)
    mine = [jobs[k] for k in share]
    if state.num_processes > 1 or single_process_note():  # each process of a launch says which jobs it runs
        print(launch_line(state.process_index, state.num_processes, share, len(jobs)), file=sys.stderr)
    todo = [job for job in mine if not (jobs_dir / f"{job.key}.json").exists()]
    device = options.device
    if device is None and state.device.type != "cpu":
        device = str(state.device)
    if loader is None:
        from contstim_bench.scoring.registry import load_scorer

        model_options = replace(options, device=device, progress=False)

        def loader(spec: str):
            return load_scorer(spec, model_options, datasets_dir=plan.datasets_dir)
    models = _ModelPool(plan.models, loader, recorded)

    progress = options.progress
    bar = progress_bar(total=len(jobs), desc="triplet jobs", unit="job", disable=not (main and progress))
    tty = interactive()
    status = progress_bar(total=0, position=1, bar_format="{desc}", leave=False,
                          disable=not (main and progress and tty))

    def refresh() -> int:
        done = sum(1 for _ in jobs_dir.glob("*.json"))
        running = sum(1 for _ in running_dir.glob("*.json"))
        bar.n = done
        bar.set_postfix(running=running, left=len(jobs) - done - running, refresh=False)
        bar.refresh()
        return done

    marker = running_dir / f"p{state.process_index}.json"
    refresh()

    def display(job: Job):  # on a terminal only process 0 shows attempts; in a log every process does
        return attempt_display(job.key, state.process_index, tty, status) if progress and (main or not tty) else None

    if lockstep > 1 and len(todo) > 1:
        write_json_atomic(marker, {"jobs": [job.key for job in todo], "process": state.process_index})

        def write(job: Job, record: dict) -> None:
            write_json_atomic(jobs_dir / f"{job.key}.json", record)
            refresh()

        run_jobs_in_lockstep(plan, todo, models, lockstep, write, display)
        marker.unlink(missing_ok=True)
        todo = []
    for n, job in enumerate(todo):
        path = jobs_dir / f"{job.key}.json"
        if path.exists():  # finished meanwhile by an earlier run of this shard
            continue
        models.keep_only({k for later in todo[n:] for k in (later.i, later.j)})
        write_json_atomic(marker, {"job": job.key, "process": state.process_index})
        refresh()
        write_json_atomic(path, run_job(plan, job, models, display(job)))
        marker.unlink(missing_ok=True)
        refresh()
    models.keep_only(set())
    if main:
        while refresh() < len(jobs):  # other processes still at work
            time.sleep(0.5)
    status.close()
    bar.close()
    state.wait_for_everyone()
    if not main:
        return None
    return assemble(plan)


@dataclass(frozen=True)
class SyntheticRun:
    """What :func:`synthesize` wrote: the triplet dataset ``folder``, its number of ``triplets``,
    how many satisfy the Eq. 2 constraint (each synthetic sentence at least as probable as N under
    the model meant to accept it), their mean Eq. 4 controversiality (nats) and a
    :class:`PairSummary` per model pair (``pairs``)."""

    folder: Path
    triplets: int
    constraint_holds: int
    mean_controversiality: float
    pairs: tuple[PairSummary, ...] = ()


def synthesize(output: str | os.PathLike, models: str | Sequence[str] | None, start_sentences: int, *,
               pool: str | None = None, vocabulary: str | None = None, seed: int = 0,
               settings: SearchSettings | None = None, options: RunOptions = RunOptions(),
               datasets_dir: str | os.PathLike | None = None, vocabulary_size: int | None = None,
               candidates: str | Sequence[str] | None = None,
               references: str | Sequence[str] | None = None, lockstep: int = DEFAULT_WORKERS) -> SyntheticRun | None:
    """Plan (:func:`plan_run`) and run or resume (:func:`run`) a synthetic-triplet search into
    ``output``; process 0 returns a summary of the written dataset, other processes None.
    ``options``: how the models run (:class:`~contstim_bench.scoring.run_options.RunOptions`);
    ``lockstep``: searches run at once (:func:`run`)."""
    from .triplet_table import read_triplets

    plan = plan_run(output, models, start_sentences, pool=pool, vocabulary=vocabulary, seed=seed,
                    settings=settings, options=options, datasets_dir=datasets_dir,
                    vocabulary_size=vocabulary_size, candidates=candidates, references=references)
    folder = run(plan, options=options, lockstep=lockstep)
    if folder is None:
        return None
    frame = read_triplets(folder)
    ok = (frame["lp_S1_given_m1"] >= frame["lp_N_given_m1"]) & (frame["lp_S2_given_m2"] >= frame["lp_N_given_m2"])
    return SyntheticRun(folder, len(frame), int(ok.sum()), float(frame["controversiality"].mean()),
                        tuple(pair_summaries(frame)))


def assemble(plan: RunPlan) -> Path:
    """Build the triplet dataset from the job files, in job order (every job must be done, every
    job file must pass :func:`read_job`, and each model must have one fingerprint across them)."""
    jobs_dir = plan.output / JOBS_DIR
    rows = []
    missing = []
    for job in plan.jobs:
        path = jobs_dir / f"{job.key}.json"
        if not path.exists():
            missing.append(job.key)
            continue
        rows.append(read_job(path, job, plan.models)["row"])
    if missing:
        raise RuntimeError(f"{len(missing)} job(s) have no result file (first: {missing[0]}); rerun the same command to finish them")
    fingerprints = {name: fp for name, (fp, _) in recorded_fingerprints(plan).items()}
    return write_triplets_dataset(triplets_frame(rows), plan.output, {**plan.record, "model_fingerprints": fingerprints})
