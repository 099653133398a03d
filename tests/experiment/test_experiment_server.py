"""HTTP API of `contstim experiment serve`: Flask test client and a real waitress server on
127.0.0.1 (subprocess): validation, isolation, group balance, resume, concurrency, crash safety."""
from __future__ import annotations

import hashlib
import http.client
import json
import signal
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import pytest

from contstim_bench.experiment.export import export_experiment, load_experiment
from contstim_bench.experiment.server import create_app

import served  # tests/served.py
from small_study import N_TRIALS, auth, db_dump, small_design


@pytest.fixture()
def app(export_dir, tmp_path):
    app = create_app(export_dir, tmp_path / "responses.sqlite", completion_code="C0DE42",
                     completion_url="https://example.org/done?cc={code}")
    yield app
    app.extensions["contstim_store"].close()


def new_participant(client, external_id=None) -> str:
    r = client.post("/api/participants", json={"external_id": external_id})
    assert r.status_code == 201, r.json
    assert r.json["n_trials"] == N_TRIALS
    return r.json["token"]


def test_participant_completes_and_gets_code(app, tmp_path):
    c = app.test_client()
    token = new_participant(c, "5f1d2c3b4a")
    st = c.get("/api/state", headers=auth(token)).json
    assert st["n_answered"] == 0 and st["trial"]["id"] == 1 and st["completion_code"] is None
    sent = {}
    while not st["done"]:
        trial = st["trial"]["id"]
        sent[trial] = (trial % 6) + 1
        r = c.post("/api/responses", headers=auth(token),
                   json={"trial": trial, "rating": sent[trial], "reaction_time_ms": 1234.5})
        assert r.status_code == 201, r.json
        st = r.json
        assert st["stored"] is True and st["n_answered"] == len(sent)
    assert len(sent) == N_TRIALS
    assert st["completion_code"] == "C0DE42"
    assert st["completion_url"] == "https://example.org/done?cc=C0DE42"
    conn = sqlite3.connect(tmp_path / "responses.sqlite")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = dict(conn.execute("SELECT position, rating FROM responses").fetchall())
    ext, digest = conn.execute("SELECT external_id, token_sha256 FROM participants").fetchone()
    conn.close()
    assert rows == sent
    assert ext == "5f1d2c3b4a"
    assert digest == hashlib.sha256(token.encode()).hexdigest()  # the token itself is not stored


def test_groups_are_balanced_and_orders_randomised(app, tmp_path):
    c = app.test_client()
    tokens = [new_participant(c) for _ in range(6)]
    conn = sqlite3.connect(tmp_path / "responses.sqlite")
    counts = dict(conn.execute("SELECT group_id, COUNT(*) FROM participants GROUP BY group_id").fetchall())
    orders = {}
    for pid, in conn.execute("SELECT id FROM participants"):
        orders[pid] = conn.execute(
            "SELECT design_trial, swapped FROM assignments WHERE participant_id = ? ORDER BY position", (pid,)
        ).fetchall()
    conn.close()
    assert counts == {1: 3, 2: 3}
    assert len(tokens) == 6
    for order in orders.values():
        assert sorted(t for t, _ in order) == list(range(1, N_TRIALS + 1))
    # 6 participants x 15 trials: identical orders or no side swap at all would be a broken shuffle
    assert len({tuple(t for t, _ in o) for o in orders.values()}) == 6
    swaps = sum(s for o in orders.values() for _, s in o)
    assert 10 < swaps < 80


def test_fixed_order_and_sides(tmp_path):
    exp = export_experiment(small_design(1), tmp_path / "fixed", randomize_order=False, randomize_sides=False)
    app = create_app(exp, tmp_path / "fixed.sqlite")
    c = app.test_client()
    token = new_participant(c)
    design = load_experiment(exp).design
    st = c.get("/api/state", headers=auth(token)).json
    for _, row in design.iterrows():
        assert (st["trial"]["id"], st["trial"]["left"], st["trial"]["right"]) == (row.trial, row.sentence1, row.sentence2)
        st = c.post("/api/responses", headers=auth(token), json={"trial": row.trial, "rating": 2, "reaction_time_ms": 5}).json
    assert st["done"]
    app.extensions["contstim_store"].close()


