"""The new doors' edges (issue 52): lm-eval task names that cannot mix two rounds up, files read from
a user's folder that are never a device or a FIFO, samples whose values are no numbers, a corpus's
byte-order mark, a tampered standard error at the report door."""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from contstim_bench.cli import main as cli_main

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"


def test_task_and_function_names_are_one_to_one():
    from contstim_bench.harness_tasks.folder import _utils_py, check_task_names, function_stem, task_name

    rounds = ["contstim.ra-b", "contstim.ra_b", "contstim.ra.b"]
    assert len({task_name(r) for r in rounds[:2]}) == 2
    assert len({function_stem(r) for r in rounds}) == 3
    check_task_names(["contstim.pll", *rounds[:2]])
    text = _utils_py({r: ("1", {}) for r in rounds[:2]}, "/data")
    assert text.count("def docs_") == 2 and "def docs_contstim_pll" not in text
    for bad, why in (("contstim.tasks", "the group's tag"), ):
        with pytest.raises(ValueError, match=why):
            check_task_names(["contstim.pll", bad])


def test_an_lm_eval_run_folder_never_hangs_or_floods_the_import(tmp_path):
    from contstim_bench.harness_tasks.samples import find_run

    run = tmp_path / "run"
    run.mkdir()
    (run / "results_2026-01-01T00-00-00.json").symlink_to("/dev/zero")
    started = time.monotonic()
    with pytest.raises(ValueError, match="a device, not a regular file"):
        find_run(run)
    (run / "results_2026-01-01T00-00-00.json").unlink()
    os.mkfifo(run / "results_2026-01-02T00-00-00.json")
    with pytest.raises(ValueError, match="a FIFO, not a regular file"):
        find_run(run)
    assert time.monotonic() - started < 5


def test_a_json_boolean_is_no_log_likelihood(tmp_path):
    from contstim_bench.harness_tasks.samples import sample_logprobs

    path = tmp_path / "samples_contstim_pll_x.jsonl"
    path.write_text(json.dumps({"doc": {"sentence1": "a b", "sentence2": "c d"},
                                "filtered_resps": [[False, True], [-3.5, True]]}) + "\n")
    with pytest.raises(ValueError, match="log-likelihood of 'a b' is not a number"):
        sample_logprobs(path)


def test_a_corpus_byte_order_mark_is_not_part_of_a_sentence(tmp_path):
    from contstim_bench.generate.pool import corpus_sentences, read_word_list

    corpus = tmp_path / "c.txt"
    corpus.write_bytes("\ufeffThe cat sat on the mat today.\n".encode("utf-8"))
    assert list(corpus_sentences([corpus])) == ["The cat sat on the mat today"]
    words = tmp_path / "w.txt"
    words.write_bytes("\ufeffthe\nof\n".encode("utf-8"))
    assert read_word_list(words) == {"the", "of"}
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="FIFO"):
        list(corpus_sentences([fifo]))


def test_report_refuses_a_tampered_standard_error(tmp_path, capsys):
    result = json.loads((SHIPPED / "smollm2-135m.json").read_text())
    real = result["experiments"]["pll"]["all"]["accuracy_stderr"]
    result["experiments"]["pll"]["all"]["accuracy_stderr"] = 0.000123
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(result))
    assert cli_main(["report", str(path), "--out", str(tmp_path / "pages")]) == 1
    err = capsys.readouterr().err
    assert "0.000123 is not the standard error of accuracy_by_unit" in err and f"{real:.6f}"[:6] in err
    assert not (tmp_path / "pages").exists()
