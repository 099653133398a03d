"""The source files of the Brain-Score Language plugin that :mod:`.folder` writes.

``benchmark.py`` and ``test.py`` are the same for every plugin (they read ``reference.json``, which
:mod:`.folder` computes); ``__init__.py`` holds one literal ``benchmark_registry['<id>']`` line
per benchmark, because Brain-Score finds a plugin by scanning the ``__init__.py`` files of its
benchmark folders for that text; ``requirements.txt`` pins the package, which carries the metric
(``pip install -r`` of it is what Brain-Score runs when it loads the plugin).
"""
from __future__ import annotations

from .._version import __version__

HEADER = f"written by `contstim brainscore plugin` (contstim-bench {__version__}): regenerate it rather than edit it"

PLUGIN = "golan2023"
"""The plugin's folder under ``brainscore_language/benchmarks/``."""

PREFIX = "Golan2023"
"""Every benchmark identifier of the plugin: ``Golan2023.<experiment or round>-<measure>``."""

REQUIREMENTS = (
    f"contstim-bench=={__version__}",
    # pyarrow 26 imports under Brain-Score's numpy<2 pin, then `datasets` fails on it (pip's check misses it)
    "pyarrow<26",
)

BENCHMARK_PY = f'''"""Golan et al. (2023), controversial sentence pairs, as Brain-Score Language benchmarks
({HEADER}).

Each benchmark asks the subject for the reading time (summed surprisal, in bits) of every sentence
of an experiment (or of a round of the benchmark), one ``digest_text`` call per sentence, turns
them into natural-log probabilities and hands them to contstim-bench's one evaluation driver,
which computes what ``contstim evaluate`` computes for a new model: per-participant binarised
accuracy (``-accuracy``) or signed-rank cosine similarity (``-srcs``), their noise ceilings and
standard errors.  The score is the measure over its lower noise ceiling (Brain-Score's
``ceiling_normalize``: clipped to [0, 1], the value before clipping kept), with ``raw``,
``ceiling`` (lower and upper bound), ``error`` (the standard error across participants or
groups) and ``contstim_result`` (the whole contstim result, as JSON) as attributes.

What it measures: with a subject whose tokenizer adds a start token, log P(sentence | start
token), the package's convention, so its raw values are ``contstim evaluate``'s; with one whose
tokenizer adds none, Brain-Score leaves the first token out (log P(w2 ... wn | w1)).
"""
import json
import warnings
from pathlib import Path

from brainscore_core.benchmarks import BenchmarkBase
from brainscore_core.metrics import Score
from brainscore_language.artificial_subject import ArtificialSubject
from brainscore_language.utils.ceiling import ceiling_normalize
from tqdm import tqdm

from contstim_bench.brainscore_plugin import hooks
from contstim_bench.citations import GOLAN_2023

HERE = Path(__file__).parent
DATA = HERE / "data"
"""The experiments' stimuli and human trials, and the rounds, as contstim-bench's built datasets."""
REFERENCE = json.loads((HERE / "reference.json").read_text(encoding="utf-8"))
"""Per benchmark: what it evaluates, its ceilings and a reference subject's values, computed by
contstim-bench when the plugin was written."""


def subject_name(candidate) -> str:
    # ArtificialSubject.identifier is a method; brainscore_language.load_model replaces it by a string
    ident = candidate.identifier
    return str(ident() if callable(ident) else ident)


class Golan2023Benchmark(BenchmarkBase):
    def __init__(self, identifier: str):
        self.spec = REFERENCE["benchmarks"][identifier]
        ceiling = Score(self.spec["ceiling"])
        ceiling.attrs["upper"] = self.spec["ceiling_upper"]
        super().__init__(identifier=identifier, version=self.spec["version"], parent="behavior",
                         ceiling=ceiling, bibtex=GOLAN_2023)

    def __call__(self, candidate: ArtificialSubject) -> Score:
        benchmark = self.spec["contstim_benchmark"]
        candidate.start_behavioral_task(ArtificialSubject.Task.reading_times)
        bits = {{}}
        with warnings.catch_warnings():  # xarray 2022.3 warns on every digest_text under pandas 2
            warnings.simplefilter("ignore", FutureWarning)
            for sentence in tqdm(hooks.sentences(benchmark, DATA), desc=f"{{self.identifier}}: reading",
                                 unit="sentence"):
                bits[sentence] = hooks.surprisal_of(candidate.digest_text(sentence)["behavior"].values)
        logprobs = hooks.logprobs_from_surprisal(bits)
        result = hooks.evaluate_logprobs(benchmark, DATA, logprobs, subject_name(candidate),
                                         details={{"brainscore_benchmark": self.identifier}})
        values = hooks.score_values(result, self.spec["measure"])
        hooks.check_ceiling(values, self.spec)
        raw = Score(values["raw"])
        raw.attrs["error"] = values["error"]
        score = ceiling_normalize(raw, self.ceiling)
        score.attrs["error"] = values["error"]
        score.attrs["ceiling_upper"] = values["ceiling_upper"]
        score.attrs["units"] = values["units"]
        score.attrs["contstim_result"] = json.dumps(result)
        return score
'''

