"""Simulated participants for a dry run of a served experiment (``contstim experiment simulate``).

Before recruiting people, a researcher can run the whole loop (design, export, serve, ingest,
evaluate) with simulated participants that answer the served experiment through its real HTTP
API (:mod:`contstim_bench.experiment.server`), exactly as the browser client does: create a
participant, read the current trial, answer it, until the end page.

A simulated participant's choices follow a language model (any log-probability model spec):

- on each trial it computes the model's log-ratio ``d = log p(right) - log p(left)`` (nats) plus
  Gaussian noise of standard deviation ``noise`` (nats), and chooses the right sentence when the
  sum is positive;
- its confidence grows with the size of that sum: below :data:`CONFIDENCE_NATS` ``[0]`` nats
  "somewhat confident", below ``[1]`` "confident", otherwise "very confident" (the six buttons,
  rating 1 = very confident left ... 6 = very confident right);
- a catch trial (the two sentences are the same words in a different order: a natural sentence
  and its shuffled version) is answered the model's way too, except that with probability
  ``catch_failure_rate`` the participant picks the other sentence, so some simulated participants
  fail the exclusion rule (at least 11 of 12 catch trials) as inattentive people do;
- a reaction time is drawn from a log-normal distribution (median 1.8 s), sent as the browser
  would send its measured time.

Participant ``k`` (0-based) of a run draws all its randomness from
``numpy.random.default_rng([seed, k])``, so the same seed and model give the same answers; with a
server started with ``--seed`` the groups, orders and sides are reproducible too, and so is the
ingested dataset.  Participants run one after another (arrival order = participant number).
Participant ``k`` signs up with the platform id ``simulated-<seed>-<k>``; the server refuses a
platform id it already has (409), so a second run against the same server continues the
numbering (``first_index``, ``--first``) or uses another seed.
"""
from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol
from urllib.parse import urljoin

import numpy as np

from ..scoring.run_options import RunOptions

CONFIDENCE_NATS = (1.0, 3.0)
"""|log-ratio + noise| thresholds (nats) between somewhat confident, confident and very confident."""
RT_MEDIAN_MS = 1800.0
RT_SIGMA = 0.4
EXTERNAL_ID_PREFIX = "simulated"
TIMEOUT_S = 30.0


@dataclass(frozen=True)
class SimulationSettings:
    """How simulated participants answer (see the module docstring)."""

    noise: float = 1.0
    """Standard deviation (nats) of the Gaussian noise added to the model's log-ratio."""
    catch_failure_rate: float = 0.05
    """Probability of choosing the sentence the model rejects on a catch trial."""
    seed: int = 0

    def __post_init__(self):
        if not (isinstance(self.noise, (int, float)) and math.isfinite(self.noise) and self.noise >= 0):
            raise ValueError(f"--noise must be a finite number >= 0 (nats), got {self.noise!r}")
        if not (isinstance(self.catch_failure_rate, (int, float)) and 0 <= self.catch_failure_rate <= 1):
            raise ValueError(f"--catch-failure-rate must be in [0, 1], got {self.catch_failure_rate!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"--seed must be a non-negative integer, got {self.seed!r}")


def is_catch_pair(left: str, right: str) -> bool:
    """True when the two sentences are the same words in a different order (a catch trial)."""
    return left != right and sorted(left.split()) == sorted(right.split())


def rating_for(value: float, right: bool) -> int:
    """The button for a decision ``value`` (|log-ratio + noise|, nats) and side."""
    level = 3 if value >= CONFIDENCE_NATS[1] else 2 if value >= CONFIDENCE_NATS[0] else 1
    return 3 + level if right else 4 - level


class Answers(Protocol):
    """What answers a served trial for a simulated participant: :class:`Chooser` (a language model's
    choices) or :class:`.plan_choices.PlanChooser` (a round plan's participant model)."""

    catch_trials: int
    catch_failures: int

    def answer(self, left: str, right: str) -> tuple[int, float]:
        """(rating 1..6, reaction time in ms) for one trial."""


class Chooser:
    """The answers of one simulated participant (participant ``index`` of a run)."""

    def __init__(self, logprobs: Callable[[Sequence[str]], np.ndarray], settings: SimulationSettings, index: int):
        self.logprobs = logprobs
        self.settings = settings
        self.rng = np.random.default_rng([settings.seed, index])
        self.catch_trials = 0
        self.catch_failures = 0

    def answer(self, left: str, right: str) -> tuple[int, float]:
        """(rating 1..6, reaction time in ms) for one trial.  The noise, the catch-failure draw
        and the reaction time are drawn on every trial, so the stream of draws does not depend
        on the trial's kind."""
        lp_left, lp_right = (float(v) for v in self.logprobs([left, right]))
        noise = float(self.rng.normal(0.0, self.settings.noise)) if self.settings.noise > 0 else 0.0
        slip = bool(self.rng.random() < self.settings.catch_failure_rate)
        rt = float(RT_MEDIAN_MS * math.exp(RT_SIGMA * self.rng.standard_normal()))
        decision = lp_right - lp_left + noise
        choose_right = decision > 0
        if is_catch_pair(left, right):
            self.catch_trials += 1
            choose_right = (lp_right - lp_left) > 0
            if slip:
                choose_right = not choose_right
                self.catch_failures += 1
        return rating_for(abs(decision), choose_right), round(rt, 1)


@dataclass
class SimulatedParticipant:
    """What one simulated participant did: its platform id, trials answered, catch trials seen
    and failed, and the completion code the end page showed."""

    external_id: str
    n_trials: int = 0
    catch_trials: int = 0
    catch_failures: int = 0
    completion_code: str | None = None


@dataclass
class SimulationRun:
    """Every participant of a :func:`simulate` run and the settings used."""

    url: str
    model: str
    settings: SimulationSettings
    participants: list[SimulatedParticipant] = field(default_factory=list)


class ApiClient:
    """The experiment's JSON API at ``url`` (what the browser client calls)."""

    def __init__(self, url: str):
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"--url {url!r} must be the http(s) address of a served experiment")
        self.base = url if url.endswith("/") else url + "/"

    def call(self, method: str, path: str, body: dict | None = None, token: str | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(urljoin(self.base, path), data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if token is not None:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
                return json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read().decode("utf-8")).get("error", "")
            except (ValueError, AttributeError):
                message = ""
            raise RuntimeError(f"{method} {urljoin(self.base, path)} answered {exc.code}: {message or exc.reason}") from None
        except urllib.error.URLError as exc:
            raise RuntimeError(f"cannot reach the experiment at {self.base} ({exc.reason}); is "
                               f"`contstim experiment serve` running there?") from None


def wait_for(url: str, seconds: float) -> None:
    """Return once the experiment at ``url`` answers (RuntimeError after ``seconds``)."""
    import time

    if not (math.isfinite(seconds) and 0 <= seconds <= 3600):
        raise ValueError(f"--wait must be a number of seconds from 0 to 3600, got {seconds!r}")
    client = ApiClient(url)
    deadline = time.monotonic() + seconds
    while True:
        try:
            client.call("GET", "api/config")
            return
        except RuntimeError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.2)


