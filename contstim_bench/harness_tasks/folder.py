"""The lm-evaluation-harness task folder: :func:`write_task_folder` (``contstim lm-eval tasks``).

The folder holds, for every experiment of the paper whose human data is present (``pll``, and
``main`` when its results file was supplied) and for every round of the datasets folder, a task
``contstim_<experiment or round>`` (one YAML), the group ``contstim`` listing them, and a
``utils.py`` whose functions call :mod:`.hooks`.  It holds no data: the tasks read the package's
built datasets (the folder they were written for is recorded in ``utils.py``).  Pass the folder to
lm-eval with ``--include_path``.

Each task asks lm-eval for two ``loglikelihood`` requests per sentence pair (``multiple_choice``
with an empty context and no target delimiter: each sentence is scored from the backend's prefix
token, the package's start-token convention when ``prefix_token_id`` names the model's start
token) and reports every condition's metrics (:mod:`.metrics`).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from .._version import __version__
from ..staging import check_replaceable, legacy_files, replace_folder
from .metrics import FIELDS, task_metrics

MARKER = ".contstim-lm-eval-tasks"
"""How task folders written before the package's output marker (:data:`contstim_bench.staging.MARKER`) are recognised."""
TASK_FOLDER_KIND = "lm-eval task folder"
def _legacy_task_files(folder: Path) -> list[str]:
    """The files an earlier version wrote in a task folder: its old marker, and the YAML files and
    ``utils.py`` that begin with the header it wrote (a file a user added does not)."""
    def ours(path: Path, header: bytes) -> bool:
        if not path.is_file() or path.is_symlink():
            return False
        with open(path, "rb") as fh:
            return fh.read(len(header)) == header
    yaml = [p.name for p in folder.glob("*.yaml") if ours(p, b"# written by `contstim lm-eval tasks`")]
    utils = ["utils.py"] if ours(folder / "utils.py", b'"""The contstim task group\'s hooks, written by') else []
    return [MARKER, *yaml, *utils]


LEGACY_TASKS = legacy_files(MARKER, written=_legacy_task_files)
"""A task folder written before the output marker: its old marker and the files that carry its header."""
"""A file in every folder :func:`write_task_folder` writes: only such a folder is replaced."""

GROUP = "contstim"
TASK_VERSION = 1
"""Version of the task definitions (documents, requests, metrics); a task's ``metadata.version``
is ``<this>.<benchmark version>``."""


def default_task_folder() -> Path:
    """``~/.cache/contstim_bench/lm_eval_tasks``."""
    return Path.home() / ".cache" / "contstim_bench" / "lm_eval_tasks"


def task_name(benchmark: str) -> str:
    """``contstim.pll`` -> ``contstim_pll`` (lm-eval task names hold no dot)."""
    return benchmark.replace(".", "_")


def _py(name: str) -> str:
    """A Python name for ``name``, one-to-one: letters and digits kept, ``_`` written ``_u``, ``-``
    ``_d``, ``.`` ``_`` and any other character ``_x<hex>_`` (rounds ``ra-b`` and ``ra_b`` get
    different functions)."""
    out = []
    for c in name:
        out.append(c if c.isascii() and c.isalnum() else {"_": "_u", "-": "_d", ".": "_"}.get(c, f"_x{ord(c):x}_"))
    return "".join(out)


def _metric_py(metric: str) -> str:
    """A metric's part of a function name (the package's own metric names, distinct as they are)."""
    return "".join(c if c.isalnum() else "_" for c in metric)


def function_stem(benchmark: str) -> str:
    """The stem of a benchmark's functions in ``utils.py``: ``contstim.pll`` -> ``contstim_pll``."""
    return _py(benchmark)


def check_task_names(benchmarks) -> None:
    """ValueError naming the benchmarks whose task or function names would collide (with each other,
    with the group ``contstim`` or its tag ``contstim_tasks``): lm-eval would silently report one for
    the other."""
    taken = {GROUP: f"the task group {GROUP!r}", f"{GROUP}_tasks": f"the group's tag {GROUP}_tasks"}
    stems: dict[str, str] = {}
    for b in benchmarks:
        name, stem = task_name(b), function_stem(b)
        if name in taken:
            raise ValueError(f"{b}: its lm-eval task name {name!r} is {taken[name]}; lm-eval would drop or mix it up. "
                             f"Rename the round (ingest it again under another name: `contstim experiment ingest --experiment`)")
        if stem in stems:
            raise ValueError(f"{b} and {stems[stem]} would get the same functions in utils.py ({stem})")
        taken[name], stems[stem] = f"the task of {b}", b


def _q(value) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON scalar is a YAML scalar


def present_benchmarks(datasets_dir: str | os.PathLike | None, log=lambda msg: None,
                       what: str = "task") -> dict[str, tuple[str, list[str]]]:
    """Benchmark identifier -> (version, conditions) of every experiment whose trials can be read
    from ``datasets_dir`` (an absent one is reported through ``log``, as no ``what`` for it, and
    left out) and every round found there."""
    from ..benchmarks.registry import get_benchmark, rounds
    from ..study import EXPERIMENTS
    from .hooks import conditions

    found: dict[str, tuple[str, list[str]]] = {}
    for exp in EXPERIMENTS:
        ident = f"contstim.{exp}"
        try:
            found[ident] = (get_benchmark(ident).version, conditions(ident, datasets_dir))
        except FileNotFoundError:
            log(f"note: no {what} for the {exp} experiment: its human data is not in the datasets folder "
                f"{datasets_dir} (`contstim data build --help` says how to add it)")
    for ident, bench in rounds(datasets_dir).items():
        found[ident] = (bench.version, conditions(ident, datasets_dir))
    return found


