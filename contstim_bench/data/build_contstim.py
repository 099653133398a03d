"""Build the ``contstim`` dataset (Golan et al. 2023) from the raw upstream files.

Configs: ``trials`` (splits ``main``, ``pll``), ``sentences`` (``main``, ``pll``),
``natural_controversial_pairs``, ``synthetic_triplets`` (``main``, ``pll``), ``vocabulary``,
``function_words`` and ``natural_pool`` (``synthesis`` and, when its source file is present,
``selection``).  Every raw file is read through :func:`contstim_bench.data.sources.resolve`
(verified by git blob SHA-1) and pickles through :mod:`contstim_bench.data.safe_pickle`.

The ``main`` experiment's human data (``contstim_Aug2021_n100_results_anon.csv``) is not in the
shared data folder.  Without it the build succeeds, omits the ``trials``/``main`` split and
says so in the card (a ``MISSING`` line); :func:`load_trials` then raises FileNotFoundError
naming the file, its pinned URL and its blob SHA-1.  A results file in the same raw layout can
be supplied explicitly with ``main_results_csv=`` (``--main-results FILE``): it is validated by
its columns and contents rather than its hash, and the card records its name and SHA-1.
"""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from ..study import MAIN_MODELS, MODEL_DESCRIPTIONS, PLL_MODELS, TRIAL_COLUMNS
from . import safe_pickle, sources
from .contstim_card import CITATION, DESCRIPTION, column_docs
from .contstim_tables import (
    add_sentence_columns,
    function_words_table,
    natural_pairs_table,
    pool_table,
    read_lines,
    sentences_from_probs_dict,
    sentences_from_trial_columns,
    triplets_table,
    vocabulary_table,
)
from .contstim_trials import TrialsResult, align_trials, pair_id, targeting_from_stimuli
from .writer import ConfigSpec, DatasetSpec

NAME = "contstim"
ROOT = "contstimlang/"
MAIN_RESULTS = ROOT + "behavioral_results/contstim_Aug2021_n100_results_anon.csv"
PLL_RESULTS = ROOT + "behavioral_results/contstim_Nov2022_30_participants_anon.csv"
NATURAL_PAIRS = ROOT + "natural_controversial_sentences/sents_reddit_natural_June2021_selected.csv"
_MAIN_SYN = ROOT + "synthesized_sentences/20210224_controverisal_sentence_pairs_heuristic_natural_init_allow_rep/"
_PLL_SYN = ROOT + "synthesized_sentences/202210_bidirectional_prob_calc_exp/controverisal_sentence_pairs_natural_initialization/"
TRIPLETS = {
    "main": (_MAIN_SYN + "8_word_9_models_100_sentences_per_pair.csv", _MAIN_SYN + "8_word_9_models_100_sentences_per_pair_best10.csv"),
    "pll": (_PLL_SYN + "8_word_6_models_95_sentences_per_pair.csv", _PLL_SYN + "8_word_6_models_95_sentences_per_pair_best40.csv"),
}
STIM_PROBS = ROOT + "resources/contstim_stim_probs_dict.pkl"
PREPS = ROOT + "resources/preps.pkl"
VOCAB = {k: ROOT + f"resources/vocabulary/{k}.pkl" for k in ("vocab_low", "vocab_low_freqs", "vocab_cap", "vocab_cap_freqs")}
POOL_SYNTHESIS = ROOT + "resources/sentence_corpora/natural_sentences_for_synthetic_controversial_sentence_pair_optimization.txt"
POOL_SELECTION = ROOT + "resources/sentence_corpora/natural_sentences_for_natural_controversial_sentence_pair_selection.txt"
POOL_PROBS = ROOT + "resources/precomputed_sentence_probabilities/natural_sentences_for_natural_controversial_sentence_pair_selection_probs_{model}.npy"
LICENSE_FILE = ROOT + "LICENSE.MD"

Source = str | os.PathLike | None
"""A raw-data folder (``--source``) or None for the default resolution order."""


def read_csv(path: str | os.PathLike) -> pd.DataFrame:
    """A raw CSV with empty cells as the only missing values (a sentence "NA" stays a string)."""
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def missing_main_message() -> str:
    """How to obtain the absent main-experiment results file (URL and blob SHA-1 pinned)."""
    src = sources.entry(MAIN_RESULTS)
    return (
        f"the main experiment's results file {MAIN_RESULTS!r} is not available, so the `trials` "
        f"split `main` was not built. Get it from {src.url} (git blob SHA-1 {src.url_blob_sha1}), put it "
        f"at <data dir>/{MAIN_RESULTS} (the data dir: ${sources.ENV_RAW_DATA}, or `contstim data build --source DIR`) "
        f"and rebuild with `contstim data build --only contstim`; or supply a results file in the same raw layout "
        f"with `contstim data build --only contstim --main-results FILE`"
    )


def _resolve_optional(rel_path: str, source: Source) -> Path | None:
    """A verified raw file, or None when it cannot be found or fetched (corrupt files raise)."""
    try:
        return sources.resolve(rel_path, source)
    except sources.CorruptSourceError:
        raise
    except sources.SourceError:
        return None


