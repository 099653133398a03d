"""`contstim data fetch`: the raw files at their pinned commits, from a configurable base URL, each
verified by its git blob SHA-1 (what scripts/test.sh runs when no data folder is configured).
A local HTTP server serves a copy of the real data folder in the upstream URL layout."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contstim_bench.data import sources
from served import files as serving


@pytest.fixture(scope="module")
def mirror(raw_data_dir, tmp_path_factory) -> Path:
    """The data folder's files laid out as GitHub serves them: OWNER/REPO/COMMIT/PATH."""
    root = tmp_path_factory.mktemp("mirror")
    for src in sources.manifest().values():
        if src.present_in_shared:
            dest = root / src.repo / src.commit / src.upstream_path
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(raw_data_dir / src.path, dest)
    return root


def _fetch(out: Path, base: str, *extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != sources.ENV_DOWNLOAD_BASE}
    return subprocess.run([sys.executable, "-m", "contstim_bench", "data", "fetch", "--out", str(out),
                           "--base", base, "--quiet", *extra], capture_output=True, text=True, env=env, timeout=600)


def test_fetch_gets_every_file_of_the_data_folder_verified_and_nothing_absent(mirror, raw_data_dir, tmp_path):
    present = [s for s in sources.manifest().values() if s.present_in_shared]
    absent = [s for s in sources.manifest().values() if not s.present_in_shared]
    assert len(present) == 197 and len(absent) == 19
    out = tmp_path / "raw"
    with serving(mirror) as base:
        proc = _fetch(out, base)
        assert proc.returncode == 0, proc.stderr
        assert f"197 raw files downloaded, 0 already there and verified (from {base})" in proc.stdout
        for src in present:
            assert (out / src.path).read_bytes() == (raw_data_dir / src.path).read_bytes(), src.path
        assert not any((out / src.path).exists() for src in absent)  # absent upstream-only files stay absent
        again = _fetch(out, base)  # a second run fetches nothing
    assert "0 raw files downloaded, 197 already there and verified" in again.stdout


def test_a_corrupted_file_on_the_server_is_refused_by_name(mirror, tmp_path):
    src = sources.entry("contstimlang/resources/contstim_sents_freqs.npy")
    served = mirror / src.repo / src.commit / src.upstream_path
    original = served.read_bytes()
    out = tmp_path / "raw"
    try:
        served.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
        with serving(mirror) as base:
            proc = _fetch(out, base)
    finally:
        served.write_bytes(original)
    assert proc.returncode == 1
    assert (f"CorruptSourceError: raw file 'contstimlang/resources/contstim_sents_freqs.npy' downloaded from "
            f"{base}/dpmlab/contstimlang/") in proc.stderr
    assert f"!= expected {src.blob_sha1}; it was not kept" in proc.stderr
    assert not (out / src.path).exists()
    assert not list((out / src.path).parent.glob(".part-*"))


def test_a_missing_file_and_a_malformed_base_are_named(tmp_path):
    (tmp_path / "empty").mkdir()
    with serving(tmp_path / "empty") as base:
        proc = _fetch(tmp_path / "raw", base)
    assert proc.returncode == 1
    assert "SourceError: raw file 'contstimlang/LICENSE.MD' could not be fetched from " in proc.stderr
    assert "HTTPError: HTTP Error 404" in proc.stderr
    bad = _fetch(tmp_path / "raw", "ftp://example.org")
    assert bad.returncode == 1 and "$CONTSTIM_DOWNLOAD_BASE must be an http(s) URL, got 'ftp://example.org'" in bad.stderr