def _task_yaml(benchmark: str, version: str, metrics: dict[str, tuple[str, str]], fingerprint: str | None) -> str:
    name, fn = task_name(benchmark), function_stem(benchmark)
    lines = [
        f"# written by `contstim lm-eval tasks` (contstim-bench {__version__}): regenerate it rather than edit it",
        f"task: {name}",
        f"tag: [{GROUP}_tasks]",
        f"custom_dataset: !function utils.docs_{fn}",
        "test_split: test",
        "output_type: multiple_choice",
        'doc_to_text: ""',
        "doc_to_choice: choices",
        "doc_to_target: 0",
        'target_delimiter: ""',
        f"process_results: !function utils.process_results_{fn}",
        "metric_list:",
    ]
    for metric, (_, field) in metrics.items():
        lines += [f"  - metric: {metric}",
                  f"    aggregation: !function utils.agg_{fn}__{_metric_py(metric)}",
                  f"    higher_is_better: {'true' if FIELDS[field][1] else 'false'}"]
    lines += ["metadata:",
              f"  version: {_q(f'{TASK_VERSION}.{version}')}",
              f"  contstim_benchmark: {_q(benchmark)}",
              f"  contstim_bench_version: {_q(__version__)}",
              f"  dataset_fingerprint: {_q(fingerprint)}"]
    return "\n".join(lines) + "\n"


def _utils_py(benchmarks: dict[str, tuple[str, dict]], datasets_dir: str | None) -> str:
    out = [
        f'"""The contstim task group\'s hooks, written by `contstim lm-eval tasks` (contstim-bench {__version__}).',
        "",
        "Every function calls contstim_bench.harness_tasks.hooks: the documents come from the package's built",
        "datasets and every metric from the contstim result that the package's own driver computes on the",
        'log-likelihoods lm-eval returned.  Regenerate this folder rather than edit it."""',
        "from contstim_bench.harness_tasks import hooks",
        "",
        f"DATASETS = {datasets_dir!r}",
        '"""The datasets folder the tasks read (None: $CONTSTIM_DATASETS or the default)."""',
    ]
    for benchmark, (_, metrics) in benchmarks.items():
        fn = function_stem(benchmark)
        out += ["", "", f"METRICS_{fn} = {list(metrics)!r}", "", "",
                f"def docs_{fn}(**kwargs):",
                f"    return hooks.docs({benchmark!r}, DATASETS)", "", "",
                f"def process_results_{fn}(doc, results):",
                f"    return hooks.process_results(doc, results, METRICS_{fn})"]
        for metric, (condition, field) in metrics.items():
            out += ["", "", f"def agg_{fn}__{_metric_py(metric)}(items):",
                    f"    return hooks.aggregate({benchmark!r}, DATASETS, {condition!r}, {field!r}, items)"]
    return "\n".join(out) + "\n"


def write_task_folder(out: str | os.PathLike | None = None, datasets_dir: str | os.PathLike | None = None,
                      log=lambda msg: None) -> tuple[Path, list[str]]:
    """Write the task folder to ``out`` (default :func:`default_task_folder`): (the folder, the
    task names).  A folder there that this function did not write (no :data:`MARKER`) and that is
    not empty is refused (ValueError), so no user file is replaced; FileNotFoundError when no
    experiment or round has data."""
    from ..data.load import fingerprint as dataset_fingerprint
    from ..data.paths import default_datasets_dir
    from ..study import is_paper_experiment

    folder = Path(out) if out is not None else default_task_folder()
    check_replaceable(folder, kind=TASK_FOLDER_KIND, legacy=LEGACY_TASKS)  # before any work
    datasets = Path(datasets_dir if datasets_dir is not None else default_datasets_dir()).resolve()
    found = present_benchmarks(datasets, log)
    if not found:
        raise FileNotFoundError(f"no experiment or round has data in {datasets}: build the datasets with "
                                "`contstim data build --only contstim`")
    check_task_names(found)
    tasks = {b: (version, task_metrics(conds)) for b, (version, conds) in found.items()}
    with replace_folder(folder, kind=TASK_FOLDER_KIND, mode=0o755, legacy=LEGACY_TASKS) as tmp:
        for benchmark, (version, metrics) in tasks.items():
            # the paper's experiments are read from the contstim dataset; a round records its own
            fp = dataset_fingerprint("contstim", datasets) if is_paper_experiment(benchmark.removeprefix("contstim.")) \
                else None
            (tmp / f"{task_name(benchmark)}.yaml").write_text(_task_yaml(benchmark, version, metrics, fp),
                                                              encoding="utf-8")
        names = [task_name(b) for b in tasks]
        group = [f"# written by `contstim lm-eval tasks` (contstim-bench {__version__})", f"group: {GROUP}", "task:"]
        group += [f"  - {n}" for n in names] + ["metadata:", f"  version: {TASK_VERSION}"]
        (tmp / f"{GROUP}.yaml").write_text("\n".join(group) + "\n", encoding="utf-8")
        (tmp / "utils.py").write_text(_utils_py(tasks, str(datasets)), encoding="utf-8")
    return folder, names