def test_resume_after_reload(app):
    c = app.test_client()
    token = new_participant(c)
    for trial in (1, 2, 3, 4):
        assert c.post("/api/responses", headers=auth(token), json={"trial": trial, "rating": 6, "reaction_time_ms": 1}).status_code == 201
    first = c.get("/api/state", headers=auth(token)).json
    again = app.test_client().get("/api/state", headers=auth(token)).json  # a fresh client = a reload
    assert first == again
    assert again["n_answered"] == 4 and again["trial"]["id"] == 5


def test_participants_are_isolated(app):
    c = app.test_client()
    a, b = new_participant(c, "A-ext"), new_participant(c, "B-ext")
    for trial in (1, 2, 3):
        c.post("/api/responses", headers=auth(a), json={"trial": trial, "rating": 1, "reaction_time_ms": 1})
    sb = c.get("/api/state", headers=auth(b)).json
    assert sb["n_answered"] == 0 and sb["trial"]["id"] == 1
    assert set(sb) == {"n_trials", "n_answered", "trial", "done", "completion_code", "completion_url"}
    body = json.dumps(sb)
    assert "A-ext" not in body and a not in body
    # B answering "trial 1" answers B's own first trial, not A's
    assert c.post("/api/responses", headers=auth(b), json={"trial": 1, "rating": 4, "reaction_time_ms": 1}).status_code == 201
    assert c.get("/api/state", headers=auth(a)).json["n_answered"] == 3
    for path in ("/experiment.json", "/responses.sqlite", "/static/../experiment.json", "/static/index.html",
                 "/api/participants"):
        r = c.get(path)
        assert r.status_code in (404, 405), path
        assert "error" in r.json


BAD_REQUESTS = [
    # (name, token kind, json body or raw bytes, expected status, error fragment)
    ("unknown token", "unknown", {"trial": 2, "rating": 1}, 401, "unknown participant token"),
    ("missing token", "none", {"trial": 2, "rating": 1}, 401, "missing or malformed participant token"),
    ("forged trial id", "valid", {"trial": 99, "rating": 1}, 404, "trial 99 is not a trial of this participant"),
    ("trial zero", "valid", {"trial": 0, "rating": 1}, 404, "trial 0 is not a trial"),
    ("trial as text", "valid", {"trial": "2", "rating": 1}, 400, "trial must be an integer"),
    ("rating 7", "valid", {"trial": 2, "rating": 7}, 400, "rating 7 is not one of the buttons 1..6"),
    ("rating 0", "valid", {"trial": 2, "rating": 0}, 400, "rating 0 is not one of the buttons"),
    ("rating float", "valid", {"trial": 2, "rating": 2.5}, 400, "rating 2.5 is not one of the buttons"),
    ("rating bool", "valid", {"trial": 2, "rating": True}, 400, "is not one of the buttons"),
    ("replayed answer", "valid", {"trial": 1, "rating": 5}, 409, "trial 1 was already answered"),
    ("skipping ahead", "valid", {"trial": 5, "rating": 5}, 409, "trial 5 is not the current trial (the next unanswered trial is 2)"),
    ("negative reaction time", "valid", {"trial": 2, "rating": 1, "reaction_time_ms": -3}, 400, "reaction_time_ms"),
    ("unknown field", "valid", {"trial": 2, "rating": 1, "participant": 1}, 400, "unknown field(s) ['participant']"),
    ("not an object", "valid", [2, 1], 400, "not a JSON object"),
    ("oversized body", "valid", {"trial": 2, "rating": 1, "pad": "x" * 10_000}, 413, "exceeds the limit of 2048 bytes"),
    ("not json", "valid", b"trial=2&rating=1", 415, "must be JSON"),
]


@pytest.mark.parametrize("name,kind,body,status,fragment", BAD_REQUESTS, ids=[b[0] for b in BAD_REQUESTS])
def test_bad_requests_refused_db_unchanged(app, tmp_path, name, kind, body, status, fragment):
    c = app.test_client()
    token = new_participant(c)
    assert c.post("/api/responses", headers=auth(token), json={"trial": 1, "rating": 3, "reaction_time_ms": 9}).status_code == 201
    before = db_dump(tmp_path / "responses.sqlite")
    headers = {"unknown": auth("A" * 43), "none": {}, "valid": auth(token)}[kind]
    if isinstance(body, bytes):
        r = c.post("/api/responses", headers=headers, data=body, content_type="application/x-www-form-urlencoded")
    else:
        r = c.post("/api/responses", headers=headers, data=json.dumps(body), content_type="application/json")
    assert r.status_code == status, r.data
    assert fragment in r.json["error"]
    assert db_dump(tmp_path / "responses.sqlite") == before