def build_trials(experiment: str, raw: pd.DataFrame, name: str, source: Source = None) -> TrialsResult:
    """Align one experiment's raw Gorilla export ``raw`` (read from file ``name``) with the
    targeting of its tested stimuli (see :mod:`.contstim_trials`)."""
    _, best = TRIPLETS[experiment]
    triplets = read_csv(sources.resolve(best, source))
    natural = read_csv(sources.resolve(NATURAL_PAIRS, source)) if experiment == "main" else None
    targeting = targeting_from_stimuli(triplets, natural)
    return align_trials(raw, experiment, targeting, name)


def load_trials(experiment: str, datasets_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """The ``trials`` split of one experiment as a pandas DataFrame in the schema of
    :data:`contstim_bench.study.TRIAL_COLUMNS` (the dataset is built on first use).

    FileNotFoundError for ``main`` when it was built without the main results file: the message
    names the raw file, its pinned URL and its expected git blob SHA-1.
    """
    from .load import dataset_folder

    if experiment not in TRIPLETS:
        raise ValueError(f"unknown experiment {experiment!r}; known: {', '.join(TRIPLETS)}")
    path = dataset_folder(NAME, datasets_dir) / "trials" / f"{experiment}.parquet"
    if not path.exists():
        if experiment == "main":
            raise FileNotFoundError(missing_main_message())
        raise FileNotFoundError(f"{path} is missing: rebuild with `contstim data build --only contstim`")
    return pq.read_table(path).to_pandas()


def build_spec(source: Source = None, main_results_csv: str | os.PathLike | None = None) -> DatasetSpec:
    """Read, verify and convert every raw file of the dataset (see the module docstring).

    ``main_results_csv``: an explicit results file in the raw Gorilla layout of the main
    experiment, used instead of the pinned upstream file (checked by its columns and contents,
    not by hash; the card records it).
    """
    notes: list[str] = []
    provenance: list[str] = []

    def res(rel: str) -> Path:
        provenance.append(rel)
        return sources.resolve(rel, source)

    # trials
    pll_path = res(PLL_RESULTS)
    pll_raw = read_csv(pll_path)
    trials = {}
    trials["pll"] = build_trials("pll", pll_raw, Path(PLL_RESULTS).name, source)
    provenance.append(TRIPLETS["pll"][1])
    main_raw = None
    if main_results_csv is not None:
        main_path = Path(main_results_csv)
        if not main_path.is_file():
            raise FileNotFoundError(f"main-experiment results file {main_path} does not exist "
                                    f"(`contstim data build --main-results FILE`)")
        main_raw = read_csv(main_path)
        trials["main"] = build_trials("main", main_raw, main_path.name, source)
        notes.append(
            f"- OVERRIDE: the `trials` split `main` was built from the explicitly supplied file "
            f"`{main_path.name}` (git blob SHA-1 {sources.git_blob_sha1(main_path)}), validated by its raw "
            f"layout, NOT from the pinned upstream file {MAIN_RESULTS} "
            f"(blob {sources.entry(MAIN_RESULTS).blob_sha1})."
        )
    else:
        main_path = _resolve_optional(MAIN_RESULTS, source)
        if main_path is None:
            notes.append(f"- MISSING: {missing_main_message()}.")
        else:
            provenance.append(MAIN_RESULTS)
            main_raw = read_csv(main_path)
            trials["main"] = build_trials("main", main_raw, Path(MAIN_RESULTS).name, source)
    if "main" in trials:
        provenance += [TRIPLETS["main"][1], NATURAL_PAIRS]
    for exp in ("main", "pll"):
        if exp in trials:
            t = trials[exp]
            agree, compared = t.raw_model_column_agreement
            notes.append(
                f"- `trials`/`{exp}`: {t.table.num_rows:,} rows from {t.n_raw_rows:,} raw responses; "
                f"{t.n_repeated_dropped} repeated presentations of a pair to the same participant "
                f"dropped (earliest kept). The raw `sentence*_model` column agrees with the derived "
                f"accept model in {agree:,} of {compared:,} targeted sentences."
            )

    # sentences
    stim_probs = safe_pickle.load(res(STIM_PROBS))
    sentences = {
        "main": sentences_from_probs_dict(stim_probs),
        "pll": sentences_from_trial_columns(pll_raw, PLL_MODELS, Path(PLL_RESULTS).name),
    }
    readouts = [m for m in PLL_MODELS if m.endswith("_has_a_mouth")]
    if main_raw is not None and all(f"sentence{k}_{m}_prob" in main_raw.columns for m in readouts for k in (1, 2)):
        # PLL read-outs of the masked models (Fig. S8a), when the main results file carries them
        sentences["main"] = add_sentence_columns(
            sentences["main"], sentences_from_trial_columns(main_raw, readouts, "main results"), readouts, "main results")
        notes.append(f"- `sentences`/`main`: PLL read-outs ({', '.join(readouts)}) from the main results file.")

    for split, table in sentences.items():
        for model in table.schema.names[1:]:
            n_inf = sum(1 for v in table.column(model).to_pylist() if v == float("-inf"))
            if n_inf:
                notes.append(
                    f"- `sentences`/`{split}`: `{model}` assigns log-probability -inf to {n_inf} "
                    "sentence(s); kept as published."
                )

    # stimulus tables
    natural = natural_pairs_table(read_csv(res(NATURAL_PAIRS)), pair_id)
    triplets = {}
    for exp, (cand, best) in TRIPLETS.items():
        triplets[exp] = triplets_table(read_csv(res(cand)), read_csv(res(best)), Path(cand).name)

    vocab_raw = {k: safe_pickle.load(res(p)) for k, p in VOCAB.items()}
    vocabulary = vocabulary_table(
        vocab_raw["vocab_low"], vocab_raw["vocab_low_freqs"], vocab_raw["vocab_cap"], vocab_raw["vocab_cap_freqs"]
    )
    function_words = function_words_table(safe_pickle.load(res(PREPS)))

    pool = {"synthesis": pool_table(read_lines(res(POOL_SYNTHESIS).read_text(encoding="utf-8"), "synthesis pool"), MAIN_MODELS)}
    # the pool's precomputed log-probabilities are verified whether or not its sentences are here
    arrays = load_pool_arrays(res)
    selection_path = _resolve_optional(POOL_SELECTION, source)
    if selection_path is None:
        src = sources.entry(POOL_SELECTION)
        n = len(next(iter(arrays.values())))
        notes.append(
            f"- MISSING: the `natural_pool` split `selection` ({n:,} sentences) was not built: its "
            f"source {POOL_SELECTION!r} is not available. Get it from {src.url} (git blob SHA-1 "
            f"{src.url_blob_sha1}) and rebuild; its precomputed log-probabilities ({len(arrays)} arrays of "
            f"{n:,} values) were verified by git blob SHA-1, shape and range in this build."
        )
    else:
        provenance.append(POOL_SELECTION)
        lines = read_lines(selection_path.read_text(encoding="utf-8"), "selection pool")
        pool["selection"] = pool_table(lines, MAIN_MODELS, arrays, "selection pool")
    res(LICENSE_FILE)

    docs = column_docs()
    configs = [
        ConfigSpec("trials", {k: trials[k].table for k in ("main", "pll") if k in trials},
                   docs["trials"][0], docs["trials"][1]),
        ConfigSpec("sentences", sentences, docs["sentences"][0], docs["sentences"][1]),
        ConfigSpec("natural_controversial_pairs", {"main": natural}, *docs["natural_controversial_pairs"]),
        ConfigSpec("synthetic_triplets", triplets, *docs["synthetic_triplets"]),
        ConfigSpec("vocabulary", {"train": vocabulary}, *docs["vocabulary"]),
        ConfigSpec("function_words", {"train": function_words}, *docs["function_words"]),
        ConfigSpec("natural_pool", pool, *docs["natural_pool"]),
    ]
    assert list(configs[0].splits.values())[0].schema.names == list(TRIAL_COLUMNS)
    return DatasetSpec(
        name=NAME,
        pretty_name="Controversial sentence pairs (Golan et al. 2023)",
        license="mit",
        description=DESCRIPTION + _model_lines(),
        citation=CITATION,
        sources=_source_lines(provenance),
        configs=configs,
        notes="\n".join(notes),
    )


def load_pool_arrays(resolve) -> dict:
    """The selection pool's precomputed natural-log probabilities, one float64 array per model
    of :data:`MAIN_MODELS`, each resolved with ``resolve`` (verified by git blob SHA-1 against the
    manifest) and checked: a 1-D float64 array, the same length for every model, no NaN, no value
    above 0 (``-inf`` is kept as published).  CorruptSourceError / ValueError name the file."""
    import numpy as np

    arrays = {}
    for model in MAIN_MODELS:
        path = resolve(POOL_PROBS.format(model=model))
        try:
            arr = np.load(path, allow_pickle=False)
        except ValueError as exc:
            raise ValueError(f"{path} is not a plain numpy array: {exc}") from None
        if arr.dtype != np.float64 or arr.ndim != 1:
            raise ValueError(f"{path}: expected a 1-D float64 array of log-probabilities, got {arr.dtype} {arr.shape}")
        bad = np.flatnonzero(np.isnan(arr) | (arr > 0))
        if bad.size:
            raise ValueError(f"{path}: {bad.size} value(s) are NaN or above 0 (not natural-log probabilities), "
                             f"e.g. line {int(bad[0])}: {arr[bad[0]]!r}")
        arrays[model] = arr
    lengths = {m: len(a) for m, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"the selection pool's precomputed log-probability arrays differ in length: {lengths}")
    return arrays


def _model_lines() -> str:
    return "\n\nReference models (column names):\n\n" + "\n".join(
        f"- `{m}`: {d}" for m, d in MODEL_DESCRIPTIONS.items()
    )


def _source_lines(paths: list[str]) -> list[str]:
    lines = []
    for rel in dict.fromkeys(paths):
        e = sources.entry(rel)
        lines.append(f"`{e.repo}` @ `{e.commit}`: `{e.upstream_path}` (git blob {e.blob_sha1}; {e.license})")
    return sorted(lines)

