"""Inputs are read exactly as given and bad ones are named: ``contstim score`` reads one sentence
per ``\\n`` line (no hidden splits, BOM removed, whitespace kept) and warns about sentences longer
than the model's context; CSV outputs never hand a spreadsheet a formula; the command line refuses
a folder as an output file, a missing ``--datasets`` folder and ``--batch-size 0`` with one
clear line instead of a traceback or a silently created folder."""
from __future__ import annotations

import csv

import pytest

pytest.importorskip("transformers")

from contstim_bench.cli import main  # noqa: E402
from contstim_bench.leaderboard.table import rows_to_csv  # noqa: E402
from contstim_bench.scorefile import read_sentences  # noqa: E402
from contstim_bench.scoring.causal import CausalScorer  # noqa: E402
from tiny_causal import save_tiny_llama  # noqa: E402


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny_llama_inputs"))  # context: 128 positions


@pytest.fixture(autouse=True)
def cache_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTSTIM_SCORE_CACHE", str(tmp_path / "scores.sqlite"))


def score(tmp_path, tiny_dir, data: bytes, *extra):
    inp = tmp_path / "in.txt"
    inp.write_bytes(data)
    out = tmp_path / "scores.csv"
    code = main(["score", "--model", f"hf-causal:{tiny_dir}", "--input", str(inp), "--output", str(out),
                 "--quiet", *extra])
    rows = list(csv.reader(open(out, newline="", encoding="utf-8")))[1:] if code == 0 else None
    return code, rows


def test_one_sentence_per_newline_exactly_as_given(tmp_path, tiny_dir):
    """``str.splitlines`` would split at \\v, \\f, \\x1c-\\x1e, \\x85, U+2028 and U+2029 and shift every
    following row; the user's leading/trailing spaces and a BOM must not become or leave text."""
    lines = ["Tab\vinside the sentence.", "A line\u2028separator here.", "  Indented, with a trailing space. ",
             "Form\ffeed and next\x85line.", "The cat sat on the mat."]
    data = "\ufeff".encode() + "\n".join(lines).encode("utf-8") + b"\n"
    assert read_sentences(write(tmp_path / "x.txt", data)) == lines
    code, rows = score(tmp_path, tiny_dir, data)
    assert code == 0
    assert [r[0] for r in rows] == lines  # one row per line, the same text, in order
    # the score of each row is the score of exactly that line
    scorer = CausalScorer(tiny_dir, cache=False, progress=False)
    assert [float(r[1]) for r in rows] == pytest.approx(scorer.score(lines).tolist(), abs=1e-9)


def test_windows_line_endings_and_a_missing_final_newline(tmp_path):
    assert read_sentences(write(tmp_path / "w.txt", b"One.\r\nTwo.\r\n")) == ["One.", "Two."]
    assert read_sentences(write(tmp_path / "n.txt", b"One.\nTwo.")) == ["One.", "Two."]
    with pytest.raises(ValueError, match="line 2 is blank"):
        read_sentences(write(tmp_path / "b.txt", "One.\n\u3000\nThree.\n".encode()))


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_formula_cells_are_neutralised(tmp_path, tiny_dir):
    lines = ['=HYPERLINK("http://evil.example","x")', "+1+1 is two.", "-A dash starts it.", "@SUM(A1)",
             "A plain sentence."]
    code, rows = score(tmp_path, tiny_dir, ("\n".join(lines) + "\n").encode())
    assert code == 0
    assert [r[0] for r in rows] == ["'" + s for s in lines[:4]] + [lines[4]]
    assert all(float(r[1]) < 0 for r in rows)  # numbers stay numbers (a negative value is no formula)
    text = rows_to_csv([{"model": "=cmd|' /C calc'!A0", "spec": "@x", "accuracy": -0.5, "rank": 1}])
    row = next(csv.DictReader(text.splitlines()))
    assert row["model"] == "'=cmd|' /C calc'!A0" and row["spec"] == "'@x" and row["accuracy"] == "-0.5"


def test_sentence_longer_than_the_context_is_warned_about(tmp_path, tiny_dir, capsys):
    scorer = CausalScorer(tiny_dir, cache=False, progress=False)
    assert scorer.context_length() == 128
    long = " ".join(["the cat sat on the mat"] * 40)
    n = scorer.token_lengths([long])[0]
    assert n > 128
    code, rows = score(tmp_path, tiny_dir, f"A dog ran.\n{long}\n".encode())
    assert code == 0 and len(rows) == 2
    err = capsys.readouterr().err
    assert "warning: 1 sentence(s) are longer than the context" in err and f"line 2 ({n} tokens)" in err
    assert "128 tokens" in err
    score(tmp_path, tiny_dir, b"A dog ran.\n")
    assert "warning" not in capsys.readouterr().err


def test_output_that_is_a_folder_is_refused_before_scoring(tmp_path, tiny_dir, capsys):
    inp = write(tmp_path / "in.txt", b"A dog ran.\n")
    folder = tmp_path / "already-a-folder"
    folder.mkdir()
    code = main(["score", "--model", f"hf-causal:{tiny_dir}", "--input", str(inp), "--output", str(folder), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert f"--output {folder} is a folder" in err
    # a result's --output without .json is a folder receiving <identifier>.json (the one convention)
    code = main(["evaluate", "--model", "precomputed:bert", "--output", str(folder), "--no-plots", "--quiet"])
    assert code == 0 and [p.name for p in folder.iterdir()] == ["contstim.json"]
    # ... and an existing file where a folder is meant is refused before scoring
    code = main(["blimp", "--model", "precomputed:bert", "--output", str(inp), "--quiet"])
    assert code == 1 and f"--output {inp} is a file; an output without the .json suffix is a folder" in \
        capsys.readouterr().err


def test_nonexistent_datasets_folder_is_refused_not_created(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "folder"
    for argv in (["evaluate", "--model", "precomputed:bert", "--output", str(tmp_path / "r.json")],
                 ["score", "--model", "precomputed:bert", "--input", "x.txt", "--output", str(tmp_path / "s.csv")],
                 ["leaderboard", "validate", str(tmp_path / "r.json")]):
        with pytest.raises(SystemExit) as exit_:
            main([*argv, "--datasets", str(missing)])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert f"--datasets: {missing} does not exist" in err and "contstim data build --out" in err
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("value", ["0", "-3", "two"])
def test_batch_size_must_be_a_positive_integer(tmp_path, value, capsys):
    for argv in (["score", "--model", "precomputed:bert", "--input", "x.txt", "--output", "o.csv"],
                 ["evaluate", "--model", "precomputed:bert"],
                 ["generate", "synthetic", "--models", "a,b", "--start-sentences", "1", "--output", str(tmp_path)]):
        with pytest.raises(SystemExit) as exit_:
            main([*argv, "--batch-size", value])
        assert exit_.value.code == 2
        assert "--batch-size" in capsys.readouterr().err


def test_output_folder_error_from_the_library_is_one_line(tmp_path, capsys):
    """An output path under a file is refused before any work, as one line naming the file."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    target = blocker / "r.json"
    code = main(["evaluate", "--model", "precomputed:bert", "--output", str(target), "--no-plots", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert err.strip() == f"contstim: error: ValueError: --output {target}: {blocker} is a file, so no file can be written under it"