@pytest.mark.parametrize("body,fragment", [
    ({"external_id": "has space"}, "external_id must be"),
    ({"external_id": "x" * 200}, "external_id must be"),
    ({"external_id": 5}, "external_id must be"),
    ({"group": 2}, "unknown field(s) ['group']"),
])
def test_bad_participant_requests(app, tmp_path, body, fragment):
    c = app.test_client()
    before = db_dump(tmp_path / "responses.sqlite")
    r = c.post("/api/participants", json=body)
    assert r.status_code == 400 and fragment in r.json["error"]
    assert db_dump(tmp_path / "responses.sqlite") == before


def test_db_of_another_export_is_refused(app, tmp_path):
    other = export_experiment(small_design(1), tmp_path / "other")
    with pytest.raises(ValueError, match="belongs to another experiment"):
        create_app(other, tmp_path / "responses.sqlite")


def test_bad_server_options(export_dir, tmp_path):
    with pytest.raises(ValueError, match="must be an http"):
        create_app(export_dir, tmp_path / "x.sqlite", completion_url="javascript:alert(1)")
    with pytest.raises(ValueError, match="completion code"):
        create_app(export_dir, tmp_path / "x.sqlite", completion_code="a b")
    with pytest.raises(FileNotFoundError, match="not an exported experiment"):
        create_app(tmp_path, tmp_path / "x.sqlite")


# --- a real server on 127.0.0.1 ------------------------------------------------------------

