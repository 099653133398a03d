"""The experiment's web server (Flask app, served by waitress): static pages plus a JSON API.

Routes (every error is JSON ``{"error": "<what is wrong>"}`` with a 4xx status):

- ``GET /``, ``GET /static/app.js``, ``GET /static/style.css``: the exported pages; nothing
  else of the export folder (the design, the database) is served.
- ``GET /api/config``: ``title``, ``external_id_param`` (the URL query parameter recorded as the
  participant's recruitment-platform id, e.g. ``PROLIFIC_PID``).
- ``POST /api/participants`` body ``{"external_id": str | null}``: 201 ``{"token", "n_trials"}``,
  a new participant in the least-filled group with a per-participant order and sides.  409 when a
  participant with that platform id exists (one participant per platform id), with nothing
  changed: a platform id is no secret, so it never resumes a participant nor revokes its token.
  403 when every group has ``max_per_group`` participants, 429 (with ``Retry-After``) when one
  client address signs up more than ``signups_per_minute`` times in a minute.
- ``GET /api/state`` (header ``Authorization: Bearer <token>``): 200 ``{n_trials, n_answered,
  trial: {id, left, right} | null, done, completion_code, completion_url}``; the completion
  fields are set only once every trial is answered.
- ``POST /api/responses`` (Bearer token) body ``{"trial": int, "rating": 1..6,
  "reaction_time_ms": number}``: 201 with the new state once the response is committed.
  401 unknown or missing token, 400 malformed body or a rating that is no button, 404 a trial
  that is not the participant's, 409 an answered trial or one that is not the current trial,
  413 a body over the size limit, 415 a body that is not JSON.

A participant's session token (returned once, at sign-up) is its only credential: a returning
participant resumes by presenting it to ``GET /api/state``, where it stopped (the browser client
keeps it in ``localStorage`` and the URL fragment, so a reload resumes).

Request bodies are parsed by :func:`parse_body` (the package's one reader of untrusted JSON,
:func:`contstim_bench.results.io.parse_json`): at most ``max_body_bytes``, nesting at most
:data:`MAX_JSON_DEPTH`, no duplicate keys, an object at the top; anything else is a 400 naming
the problem, never a 500.  A participant only ever reaches rows keyed by the sha256 of its own
token.
"""
from __future__ import annotations

import math
import os
import re
import threading
import time
from collections import deque
from pathlib import Path

from flask import Flask, Response, jsonify, request, send_from_directory
from werkzeug.exceptions import HTTPException

from ..results.io import ValidationError, parse_json
from ..spreadsheet import FORMULA_PREFIXES
from .export import STATIC_FILES, load_experiment
from .limits import MAX_BODY_BYTES, MAX_JSON_DEPTH, MAX_PER_GROUP, SIGNUPS_PER_MINUTE
from .store import Participant, Store, TrialError

MAX_EXTERNAL_ID = 128
MAX_REACTION_TIME_MS = 24 * 3600 * 1000.0
RATINGS = range(1, 7)
_TOKEN_RE = re.compile(r"^Bearer ([A-Za-z0-9_-]{20,100})$")
_EXTERNAL_RE = re.compile(r"^[\x21-\x7e]{1,%d}$" % MAX_EXTERNAL_ID)
_PARAM_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def _error(status: int, message: str, headers: dict | None = None) -> Response:
    resp = jsonify(error=message)
    resp.status_code = status
    for key, value in (headers or {}).items():
        resp.headers[key] = value
    return resp


def parse_body(body: bytes, max_bytes: int = MAX_BODY_BYTES) -> dict:
    """A request body as a JSON object; :class:`ApiError` 413 when it is over ``max_bytes``, 400
    naming the problem for anything but a plain JSON object (malformed, nested deeper than
    :data:`MAX_JSON_DEPTH`, duplicate keys, not UTF-8)."""
    if len(body) > max_bytes:
        raise ApiError(413, f"request body of {len(body)} bytes exceeds the limit of {max_bytes} bytes")
    try:
        return parse_json(body, "request body", max_bytes=max_bytes, max_depth=MAX_JSON_DEPTH)
    except ValidationError as exc:
        message = "; ".join(exc.problems)
        if message.startswith("top level must be"):
            message = "request body is not a JSON object"
        raise ApiError(400, f"request body: {message}") from None


