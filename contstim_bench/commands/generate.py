"""``contstim generate synthetic|select|natural|pool|design``: fresh controversial sentence pairs
(Golan et al. 2023) and the trial lists of an experiment that tests them.

* ``synthetic``: synthetic triplets by word-level search (Eq. 2), one job per model pair x start
  sentence, resumable and shardable with ``accelerate launch -m contstim_bench generate
  synthetic ...`` (``python -m contstim_bench`` is the ``contstim`` command as a module).
  Model pairs: every pair of ``--models``, or each of ``--candidates`` against each of
  ``--references`` (both directions).
* ``select``: the K most controversial triplets per model pair (Eq. 4), one natural sentence per
  decile of each model's distribution, by integer programming.
* ``natural``: controversial natural-sentence pairs from a pool by integer programming (Eq. 5-6).
* ``pool``: a natural-sentence pool from your own text, with the paper's filters.
* ``design``: participant groups' trial lists (``trials`` layout without ratings).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._common import add_run_args, run_options

from ..scoring.lockstep import DEFAULT_WORKERS
from ._common import DATASETS_HELP, positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("generate", help="generate controversial sentence pairs and experiment designs",
                       description=__doc__.split("\n\n", 1)[1].replace("``", "`"),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_generate_commands(p)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def add_generate_commands(parser: argparse.ArgumentParser) -> None:
    """Add the ``synthetic``, ``select``, ``natural``, ``pool`` and ``design`` sub-commands to ``parser``."""
    gsub = parser.add_subparsers(dest="generate_command", metavar="COMMAND")

    s = gsub.add_parser("synthetic", help="synthesise controversial triplets (Eq. 2 word-level search)",
                        description="For every model pair and start sentence, synthesise S1 (accepted by m1, "
                                    "rejected by m2) and S2 (the reverse).  Resumable: rerun the same command "
                                    "after an interruption.  Shard with `accelerate launch -m "
                                    "contstim_bench generate synthetic ...`.  Prints, per model pair, the share "
                                    "of triplets whose search found no replacement (S = N).")
    _pairing_args(s)
    s.add_argument("--start-sentences", type=int, required=True, metavar="N",
                   help="number of natural start sentences drawn (with --seed) from the pool")
    s.add_argument("--pool", default=None, metavar="FILE|contstim[:SPLIT]",
                   help=POOL_HELP)
    s.add_argument("--vocabulary", default=None, metavar="FILE|contstim",
                   help="replacement words: .txt one word per line, or .parquet/.csv with columns word,capitalized "
                        "(default: the contstim dataset's 29,157-entry vocabulary)")
    s.add_argument("--vocabulary-size", type=int, default=None, metavar="N",
                   help="only the N most frequent words of the vocabulary's first-word and other-word lists, the "
                        "42 function words kept (needs word frequencies: the contstim vocabulary or a file of "
                        "`contstim vocab build`); a smaller vocabulary makes each causal-model search step faster")
    s.add_argument("--seed", type=int, default=0, help="global seed (start sentences and every job's seed)")
    s.add_argument("--max-failures", type=int, default=8,
                   help="stop a search after this many failed position attempts in a row (default 8)")
    s.add_argument("--max-attempts", type=int, default=None,
                   help="cap on position attempts per search (default: none)")
    s.add_argument("--threshold", type=float, default=-10.0,
                   help="causal shortlist threshold, natural log (default -10)")
    s.add_argument("--search", choices=("lazy", "plain"), default="lazy",
                   help="lazy (default): causal LMs score candidates only as far as the ranking needs; plain: every "
                        "candidate with every model (slower; the same triplets)")
    s.add_argument("--lockstep", type=positive_int, default=DEFAULT_WORKERS, metavar="N",
                   help="searches run at once, whose causal-LM forward passes are merged into one per round "
                        f"(each job is two searches; default {DEFAULT_WORKERS}; 1: one job at a time; the same "
                        "triplets)")
    add_run_args(s, device="torch device (default: the process's accelerate device)")
    s.add_argument("--no-cache", action="store_true", help="do not use the on-disk score cache")
    s.add_argument("--quiet", action="store_true", help="no progress bar and no per-attempt progress lines")
    s.add_argument("--datasets", default=None, help=DATASETS_HELP)
    s.add_argument("--output", required=True, metavar="DIR", help="run folder (created; resumed when it exists)")
    s.set_defaults(func=_synthetic)

    c = gsub.add_parser("select", help="choose the K most controversial triplets per model pair (Eq. 4, ILP)")
    c.add_argument("--triplets", required=True, metavar="DIR|FILE|contstim:main",
                   help="output folder of `generate synthetic`, a triplet parquet, or published triplets")
    c.add_argument("--per-pair", type=int, default=10, metavar="K", help="triplets per model pair (default 10)")
    c.add_argument("--bins", type=int, default=10,
                   help="bins of each model's natural-sentence log-probabilities (default 10: deciles); "
                        "K must be a multiple")
    c.add_argument("--criterion", choices=("controversiality", "worst_rank"), default="controversiality",
                   help="maximise Eq. 4 (default) or upstream's worst-rank utility")
    c.add_argument("--solver", choices=("cbc", "highs"), default="cbc")
    c.add_argument("--fill", action="store_true",
                   help="when a model pair cannot fill every bin, take what each bin holds (up to K/bins per bin) "
                        "instead of stopping; the output's card records that the bins are unbalanced")
    c.add_argument("--quiet", action="store_true", help="do not print the table of eligible triplets per bin")
    c.add_argument("--output", required=True, metavar="DIR",
                   help="folder whose triplets/ dataset is written (replaced only if it is a dataset the package wrote "
                        "and holds nothing else)")
    c.set_defaults(func=_select)

    n = gsub.add_parser("natural", help="select controversial natural-sentence pairs (Eq. 5-6, ILP)",
                        description="Score a natural-sentence pool with every model and select, by integer "
                                    "programming, the pairs on which each model pair disagrees most.  "
                                    "precomputed:NAME models score the sentences the dataset has values for "
                                    "(the contstim stimuli; the 231,725-sentence selection pool when built, or "
                                    "given as --pool FILE); --restrict-to-scorable keeps the pool sentences every "
                                    "model can score.")
    _pairing_args(n)
    n.add_argument("--pool", default=None, metavar="FILE|contstim[:SPLIT]", help=POOL_HELP)
    n.add_argument("--restrict-to-scorable", action="store_true",
                   help="keep only the pool sentences every model can score (precomputed: models have values for "
                        "some sentences only); without it such a sentence is an error that lists them")
    n.add_argument("--per-pair", type=int, default=10, metavar="K", help="pairs per model pair (default 10)")
    n.add_argument("--solver", choices=("cbc", "highs"), default="cbc")
    add_run_args(n)
    n.add_argument("--no-cache", action="store_true")
    n.add_argument("--quiet", action="store_true")
    n.add_argument("--datasets", default=None, help=DATASETS_HELP)
    n.add_argument("--output", required=True, metavar="DIR",
                   help="folder that receives natural/ (replaced only if it is a dataset the package wrote and holds "
                        "nothing else), pool_arrays/ and models.json")
    n.set_defaults(func=_natural)

    o = gsub.add_parser("pool", help="a natural-sentence pool from your own text, with the paper's filters",
                        description="Split UTF-8 text files into sentences and keep those that pass Golan et al. "
                                    "(2023)'s filters, in this order, each counted: length (exactly --words words), "
                                    "vocabulary (every word in the shared vocabulary: the first word in its "
                                    "capitalised first-word list, a later word in either list), excluded (no word of --exclude), model_vocabulary "
                                    "(every word known to each word-level model of --models), repeated (no word but "
                                    "the function words twice), duplicate (each sentence once). The pool (one "
                                    "sentence per line) is what `generate natural --pool` and `generate synthetic "
                                    "--pool` read.")
    o.add_argument("--corpus", required=True, nargs="+", metavar="FILE",
                   help="UTF-8 text files; each line is split into sentences after . ! or ? and white space")
    o.add_argument("--out", required=True, metavar="POOL", help="the pool file to write (one sentence per line; "
                   "replaced through a temporary file; never one of the inputs)")
    o.add_argument("--words", type=positive_int, default=8, metavar="N",
                   help="sentence length in words (default and paper: 8)")
    o.add_argument("--vocabulary", default="contstim", metavar="contstim|FILE|none",
                   help="shared vocabulary every word must be in (default and paper: contstim, the 29,157 entries "
                        "of SUBTLEX words seen 300+ times in the n-gram/RNN training corpus); a vocabulary file as "
                        "`generate synthetic --vocabulary` reads; none: no vocabulary filter")
    o.add_argument("--exclude", default=None, metavar="FILE",
                   help="words no sentence may contain, one per line, case-insensitive (the paper removed "
                        "'inappropriate language' with a list it did not publish; default: none)")
    o.add_argument("--models", default=None, metavar="SPEC,SPEC[,...]",
                   help="word-level models (kenlm:, rnn:, lstm:) whose vocabulary every word must be in, as the "
                        "paper required of its n-gram and recurrent models; word-piece models remove nothing")
    o.add_argument("--function-words", default=None, metavar="FILE",
                   help="words that may repeat in a sentence, one per line (default and paper: the 42 "
                        "determiners and prepositions of contstimlang's preps.pkl)")
    o.add_argument("--datasets", default=None, help=DATASETS_HELP)
    add_run_args(o, batch_size="accepted with every command's model options; a vocabulary lookup runs no batch",
                 max_tokens="accepted with every command's model options; a vocabulary lookup runs no batch")
    o.set_defaults(func=_pool)

    d = gsub.add_parser("design", help="participant groups' trial lists from selected pairs and triplets")
    d.add_argument("--natural", default=None, metavar="DIR", help="output folder of `generate natural`")
    d.add_argument("--triplets", default=None, metavar="DIR", help="output folder of `generate select`")
    d.add_argument("--pool", default=None, metavar="FILE|contstim[:SPLIT]",
                   help="pool for random natural pairs and catch trials (default: contstim:start, the held-out "
                        "start part of the contstim synthesis pool)")
    d.add_argument("--groups", type=int, default=10, help="participant groups (default 10)")
    d.add_argument("--random-pairs", type=int, default=9, help="randomly sampled natural pairs per group (default 9)")
    d.add_argument("--catch-trials", type=int, default=12, help="natural-vs-shuffled trials per group (default 12)")
    d.add_argument("--per-group", type=positive_int, default=1, metavar="N",
                   help="trials of each condition and model pair per group: N natural pairs, N of each triplet "
                        "condition (default 1, the paper's; `contstim round plan` sizes it)")
    d.add_argument("--plan", default=None, metavar="PLAN",
                   help="the folder (or plan.json) of `contstim round plan`: its plan travels with the design, and "
                        "`experiment ingest` records it in the round, so that `evaluate` checks the round against it")
    d.add_argument("--experiment", default="generated", help="value of the experiment column")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--no-model-scores", action="store_true",
                   help="do not write OUTPUT/models (the targeted models' log-probabilities of every sentence of the "
                        "design, the reference panel of the benchmark round it becomes)")
    d.add_argument("--datasets", default=None, help=DATASETS_HELP)
    add_run_args(d)
    d.add_argument("--no-cache", action="store_true")
    d.add_argument("--output", required=True, metavar="DIR",
                   help="folder that receives design/ and models/ (each replaced only if it is a dataset the package "
                        "wrote and holds nothing else) and, with --plan, plan.json")
    d.set_defaults(func=_design)


POOL_HELP = ("natural-sentence pool: a text file (one sentence per line), contstim (the whole 6,113-sentence "
             "synthesis pool), contstim:start / contstim:train (its two held-apart parts) or contstim:SPLIT of the "
             "natural_pool config (default: contstim:start, held out from the default corpus of `contstim train`)")


def _pairing_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--models", default=None, metavar="SPEC,SPEC[,...]",
                   help="model specs, comma-separated, every pair contrasted; NAME=SPEC names a model in the output "
                        "(default: the spec)")
    p.add_argument("--candidates", default=None, metavar="SPEC[,SPEC]",
                   help="new model(s), each contrasted with each of --references in both directions "
                        "(instead of --models)")
    p.add_argument("--references", default=None, metavar="SPEC,SPEC[,...]",
                   help="reference models for --candidates (NAME=SPEC allowed; precomputed:NAME only in `natural`)")


def _model_files(models) -> list[tuple[str, str]]:
    """(``--models``, path) of every local file the given models are read from."""
    from ..driver import model_inputs
    from ..scoring.named import parse_named_specs

    if not models:
        return []
    return [i for m in parse_named_specs(models) for i in model_inputs(m.spec, "--models")]


def _all_model_files(args) -> list[tuple[str, str]]:
    return [i for flag in ("models", "candidates", "references")
            for i in _model_files(getattr(args, flag, None)) if i]


def _keep_inputs(output: str, written: tuple[str, ...], reads: list[tuple[str, str | None]]) -> None:
    """Refuse, before any work, a run whose files or folders ``written`` into ``output`` would
    overwrite one of its inputs ``reads`` (:func:`contstim_bench.staging.check_inputs_kept`)."""
    from ..staging import check_inputs_kept

    check_inputs_kept([("--output", Path(output) / name) for name in written], reads)


def _synthetic(args) -> int:
    from ..generate.synthetic_run import JOBS_DIR, RUNNING_DIR, synthesize
    from ..generate.triplet_table import RUN_FILE, TRIPLETS_DATASET

    from ..generate.search_records import SearchSettings

    _keep_inputs(args.output, (RUN_FILE, JOBS_DIR, RUNNING_DIR, TRIPLETS_DATASET),
                 [("--pool", args.pool), ("--vocabulary", args.vocabulary), *_all_model_files(args)])

    settings = SearchSettings(max_failures=args.max_failures, max_attempts=args.max_attempts, threshold=args.threshold,
                              strategy=args.search)
    done = synthesize(args.output, args.models, args.start_sentences, pool=args.pool, vocabulary=args.vocabulary,
                      seed=args.seed, settings=settings, options=run_options(args),
                      vocabulary_size=args.vocabulary_size, datasets_dir=args.datasets, candidates=args.candidates,
                      references=args.references, lockstep=args.lockstep)
    if done is not None:  # process 0 of the run
        print(f"wrote {done.folder} ({done.triplets} triplets; constraint holds for {done.constraint_holds}; "
              f"mean controversiality {done.mean_controversiality:.3f} nats)")
        for pair in done.pairs:
            print(f"  {pair.line()}")
    return 0


def _select(args) -> int:
    from ..generate.select_output import select_and_write_triplets
    from ..generate.triplet_table import TRIPLETS_DATASET

    # a run folder given as --triplets is read from its triplets/ folder, which --output replaces
    _keep_inputs(args.output, (TRIPLETS_DATASET,),
                 [("--triplets", args.triplets), ("--triplets", str(Path(args.triplets) / TRIPLETS_DATASET))])
    log = None if args.quiet else (lambda text: print(text, file=sys.stderr))
    done = select_and_write_triplets(args.triplets, args.output, per_pair=args.per_pair, n_bins=args.bins,
                                     criterion=args.criterion, solver=args.solver, fill=args.fill, log=log)
    result = done.selection
    for (m1, m2), value in result.objective.items():
        n = result.short.get((m1, m2), args.per_pair)
        unbalanced = f" (bins unbalanced: {n} of {args.per_pair})" if (m1, m2) in result.short else ""
        print(f"{m1} vs {m2}: {n} triplets{unbalanced}, {args.criterion} total {value:.3f} "
              f"({result.reports[(m1, m2)].status})")
    print(f"wrote {done.folder} ({len(result.selected)} selected of {len(result.triplets)})")
    return 0


def _natural(args) -> int:
    from ..generate.natural_run import MODELS_FILE, POOL_ARRAYS, select_natural
    from ..generate.select_output import NATURAL_DATASET

    _keep_inputs(args.output, (NATURAL_DATASET, POOL_ARRAYS, MODELS_FILE), [("--pool", args.pool),
                                                                          *_all_model_files(args)])
    done = select_natural(args.models, args.output, pool=args.pool, per_pair=args.per_pair, solver=args.solver,
                          options=run_options(args), datasets_dir=args.datasets,
                          candidates=args.candidates, references=args.references,
                          restrict_to_scorable=args.restrict_to_scorable)
    if done is None:  # a process other than 0 of `accelerate launch`: process 0 writes
        return 0
    result = done.selection
    print(f"wrote {done.folder} ({len(result.pairs)} pairs; objective {result.objective:.4f}, {result.report.status}, "
          f"{result.n_candidates} candidate sentences of {result.n_pool})")
    for (m1, m2), rows in result.pairs.groupby(["model_1", "model_2"], sort=False):
        print(f"  {m1} vs {m2}: {len(rows)} pairs")
    return 0


def _pool(args) -> int:
    from ..generate.pool import make_pool
    from ..staging import check_inputs_kept

    check_inputs_kept([("--out", args.out)], [("--corpus", c) for c in args.corpus]
                      + [("--exclude", args.exclude), ("--function-words", args.function_words),
                         ("--vocabulary", args.vocabulary if args.vocabulary not in ("contstim", "none") else None)]
                      + _model_files(args.models))
    path, pool = make_pool(args.corpus, args.out, words=args.words, vocabulary=args.vocabulary, exclude=args.exclude,
                           models=args.models, function_words=args.function_words, datasets_dir=args.datasets,
                           options=run_options(args), log=lambda text: print(text, file=sys.stderr))
    print(f"read {pool.n_read:,} sentences from {len(args.corpus)} file(s)")
    for name, n in pool.removed.items():
        print(f"  {name:<17} {n:>10,} removed")
    for note in pool.notes:
        print(f"  note: {note}")
    n = len(pool.sentences)
    print(f"wrote {path} ({n:,} sentence{'' if n == 1 else 's'})")
    return 0


def _design(args) -> int:
    from ..data.design_scores import MODELS_DATASET
    from ..generate.design import DESIGN_DATASET, design_experiment

    _keep_inputs(args.output, (DESIGN_DATASET,) + (() if args.no_model_scores else (MODELS_DATASET,)),
                 [("--natural", args.natural), ("--triplets", args.triplets), ("--pool", args.pool),
                  ("--plan", args.plan)])
    design, folder = design_experiment(args.output, natural=args.natural, triplets=args.triplets, pool=args.pool,
                                       groups=args.groups, random_pairs=args.random_pairs,
                                       catch_trials=args.catch_trials, seed=args.seed, experiment=args.experiment,
                                       datasets_dir=args.datasets, score_models=not args.no_model_scores,
                                       options=run_options(args), per_group=args.per_group, plan=args.plan)
    counts = design.groupby("trial_type").size().to_dict()
    print(f"wrote {folder} ({args.groups} groups, {len(design)} trials: {json.dumps(counts)})")
    return 0
