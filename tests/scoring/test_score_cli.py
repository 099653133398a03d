"""``contstim score``: CSV in input order, repeated sentences scored once, a second run served
from the cache, and input errors naming the file and line."""
from __future__ import annotations

import csv

import numpy as np
import pytest

pytest.importorskip("transformers")

from contstim_bench.cli import main  # noqa: E402
from tiny_causal import naive_logprob, save_tiny_llama  # noqa: E402

LINES = [
    "The cat sat on the mat.",
    "A dog ran.",
    "The cat sat on the mat.",
    "Colorless green ideas sleep furiously.",
    "A dog ran.",
]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny_llama_cli"))


@pytest.fixture()
def cache_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTSTIM_SCORE_CACHE", str(tmp_path / "scores.sqlite"))
    return tmp_path / "scores.sqlite"


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def run_score(tmp_path, tiny_dir, lines, *extra, name="in.txt"):
    inp = tmp_path / name
    inp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out" / "scores.csv"
    code = main(["score", "--model", f"hf-causal:{tiny_dir}", "--input", str(inp), "--output", str(out),
                 "--batch-size", "2", "--device", "cpu", "--dtype", "float32", "--quiet", *extra])
    return code, out


def test_scores_in_input_order_and_cached(tmp_path, tiny_dir, cache_env, capsys):
    code, out = run_score(tmp_path, tiny_dir, LINES)
    assert code == 0
    header, rows = read_csv(out)
    assert header == ["sentence", "logprob"]
    assert [r[0] for r in rows] == LINES
    values = np.array([float(r[1]) for r in rows])
    err = capsys.readouterr().err
    assert "5 sentences (3 unique, 3 sent to the model)" in err

    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_dir)
    tok = AutoTokenizer.from_pretrained(tiny_dir)
    want = [naive_logprob(model, tok, s, "<s>") for s in LINES]
    # float32, padded batches vs unpadded naive forwards: ~7e-6 nats apart on these 190-nat scores
    np.testing.assert_allclose(values, want, atol=1e-4, rtol=0)
    assert values[0] == values[2] and values[1] == values[4]

    # second run of the same command: everything from the cache, identical output
    code, out2 = run_score(tmp_path, tiny_dir, LINES)
    assert code == 0
    assert "(3 unique, 0 sent to the model)" in capsys.readouterr().err
    assert read_csv(out2)[1] == rows
    assert cache_env.exists()


def test_no_cache_flag_scores_again(tmp_path, tiny_dir, cache_env, capsys):
    run_score(tmp_path, tiny_dir, LINES[:2])
    capsys.readouterr()
    run_score(tmp_path, tiny_dir, LINES[:2], "--no-cache")
    assert "(2 unique, 2 sent to the model)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "content, pattern",
    [
        ("First sentence.\nSecond one.\n\nFourth.\n", r"in\.txt line 3 is blank"),
        ("First sentence.\n   \n", r"in\.txt line 2 is blank"),
        ("", r"in\.txt is empty"),
    ],
)
def test_bad_input_file_names_the_line(tmp_path, tiny_dir, cache_env, capsys, content, pattern):
    inp = tmp_path / "in.txt"
    inp.write_text(content, encoding="utf-8")
    code = main(["score", "--model", f"hf-causal:{tiny_dir}", "--input", str(inp),
                 "--output", str(tmp_path / "o.csv")])
    assert code == 1
    import re

    assert re.search(pattern, capsys.readouterr().err)
    assert not (tmp_path / "o.csv").exists()


def test_missing_input_and_bad_model(tmp_path, tiny_dir, cache_env, capsys):
    code = main(["score", "--model", f"hf-causal:{tiny_dir}", "--input", str(tmp_path / "nope.txt"),
                 "--output", str(tmp_path / "o.csv")])
    assert code == 1 and "input file not found" in capsys.readouterr().err
    inp = tmp_path / "ok.txt"
    inp.write_text("A sentence.\n")
    code = main(["score", "--model", "no-such-model", "--input", str(inp), "--output", str(tmp_path / "o.csv")])
    assert code == 1 and "unknown model short name 'no-such-model'" in capsys.readouterr().err
    code = main(["score", "--model", f"kenlm:{tmp_path}/lm.arpa", "--input", str(inp),
                 "--output", str(tmp_path / "o.csv")])
    assert code == 1 and "lm.arpa" in capsys.readouterr().err
