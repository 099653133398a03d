"""Synthetic controversial sentences by word-by-word search (Golan et al. 2023, Methods
"Generating synthetic controversial sentence pairs", Eq. 2, and "Word-level search for
bidirectional models", Eq. 3).

For a natural sentence ``n`` and an ordered model pair (``accept``, ``reject``) the search
solves Eq. 2::

    s* = argmin_s log p(s | reject)   subject to   log p(s | accept) >= log p(n | accept)

starting from ``s = n``.  At each step one word position is chosen (positions are visited in
rounds, each round a seeded random permutation, so that every position is tried N times before
any is tried N + 1 times) and the shared vocabulary is searched for the feasible replacement
(``log p(s | accept) >= log p(n | accept)``) that minimises ``log p(s | reject)``; it is
accepted if it lowers ``log p(s | reject)`` (see :mod:`.replacement`).  Candidate words exclude
the current word and any word already in the sentence (compared in lower case) except the 42
function words.  Position 0 takes the capitalised vocabulary.  The search stops after
``max_failures`` (8) attempts in a row that found no replacement.

How the candidates of one attempt are scored depends on each model's search mode
(:mod:`contstim_bench.generate.candidates`): exact sweeps; the causal shortlist (the candidate
set is the union of the causal models' shortlists, on which every model is then scored, every
candidate with ``strategy="plain"``, only as far as the ranking needs with ``"lazy"``, the
default, with the same result: :mod:`.replacement`); or, for masked models, the Eq. 3
regression heuristic of the Methods: the regression of exact sentence log-probabilities on
word-completion log-probabilities is fitted on the current word and the candidates with the
highest and lowest completion log-probabilities, then candidates are evaluated exactly in order
of predicted loss, refitting after each, until one lowers the loss (it is accepted) or five
evaluations did not (the Methods: "terminated after five sentence evaluations that did not
reduce the loss").  The loss that ranks predicted candidates is upstream's penalty form
:func:`ranking_loss`.

Every value that decides acceptance and every value written out is a canonical
``scorer.score`` of the sentence (fast sweeps only rank candidates), so re-scoring the output
with a fresh scorer reproduces it.  The search is deterministic given its seed.  A ``report``
callback receives an :class:`AttemptReport` after every position attempt (the progress display
of ``contstim generate synthetic``).

A triplet (:func:`synthesize_triplet`) holds ``N`` and two syntheses from it for the model
pair ``(m1, m2)``: **S1 accepted by m1 and rejected by m2**, S2 the reverse, in the columns of
the published triplet files (:data:`TRIPLET_COLUMNS`) plus the Eq. 4 ``controversiality``.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..scoring.protocols import LazySweep
from .candidates import (
    MODES,
    candidate_logprobs,
    causal_shortlist,
    completion_logprobs,
    lazy_causal_shortlist,
    search_mode,
)
from .replacement import STRATEGIES, Evaluations, ModelValues, improving_candidates, penalty_first
from .inputs import Vocabulary
from .triplet_select import TRIPLET_COLUMNS, controversiality

PENALTY = 1e5
"""Weight of the constraint violation in upstream's penalty-form loss (:func:`ranking_loss`),
which ranks the predicted candidates of the Eq. 3 heuristic."""

OUTPUT_COLUMNS = (
    *TRIPLET_COLUMNS,
    "N_idx",
    "loss_S1_vs_N",
    "loss_S2_vs_N",
    "controversiality",
    "m1_spec",
    "m2_spec",
    "steps_S1",
    "replacements_S1",
    "steps_S2",
    "replacements_S2",
    "seed",
)
"""Columns of a generated triplet table: the published triplet columns, then ``N_idx`` (pool
line of N), the losses ``lp_S1_given_m2 - lp_N_given_m2`` and ``lp_S2_given_m1 -
lp_N_given_m1`` (nats, as published), Eq. 4 controversiality (nats), the model specs, the
number of position attempts and accepted replacements of each search, and the job seed."""


@dataclass(frozen=True)
class SearchSettings:
    """Knobs of the word-level search (defaults: the paper's values)."""

    max_failures: int = 8
    """Stop after this many position attempts in a row without a replacement."""
    max_attempts: int | None = None
    """Optional cap on position attempts per synthesis (None: only ``max_failures`` stops it)."""
    threshold: float = -10.0
    """Causal shortlist: minimum conditional log-probability (nats) of a candidate word."""
    threshold_step: float = 5.0
    """Causal shortlist: lower the threshold by this much until ``min_shortlist`` words pass."""
    min_shortlist: int = 10
    max_stale: int = 5
    """Regression heuristic: stop after this many exact evaluations that did not reduce the loss
    (the Methods' five)."""
    max_confirmations: int = 5
    """Exact-sweep candidates re-checked with ``scorer.score`` before giving up an attempt."""
    strategy: str = "lazy"
    """``lazy`` (score causal LMs only as far as the ranking needs) or ``plain`` (score every
    candidate with every model); the same result (see :mod:`.replacement`)."""
    lazy_batch: int = 32
    """Lazy strategy: candidates a causal LM scores together while looking for a feasible one."""

    def __post_init__(self):
        if self.strategy not in STRATEGIES:
            raise ValueError(f"search setting strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        for name in ("max_failures", "min_shortlist", "max_stale", "max_confirmations", "lazy_batch"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"search setting {name} must be a positive integer, got {v!r}")
        if self.max_attempts is not None and (not isinstance(self.max_attempts, int) or self.max_attempts < 1):
            raise ValueError(f"search setting max_attempts must be None or a positive integer, got {self.max_attempts!r}")
        if not self.threshold_step > 0:
            raise ValueError(f"search setting threshold_step must be positive, got {self.threshold_step!r}")

    def to_dict(self) -> dict:
        """The settings that can change a result (``strategy`` and ``lazy_batch`` cannot), for
        the run record."""
        return {k: v for k, v in asdict(self).items() if k not in ("strategy", "lazy_batch")}


@dataclass
class SearchModel:
    """A scorer in the search: display name, spec and search mode (see :func:`search_mode`)."""

    name: str
    scorer: object
    mode: str = ""
    spec: str = ""

    def __post_init__(self):
        if not self.mode:
            self.mode = search_mode(self.scorer)
        if self.mode not in MODES:
            raise ValueError(f"model {self.name}: unknown search mode {self.mode!r}; one of {MODES}")
        if not self.spec:
            self.spec = str(getattr(self.scorer, "spec", "") or self.name)

    def exact(self, sentence: str) -> float:
        """Canonical natural-log probability of one sentence (``scorer.score``)."""
        return float(np.asarray(self.scorer.score([sentence]), dtype=np.float64)[0])


@dataclass
class Synthesis:
    """Result of one search: the sentence and its canonical log-probabilities (nats)."""

    natural: str
    sentence: str
    lp_natural_accept: float
    lp_natural_reject: float
    lp_accept: float
    lp_reject: float
    steps: int
    replacements: list[dict] = field(default_factory=list)
    stop_reason: str = ""
    penalty_rule_differs: int = 0
    """Attempts (plain strategy only) whose first choice under upstream's penalty-form ranking
    differs from the Eq. 2 ranking's (see :mod:`.replacement`)."""


def sentence_words(sentence: str) -> list[str]:
    """Words of a start sentence (single spaces); ValueError for empty text."""
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"start sentence must be non-empty text, got {sentence!r}")
    return sentence.split()


class PositionSchedule:
    """Word positions in rounds: each round a permutation of 0..n-1 drawn from ``rng``."""

    def __init__(self, n_words: int, rng: np.random.Generator):
        self.n = n_words
        self.rng = rng
        self._queue: list[int] = []

    def next(self) -> int:
        if not self._queue:
            self._queue = [int(i) for i in self.rng.permutation(self.n)]
        return self._queue.pop(0)


def allowed_candidates(words: Sequence[str], position: int, vocabulary: Vocabulary,
                       function_words: frozenset[str]) -> list[str]:
    """Vocabulary words allowed at ``position``: not the current word, and no word that is
    already elsewhere in the sentence (lower case), unless it is a function word."""
    current = words[position]
    others = {w.lower() for i, w in enumerate(words) if i != position} - function_words
    return [w for w in vocabulary.at(position) if w != current and w.lower() not in others]


def ranking_loss(lp_accept: np.ndarray, lp_reject: np.ndarray, target: float, lp_reject_natural: float) -> np.ndarray:
    """Penalty-form loss of candidates (lower is better; non-finite values rank last)."""
    loss = (lp_reject - lp_reject_natural) + PENALTY * np.maximum(target - lp_accept, 0.0)
    return np.where(np.isfinite(loss), loss, np.inf)


@dataclass(frozen=True)
class AttemptReport:
    """What one position attempt did (given to the ``report`` callback of :func:`synthesize`)."""

    accept: str
    """Name of the model that must keep the sentence at least as probable as the natural one."""
    reject: str
    """Name of the model whose probability the search lowers."""
    attempt: int
    """Position attempts so far in this search (1-based)."""
    position: int
    old: str
    """The word at ``position`` before the attempt."""
    new: str | None
    """The accepted replacement, or None."""
    loss: float
    """``log p(s | reject) - log p(n | reject)`` of the sentence after the attempt (nats)."""
    candidates: int
    """Candidate words after the causal shortlist (all allowed words without a causal model)."""
    evaluations: Evaluations
    """Sentences and next-word values the models computed in this attempt."""
    reused: bool
    """True when the attempt repeated an earlier failed one on the same sentence (not rerun)."""
    seconds: float
    penalty_rule_differs: bool | None = None
    """Plain strategy: whether upstream's penalty-form ranking would have chosen differently
    first (:func:`.replacement.penalty_first`); None when not known (lazy strategy)."""

    def line(self) -> str:
        """One line of text for logs."""
        what = f"{self.old!r} -> {self.new!r}" if self.new is not None else "no replacement"
        e = self.evaluations
        return (f"{self.accept}>{self.reject} attempt {self.attempt} position {self.position}: {what}, "
                f"loss {self.loss:.3f} nats, {self.candidates} candidates, {e.expensive} causal-LM sentences "
                f"+ {e.next_word} next-word values{' (repeat of a failed attempt)' if self.reused else ''}, "
                f"{self.seconds:.1f} s")


class _Attempt:
    """One position attempt: candidates, their exact or predicted values, acceptance."""

    def __init__(self, search: "_Search", position: int):
        self.s = search
        self.position = position
        self.words = list(search.words)
        self.cands = allowed_candidates(self.words, position, search.vocabulary, search.function_words)
        self.n_candidates = len(self.cands)
        self.evaluations = Evaluations()
        self.penalty_rule_differs: bool | None = None

    def sentence(self, word: str) -> str:
        w = list(self.words)
        w[self.position] = word
        return " ".join(w)

    def confirm(self, word: str) -> tuple[float, float] | None:
        """Canonical scores of the replaced sentence if it is feasible and improves, else None."""
        sent = self.sentence(word)
        acc = self.s.accept.exact(sent)
        if not acc >= self.s.target:
            return None
        rej = self.s.reject.exact(sent)
        if not rej < self.s.lp_reject:
            return None
        return acc, rej

    def run(self) -> tuple[str, float, float] | None:
        if not self.cands:
            return None
        s, settings = self.s, self.s.settings
        lazy = settings.strategy == "lazy"
        models = {"accept": s.accept, "reject": s.reject}
        cands = self.cands
        shortlisters = [m for m in models.values() if m.mode == "shortlist"]
        exact_path = all(m.mode != "regression" for m in models.values())
        cheap: dict[str, np.ndarray] = {}  # exhaustive-mode values of every allowed candidate
        relevant = None  # candidates that the cheap models do not rule out
        if exact_path and shortlisters:
            for role, m in models.items():
                if m.mode == "exhaustive":
                    cheap[role] = candidate_logprobs(m.scorer, self.words, self.position, cands)
                    self.evaluations.cheap += len(cands)
            relevant = np.ones(len(cands), dtype=bool)
            if "accept" in cheap:
                relevant &= cheap["accept"] >= s.target
            if "reject" in cheap:
                relevant &= cheap["reject"] < s.lp_reject
        if shortlisters:
            keep = np.zeros(len(cands), dtype=bool)
            prefix = self.words[: self.position]
            rule = (settings.threshold, settings.threshold_step, settings.min_shortlist)
            for m in shortlisters:
                if isinstance(m.scorer, LazySweep):
                    before = m.scorer.evaluation_counts()["next_word"]
                    if lazy:  # a candidate the cheap model rules out needs no next-word value
                        keep |= lazy_causal_shortlist(m.scorer, prefix, cands, *rule,
                                                      relevant=relevant if len(shortlisters) == 1 else None)
                    else:
                        keep |= causal_shortlist(m.scorer, prefix, cands, *rule)
                    self.evaluations.next_word += m.scorer.evaluation_counts()["next_word"] - before
                else:
                    keep |= causal_shortlist(m.scorer, prefix, cands, *rule)
                    self.evaluations.next_word += len(cands)
            index = np.flatnonzero(keep)
            cands = [cands[i] for i in index]
            cheap = {role: v[index] for role, v in cheap.items()}
            self.n_candidates = len(cands)
            if not cands:
                return None
        if exact_path:
            return self._pick(cands, lazy, cheap)
        return self._regression(cands)

    def _pick(self, cands: list[str], lazy: bool, cheap: dict[str, np.ndarray]) -> tuple[str, float, float] | None:
        """The first candidate of the Eq. 2 ranking that its canonical scores confirm
        (:mod:`.replacement`); ``cheap``: values already computed, by role."""
        s = self.s
        acc = ModelValues(s.accept, self.words, self.position, cands, lazy, self.evaluations, cheap.get("accept"))
        rej = ModelValues(s.reject, self.words, self.position, cands, lazy, self.evaluations, cheap.get("reject"))
        ranked = improving_candidates(acc, rej, s.target, s.lp_reject, s.settings.lazy_batch)
        if not lazy:  # every value is known: note whether upstream's penalty form would differ
            first = next(ranked, None)
            upstream = penalty_first(acc.exact, rej.exact, s.target, s.lp_reject, s.lp_reject_natural, PENALTY)
            self.penalty_rule_differs = first != upstream
            s.penalty_rule_differs += int(self.penalty_rule_differs)
            ranked = iter(([] if first is None else [first]) + list(ranked))
        for tried, k in enumerate(ranked):
            if tried >= s.settings.max_confirmations:
                break
            ok = self.confirm(cands[k])
            if ok is not None:
                return cands[k], ok[0], ok[1]
        return None

    def _regression(self, cands: list[str]) -> tuple[str, float, float] | None:
        """Eq. 3 heuristic: predicted values for regression-mode models, exact for the others."""
        settings = self.s.settings
        n = len(cands)
        values: dict[str, np.ndarray] = {}  # role -> current estimate per candidate
        observed: dict[str, np.ndarray] = {}  # role -> bool per candidate: value is exact
        fits: dict[str, tuple[list[float], list[float], np.ndarray]] = {}
        for role, m in (("accept", self.s.accept), ("reject", self.s.reject)):
            current_lp = self.s.lp_accept if role == "accept" else self.s.lp_reject
            if m.mode != "regression":
                values[role] = candidate_logprobs(m.scorer, self.words, self.position, cands)
                observed[role] = np.ones(n, dtype=bool)
                continue
            a_all = completion_logprobs(m.scorer, self.words, self.position, [*cands, self.words[self.position]])
            a, a_cur = a_all[:n], float(a_all[n])
            xs, ys = [a_cur], [current_lp]  # the current word's completion and sentence scores
            obs = np.zeros(n, dtype=bool)
            y = np.full(n, np.nan)
            for k in dict.fromkeys((int(np.argmax(a)), int(np.argmin(a)))):
                self.evaluations.expensive += 1
                y[k] = m.exact(self.sentence(cands[k]))
                obs[k] = True
                xs.append(float(a[k]))
                ys.append(float(y[k]))
            fits[role] = (xs, ys, a)
            observed[role] = obs
            values[role] = np.where(obs, y, _predict(xs, ys, a))
            values[role + "_exact"] = y

        def refit(role: str) -> None:
            xs, ys, a = fits[role]
            y = values[role + "_exact"]
            values[role] = np.where(observed[role], y, _predict(xs, ys, a))

        def loss_of(mask_exact_only: bool) -> np.ndarray:
            loss = ranking_loss(values["accept"], values["reject"], self.s.target, self.s.lp_reject_natural)
            full = observed["accept"] & observed["reject"]
            return np.where(full if mask_exact_only else ~full, loss, np.inf)

        current = self.s.lp_reject - self.s.lp_reject_natural
        # first: is a fully observed candidate already good enough?
        exact_loss = loss_of(True)
        for k in np.argsort(exact_loss, kind="stable")[: settings.max_confirmations]:
            if not exact_loss[k] < current:
                break
            ok = self.confirm(cands[k])
            if ok is not None:
                return cands[k], ok[0], ok[1]
        # then the Methods' loop: evaluate the candidate of lowest predicted loss; accept it if it
        # lowers the loss, else refit and go on, until five evaluations did not lower it
        failed = 0
        while failed < settings.max_stale:
            pending = loss_of(False)
            if not np.isfinite(pending).any():
                break
            k = int(np.argmin(pending))
            for role, m in (("accept", self.s.accept), ("reject", self.s.reject)):
                if not observed[role][k]:
                    y = m.exact(self.sentence(cands[k]))
                    values[role + "_exact"][k] = y
                    observed[role][k] = True
                    xs, ys, a = fits[role]
                    xs.append(float(a[k]))
                    ys.append(y)
                    refit(role)
            self.evaluations.expensive += 1
            loss_k = float(ranking_loss(values["accept"][k:k + 1], values["reject"][k:k + 1],
                                        self.s.target, self.s.lp_reject_natural)[0])
            if loss_k < current:
                ok = self.confirm(cands[k])
                if ok is not None:
                    return cands[k], ok[0], ok[1]
            failed += 1
        return None


def _predict(xs: list[float], ys: list[float], a: np.ndarray) -> np.ndarray:
    """Least-squares line ``y = b1 * x + b0`` through the observations, evaluated at ``a``
    (a constant when the x values do not vary)."""
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) == 0:
        return np.full(len(a), np.inf)
    if len(x) < 2 or np.ptp(x) == 0:
        return np.full(len(a), float(np.mean(y)))
    b1, b0 = np.polyfit(x, y, 1)
    return b1 * np.asarray(a, dtype=np.float64) + b0