def request(port: int, method: str, path: str, body=None, token=None, raw: bytes | None = None, timeout=30):
    """One HTTP request on a fresh connection: (status, parsed JSON body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        headers = {"Accept": "application/json"}
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        if token:
            headers["Authorization"] = f"Bearer {token}"
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        payload = resp.read()
        try:
            return resp.status, json.loads(payload)
        except json.JSONDecodeError:
            return resp.status, payload.decode(errors="replace")
    finally:
        conn.close()


class Server:
    """`contstim experiment serve` in a subprocess on 127.0.0.1 (started and stopped by tests/served.py),
    that a test can kill with SIGKILL and start again on the same port and database."""

    def __init__(self, export_dir: Path, db: Path, port: int):
        self.args = served.experiment_server(export_dir, db, port, "--threads", "16", "--completion-code", "LOADTEST")
        self.port = port
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = served.start(self.args, self.port)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None:
            served.stop(self.proc)


@pytest.fixture()
def server(export_dir, tmp_path):
    srv = Server(export_dir, tmp_path / "live.sqlite", served.free_port())
    srv.start()
    yield srv
    srv.stop()


def test_real_server_refuses_bad_requests(server, tmp_path):
    port = server.port
    status, body = request(port, "POST", "/api/participants", {"external_id": "ext-1"})
    assert status == 201
    token = body["token"]
    assert request(port, "POST", "/api/responses", {"trial": 1, "rating": 2, "reaction_time_ms": 10}, token)[0] == 201
    before = db_dump(tmp_path / "live.sqlite")
    cases = [
        ({"trial": 2, "rating": 2}, "B" * 43, None, 401, "unknown participant token"),
        ({"trial": 777, "rating": 2}, token, None, 404, "trial 777 is not a trial"),
        ({"trial": 2, "rating": 9}, token, None, 400, "rating 9 is not one of the buttons"),
        ({"trial": 1, "rating": 2}, token, None, 409, "already answered"),
        (None, token, json.dumps({"trial": 2, "rating": 1, "pad": "y" * 50_000}).encode(), 413, "exceeds the limit"),
    ]
    for body, tok, raw, status, fragment in cases:
        got_status, got = request(port, "POST", "/api/responses", body, tok, raw=raw)
        assert (got_status, fragment in got["error"]) == (status, True), got
    assert db_dump(tmp_path / "live.sqlite") == before
    assert request(port, "GET", "/", timeout=5)[0] == 200
    assert request(port, "GET", "/experiment.json", timeout=5)[0] == 404


N_LOAD = 50


def intended_rating(i: int, trial: int) -> int:
    return (i * 7 + trial) % 6 + 1


def run_participant(port_ref: list[int], i: int, token: str, acked: dict, lock: threading.Lock,
                    errors: list, deadline: float) -> None:
    """Answer every trial of one participant, retrying requests that fail at the connection
    level (the server may be killed and restarted meanwhile); bounded by ``deadline``."""
    def call(method, path, body=None):
        while time.monotonic() < deadline:
            try:
                return request(port_ref[0], method, path, body, token, timeout=20)
            except (OSError, http.client.HTTPException):
                # connection refused/reset, or a response cut off by the kill (IncompleteRead):
                # the answer may or may not be stored; a retry gets 201 or "already answered"
                time.sleep(0.05)
        raise TimeoutError(f"participant {i}: no answer before the deadline")

    try:
        status, st = call("GET", "/api/state")
        assert status == 200, st
        while not st["done"]:
            trial = st["trial"]["id"]
            status, body = call("POST", "/api/responses",
                                {"trial": trial, "rating": intended_rating(i, trial), "reaction_time_ms": 100.0 + i})
            if status == 201:
                with lock:
                    acked[(token, trial)] = intended_rating(i, trial)
                st = body
            elif status == 409 and "already answered" in body["error"]:
                status, st = call("GET", "/api/state")  # stored, but the acknowledgement was lost
            else:
                raise AssertionError(f"participant {i} trial {trial}: {status} {body}")
        assert st["completion_code"] == "LOADTEST"
    except BaseException as exc:  # noqa: BLE001 - reported to the main thread
        errors.append(exc)


def stored_ratings(db: Path) -> dict[tuple[str, int], int]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT p.token_sha256, r.position, r.rating FROM responses r JOIN participants p ON p.id = r.participant_id"
        ).fetchall()
    finally:
        conn.close()
    return {(digest, pos): rating for digest, pos, rating in rows}


def drive(server: Server, kill_after: int | None, tmp_path: Path) -> None:
    port_ref = [server.port]
    tokens = []
    for _ in range(N_LOAD):
        status, body = request(server.port, "POST", "/api/participants", {"external_id": None})
        assert status == 201
        tokens.append(body["token"])
    acked: dict = {}
    lock = threading.Lock()
    errors: list = []
    deadline = time.monotonic() + 240
    threads = [threading.Thread(target=run_participant, args=(port_ref, i, t, acked, lock, errors, deadline))
               for i, t in enumerate(tokens)]
    for t in threads:
        t.start()
    if kill_after is not None:
        while time.monotonic() < deadline:
            with lock:
                if len(acked) >= kill_after:
                    break
            time.sleep(0.01)
        server.kill()
        with lock:
            acked_at_kill = dict(acked)
        # everything acknowledged before the kill is on disk
        on_disk = stored_ratings(tmp_path / "live.sqlite")
        digest = {t: hashlib.sha256(t.encode()).hexdigest() for t in tokens}
        for (tok, trial), rating in acked_at_kill.items():
            assert on_disk[(digest[tok], trial)] == rating
        assert len(acked_at_kill) < N_LOAD * N_TRIALS  # killed mid-run
        server.start()
    for t in threads:
        t.join(timeout=max(1.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "participants did not finish in time"
    assert not errors, errors[:3]
    stored = stored_ratings(tmp_path / "live.sqlite")
    digest = {t: hashlib.sha256(t.encode()).hexdigest() for t in tokens}
    expected = {(digest[t], trial): intended_rating(i, trial) for i, t in enumerate(tokens) for trial in range(1, N_TRIALS + 1)}
    assert stored == expected  # every response exactly once (UNIQUE), none lost, none extra
    for (tok, trial), rating in acked.items():
        assert stored[(digest[tok], trial)] == rating
    conn = sqlite3.connect(tmp_path / "live.sqlite")
    n_rows = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    groups = dict(conn.execute("SELECT group_id, COUNT(*) FROM participants GROUP BY group_id").fetchall())
    conn.close()
    assert n_rows == N_LOAD * N_TRIALS
    assert groups == {1: N_LOAD // 2, 2: N_LOAD // 2}


def test_load_50_concurrent_participants(server, tmp_path):
    drive(server, kill_after=None, tmp_path=tmp_path)


def test_sigkill_and_restart_loses_nothing_acknowledged(server, tmp_path):
    drive(server, kill_after=N_LOAD * N_TRIALS // 3, tmp_path=tmp_path)
