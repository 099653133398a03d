"""The experiment server trusts no request: one participant per platform id, which is no
credential (a second sign-up with a known id is refused and takes nothing over; a participant
resumes only with its session token), sign-ups capped per design and rate-limited per client,
request bodies parsed with depth, size, duplicate-key and number-size limits (4xx answers, never
a 500), and platform ids that a spreadsheet would read as formulas refused."""
from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from contstim_bench.experiment.server import create_app
from small_study import auth, db_dump


def make_app(export_dir, db, **options):
    return create_app(export_dir, db, completion_code="C0DE42", **options)


@pytest.fixture()
def app(export_dir, tmp_path):
    app = make_app(export_dir, tmp_path / "r.sqlite")
    yield app
    app.extensions["contstim_store"].close()


def n_participants(db) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM participants").fetchone()[0]


def sign_up(client, external_id=None, address="10.0.0.1"):
    return client.post("/api/participants", json={"external_id": external_id}, environ_base={"REMOTE_ADDR": address})


def test_a_known_platform_id_cannot_take_over_a_participant(app, tmp_path):
    """The platform id is no credential: a second sign-up with it is a 409 that changes nothing;
    the first token keeps working, its answers stay its own, and it resumes with that token."""
    c = app.test_client()
    first = sign_up(c, "5f3a9b2c1d0e")
    assert first.status_code == 201
    token = first.json["token"]
    for trial in (1, 2):
        assert c.post("/api/responses", headers=auth(token), json={"trial": trial, "rating": 6}).status_code == 201
    before = db_dump(tmp_path / "r.sqlite")
    again = sign_up(app.test_client(), "5f3a9b2c1d0e", address="198.51.100.66")  # anyone who knows the id
    assert again.status_code == 409 and "token" not in again.json
    assert "this platform id already has a session" in again.json["error"]
    assert db_dump(tmp_path / "r.sqlite") == before  # no token replaced, no participant added
    state = app.test_client().get("/api/state", headers=auth(token)).json  # the participant's reload
    assert state["n_answered"] == 2 and state["trial"]["id"] == 3  # where it stopped
    assert c.post("/api/responses", headers=auth(token), json={"trial": 3, "rating": 1}).status_code == 201
    with sqlite3.connect(tmp_path / "r.sqlite") as conn:
        stored = conn.execute("SELECT position, rating FROM responses ORDER BY position").fetchall()
    assert stored == [(1, 6), (2, 6), (3, 1)]
    assert [sign_up(c, ext).status_code for ext in ("another-id", None, None)] == [201, 201, 201]
    assert set(first.json) == {"token", "n_trials"}  # nothing says "resumed" any more
    assert n_participants(tmp_path / "r.sqlite") == 4


