"""n-gram language models queried through KenLM (``kenlm:<arpa or binary file>``).

Sentences are split on whitespace (the benchmark's sentences are space-separated words, as the
n-gram models of Golan et al. were trained and queried) and scored as whole sentences,
``<s> w1 ... wn </s>``: the first word is conditioned on the begin-of-sentence context and the
end-of-sentence token's probability is included (the paper's n-gram models likewise scored the
sentence plus its end marker).  Both can be switched off with the spec options ``bos=0`` /
``eos=0``.  Out-of-vocabulary words receive KenLM's ``<unk>`` probability.  KenLM returns log10
probabilities; every score here is a natural logarithm (log10 x ln 10), float64.

:meth:`NgramScorer.sweep` scores every candidate word at one position of a sentence exactly and
fast: the words before the position are scored once, and after the position each candidate's
KenLM state is followed only until it coincides with the original sentence's state (at most
order - 1 words later), after which the original scores are reused; candidates that reach the
same state share the remaining computation.
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from itertools import repeat
from pathlib import Path

import numpy as np

from .base import hash_files, LoadSettings, ScoreCache, Scorer

LN10 = math.log(10.0)
EOS = "</s>"
#: spec options (``kenlm:model.arpa?bos=0&eos=0``), checked by the registry
OPTION_KEYS = frozenset({"bos", "eos"})
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _import_kenlm():
    """The ``kenlm`` module.  RuntimeError saying to install it only when it is absent; a kenlm
    that is installed but fails to load (a broken build, no memory left to map it) is reported
    with its own error, never as a missing module."""
    try:
        import kenlm
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name == "kenlm":
            raise RuntimeError(
                "the kenlm Python module is required for kenlm: models (pip install kenlm, or "
                "pip install 'contstim-bench[ngram]')"
            ) from exc
        raise RuntimeError(f"the kenlm Python module is installed but could not be loaded: {exc}") from exc
    return kenlm


def _parse_bool(name: str, value: str) -> bool:
    v = str(value).strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ValueError(f"kenlm option {name}={value!r} is not a boolean (use 1/0, true/false)")


def _check_word(word, what: str) -> str:
    if not isinstance(word, str):
        raise TypeError(f"{what} is {type(word).__name__}, not str: {word!r}")
    if not word or word.split() != [word]:
        raise ValueError(f"{what} must be one non-empty word without whitespace, got {word!r}")
    return word


def validate_sweep(words: Sequence[str], position: int, candidates: Sequence[str]) -> tuple[list[str], list[str]]:
    """Check the arguments of a vocabulary sweep; return ``(words, candidates)`` as lists.

    TypeError/ValueError name the offending word, candidate or position.
    """
    if isinstance(words, str):
        raise TypeError("words must be a sequence of words, not a str (split the sentence)")
    words = [_check_word(w, f"word {i}") for i, w in enumerate(words)]
    if not words:
        raise ValueError("cannot sweep an empty sentence")
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)):
        raise TypeError(f"position must be an int, got {type(position).__name__}")
    if not 0 <= position < len(words):
        raise ValueError(f"position {position} is outside the {len(words)}-word sentence")
    if isinstance(candidates, str):
        raise TypeError("candidates must be a sequence of words, not a str")
    cands = [_check_word(c, f"candidate {i}") for i, c in enumerate(candidates)]
    return words, cands


class NgramScorer(Scorer):
    """Natural-log sentence probabilities from a KenLM n-gram model (ARPA or KenLM binary)."""

    method = "ngram"

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        bos: bool = True,
        eos: bool = True,
        cache: ScoreCache | None | bool = None,
        progress: bool = True,
    ):
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"kenlm model file not found: {path}")
        super().__init__(cache=cache, progress=progress)
        kenlm = _import_kenlm()
        config = kenlm.Config()
        config.show_progress = False
        config.arpa_complain = kenlm.ARPALoadComplain.NONE
        try:
            self.model = kenlm.Model(str(path), config)
        except Exception as exc:  # kenlm raises OSError/RuntimeError with its own message
            raise ValueError(f"kenlm could not load {path}: {exc}") from exc
        self._kenlm = kenlm
        self.path = path
        self.bos = bool(bos)
        self.eos = bool(eos)
        self.order = int(self.model.order)
        defaults = self.bos and self.eos
        self.spec = f"kenlm:{path}" + ("" if defaults else f"?bos={int(self.bos)}&eos={int(self.eos)}")
        self._fingerprint: str | None = None

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = hash_files([self.path], {"bos": self.bos, "eos": self.eos})
        return self._fingerprint

    def describe(self) -> dict:
        return {**super().describe(), "order": self.order, "bos": self.bos, "eos": self.eos}

    # -- KenLM state walking -------------------------------------------------------------
    def _start_state(self):
        state = self._kenlm.State()
        if self.bos:
            self.model.BeginSentenceWrite(state)
        else:
            self.model.NullContextWrite(state)
        return state

    def _walk(self, tokens: Sequence[str]):
        """States before each token (plus the final one) and each token's log10 probability."""
        states = [self._start_state()]
        scores = np.empty(len(tokens), dtype=np.float64)
        base = self.model.BaseScore
        for i, tok in enumerate(tokens):
            out = self._kenlm.State()
            scores[i] = base(states[-1], tok, out)
            states.append(out)
        return states, scores

    def known_words(self, words: Sequence[str]) -> list[bool]:
        """Whether the model's vocabulary holds each word (KenLM's own lookup; ``<s>``, ``</s>`` and
        ``<unk>`` are not words)."""
        return [w in self.model and w not in ("<s>", "</s>", "<unk>") for w in words]

    def _tokens(self, words: Sequence[str]) -> list[str]:
        return list(words) + ([EOS] if self.eos else [])

    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        out = np.empty(len(sentences), dtype=np.float64)
        it = sentences
        if self.progress and len(sentences) > 1000:
            from ..progress import progress_bar

            it = progress_bar(sentences, desc=f"kenlm {self.path.name}", unit="sent", leave=False)
        for i, s in enumerate(it):
            _, scores = self._walk(self._tokens(s.split()))
            out[i] = scores.sum() * LN10
        return out

    def sweep(self, words: Sequence[str], position: int, candidates: Sequence[str]) -> np.ndarray:
        """Natural-log probability of ``words`` with ``words[position]`` replaced by each candidate.

        Exact (equal to scoring every replaced sentence), float64, in candidate order.  Only the
        n-grams that reach the position are recomputed.
        """
        words, cands = validate_sweep(words, position, candidates)
        if not cands:
            return np.empty(0, dtype=np.float64)

        kenlm = self._kenlm
        base = self.model.BaseScore
        tokens = self._tokens(words)
        states, scores = self._walk(tokens)
        # suffix[j] = sum of the original scores of tokens j.. (reused once states coincide)
        suffix = np.concatenate([np.cumsum(scores[::-1])[::-1], [0.0]])
        prefix = float(scores[:position].sum())

        uniq = list(dict.fromkeys(cands))
        index = {w: i for i, w in enumerate(uniq)}
        total = np.full(len(uniq), prefix, dtype=np.float64)

        # At the position: one query per distinct candidate.  Candidates are then grouped by
        # their KenLM state: equal states have equal futures, so each group is followed once.
        State = kenlm.State
        start = states[position]
        outs = [State() for _ in uniq]
        total += np.fromiter(map(base, repeat(start, len(uniq)), uniq, outs), np.float64, len(uniq))
        groups: dict = {}
        member = np.fromiter((groups.setdefault(o, len(groups)) for o in outs), np.int64, len(outs))
        for j in range(position + 1, len(tokens) + 1):
            live = list(groups)
            if not live:
                break
            # per group: the score of token j (or, once the state has merged with the original
            # sentence's state, the original scores of tokens j.. at once) and its next group;
            # the last slot of add/nxt serves finished candidates (member -1)
            n = len(live)
            add = np.zeros(n + 1, dtype=np.float64)
            nxt = np.full(n + 1, -1, dtype=np.int64)
            groups = {}
            if j < len(tokens):
                merged = np.fromiter(map(states[j].__eq__, live), bool, n)
                add[:n][merged] = suffix[j]
                todo = np.flatnonzero(~merged)
                outs = [State() for _ in todo]
                add[todo] = np.fromiter(
                    map(base, [live[g] for g in todo], repeat(tokens[j], len(todo)), outs), np.float64, len(todo)
                )
                nxt[todo] = np.fromiter((groups.setdefault(o, len(groups)) for o in outs), np.int64, len(outs))
            total += add[member]
            member = nxt[member]
        return total[[index[c] for c in cands]] * LN10


def from_spec(target: str, options: dict[str, str], load: LoadSettings) -> NgramScorer:
    """Build an :class:`NgramScorer` from ``kenlm:<path>[?bos=1&eos=1]``.

    ``device``, ``dtype`` and ``batch_size`` do not apply to KenLM and are ignored.
    """
    if load.kind != "kenlm":
        raise ValueError(f"ngram.from_spec handles kenlm: specs, not {load.kind}:")
    if not target:
        raise ValueError("kenlm: spec needs a model file, e.g. kenlm:model.arpa")
    opts = dict(options or {})
    unknown = sorted(set(opts) - {"bos", "eos"})
    if unknown:
        raise ValueError(f"unknown kenlm option(s) {unknown}; known: bos, eos")
    bos = _parse_bool("bos", opts["bos"]) if "bos" in opts else True
    eos = _parse_bool("eos", opts["eos"]) if "eos" in opts else True
    return NgramScorer(target, bos=bos, eos=eos, cache=load.options.cache, progress=load.options.progress)
