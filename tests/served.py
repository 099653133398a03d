"""The one helper for tests that talk to a server over HTTP on 127.0.0.1: a server process of the
package (``contstim experiment serve``, a Space's ``app.py``) started on a free port and stopped
(:func:`start`, :func:`stop`, :func:`running`, :func:`serving`), or an ``http.server`` of the test's
own run in a thread of the test process (:func:`in_thread`; :func:`files` serves a folder so)."""
from __future__ import annotations

import contextlib
import functools
import http.client
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def free_port() -> int:
    """A TCP port of 127.0.0.1 that is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(port: int, path: str, timeout: float = 2) -> bool:
    """Whether ``GET path`` on 127.0.0.1:``port`` answers 200."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            conn.request("GET", path)
            return conn.getresponse().status == 200
        finally:
            conn.close()
    except OSError:
        return False


def start(args: list[str], port: int, *, ready: str = "/api/config", timeout: float = 60,
          cwd: Path | None = None, env: dict | None = None, log: Path | None = None) -> subprocess.Popen:
    """Start ``args`` (a server that listens on ``port``) and wait until ``GET ready`` answers 200;
    its output goes to ``log`` (a temporary file by default), whose end is in the error when the
    process exits or does not answer within ``timeout`` seconds (it is killed then)."""
    out = open(log, "wb") if log is not None else tempfile.TemporaryFile()
    proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    proc.log = out  # closed by stop()

    def tail() -> str:
        out.flush()
        out.seek(0)
        return out.read().decode(errors="replace")[-3000:]

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{' '.join(map(str, args[:5]))} exited {proc.returncode}:\n{tail()}")
        if answers(port, ready):
            return proc
        time.sleep(0.1)
    proc.kill()
    proc.wait(timeout=20)
    raise RuntimeError(f"the server did not answer GET {ready} within {timeout:.0f} s:\n{tail()}")


def stop(proc: subprocess.Popen) -> None:
    """Terminate ``proc`` (a process of :func:`start`; killed after 20 s) and close its log."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
    proc.log.close()


@contextlib.contextmanager
def running(args: list[str], port: int, **options):
    """:func:`start` ``args`` for the block, :func:`stop` it after; yields the process."""
    proc = start(args, port, **options)
    try:
        yield proc
    finally:
        stop(proc)


def experiment_server(export_dir: Path, db: Path, port: int, *extra: str) -> list[str]:
    """The command line of ``contstim experiment serve`` for ``export_dir`` and ``db`` on ``port``."""
    return [sys.executable, "-m", "contstim_bench", "experiment", "serve", "--dir", str(export_dir), "--db", str(db),
            "--port", str(port), *extra]


@contextlib.contextmanager
def serving(export_dir: Path, db: Path, *extra: str):
    """Run ``contstim experiment serve`` on a free port until the block ends; yields the URL."""
    port = free_port()
    with running(experiment_server(export_dir, db, port, *extra), port):
        yield f"http://127.0.0.1:{port}/"


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


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def files(folder: Path):
    """Serve the files of ``folder`` over HTTP (in a thread) until the block ends; yields the base URL."""
    return in_thread(ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietFiles, directory=str(folder))))
