"""Source layer: the manifest matches the shared data folder; corrupt and missing files are
errors that name the file (and, when missing, the pinned URL and blob SHA-1)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from contstim_bench.data import sources

SMALL = "llm-plaus-prob/datasets/README.md"  # 3,483 bytes
MODIFIED = "llm-plaus-prob/datasets/single_sentences/EventsAdapt/clean_EventsAdapt_human_dat.csv"
SHARED_ONLY = {"MANIFEST.tsv", "README.md"}  # the shared folder's own documentation files


@pytest.fixture(scope="module")
def data_dir(raw_data_dir) -> Path:
    """The raw data folder as the package finds it (conftest's ``raw_data_dir``)."""
    return raw_data_dir


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No data-dir env var and an empty user cache, so only an explicit source is searched."""
    monkeypatch.delenv(sources.ENV_RAW_DATA, raising=False)
    monkeypatch.delenv(sources.ENV_RAW_DATA_FORMER, raising=False)
    monkeypatch.setenv(sources.ENV_CACHE, str(tmp_path / "cache"))
    monkeypatch.setenv(sources.ENV_OFFLINE, "1")
    return tmp_path


def test_manifest_lists_every_present_file_with_matching_blob(data_dir):
    manifest = sources.manifest()
    present = {str(p.relative_to(data_dir)) for p in data_dir.rglob("*") if p.is_file()} - SHARED_ONLY
    listed = {p for p, e in manifest.items() if e.present_in_shared}
    assert len(present) == 197
    assert present == listed
    # all 197 files (60 MB) are hashed: about 1 s, so no sampling
    mismatched = [p for p in sorted(present) if sources.git_blob_sha1(data_dir / p) != manifest[p].blob_sha1]
    assert mismatched == []
    absent = [p for p, e in manifest.items() if not e.present_in_shared]
    assert len(absent) == 19 and not any((data_dir / p).exists() for p in absent)


def test_package_manifest_is_the_shared_manifest(data_dir):
    assert sources.MANIFEST_PATH.read_bytes() == (data_dir / "MANIFEST.tsv").read_bytes()


def test_git_blob_sha1_matches_git(data_dir):
    path = data_dir / SMALL
    out = subprocess.run(["git", "hash-object", "--no-filters", str(path)], capture_output=True, text=True, check=True)
    assert sources.git_blob_sha1(path) == out.stdout.strip() == "4860dfe80806b9fea90bd39b6b1c1350a287ef91"


def test_resolve_from_explicit_source(data_dir, isolated):
    src = isolated / "src"
    (src / SMALL).parent.mkdir(parents=True)
    shutil.copyfile(data_dir / SMALL, src / SMALL)
    assert sources.resolve(SMALL, source=src) == src / SMALL


def test_corrupt_file_is_refused_and_named(data_dir, isolated):
    src = isolated / "src"
    target = src / SMALL
    target.parent.mkdir(parents=True)
    data = bytearray((data_dir / SMALL).read_bytes())
    data[100] ^= 0x01  # one flipped bit, same size
    target.write_bytes(bytes(data))
    with pytest.raises(sources.CorruptSourceError) as err:
        sources.resolve(SMALL, source=src)
    msg = str(err.value)
    assert str(target) in msg
    assert "4860dfe80806b9fea90bd39b6b1c1350a287ef91" in msg  # expected blob
    assert sources.git_blob_sha1(target) in msg  # the blob actually found
    assert isinstance(err.value, ValueError)


def test_missing_file_without_download_names_file_url_and_blob(isolated):
    empty = isolated / "empty"
    empty.mkdir()
    entry = sources.entry(SMALL)
    for kwargs in ({"download": False}, {}):  # explicit, and via $CONTSTIM_OFFLINE
        with pytest.raises(sources.SourceError) as err:
            sources.resolve(SMALL, source=empty, **kwargs)
        msg = str(err.value)
        assert repr(SMALL) in msg
        assert entry.url in msg
        assert entry.url == ("https://raw.githubusercontent.com/carina-kauf/llm-plaus-prob/"
                             "726c813033d3a946568c3fecc4cb325c7156a392/datasets/README.md")
        assert entry.blob_sha1 in msg
        assert str(empty) in msg
        assert "Download failed" not in msg  # nothing was attempted
        assert isinstance(err.value, FileNotFoundError)


def test_absent_upstream_file_message(isolated):
    rel = "contstimlang/behavioral_results/contstim_Aug2021_n100_results_anon.csv"
    entry = sources.entry(rel)
    assert not entry.present_in_shared
    with pytest.raises(sources.SourceError, match=entry.blob_sha1):
        sources.resolve(rel, source=isolated, download=False)


def test_modified_shared_file_has_both_blobs(data_dir):
    """The pseudonymised EventsAdapt file verifies, and the upstream original would too."""
    entry = sources.entry(MODIFIED)
    assert entry.blob_sha1 == "b49cc7763fa1ba525c66aad81fa1c6a89ca6e312"
    assert entry.upstream_blob_sha1 == "2a659d4e8dd0b6b5746670a2b564082dd126dda0"
    assert entry.accepted_blobs == {entry.blob_sha1, entry.upstream_blob_sha1}
    assert entry.url_blob_sha1 == entry.upstream_blob_sha1  # what the URL serves
    assert sources.verify(data_dir / MODIFIED, entry) == data_dir / MODIFIED
    plain = sources.entry(SMALL)
    assert plain.upstream_blob_sha1 == "" and plain.accepted_blobs == {plain.blob_sha1}


def test_malformed_blob_field_is_an_error():
    assert sources._parse_blob("blob=" + "a" * 40) == ("a" * 40, "")
    with pytest.raises(ValueError, match="malformed blob field"):
        sources._parse_blob("sha1=" + "a" * 40)


def test_local_data_dir_order(monkeypatch, tmp_path):
    """An explicit source, then $CONTSTIM_RAW_DATA (or its former name $CONTSTIM_DATA_DIR), then
    ../shared/data; the user cache last."""
    monkeypatch.delenv(sources.ENV_RAW_DATA_FORMER, raising=False)
    monkeypatch.setenv(sources.ENV_RAW_DATA, str(tmp_path / "env"))
    assert sources.local_data_dir(tmp_path / "given") == tmp_path / "given"
    assert sources.local_data_dir() == tmp_path / "env"
    assert sources.search_dirs() == [tmp_path / "env", sources.default_cache_dir()]
    monkeypatch.delenv(sources.ENV_RAW_DATA)
    monkeypatch.setenv(sources.ENV_RAW_DATA_FORMER, str(tmp_path / "former"))
    assert sources.local_data_dir() == tmp_path / "former"
    monkeypatch.delenv(sources.ENV_RAW_DATA_FORMER)
    assert sources.local_data_dir() == sources.development_data_dir()


def test_unknown_path_is_a_key_error():
    with pytest.raises(KeyError, match="not a file of the benchmark's source manifest"):
        sources.entry("blimp/data/no_such_paradigm.jsonl")
