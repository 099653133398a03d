"""The per-process memos of file digests and tokenizers (contstim_bench/scoring/file_memo.py): the
same values as reading the files, read once while the files stay the same, read again when a file
is replaced or was changed too recently to be trusted."""
from __future__ import annotations

import hashlib
import json
import os

import pytest

from contstim_bench.scoring import base, file_memo
from contstim_bench.scoring.base import hash_files


@pytest.fixture
def memo(monkeypatch):
    """An empty memo, before and after the test (the files a test writes are younger than
    SETTLE_S: a test that needs them remembered sets SETTLE_S to 0)."""
    file_memo.forget()
    yield monkeypatch
    file_memo.forget()


@pytest.fixture
def opened(memo):
    """The paths hash_files opens."""
    seen = []

    def counting_open(path, *args, **kwargs):
        seen.append(os.fspath(path))
        return open(path, *args, **kwargs)

    memo.setattr(base, "open", counting_open, raising=False)
    return seen


def test_hash_files_is_the_sha256_of_the_bytes_and_settings_and_reads_settled_files_once(tmp_path, memo, opened):
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    a.write_bytes(b"weights")
    b.write_bytes(b"{}")
    want = hashlib.sha256(b"weights{}" + json.dumps({"start": "<s>", "dtype": "float32"}, sort_keys=True).encode())
    assert hash_files([a, b], {"start": "<s>", "dtype": "float32"}) == want.hexdigest()
    assert hash_files([a, b]) == hashlib.sha256(b"weights{}").hexdigest()
    assert hash_files([a, b], {"start": "</s>"}) != want.hexdigest()
    assert len(opened) == 6  # files changed just now: read every time
    memo.setattr(file_memo, "SETTLE_S", 0.0)
    assert hash_files([a, b], {"dtype": "float32", "start": "<s>"}) == want.hexdigest()
    assert len(opened) == 8
    assert hash_files([a, b], {"dtype": "float32", "start": "<s>"}) == want.hexdigest()
    assert hash_files(iter([a, b]), {"start": "<s>", "dtype": "float32"}) == want.hexdigest()
    assert len(opened) == 8  # remembered
    assert hash_files([b, a], {"start": "<s>", "dtype": "float32"}) == \
        hashlib.sha256(b"{}weights" + json.dumps({"start": "<s>", "dtype": "float32"}, sort_keys=True).encode()).hexdigest()


def test_a_file_rewritten_at_once_with_the_same_size_is_read_again(tmp_path, memo):
    """Within one tick of the clock a rewrite keeps the file's times: only the settling rule
    (nothing remembered of a file changed in the last SETTLE_S seconds) reads it again."""
    f = tmp_path / "model.arpa"
    f.write_bytes(b"aaaa")
    assert hash_files([f]) == hashlib.sha256(b"aaaa").hexdigest()
    f.write_bytes(b"bbbb")
    assert hash_files([f]) == hashlib.sha256(b"bbbb").hexdigest()


def test_a_replaced_or_missing_file_is_not_served_from_the_memo(tmp_path, memo):
    memo.setattr(file_memo, "SETTLE_S", 0.0)
    f, new = tmp_path / "model.bin", tmp_path / "new.bin"
    f.write_bytes(b"aaaa")
    assert hash_files([f]) == hashlib.sha256(b"aaaa").hexdigest()
    new.write_bytes(b"bbbb")
    os.replace(new, f)  # another inode at the same path
    assert hash_files([f]) == hashlib.sha256(b"bbbb").hexdigest()
    f.unlink()
    with pytest.raises(FileNotFoundError):
        hash_files([f])


def test_shared_objects_are_loaded_once_and_only_the_most_recent_are_kept(tmp_path, memo):
    memo.setattr(file_memo, "SETTLE_S", 0.0)
    files = [tmp_path / f"{i}.json" for i in range(3)]
    for i, f in enumerate(files):
        f.write_text(str(i))
    loads = []

    def loader(f):
        def load():
            loads.append(f.name)
            return {"from": f.name}
        return load

    first = file_memo.shared("tokenizer", [files[0]], loader(files[0]))
    assert file_memo.shared("tokenizer", [files[0]], loader(files[0])) is first
    assert file_memo.shared("other kind", [files[0]], loader(files[0])) is not first
    assert file_memo.shared("tokenizer", [files[1]], loader(files[1])) == {"from": "1.json"}
    assert loads == ["0.json", "0.json", "1.json"]
    assert file_memo.MAX_OBJECTS == 2  # the tokenizer of 0.json was the least recently used: dropped
    assert file_memo.shared("tokenizer", [files[0]], loader(files[0])) is not first
    assert loads == ["0.json", "0.json", "1.json", "0.json"]


def test_the_causal_scorers_of_one_model_share_its_tokenizer_and_score_alike(tmp_path, memo):
    pytest.importorskip("transformers")
    from tiny_causal import CORPUS, save_tiny_llama

    from contstim_bench.scoring.causal import CausalScorer

    folder = save_tiny_llama(tmp_path / "tiny")
    fresh = CausalScorer(folder, cache=False, progress=False)  # files just written: nothing remembered
    memo.setattr(file_memo, "SETTLE_S", 0.0)
    a = CausalScorer(folder, cache=False, progress=False)
    b = CausalScorer(folder, cache=False, progress=False, batch_size=2)
    assert b.tokenizer is a.tokenizer and a.tokenizer is not fresh.tokenizer
    assert a.fingerprint() == b.fingerprint() == fresh.fingerprint()
    assert b.score(CORPUS).tolist() == pytest.approx(fresh.score(CORPUS).tolist(), abs=1e-4)
    (folder / "tokenizer_config.json").write_text((folder / "tokenizer_config.json").read_text() + "\n")
    assert CausalScorer(folder, cache=False, progress=False).tokenizer is not a.tokenizer  # a file changed
