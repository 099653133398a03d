"""Train the n-gram, RNN and LSTM reference-model families from a text corpus (``contstim train``).

The corpus is a text file, one sentence per line, words separated by whitespace (blank lines are
skipped; :func:`contstim_bench.scoring.kneser_ney.read_corpus`).  Without one, the models are
trained on the benchmark's own small corpus: the ``train`` part (4,907 lines) of the 6,113
natural sentences of Golan et al. 2023 (:data:`contstim_bench.data.build_contstim.POOL_SYNTHESIS`,
resolved and verified like every raw source), held out from the ``start`` part that generation
draws its start sentences and natural pairs from by default (:mod:`contstim_bench.data.pool_split`),
so that everything works offline and no start sentence was seen in training.

* :func:`train_ngram`: an interpolated modified Kneser-Ney model written as ARPA, by KenLM's
  ``lmplz`` (:func:`run_lmplz`) or by the built-in estimator of :mod:`.kneser_ney`.
* :func:`train_recurrent`: a word-level RNN or LSTM (:func:`contstim_bench.scoring.rnn.train`)
  saved as a checkpoint folder.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..staging import check_inputs_kept, regular_file
from . import kneser_ney

if TYPE_CHECKING:
    from .rnn import TrainResult

Log = Callable[[str], None]


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


def load_corpus(corpus: str | os.PathLike | None = None, source: str | os.PathLike | None = None,
                log: Log | None = None) -> tuple[list[list[str]], str]:
    """(sentences as word lists, description of the corpus).

    ``corpus``: a text file (FileNotFoundError when missing; :func:`.kneser_ney.read_corpus`
    validates it).  None: the ``train`` part of the benchmark's synthesis pool resolved from
    ``source`` (default: the usual raw-source resolution), which ``log`` reports (default: stderr).
    """
    if corpus:
        path = Path(corpus)
        if not path.exists():
            raise FileNotFoundError(f"corpus file not found: {path}")
        regular_file(path, 64 << 30, "corpus file")  # never a FIFO or a device
        return kneser_ney.read_corpus(path), str(path)
    from ..data.build_contstim import POOL_SYNTHESIS  # the default corpus
    from ..data.pool_split import describe, split_part
    from ..data.sources import resolve

    path = resolve(POOL_SYNTHESIS, source=source)
    lines = split_part(path.read_text(encoding="utf-8").splitlines(), "train")
    sentences = [ln.split() for ln in lines if ln.split()]
    bad = [s for s in sentences if set(s) & set(kneser_ney.SPECIAL)]
    if bad:
        raise ValueError(f"{path}: reserved token in the corpus line {' '.join(bad[0])!r}")
    description = f"{POOL_SYNTHESIS}: {describe('train')}"
    (log or _stderr)(f"corpus: {description} (default; {len(sentences)} sentences)")
    return sentences, description


# -- n-gram ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NgramTraining:
    """What :func:`train_ngram` wrote: the ARPA ``output``, the ``backend`` that wrote it
    (``lmplz`` or ``python``), the number of corpus ``sentences`` and the ARPA header's
    ``counts`` as (order, number of n-grams)."""

    output: Path
    backend: str
    sentences: int
    counts: list[tuple[int, int]]


def train_ngram(output: str | os.PathLike, *, corpus: str | os.PathLike | None = None,
                source: str | os.PathLike | None = None, order: int = 3, backend: str = "auto",
                discount_fallback: Sequence[float] | None = None, memory: str = "1G",
                log: Log | None = None) -> NgramTraining:
    """Train an ``order``-gram modified Kneser-Ney model on the corpus and write it as ARPA.

    ``backend``: ``"lmplz"``, ``"python"`` (:mod:`.kneser_ney`) or ``"auto"`` (lmplz when on
    PATH).  ``discount_fallback``: None to fail when discounts cannot be estimated, an empty
    sequence for lmplz's defaults (0.5 1 1.5), or the 3 discounts D1 D2 D3+.  ``memory``:
    lmplz's ``-S``.  ``log`` receives the default-corpus line and fallback-discount notes.

    Every option is checked before the corpus is read and anything is written: an ``order`` KenLM
    would not load (:func:`.kneser_ney.check_kenlm_order`: 2 to 6), fallback discounts outside
    (0, k] and an ``output`` that is the corpus raise ValueError, so no model is written that
    ``kenlm:`` then refuses, and no corpus is overwritten.
    """
    log = log or _stderr
    kneser_ney.check_kenlm_order(order, "--order")
    fallback = None
    if discount_fallback is not None:
        fallback = tuple(discount_fallback) or kneser_ney.DEFAULT_FALLBACK
        if len(fallback) != 3:
            raise ValueError(f"--discount-fallback takes 3 values (D1 D2 D3+), got {len(fallback)}")
        fallback = kneser_ney.check_fallback(fallback)
    if backend not in ("auto", "lmplz", "python"):
        raise ValueError(f"unknown n-gram backend {backend!r}; use auto, lmplz or python")
    check_inputs_kept([("--output", output)], [("--corpus", corpus)])
    sentences, _ = load_corpus(corpus, source, log)  # validates: missing, empty, reserved tokens
    output = Path(output)
    if backend == "auto":
        backend = "lmplz" if shutil.which("lmplz") else "python"
    if backend == "lmplz":
        run_lmplz(sentences, order, output, fallback, memory)
    else:
        model = kneser_ney.estimate(sentences, order, fallback, progress=len(sentences) > 100_000)
        kneser_ney.write_arpa(model, output)
        for n in model.fallback_orders:
            log(f"note: order {n} used the fallback discounts {model.discounts[n - 1]}")
    return NgramTraining(output, backend, len(sentences), arpa_counts(output))


def run_lmplz(sentences: list[list[str]], order: int, output: Path, fallback=None, memory: str = "1G") -> None:
    """Run lmplz on the sentences as the python backend reads them (one per line, blank lines
    dropped, every line newline-terminated: lmplz gives an unterminated last line no ``</s>``).
    ``output`` appears only when lmplz succeeds (a failed run leaves an earlier file as it was)."""
    exe = shutil.which("lmplz")
    if exe is None:
        raise FileNotFoundError("lmplz is not on PATH (build KenLM, or use --backend python)")
    output.parent.mkdir(parents=True, exist_ok=True)
    partial = output.with_name(f".{output.name}.lmplz-tmp")  # renamed into place only when lmplz succeeds
    try:
        with tempfile.TemporaryDirectory(prefix="contstim-lmplz-") as tmp:
            cmd = [exe, "-o", str(order), "--arpa", str(partial), "-S", memory, "-T", tmp]
            if fallback is not None:
                cmd += ["--discount_fallback", *(str(d) for d in fallback)]
            text = "".join(" ".join(words) + "\n" for words in sentences)
            proc = subprocess.run(cmd, input=text, capture_output=True, text=True, encoding="utf-8")
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
            raise RuntimeError(f"lmplz failed (exit {proc.returncode}): {tail}")
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)


def arpa_counts(path: str | os.PathLike) -> list[tuple[int, int]]:
    """The ``ngram N=COUNT`` lines of an ARPA file's header as (N, COUNT)."""
    counts = []
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("ngram "):
                n, c = line[len("ngram "):].strip().split("=")
                counts.append((int(n), int(c)))
            elif line.startswith("\\1-grams:"):
                break
    return counts


