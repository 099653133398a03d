"""Helpers for tests that talk to a server over HTTP on 127.0.0.1: an exported experiment served by
the real server process (``contstim experiment serve``, waitress), or an ``http.server`` of the
test's own run in a thread of the test process (:func:`in_thread`)."""
from __future__ import annotations

import contextlib
import http.client
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(export_dir: Path, db: Path, *extra: str):
    """Run ``contstim experiment serve`` on a free port until the block ends; yields the URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "contstim_bench", "experiment", "serve", "--dir", str(export_dir), "--db", str(db),
         "--port", str(port), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited: {proc.stderr.read()[-2000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/api/config")
                if conn.getresponse().status == 200:
                    conn.close()
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start within 60 s")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


@contextlib.contextmanager
def in_thread(server):
    """Run ``server`` (an ``http.server`` server bound to 127.0.0.1) in a daemon thread until the
    block ends; yields its base URL (``http://127.0.0.1:PORT``)."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
