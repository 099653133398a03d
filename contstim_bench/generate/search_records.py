"""What a synthetic search is given and what it reports (:mod:`.synthetic` runs it): the search
settings (the paper's values by default), a model in the search with its search mode, the
result of one search and the report of one position attempt."""
from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from .candidates import MODES, search_mode
from .replacement import STRATEGIES, Evaluations


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


def attempt_display(job_key: str, process: int, tty: bool, status=None) -> Callable[[AttemptReport], None]:
    """Progress of a job's position attempts: on a terminal the one-line ``status`` bar (tqdm)
    shows the latest attempt; otherwise each attempt is a plain line on stderr."""
    if tty and status is not None:
        def show(r: AttemptReport) -> None:
            status.set_description_str(
                f"  {job_key} {r.accept}>{r.reject}: attempt {r.attempt}, position {r.position}, "
                f"loss {r.loss:.2f} nats, {r.candidates} candidates, {r.evaluations.expensive} evaluated")
        return show

    def line(r: AttemptReport) -> None:
        print(f"[p{process}] {job_key} {r.line()}", file=sys.stderr, flush=True)
    return line
