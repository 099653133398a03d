"""The Brain-Score Language plugin folder: :func:`write_plugin_folder` (``contstim brainscore plugin``).

The folder is what a pull request to Brain-Score Language adds::

    <out>/benchmarks/golan2023/__init__.py      benchmark_registry['Golan2023.<experiment>-<measure>'] = ...
    <out>/benchmarks/golan2023/benchmark.py     the Brain-Score glue (:data:`.plugin_source.BENCHMARK_PY`)
    <out>/benchmarks/golan2023/test.py          a reference subject must score what the package computed
    <out>/benchmarks/golan2023/requirements.txt contstim-bench==<version>, pyarrow<26
    <out>/benchmarks/golan2023/reference.json   per benchmark: what it evaluates, its noise ceilings and
                                                 the reference subject's values
    <out>/benchmarks/golan2023/README.md        what the benchmarks measure, the first-word convention
    <out>/benchmarks/golan2023/data/contstim/   the paper's experiments (the built ``contstim`` dataset)
    <out>/benchmarks/golan2023/data/<round>/    each round of the datasets folder, as ingested

Benchmarks: ``Golan2023.<experiment>-accuracy`` and ``-srcs`` for every experiment of the paper
whose human data is present (``pll``, and ``main`` when its results file was supplied), and the
same for every round of the datasets folder.  The data travel in the folder, as SyntaxGym's
suites do: Brain-Score needs no Hub and no storage bucket, and the package verifies every table
against its fingerprint when it reads it.

The metric reaches the plugin as the package itself, a pinned requirement: contstim-bench's core
installs beside Brain-Score Language 2.3.0's pins (numpy<2, transformers<5) when pyarrow stays
below 26, so nothing of the analysis is copied into the plugin.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from .._version import __version__
from ..staging import check_replaceable, replace_folder
from . import plugin_source
from .hooks import MEASURES, evaluate_logprobs, reference_subject, score_values

PLUGIN_FOLDER_KIND = "Brain-Score plugin folder"
REFERENCE_FORMAT = "contstim-brainscore-plugin"
REFERENCE_FORMAT_VERSION = 1
EXPERIMENT_DATASET = "contstim"


def benchmark_identifier(benchmark: str, measure: str) -> str:
    """``contstim.pll``, ``accuracy`` -> ``Golan2023.pll-accuracy`` (a round: ``Golan2023.<round>-<measure>``)."""
    return f"{plugin_source.PREFIX}.{benchmark.removeprefix('contstim.')}-{measure}"


def plugin_path(out: str | os.PathLike) -> Path:
    """The plugin's own folder inside ``out``: ``<out>/benchmarks/golan2023``."""
    return Path(out) / "benchmarks" / plugin_source.PLUGIN


def _reference_entries(benchmark: str, version: str, datasets: Path) -> dict[str, dict]:
    """The ``reference.json`` entries of ``benchmark``'s two measures, computed through the one
    driver on the reference subject's log-probabilities."""
    subject, logprobs = reference_subject(benchmark, datasets)
    result = evaluate_logprobs(benchmark, datasets, logprobs, subject)
    out = {}
    for measure in MEASURES:
        values = score_values(result, measure)
        out[benchmark_identifier(benchmark, measure)] = {
            "contstim_benchmark": benchmark, "measure": measure, "version": version,
            "ceiling": values["ceiling"], "ceiling_upper": values["ceiling_upper"], "units": values["units"],
            "reference": {"subject": subject, "raw": values["raw"], "error": values["error"]},
        }
    return out


