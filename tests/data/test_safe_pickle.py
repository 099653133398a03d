"""Restricted unpickler: the real pickles load; pickles that would run code are refused before
anything runs."""
from __future__ import annotations

import builtins
import os
import pickle

import numpy as np
import pytest

from contstim_bench.data import safe_pickle, sources

PKL = {p: e for p, e in sources.manifest().items() if p.endswith(".pkl") and e.present_in_shared}


class _Reduce:
    """Pickles as ``func(*args)``: the classic code-execution payload."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _eval_payload(marker, protocol: int = pickle.DEFAULT_PROTOCOL) -> bytes:
    return pickle.dumps(_Reduce(builtins.eval, f"open({str(marker)!r}, 'w').write('pwned')"), protocol=protocol)


def _eval_payload_py2(marker) -> bytes:
    """Protocol 0, as Python 2 wrote it: the global is ``__builtin__.eval``."""
    data = _eval_payload(marker, protocol=0)
    assert b"c__builtin__\neval" in data
    return data


def _system_payload(marker) -> bytes:
    return pickle.dumps(_Reduce(os.system, f"touch '{marker}'"))


def test_all_real_pickles_load():
    assert sorted(PKL) == [
        "contstimlang/resources/contstim_stim_probs_dict.pkl",
        "contstimlang/resources/preps.pkl",
        "contstimlang/resources/vocabulary/vocab_cap.pkl",
        "contstimlang/resources/vocabulary/vocab_cap_freqs.pkl",
        "contstimlang/resources/vocabulary/vocab_low.pkl",
        "contstimlang/resources/vocabulary/vocab_low_freqs.pkl",
    ]
    loaded = {p: safe_pickle.load(sources.resolve(p)) for p in PKL}
    res = "contstimlang/resources/"
    preps = loaded[res + "preps.pkl"]
    assert len(preps) == 42 and preps[:3] == ["the", "a", "an"]
    cap, low = loaded[res + "vocabulary/vocab_cap.pkl"], loaded[res + "vocabulary/vocab_low.pkl"]
    assert (len(cap), len(low), len(cap) + len(low)) == (5977, 23180, 29157)
    assert cap[0] == "Aaron" and low[1] == "aback"
    cap_f = loaded[res + "vocabulary/vocab_cap_freqs.pkl"]
    assert isinstance(cap_f, np.ndarray) and cap_f.dtype == np.float64 and cap_f.shape == (5977,)
    assert cap_f[0] == pytest.approx(1.15972997e-05)
    probs = loaded[res + "contstim_stim_probs_dict.pkl"]
    assert sorted(probs) == sorted(["gpt2", "roberta", "electra", "bert", "xlm", "lstm", "rnn", "trigram", "bigram"])
    assert float(probs["bigram"]["Those applying these bawling face up again enough"]) == pytest.approx(-131.686279296875)


def test_payloads_do_run_with_the_plain_unpickler(tmp_path):
    """Control: the payloads below are real (plain pickle executes them)."""
    m1, m2, m3 = tmp_path / "eval-ran", tmp_path / "system-ran", tmp_path / "py2-ran"
    pickle.loads(_eval_payload(m1))
    pickle.loads(_system_payload(m2))
    pickle.loads(_eval_payload_py2(m3))
    assert m1.read_text() == "pwned" and m2.exists() and m3.exists()


@pytest.mark.parametrize("make, name", [(_eval_payload, "builtins.eval"), (_system_payload, "system"),
                                        (_eval_payload_py2, "builtins.eval")])
def test_code_execution_is_refused_and_nothing_runs(tmp_path, make, name):
    marker = tmp_path / "pwned"
    with pytest.raises(safe_pickle.UnsafePickleError, match=name):
        safe_pickle.loads(make(marker))
    assert not marker.exists()


def test_refusal_from_file_names_the_file(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pkl"
    path.write_bytes(_eval_payload(marker))
    with pytest.raises(safe_pickle.UnsafePickleError) as err:
        safe_pickle.load(path)
    assert str(path) in str(err.value) and "builtins.eval" in str(err.value)
    assert not marker.exists()
    assert isinstance(err.value, pickle.UnpicklingError)


def test_other_globals_are_refused():
    import collections
    import subprocess

    with pytest.raises(safe_pickle.UnsafePickleError, match="subprocess"):
        safe_pickle.loads(pickle.dumps(_Reduce(subprocess.check_output, ["true"])))
    with pytest.raises(safe_pickle.UnsafePickleError, match="collections.Counter"):
        safe_pickle.loads(pickle.dumps(collections.Counter("ab")))


def test_allowed_builtins_and_numpy_round_trip():
    obj = {"a": [1, 2.5, "x", (True, None)], "s": {1, 2}, "f": frozenset({"z"}), "b": b"raw",
           "np": np.float64(-3.25), "arr": np.arange(6, dtype=np.float64).reshape(2, 3)}
    for proto in (2, pickle.HIGHEST_PROTOCOL):
        out = safe_pickle.loads(pickle.dumps(obj, protocol=proto))
        assert out["a"] == obj["a"] and out["s"] == obj["s"] and out["f"] == obj["f"] and out["b"] == b"raw"
        assert out["np"] == np.float64(-3.25) and isinstance(out["np"], np.float64)
        np.testing.assert_array_equal(out["arr"], obj["arr"])
