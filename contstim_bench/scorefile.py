"""Score a text file of sentences into a CSV: what ``contstim score`` runs (:func:`score_file`).

A log-probability scorer writes ``sentence,logprob`` (natural logs); a prompted judge
(``prompt:...``) writes ``sentence,judgment`` (its template's own scale, not a log-probability).
An output ending in ``.npy`` gets the upstream pool layout instead: one float64 natural-log
probability per input line, in line order (repeated lines repeat their value), which
``precomputed:FILE.npy?sentences=INPUT`` reads back as a model.

Under ``accelerate launch`` the sentences are split across the processes (see
:mod:`contstim_bench.scoring.parallel`) and process 0 writes the output.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from .scoring.precomputed import write_pool_array
from .scoring.protocols import PromptedJudge, require_logprobs
from .scoring.registry import ScoringContext, load_scorer


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


def write_scores(path: str | Path, sentences: list[str], logprobs, column: str = "logprob") -> None:
    """CSV with header ``sentence,<column>`` (float64 written with repr precision)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["sentence", column])
        for sentence, value in zip(sentences, logprobs):
            writer.writerow([sentence, repr(float(value))])
    tmp.replace(path)


def score_file(spec: str, input: str | os.PathLike, output: str | os.PathLike, *, datasets_dir=None, device=None,
               dtype=None, batch_size: int | None = None, cache=None, progress: bool = True,
               max_tokens_per_batch: int | None = None) -> str | None:
    """Score every line of ``input`` with the model ``spec`` and write ``output`` (CSV, or ``.npy``
    aligned with the lines); returns a one-line summary (sentences, distinct ones, how many the
    model ran on), or None in a process other than 0 of a data-parallel launch (which writes nothing)."""
    from .scoring.parallel import data_parallel, is_main_process

    sentences = read_sentences(input)
    npy = str(output).endswith(".npy")
    context = ScoringContext(datasets_dir=datasets_dir, batch_size=batch_size, cache=cache, progress=progress,
                             max_tokens_per_batch=max_tokens_per_batch)
    scorer = load_scorer(spec, context, device=device, dtype=dtype)
    if isinstance(scorer, PromptedJudge):
        if npy:
            raise ValueError(f"{output}: a prompt: judge gives judgments, not log-probabilities; write a .csv")
        with data_parallel():
            values, column = scorer.judge(sentences), "judgment"
    else:
        with data_parallel():
            values, column = require_logprobs(scorer, "contstim score").score(sentences), "logprob"
    if not is_main_process():
        return None
    if npy:
        write_pool_array(output, values)
    else:
        write_scores(output, sentences, np.asarray(values, dtype=np.float64), column)
    return (f"scored {len(sentences)} sentences ({len(set(sentences))} unique, {scorer.n_model_sentences} sent to "
            f"the model) with {scorer.spec} -> {output}")