class _Search:
    def __init__(self, natural: str, accept: SearchModel, reject: SearchModel, vocabulary: Vocabulary,
                 function_words: Iterable[str], rng: np.random.Generator, settings: SearchSettings,
                 report: Callable[[AttemptReport], None] | None = None):
        self.words = sentence_words(natural)
        self.natural = " ".join(self.words)
        self.accept, self.reject = accept, reject
        self.vocabulary = vocabulary
        self.function_words = frozenset(w.lower() for w in function_words)
        self.rng = rng
        self.settings = settings
        self.report = report
        self.target = accept.exact(self.natural)
        self.lp_reject_natural = reject.exact(self.natural)
        self.lp_accept = self.target
        self.lp_reject = self.lp_reject_natural
        self.penalty_rule_differs = 0  # attempts (plain strategy) where upstream's ranking differs
        self.failed: set[tuple[tuple[str, ...], int]] = set()  # (words, position) of failed attempts

    def run(self) -> Synthesis:
        schedule = PositionSchedule(len(self.words), self.rng)
        failures = steps = 0
        history: list[dict] = []
        reason = "converged"
        while failures < self.settings.max_failures:
            if self.settings.max_attempts is not None and steps >= self.settings.max_attempts:
                reason = "max_attempts"
                break
            position = schedule.next()
            steps += 1
            t0 = time.perf_counter()
            key = (tuple(self.words), position)
            # an attempt on the same sentence and position gives the same result: a lazy search
            # does not run a failed one again (the plain search does, as the baseline)
            reused = self.settings.strategy == "lazy" and key in self.failed
            attempt = _Attempt(self, position)
            old = self.words[position]
            found = None if reused else attempt.run()
            if found is None:
                failures += 1
                self.failed.add(key)
            else:
                word, acc, rej = found
                history.append({"step": steps, "position": position, "old": old, "new": word,
                                "lp_accept": acc, "lp_reject": rej})
                self.words[position] = word
                self.lp_accept, self.lp_reject = acc, rej
                failures = 0
            if self.report is not None:
                self.report(AttemptReport(
                    accept=self.accept.name, reject=self.reject.name, attempt=steps, position=position, old=old,
                    new=None if found is None else found[0], loss=self.lp_reject - self.lp_reject_natural,
                    candidates=attempt.n_candidates, evaluations=attempt.evaluations, reused=reused,
                    seconds=time.perf_counter() - t0, penalty_rule_differs=attempt.penalty_rule_differs))
        return Synthesis(natural=self.natural, sentence=" ".join(self.words),
                         lp_natural_accept=self.target, lp_natural_reject=self.lp_reject_natural,
                         lp_accept=self.lp_accept, lp_reject=self.lp_reject, steps=steps,
                         replacements=history, stop_reason=reason,
                         penalty_rule_differs=self.penalty_rule_differs)