def check_external_id(external) -> str | None:
    """The platform id of a sign-up, or :class:`ApiError` 400: 1..128 printable ASCII characters
    without spaces, not starting with a spreadsheet formula prefix (``= + - @``)."""
    if external is None:
        return None
    if not isinstance(external, str) or not _EXTERNAL_RE.match(external):
        raise ApiError(400, f"external_id must be 1-{MAX_EXTERNAL_ID} printable ASCII characters without spaces")
    if external.startswith(FORMULA_PREFIXES):
        raise ApiError(400, "external_id must not start with =, +, - or @ (a spreadsheet would read it as a formula)")
    return external


class SignupLimiter:
    """At most ``per_minute`` sign-ups per client address in any 60-second window (thread-safe;
    addresses without a sign-up in the last minute are forgotten, so memory stays bounded by the
    recent clients)."""

    WINDOW_S = 60.0

    def __init__(self, per_minute: int, clock=time.monotonic):
        if per_minute < 1:
            raise ValueError(f"sign-ups per minute must be >= 1, got {per_minute}")
        self.per_minute = per_minute
        self.clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, deque] = {}

    def check(self, client: str) -> None:
        """Record one sign-up of ``client``; :class:`ApiError` 429 when it is one too many."""
        now = self.clock()
        with self._lock:
            if len(self._seen) > 10_000:
                for key in [k for k, q in self._seen.items() if not q or now - q[-1] >= self.WINDOW_S]:
                    del self._seen[key]
            times = self._seen.setdefault(client, deque())
            while times and now - times[0] >= self.WINDOW_S:
                times.popleft()
            if len(times) >= self.per_minute:
                retry = max(1, int(self.WINDOW_S - (now - times[0])) + 1)
                raise ApiError(429, f"too many sign-ups from this address ({self.per_minute} per minute); "
                                    f"retry in {retry} s", headers={"Retry-After": str(retry)})
            times.append(now)


def _check_completion_url(url: str | None) -> None:
    if url is None:
        return
    if not re.match(r"^https?://[^\s]+$", url):
        raise ValueError(f"completion URL {url!r} must be an http(s) URL (use {{code}} for the completion code)")


