"""``contstim report``'s two modes and its errors (no dataset needed)."""
from __future__ import annotations

import json

import pytest

from contstim_bench.benchmarks.model_report import model_report
from contstim_bench.cli import main as cli_main


@pytest.mark.parametrize("argv,message", [
    ([], "give result files (contstim report RESULT [RESULT...] --out DIR) or --experiment main|pll, not both"),
    (["x.json", "--experiment", "pll"], "give result files"),
    (["x.json", "--source", "raw"], "--source is for --experiment main"),
])
def test_mode_errors(tmp_path, capsys, argv, message):
    argv = [a if a != "x.json" else str(tmp_path / a) for a in argv]
    assert cli_main(["report", *argv, "--out", str(tmp_path / "out")]) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_not_a_result(tmp_path, capsys):
    bad = tmp_path / "comparison.json"
    bad.write_text(json.dumps({"format": "contstim-bench-comparison", "format_version": 1}), encoding="utf-8")
    assert cli_main(["report", str(bad), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    # the validator knows the comparison format: it names the file and what the file lacks
    assert "comparison.json" in err and "file.models: missing" in err
    with pytest.raises(ValueError, match="no report page for result format 'contstim-bench-comparison'"):
        model_report({"format": "contstim-bench-comparison"})


def test_help_names_both_modes(capsys):
    with pytest.raises(SystemExit):
        cli_main(["report", "--help"])
    out = capsys.readouterr().out
    assert "RESULT" in out and "--experiment {main,pll}" in out and "self-contained HTML page per result" in out
