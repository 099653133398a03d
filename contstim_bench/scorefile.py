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
import sys
from pathlib import Path

import numpy as np

from .results.io import check_output_file
from .scoring.precomputed import write_pool_array
from .spreadsheet import safe_cell
from .staging import check_inputs_kept
from .scoring.protocols import ContextLimited, PromptedJudge, require_logprobs


def read_sentences(path: str | Path) -> list[str]:
    """One sentence per line of a UTF-8 file, exactly as written.

    Lines end at ``\n`` only (a ``\r`` right before it, as in Windows files, belongs to the line
    ending), so a vertical tab, form feed or Unicode line separator inside a sentence stays part
    of it; leading and trailing spaces are kept; a UTF-8 byte order mark at the start of the file
    is removed.  FileNotFoundError names a missing file; ValueError names an empty file, a blank
    line (by its 1-based number) or bytes that are not UTF-8.
    """
    from .staging import read_bounded

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"input file not found: {path}")
    try:
        text = read_bounded(path, 2 << 30, "input file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text ({exc})") from None
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines[-1] == "":  # the newline that ends the last line
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not lines:
        raise ValueError(f"{path} is empty: expected one sentence per line")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise ValueError(f"{path} line {number} is blank: every line must hold a sentence")
    return lines


def write_scores(path: str | Path, sentences: list[str], logprobs, column: str = "logprob") -> None:
    """CSV with header ``sentence,<column>`` (float64 written with repr precision).  A sentence
    that a spreadsheet would read as a formula gets a leading ``'``
    (:func:`contstim_bench.spreadsheet.safe_cell`)."""
    path = check_output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["sentence", column])
        for sentence, value in zip(sentences, logprobs):
            writer.writerow([safe_cell(sentence), repr(float(value))])
    tmp.replace(path)


def context_warning(scorer, sentences: list[str]) -> str | None:
    """A warning naming the lines (1-based) longer than the model's context, or None (also for
    scorers without a known context)."""
    if not isinstance(scorer, ContextLimited):
        return None
    limit = scorer.context_length()
    if limit is None:
        return None
    long = [(i, n) for i, n in enumerate(scorer.token_lengths(sentences), start=1) if n > limit]
    if not long:
        return None
    shown = ", ".join(f"line {i} ({n:,} tokens)" for i, n in long[:5])
    more = f" and {len(long) - 5} more" if len(long) > 5 else ""
    return (f"warning: {len(long)} sentence(s) are longer than the context of {scorer.spec} ({limit:,} tokens, "
            f"start and special tokens included): {shown}{more}; the model was not trained on inputs that long")


def score_file(spec: str, input: str | os.PathLike, output: str | os.PathLike, *, datasets_dir=None,
               options=None, log=None) -> str | None:
    """Score every line of ``input`` (:func:`read_sentences`) with the model ``spec`` and write
    ``output`` (CSV, or ``.npy`` aligned with the lines); returns a one-line summary (sentences,
    distinct ones, how many the model ran on), or None in a process other than 0 of a
    data-parallel launch (which writes nothing).  ``options``: the
    :class:`~.driver.RunOptions` the model runs with (default: its defaults).  ``log`` (default: stderr) receives the warning
    of :func:`context_warning`.  ValueError, before anything is read, when ``output`` is the
    input or a file the model is read from (:func:`~.staging.check_inputs_kept`)."""
    from .driver import RunOptions, load_model, model_inputs
    from .scoring.parallel import data_parallel, is_main_process

    log = log or (lambda message: print(message, file=sys.stderr))
    check_inputs_kept([("--output", output)], [("--input", input), *model_inputs(spec)])
    check_output_file(output)
    sentences = read_sentences(input)
    npy = str(output).endswith(".npy")

    scorer = load_model(spec, options or RunOptions(), datasets_dir=datasets_dir)
    warning = context_warning(scorer, sentences)
    if warning:
        log(warning)
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