def create_app(
    export_dir: str | os.PathLike,
    db_path: str | os.PathLike,
    *,
    completion_code: str | None = None,
    completion_url: str | None = None,
    external_id_param: str = "PROLIFIC_PID",
    max_body_bytes: int = MAX_BODY_BYTES,
    max_per_group: int = MAX_PER_GROUP,
    signups_per_minute: int = SIGNUPS_PER_MINUTE,
    seed: int | None = None,
) -> Flask:
    """The Flask app serving the experiment exported to ``export_dir`` and storing responses in
    ``db_path`` (created if absent; refused if it belongs to another export).

    ``completion_code`` is shown on the end page (e.g. the Prolific completion code);
    ``completion_url`` a link there, ``{code}`` replaced by the code.  ``max_per_group``: most
    participants per design group; ``signups_per_minute``: most sign-ups per client address and
    minute (the address the server sees: behind a reverse proxy, that of the proxy).  ``seed``:
    reproducible assignments for dry runs with simulated participants (:class:`~.store.Store`).
    """
    experiment = load_experiment(export_dir)
    _check_completion_url(completion_url)
    if completion_code is not None and not re.match(r"^[A-Za-z0-9_-]{1,64}$", completion_code):
        raise ValueError(f"completion code {completion_code!r} must be 1-64 letters, digits, '-' or '_'")
    if not _PARAM_RE.match(external_id_param):
        raise ValueError(f"external id parameter {external_id_param!r} must be 1-64 letters, digits, '_', '.' or '-'")
    if max_body_bytes < 256:
        raise ValueError(f"max body size {max_body_bytes} bytes is too small (at least 256)")
    if max_per_group < 1:
        raise ValueError(f"max participants per group must be >= 1, got {max_per_group}")
    limiter = SignupLimiter(signups_per_minute)
    store = Store(db_path, experiment, seed=seed)
    static_dir = Path(export_dir).resolve()
    app = Flask(__name__, static_folder=None)
    app.config["MAX_CONTENT_LENGTH"] = max_body_bytes
    app.extensions["contstim_store"] = store

    def completion() -> dict:
        url = completion_url.replace("{code}", completion_code or "") if completion_url else None
        return {"completion_code": completion_code, "completion_url": url}

    def current_participant() -> Participant:
        header = request.headers.get("Authorization", "")
        m = _TOKEN_RE.match(header)
        if not m:
            raise ApiError(401, "missing or malformed participant token (expected 'Authorization: Bearer <token>')")
        p = store.participant(m.group(1))
        if p is None:
            raise ApiError(401, "unknown participant token")
        return p

    def json_body() -> dict:
        if not request.is_json:
            raise ApiError(415, "request body must be JSON (Content-Type: application/json)")
        return parse_body(request.get_data(cache=False), max_body_bytes)

    def state_payload(state: dict) -> dict:
        return {**state, **(completion() if state["done"] else {"completion_code": None, "completion_url": None})}

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError):
        return _error(exc.status, exc.message, exc.headers)

    @app.errorhandler(TrialError)
    def _trial_error(exc: TrialError):
        return _error(exc.status, exc.message)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):
        if exc.code == 413:
            return _error(413, f"request body exceeds the limit of {max_body_bytes} bytes")
        return _error(exc.code or 500, f"{exc.name}: {request.method} {request.path}")

    @app.before_request
    def _body_limit():
        if request.content_length is not None and request.content_length > max_body_bytes:
            raise ApiError(413, f"request body of {request.content_length} bytes exceeds the limit of {max_body_bytes} bytes")

    @app.after_request
    def _headers(resp: Response) -> Response:
        resp.headers["Content-Security-Policy"] = CSP
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = "no-referrer"
        resp.headers["X-Frame-Options"] = "DENY"
        if request.path.startswith("/api/"):
            resp.headers["Cache-Control"] = "no-store"
        return resp

    @app.get("/")
    def index():
        return send_from_directory(static_dir, "index.html", max_age=0)

    @app.get("/favicon.ico")
    def favicon():
        return Response(status=204)  # no icon: browsers ask for one on every page

    @app.get("/static/<name>")
    def static_file(name: str):
        if name not in STATIC_FILES:
            raise ApiError(404, f"no such file: /static/{name}")
        return send_from_directory(static_dir / "static", name, max_age=0)

    @app.get("/api/config")
    def config():
        return jsonify(title=experiment.title, external_id_param=external_id_param)

    @app.post("/api/participants")
    def new_participant():
        data = json_body()
        unknown = sorted(set(data) - {"external_id"})
        if unknown:
            raise ApiError(400, f"unknown field(s) {unknown}; allowed: ['external_id']")
        external = check_external_id(data.get("external_id"))
        limiter.check(request.remote_addr or "?")
        token, _, n_trials = store.create_participant(external, max_per_group=max_per_group)
        resp = jsonify(token=token, n_trials=n_trials)
        resp.status_code = 201
        return resp

    @app.get("/api/state")
    def state():
        p = current_participant()
        return jsonify(state_payload(store.state(p)))

    @app.post("/api/responses")
    def respond():
        p = current_participant()
        data = json_body()
        unknown = sorted(set(data) - {"trial", "rating", "reaction_time_ms"})
        if unknown:
            raise ApiError(400, f"unknown field(s) {unknown}; allowed: ['trial', 'rating', 'reaction_time_ms']")
        trial, rating, rt = data.get("trial"), data.get("rating"), data.get("reaction_time_ms")
        if not isinstance(trial, int) or isinstance(trial, bool):
            raise ApiError(400, f"trial must be an integer trial id, got {trial!r}")
        if not isinstance(rating, int) or isinstance(rating, bool) or rating not in RATINGS:
            raise ApiError(400, f"rating {rating!r} is not one of the buttons 1..6")
        if rt is not None:
            if isinstance(rt, bool) or not isinstance(rt, (int, float)) or not math.isfinite(rt) or not 0 <= rt <= MAX_REACTION_TIME_MS:
                raise ApiError(400, f"reaction_time_ms must be a number of milliseconds in 0..{MAX_REACTION_TIME_MS:.0f}, got {rt!r}")
            rt = float(rt)
        new_state = store.record(p, trial, rating, rt)
        resp = jsonify(stored=True, **state_payload(new_state))
        resp.status_code = 201
        return resp

    return app


def serve(
    export_dir: str | os.PathLike,
    db_path: str | os.PathLike,
    host: str = "127.0.0.1",
    port: int = 8000,
    threads: int = 8,
    **options,
) -> None:
    """Serve the experiment with waitress until interrupted."""
    from waitress import serve as waitress_serve

    app = create_app(export_dir, db_path, **options)
    # waitress itself refuses bodies over 1 MiB (plain-text 413); smaller oversized bodies get
    # the app's JSON 413.
    limit = max(options.get("max_body_bytes", MAX_BODY_BYTES), 1 << 20)
    waitress_serve(app, host=host, port=port, threads=threads, max_request_body_size=limit, ident="contstim")
