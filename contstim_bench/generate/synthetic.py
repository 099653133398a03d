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
the published triplet files plus the Eq. 4 ``controversiality``
(:data:`contstim_bench.generate.triplet_table.OUTPUT_COLUMNS`).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd

from ..scoring.protocols import LazySweep
from .candidates import candidate_logprobs, causal_shortlist, completion_logprobs, lazy_causal_shortlist
from .replacement import Evaluations, ModelValues, improving_candidates, penalty_first
from .inputs import Vocabulary
from .search_records import AttemptReport, SearchModel, SearchSettings, Synthesis
from .triplet_select import controversiality

PENALTY = 1e5
"""Weight of the constraint violation in upstream's penalty-form loss (:func:`ranking_loss`),
which ranks the predicted candidates of the Eq. 3 heuristic."""

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
    """One triplet row (:data:`.triplet_table.OUTPUT_COLUMNS`, plus ``history_S1``/``history_S2`` lists):
    S1 = synthesis accepted by ``m1`` and rejected by ``m2``, S2 the reverse.  The two searches
    use the two children of ``numpy.random.SeedSequence(seed)``; ``report`` receives every
    position attempt of both (:func:`synthesize`)."""
    fw = frozenset(function_words)
    seq1, seq2 = search_seeds(seed)
    s1 = synthesize(natural, m1, m2, vocabulary, fw, seq1, settings, report)
    s2 = synthesize(natural, m2, m1, vocabulary, fw, seq2, settings, report)
    return triplet_row(s1, s2, m1, m2, seed, natural_index)


def search_seeds(seed: int) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    """The seeds of a triplet's two searches (S1's, S2's): the children of ``SeedSequence(seed)``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    first, second = np.random.SeedSequence(int(seed)).spawn(2)
    return first, second


def triplet_row(s1: Synthesis, s2: Synthesis, m1: SearchModel, m2: SearchModel, seed: int,
                natural_index: int = -1) -> dict:
    """The triplet row of two searches from one start sentence: ``s1`` accepted by ``m1``,
    ``s2`` by ``m2`` (see :func:`synthesize_triplet`)."""
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