TEST_PY = f'''"""Tests of the Golan2023 benchmarks ({HEADER}).

A subject that reads every sentence with the log-probabilities of a reference model (stored in the
plugin's data) must score what contstim-bench computed for that model when it wrote the plugin.
"""
import math

import numpy as np
import pytest
from brainscore_core.supported_data_standards.brainio.assemblies import BehavioralAssembly
from brainscore_language import load_benchmark
from brainscore_language.artificial_subject import ArtificialSubject

from contstim_bench.brainscore_plugin import hooks

from .benchmark import DATA, REFERENCE


class ReferenceSubject(ArtificialSubject):
    def __init__(self, logprobs):
        self.logprobs = logprobs

    def identifier(self):
        return "reference"

    def start_behavioral_task(self, task):
        if task != ArtificialSubject.Task.reading_times:
            raise ValueError(f"the reference subject reads (reading_times) and does nothing else, not {{task!r}}")

    def digest_text(self, text):
        bits = -self.logprobs[text] / math.log(2)
        return {{"behavior": BehavioralAssembly([bits], coords={{"stimulus": ("presentation", [text])}},
                                                dims=["presentation"])}}


@pytest.mark.parametrize("identifier", sorted(REFERENCE["benchmarks"]))
def test_reference_subject(identifier):
    spec = REFERENCE["benchmarks"][identifier]
    benchmark = load_benchmark(identifier)
    name, logprobs = hooks.reference_subject(spec["contstim_benchmark"], DATA, spec["reference"]["subject"])
    score = benchmark(ReferenceSubject(logprobs))
    assert float(score.raw) == pytest.approx(spec["reference"]["raw"], abs=1e-9)
    assert float(benchmark.ceiling) == pytest.approx(spec["ceiling"], abs=1e-12)
    expected = min(max(spec["reference"]["raw"] / spec["ceiling"], 0.0), 1.0)
    assert float(score) == pytest.approx(expected, abs=1e-9)
'''


def init_py(benchmarks: list[str]) -> str:
    """The plugin's ``__init__.py``: one registration per benchmark identifier."""
    lines = [f'"""The Golan2023 benchmarks of Brain-Score Language ({HEADER})."""',
             "from brainscore_language import benchmark_registry",
             "",
             "from .benchmark import Golan2023Benchmark",
             ""]
    for ident in benchmarks:
        if "'" in ident or "\\" in ident:
            raise ValueError(f"benchmark identifier {ident!r}: no quote or backslash")
        lines.append(f"benchmark_registry['{ident}'] = lambda: Golan2023Benchmark('{ident}')")
    return "\n".join(lines) + "\n"


def requirements_txt() -> str:
    """The plugin's ``requirements.txt``."""
    return f"# {HEADER}\n" + "\n".join(REQUIREMENTS) + "\n"