def _readme(entries: dict[str, dict]) -> str:
    rows = "\n".join(f"| `{ident}` | `{e['contstim_benchmark']}` | {e['measure']} | {e['ceiling']:.4f} | "
                     f"{e['reference']['subject']}: {e['reference']['raw']:.4f} |" for ident, e in entries.items())
    return f"""# Golan2023: controversial sentence pairs (Brain-Score Language plugin)

{plugin_source.HEADER[0].upper()}{plugin_source.HEADER[1:]}.

Golan, Siegelman, Kriegeskorte & Baldassano (2023), *Testing the limits of natural language models
for predicting human language judgements*, Nature Machine Intelligence 5, 952-964.  People chose
which of two sentences is more likely to occur; the sentence pairs were chosen so that language
models disagree.  A subject's reading time of a sentence (summed surprisal, bits) gives its
natural-log probability (-bits x ln 2); contstim-bench's analysis gives, per participant
(participant group in `main`), the share of trials where the subject prefers the sentence the
person chose (`-accuracy`) or the signed-rank cosine similarity of its preferences with the
person's ratings (`-srcs`), and their mean over participants (groups).  The score is that value
over its lower noise ceiling, clipped to [0, 1]; the raw value, the ceilings and the standard
error are attributes of the score.

| benchmark | contstim benchmark | measure | lower noise ceiling | reference subject |
|---|---|---|---|---|
{rows}

**First word.** A subject whose tokenizer adds a start token is scored as `contstim evaluate`
scores a model (log P(sentence | start token)): the raw values are the package's.  Brain-Score's
Hugging Face subject leaves the first token out when its tokenizer adds none.

Install: `pip install -r requirements.txt` (contstim-bench carries the analysis: install it in
the same pip command as brainscore-language, with `pyarrow<26`, from PyPI or its repository);
`data/` holds the stimuli and human trials as contstim-bench's built datasets, each table checked
against its fingerprint when read.
"""


def write_plugin_folder(out: str | os.PathLike, datasets_dir: str | os.PathLike | None = None,
                        log=lambda msg: None) -> tuple[Path, list[str]]:
    """Write the plugin folder to ``out``: (the plugin's own folder ``<out>/benchmarks/golan2023``,
    the benchmark identifiers).  ``out`` is replaced whole only when it is absent, empty or a
    folder this function wrote holding nothing else (ValueError otherwise, before any work);
    FileNotFoundError when the datasets folder has no ``pll`` experiment (every plugin has it)."""
    from ..data.paths import default_datasets_dir
    from ..harness_tasks.folder import present_benchmarks

    check_replaceable(out, kind=PLUGIN_FOLDER_KIND)  # before any work
    datasets = Path(datasets_dir if datasets_dir is not None else default_datasets_dir()).resolve()
    found = present_benchmarks(datasets, log, what="benchmark")
    if "contstim.pll" not in found:
        raise FileNotFoundError(f"the datasets folder {datasets} has no pll experiment (its trials are the plugin's "
                                "first benchmark): build it with `contstim data build --only contstim`")
    entries: dict[str, dict] = {}
    for benchmark, (version, _) in found.items():
        log(f"computing the reference values of {benchmark}")
        entries.update(_reference_entries(benchmark, version, datasets))
    from ..data.rounds import discover_rounds

    rounds = {ident: folder for ident, folder in discover_rounds(datasets).items() if ident in found}
    reference = {"format": REFERENCE_FORMAT, "format_version": REFERENCE_FORMAT_VERSION,
                 "package_version": __version__, "requirements": list(plugin_source.REQUIREMENTS),
                 "benchmarks": entries}
    skip = shutil.ignore_patterns(".*", "__pycache__")
    with replace_folder(out, kind=PLUGIN_FOLDER_KIND, mode=0o755) as tmp:
        plugin = plugin_path(tmp)
        (plugin / "data").mkdir(parents=True)
        (plugin / "__init__.py").write_text(plugin_source.init_py(list(entries)), encoding="utf-8")
        (plugin / "benchmark.py").write_text(plugin_source.BENCHMARK_PY, encoding="utf-8")
        (plugin / "test.py").write_text(plugin_source.TEST_PY, encoding="utf-8")
        (plugin / "requirements.txt").write_text(plugin_source.requirements_txt(), encoding="utf-8")
        (plugin / "reference.json").write_text(json.dumps(reference, indent=1) + "\n", encoding="utf-8")
        (plugin / "README.md").write_text(_readme(entries), encoding="utf-8")
        shutil.copytree(datasets / EXPERIMENT_DATASET, plugin / "data" / EXPERIMENT_DATASET, ignore=skip)
        for folder in rounds.values():
            shutil.copytree(folder, plugin / "data" / folder.name, ignore=skip)
    return plugin_path(out), list(entries)