def test_concurrent_sign_ups_with_one_platform_id_make_one_participant(app, tmp_path):
    statuses: list[int] = []
    tokens: list[str] = []

    def one():
        r = sign_up(app.test_client(), "race-id")
        statuses.append(r.status_code)
        tokens.extend([r.json["token"]] if r.status_code == 201 else [])

    threads = [threading.Thread(target=one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(statuses) == [201] + [409] * 7
    assert n_participants(tmp_path / "r.sqlite") == 1
    assert app.test_client().get("/api/state", headers=auth(tokens[0])).json["n_answered"] == 0


def test_sign_ups_are_capped_per_design(export_dir, tmp_path):
    app = make_app(export_dir, tmp_path / "cap.sqlite", max_per_group=2)  # 2 groups x 2
    c = app.test_client()
    assert [sign_up(c, f"id-{i}").status_code for i in range(4)] == [201] * 4
    full = sign_up(c, "id-late")
    assert full.status_code == 403 and "the experiment is full" in full.json["error"]
    known = sign_up(c, "id-2")  # a known id is refused for being known, not for the experiment being full
    assert known.status_code == 409 and "already has a session" in known.json["error"]
    assert n_participants(tmp_path / "cap.sqlite") == 4
    app.extensions["contstim_store"].close()


def test_default_limits_stop_a_sign_up_flood_from_one_client(app, tmp_path):
    """1,000 sign-ups in a burst from one address: the first 60 of the minute pass."""
    c = app.test_client()
    codes = [sign_up(c, None, "203.0.113.9").status_code for _ in range(1000)]
    assert codes[:60] == [201] * 60 and set(codes[60:]) == {429}
    r = sign_up(c, None, "203.0.113.9")
    assert r.status_code == 429 and 1 <= int(r.headers["Retry-After"]) <= 61
    assert "too many sign-ups from this address (60 per minute)" in r.json["error"]
    assert sign_up(c, None, "198.51.100.7").status_code == 201  # another client is not affected
    assert n_participants(tmp_path / "r.sqlite") == 61


def test_rate_limit_window_moves_on(export_dir, tmp_path):
    from contstim_bench.experiment.server import ApiError, SignupLimiter

    now = [0.0]
    limiter = SignupLimiter(2, clock=lambda: now[0])
    limiter.check("a")
    limiter.check("a")
    with pytest.raises(ApiError) as err:
        limiter.check("a")
    assert err.value.status == 429 and err.value.headers["Retry-After"] == "61"
    now[0] = 60.5
    limiter.check("a")  # the first two left the window


BAD_BODIES = [
    ("deeply nested", b'{"trial": ' + b"[" * 1010 + b"]" * 1010 + b', "rating": 1}', 400, "nested"),
    ("duplicate keys", b'{"trial": 2, "rating": 1, "rating": 6}', 400, "duplicate keys: rating"),
    ("not UTF-8", b'{"trial": 2, "rating": "\xff"}', 400, "not UTF-8"),
    ("NaN reaction time", b'{"trial": 2, "rating": 1, "reaction_time_ms": NaN}', 400, "reaction_time_ms"),
    ("truncated", b'{"trial": 2, "rating": ', 400, "malformed JSON"),
    ("top-level array", b"[2, 1]", 400, "not a JSON object"),
]


@pytest.mark.parametrize("name,body,status,fragment", BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
def test_bad_bodies_get_4xx_and_change_nothing(app, tmp_path, name, body, status, fragment):
    c = app.test_client()
    token = sign_up(c).json["token"]
    assert c.post("/api/responses", headers=auth(token), json={"trial": 1, "rating": 3}).status_code == 201
    before = db_dump(tmp_path / "r.sqlite")
    r = c.post("/api/responses", headers=auth(token), data=body, content_type="application/json")
    assert r.status_code == status, r.data
    assert fragment in r.json["error"]
    assert db_dump(tmp_path / "r.sqlite") == before
    r = c.post("/api/participants", data=body.replace(b'"trial"', b'"external_id"'), content_type="application/json")
    assert 400 <= r.status_code < 500 and "error" in r.json


NUMBERS = [("trial", "9" * 5000, "integer 999999999999...999999 has 5,000 digits"),
           ("rating", "-" + "1" * 4400, "integer -11111111111...111111 has 4,400 digits"),
           ("reaction_time_ms", "1" + "0" * 400, "integer 100000000000...000000 has 401 digits"),
           ("reaction_time_ms", "1e999999", "reaction_time_ms must be a number of milliseconds"),
           ("external_id", "7" * 5000, "integer 777777777777...777777 has 5,000 digits")]


@pytest.mark.parametrize("max_body", [2048, 64 * 1024])
def test_numbers_of_any_size_get_a_4xx_at_any_body_limit(export_dir, tmp_path, max_body):
    """Integers past Python's 4,300-digit limit or the float range, and a float literal that
    overflows to infinity: a 400 naming the number (a 413 when the body is over the limit),
    never a 500, and nothing stored."""
    app = make_app(export_dir, tmp_path / "n.sqlite", max_body_bytes=max_body)
    c = app.test_client()
    token = sign_up(c).json["token"]
    before = db_dump(tmp_path / "n.sqlite")
    for field, literal, fragment in NUMBERS:
        fields = {"trial": "1", "rating": "3", "reaction_time_ms": "5"} if field != "external_id" else {}
        body = "{" + ", ".join(f'"{k}": {v}' for k, v in {**fields, field: literal}.items()) + "}"
        route = "/api/participants" if field == "external_id" else "/api/responses"
        r = c.post(route, headers=auth(token), data=body, content_type="application/json")
        status, expected = (413, "exceeds the limit") if len(body) > max_body else (400, fragment)
        assert (r.status_code, expected in r.json["error"]) == (status, True), (field, r.status_code, r.data[:300])
    assert db_dump(tmp_path / "n.sqlite") == before
    app.extensions["contstim_store"].close()


@pytest.mark.parametrize("external", ["=HYPERLINK(\"x\")", "+1", "-2+3", "@SUM(A1)"])
def test_platform_id_that_is_a_formula_is_refused(app, tmp_path, external):
    r = sign_up(app.test_client(), external)
    assert r.status_code == 400 and "formula" in r.json["error"]
    assert n_participants(tmp_path / "r.sqlite") == 0


def test_body_over_the_limit_is_413_before_parsing(app):
    c = app.test_client()
    token = sign_up(c).json["token"]
    big = json.dumps({"trial": 2, "rating": 1, "pad": "x" * 5000}).encode()
    r = c.post("/api/responses", headers=auth(token), data=big, content_type="application/json")
    assert r.status_code == 413 and "exceeds the limit of 2048 bytes" in r.json["error"]