def run_participant(client: ApiClient, chooser: Answers, external_id: str) -> SimulatedParticipant:
    """One participant from arrival to the end page, through the API."""
    created = client.call("POST", "api/participants", {"external_id": external_id})
    token = created["token"]
    record = SimulatedParticipant(external_id)
    state = client.call("GET", "api/state", token=token)
    while not state["done"]:
        trial = state["trial"]
        rating, rt = chooser.answer(trial["left"], trial["right"])
        state = client.call("POST", "api/responses", {"trial": trial["id"], "rating": rating,
                                                      "reaction_time_ms": rt}, token=token)
        record.n_trials += 1
    record.catch_trials, record.catch_failures = chooser.catch_trials, chooser.catch_failures
    record.completion_code = state.get("completion_code")
    return record


def simulate(url: str, participants: int, model, settings: SimulationSettings | None = None, *,
             first_index: int = 0, datasets_dir=None, options: RunOptions = RunOptions(),
             log: Callable[[str], None] | None = None,
             choosers: Callable[[int], Answers] | None = None) -> SimulationRun:
    """Run ``participants`` simulated participants (numbers ``first_index`` ..) against the
    experiment served at ``url``, their choices following ``model`` (a model spec or a ready
    log-probability scorer) loaded with ``options`` (:class:`RunOptions`; no progress bars); see
    the module docstring.  ``choosers``: participant number -> its chooser, for participants who
    answer otherwise (:class:`.plan_choices.PlanChooser`: as a round's plan says people do;
    ``model`` is then None).
    RuntimeError names a server that cannot be reached or refuses a request."""
    from ..scoring.protocols import require_logprobs
    from ..scoring.registry import load_scorer

    if isinstance(participants, bool) or not isinstance(participants, int) or participants < 1:
        raise ValueError(f"--participants must be a positive integer, got {participants!r}")
    settings = settings or SimulationSettings()
    log = log or (lambda msg: None)
    client = ApiClient(url)
    client.call("GET", "api/config")  # fail early, before loading the model
    if choosers is not None:
        run = SimulationRun(url, "the plan's participant model", settings)
        for k in range(first_index, first_index + participants):
            p = run_participant(client, choosers(k), f"{EXTERNAL_ID_PREFIX}-{settings.seed}-{k}")
            run.participants.append(p)
            log(f"participant {p.external_id}: {p.n_trials} trials, {p.catch_failures} of {p.catch_trials} "
                f"catch trials failed")
        return run
    if isinstance(model, str):
        scorer = load_scorer(model, replace(options, progress=False), datasets_dir=datasets_dir)
    else:
        scorer = model
    scorer = require_logprobs(scorer, "a simulated participant")
    run = SimulationRun(url, scorer.spec, settings)
    for k in range(first_index, first_index + participants):
        chooser = Chooser(scorer.score, settings, k)
        p = run_participant(client, chooser, f"{EXTERNAL_ID_PREFIX}-{settings.seed}-{k}")
        run.participants.append(p)
        log(f"participant {p.external_id}: {p.n_trials} trials, {p.catch_failures} of {p.catch_trials} "
            f"catch trials failed")
    return run
