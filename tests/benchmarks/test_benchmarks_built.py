"""``contstim benchmarks`` marks what is not built in the datasets folder, with the command that
builds it: an empty folder, then one with the contstim dataset built."""
from __future__ import annotations

from contstim_bench.cli import main as cli_main
from contstim_bench.data.build_contstim import MAIN_RESULTS


def _lines(capsys) -> dict[str, str]:
    """identifier -> its row and its note, if any, joined."""
    out = capsys.readouterr().out
    lines: dict[str, str] = {}
    for line in out.splitlines():
        if line.strip():
            key = line.split()[0].rstrip(":")
            lines[key] = lines.get(key, "") + line + "\n"
    return lines


def test_empty_datasets_folder(tmp_path, capsys):
    assert cli_main(["benchmarks", "--datasets", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert len(rows) == 6 and all(" NOT BUILT " in r for r in rows)
    assert f"  blimp: not built: contstim data build --only blimp --out {tmp_path}" in out.splitlines()
    assert f"  contstim.pll: not built: contstim data build --only contstim --out {tmp_path}" in out.splitlines()
    assert not list(tmp_path.iterdir())  # listing builds nothing


def test_with_the_contstim_dataset_built(datasets, raw_data_dir, capsys):
    assert cli_main(["data", "build", "--only", "contstim", "--out", str(datasets)]) == 0
    capsys.readouterr()
    assert cli_main(["benchmarks", "--datasets", str(datasets)]) == 0
    lines = _lines(capsys)
    assert " built " in lines["contstim.pll"] and " built " in lines["contstim"]
    assert " NOT BUILT " in lines["blimp"] and " NOT BUILT " in lines["plausibility"]
    if (raw_data_dir / MAIN_RESULTS).exists():
        assert " built " in lines["contstim.main"]
    else:  # the shipped raw data lacks the main experiment's human data (see shared/data/README.md)
        assert " NOT BUILT " in lines["contstim.main"]
        assert "--main-results FILE" in lines["contstim.main"] and "--main-results FILE" in lines["contstim"]
