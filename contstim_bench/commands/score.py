"""``contstim score``: natural-log probability of each sentence of a text file, as CSV."""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from ._common import add_model_args


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="score sentences with a model (natural-log probability per sentence)",
        description=(
            "Write one natural-log probability per input line (input order) to a CSV with columns "
            "sentence,logprob.  Repeated sentences are scored once; scores are cached on disk "
            "($CONTSTIM_SCORE_CACHE), so a second run does no model work."
        ),
    )
    add_model_args(
        p,
        model={"metavar": "SPEC", "help": "model spec, e.g. smollm2-135m, hf-causal:gpt2, "
                                          "hf-masked:bert-base-cased?method=pll-word-l2r, kenlm:FILE"},
        output={"metavar": "FILE", "help": "CSV to write"},
        datasets="folder of built datasets, for precomputed:NAME (default: $CONTSTIM_DATASETS)",
        device="cpu, cuda, cuda:1 ... (default: cuda if available)",
        dtype="float32 (default), bfloat16, float16",
        batch_size={"metavar": "N"},
        quiet="no progress bar",
    )
    p.add_argument("--input", required=True, metavar="FILE",
                   help="UTF-8 text file, one sentence per line")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the score cache")
    p.set_defaults(func=run)


def read_sentences(path: str | Path) -> list[str]:
    """Lines of a UTF-8 file (line endings stripped).

    FileNotFoundError names a missing file; ValueError names an empty file, a blank line (by its
    1-based number) or bytes that are not UTF-8.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc})") from None
    lines = text.splitlines()
    if not lines:
        raise ValueError(f"{path} is empty: expected one sentence per line")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise ValueError(f"{path} line {number} is blank: every line must hold a sentence")
    return [line.strip() for line in lines]


def write_scores(path: str | Path, sentences: list[str], logprobs) -> None:
    """CSV with header ``sentence,logprob`` (float64 written with repr precision)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["sentence", "logprob"])
        for sentence, value in zip(sentences, logprobs):
            writer.writerow([sentence, repr(float(value))])
    tmp.replace(path)


def run(args) -> int:
    from ..scoring.registry import load_scorer

    sentences = read_sentences(args.input)
    scorer = load_scorer(
        args.model,
        datasets_dir=args.datasets,
        device=args.device,
        dtype=args.dtype,
        batch_size=args.batch_size,
        cache=False if args.no_cache else None,
        progress=not args.quiet,
    )
    logprobs = scorer.score(sentences)
    write_scores(args.output, sentences, logprobs)
    unique = len(set(sentences))
    print(
        f"scored {len(sentences)} sentences ({unique} unique, {scorer.n_model_sentences} sent to "
        f"the model) with {scorer.spec} -> {args.output}",
        file=sys.stderr,
    )
    return 0