def synthesize(natural: str, accept: SearchModel, reject: SearchModel, vocabulary: Vocabulary,
               function_words: Iterable[str], seed, settings: SearchSettings | None = None,
               report: Callable[[AttemptReport], None] | None = None) -> Synthesis:
    """Solve Eq. 2 for one start sentence: a sentence at least as probable as ``natural`` under
    ``accept`` and as improbable as the search can make it under ``reject``.

    ``seed``: anything :func:`numpy.random.default_rng` accepts (an int or a SeedSequence); it
    fixes the order in which positions are visited, so equal inputs give equal results.
    ``report``: called with an :class:`AttemptReport` after every position attempt.
    """
    if accept.name == reject.name:
        raise ValueError(f"accept and reject model are both {accept.name!r}")
    rng = np.random.default_rng(seed)
    return _Search(natural, accept, reject, vocabulary, function_words, rng, settings or SearchSettings(),
                   report).run()


def synthesize_triplet(natural: str, m1: SearchModel, m2: SearchModel, vocabulary: Vocabulary,
                       function_words: Iterable[str], seed: int, settings: SearchSettings | None = None,
                       natural_index: int = -1, report: Callable[[AttemptReport], None] | None = None) -> dict:
    """One triplet row (:data:`OUTPUT_COLUMNS`, plus ``history_S1``/``history_S2`` lists):
    S1 = synthesis accepted by ``m1`` and rejected by ``m2``, S2 the reverse.  The two searches
    use the two children of ``numpy.random.SeedSequence(seed)``; ``report`` receives every
    position attempt of both (:func:`synthesize`)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    fw = frozenset(function_words)
    seq1, seq2 = np.random.SeedSequence(int(seed)).spawn(2)
    s1 = synthesize(natural, m1, m2, vocabulary, fw, seq1, settings, report)
    s2 = synthesize(natural, m2, m1, vocabulary, fw, seq2, settings, report)
    row = {
        "m1": m1.name, "m2": m2.name, "N": s1.natural, "S1": s1.sentence, "S2": s2.sentence,
        "lp_N_given_m1": s1.lp_natural_accept, "lp_S1_given_m1": s1.lp_accept,
        "lp_N_given_m2": s1.lp_natural_reject, "lp_S1_given_m2": s1.lp_reject,
        "lp_S2_given_m1": s2.lp_reject, "lp_S2_given_m2": s2.lp_accept,
        "N_idx": int(natural_index),
        "m1_spec": m1.spec, "m2_spec": m2.spec,
        "steps_S1": s1.steps, "replacements_S1": len(s1.replacements),
        "steps_S2": s2.steps, "replacements_S2": len(s2.replacements),
        "seed": int(seed),
        "history_S1": s1.replacements, "history_S2": s2.replacements,
    }
    if s2.lp_natural_accept != s1.lp_natural_reject or s2.lp_natural_reject != s1.lp_natural_accept:
        raise RuntimeError(f"{m1.name}/{m2.name}: scores of the start sentence {s1.natural!r} changed between "
                           f"the two searches (non-deterministic scorer?)")
    row["loss_S1_vs_N"] = row["lp_S1_given_m2"] - row["lp_N_given_m2"]
    row["loss_S2_vs_N"] = row["lp_S2_given_m1"] - row["lp_N_given_m1"]
    row["controversiality"] = float(controversiality(pd.DataFrame([row]))[0])
    return row


def triplets_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """The triplet table (:data:`OUTPUT_COLUMNS`, in order) of job rows, with stable dtypes."""
    frame = pd.DataFrame(list(rows), columns=list(OUTPUT_COLUMNS))
    for col in TRIPLET_COLUMNS[5:] + ("loss_S1_vs_N", "loss_S2_vs_N", "controversiality"):
        frame[col] = frame[col].astype(np.float64)
    for col in ("N_idx", "steps_S1", "replacements_S1", "steps_S2", "replacements_S2", "seed"):
        frame[col] = frame[col].astype(np.int64)
    for col in ("m1", "m2", "N", "S1", "S2", "m1_spec", "m2_spec"):
        frame[col] = frame[col].astype(object)
    return frame


TRIPLETS_DATASET = "triplets"
"""Folder name (dataset name) of a triplet table written by ``contstim generate synthetic`` /
``select`` inside their output folder; its config is ``synthetic_triplets``."""


def read_triplets(source: str | os.PathLike, split: str | None = None,
                  datasets_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """Load published or generated triplets alike, with Eq. 4 ``controversiality`` added when
    absent.

    ``source``: ``"contstim:main"`` / ``"contstim:pll"`` (the published triplets of the built
    contstim dataset), the output folder of ``contstim generate synthetic``/``select``, a
    triplet dataset folder (``.../triplets``), or a parquet file.  ``split``: which split of a
    dataset folder (default ``train``).  ValueError when the table lacks a triplet column.
    """
    text = str(source)
    if text.startswith("contstim:") and not Path(text).exists():
        from contstim_bench.data.load import dataset_dir

        exp = text.split(":", 1)[1] or "main"
        path = dataset_dir("contstim", datasets_dir) / "synthetic_triplets" / f"{exp}.parquet"
        if not path.is_file():
            raise FileNotFoundError(f"the contstim dataset has no synthetic_triplets split {exp!r} ({path})")
    else:
        path = Path(source).expanduser()
        if path.is_dir():
            for folder in (path / TRIPLETS_DATASET / "synthetic_triplets", path / "synthetic_triplets"):
                if folder.is_dir():
                    path = folder / f"{split or 'train'}.parquet"
                    break
            else:
                raise FileNotFoundError(f"{source}: no triplet table (expected {TRIPLETS_DATASET}/synthetic_triplets/ "
                                        f"as written by `contstim generate synthetic` or `select`)")
        if not path.is_file():
            raise FileNotFoundError(f"triplet table not found: {path}")
    from contstim_bench.data.verify import verify_parquet

    frame = pd.read_parquet(verify_parquet(path))  # a generated dataset is checked like a built one
    missing = [c for c in TRIPLET_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: not a triplet table, missing column(s) {missing}")
    if "controversiality" not in frame.columns:
        frame["controversiality"] = controversiality(frame)
    return frame