# -- RNN / LSTM -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RecurrentTraining:
    """What :func:`train_recurrent` wrote: the checkpoint folder ``output``, the training
    ``result`` (model, vocabulary, losses, seconds), the ``corpus`` (file or description of the
    default corpus) and its number of ``sentences``."""

    output: Path
    result: TrainResult
    corpus: str
    sentences: int


def train_recurrent(kind: str, output: str | os.PathLike, *, corpus: str | os.PathLike | None = None,
                    source: str | os.PathLike | None = None, epochs: int = 10, seed: int = 0,
                    max_vocab: int | None = None, min_count: int = 1, batch_size: int = 64, lr: float = 0.002,
                    embed_size: int = 256, hidden_size: int = 512, num_layers: int = 1,
                    max_steps: int | None = None, device=None, progress: bool = True,
                    log: Log | None = None) -> RecurrentTraining:
    """Train a word-level ``kind`` (``"rnn"`` or ``"lstm"``) language model on the corpus and
    save its checkpoint folder to ``output`` (the defaults are the paper's hyper-parameters,
    except 10 epochs instead of 50).  ValueError, before training, for a size below 1 or a
    checkpoint file that is the corpus."""
    from . import rnn

    sizes = {"epochs": epochs, "min_count": min_count, "batch_size": batch_size, "embed_size": embed_size,
             "hidden_size": hidden_size, "num_layers": num_layers}
    for name, value in sizes.items():
        if value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    for name, value in (("max_vocab", max_vocab), ("max_steps", max_steps)):
        if value is not None and value < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    check_inputs_kept([("--output", Path(output) / name) for name in (rnn.WEIGHTS_FILE, rnn.VOCAB_FILE, rnn.CONFIG_FILE)],
                      [("--corpus", corpus)])
    sentences, corpus_desc = load_corpus(corpus, source, log)
    settings = rnn.TrainSettings(epochs=epochs, batch_size=batch_size, lr=lr, seed=seed, max_steps=max_steps)
    result = rnn.train(
        sentences, kind, settings=settings, max_vocab=max_vocab, min_count=min_count,
        embed_size=embed_size, hidden_size=hidden_size, num_layers=num_layers, device=device, progress=progress,
    )
    out = rnn.save_checkpoint(result, output, extra={"corpus": corpus_desc, "sentences": len(sentences)})
    return RecurrentTraining(Path(out), result, corpus_desc, len(sentences))
