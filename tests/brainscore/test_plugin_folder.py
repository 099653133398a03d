"""`contstim brainscore plugin`: the folder it writes (without Brain-Score: tests/brainscore/
test_brainscore_plugin.py runs it there), the conversion of reading times, and every bad input
named with nothing lost."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from contstim_bench.brainscore_plugin import hooks
from contstim_bench.brainscore_plugin.folder import write_plugin_folder
from contstim_bench.cli import main as cli_main
from folder_snapshot import snapshot
from pinned_pll import PINNED

FILES = ["README.md", "__init__.py", "benchmark.py", "data", "reference.json", "requirements.txt", "test.py"]


@pytest.fixture(scope="module")
def written(tmp_path_factory, datasets) -> Path:
    out = tmp_path_factory.mktemp("bs") / "plugin"
    assert cli_main(["brainscore", "plugin", "--out", str(out), "--datasets", str(datasets)]) == 0
    return out / "benchmarks" / "golan2023"


def test_the_folder_is_a_plugin_brainscore_finds(written):
    assert sorted(p.name for p in written.iterdir()) == FILES
    init = (written / "__init__.py").read_text()
    # Brain-Score finds a benchmark by this text in a plugin's __init__.py (quotes made single)
    for ident in ("Golan2023.pll-accuracy", "Golan2023.pll-srcs"):
        assert sum(f"benchmark_registry['{ident}']" in line for line in init.splitlines()) == 1
    from contstim_bench import __version__

    assert (written / "requirements.txt").read_text().splitlines()[1:] == [f"contstim-bench=={__version__}",
                                                                          "pyarrow<26"]
    # the data are the package's built dataset, whole, verified when read
    assert (written / "data" / "contstim" / "fingerprint.json").is_file()
    assert hooks.sentences("contstim.pll", written / "data")[:1] and len(hooks.sentences("contstim.pll",
                                                                                       written / "data")) == 264
    compile((written / "benchmark.py").read_text(), "benchmark.py", "exec")
    compile((written / "test.py").read_text(), "test.py", "exec")


def test_reference_values_are_the_pinned_pll_values(written):
    """The reference subject of pll reads with RoBERTa's published log-probabilities: its accuracy,
    SRCS and ceilings are the values pinned for RoBERTa on pll (tests/pinned_pll.py)."""
    ref = json.loads((written / "reference.json").read_text())
    assert ref["format"] == "contstim-brainscore-plugin" and ref["format_version"] == 1
    acc, srcs = ref["benchmarks"]["Golan2023.pll-accuracy"], ref["benchmarks"]["Golan2023.pll-srcs"]
    pinned = PINNED["all"]["roberta"]
    assert acc["reference"]["subject"] == srcs["reference"]["subject"] == "roberta"
    assert (acc["reference"]["raw"], acc["ceiling"], acc["ceiling_upper"]) == pytest.approx(pinned[:3], abs=1e-12)
    assert (srcs["reference"]["raw"], srcs["ceiling"], srcs["ceiling_upper"]) == pytest.approx(pinned[3:6], abs=1e-12)
    assert acc["units"] == 30 and acc["measure"] == "accuracy" and srcs["measure"] == "srcs"
    assert acc["contstim_benchmark"] == "contstim.pll"


def test_reading_times_become_natural_log_probabilities():
    lp = hooks.logprobs_from_surprisal({"a b": 1.0, "c d": 0.0, "e f": 10.5})
    assert lp == {"a b": -math.log(2), "c d": 0.0, "e f": -10.5 * math.log(2)}
    assert hooks.surprisal_of(np.array([3.25])) == 3.25
    assert hooks.surprisal_of([np.float32(2.5)]) == 2.5
    assert hooks.surprisal_of(np.array([np.array(1.5)], dtype=object)) == 1.5  # a 0-d tensor's array inside
    with pytest.raises(ValueError, match="one reading time per digested sentence, got 2"):
        hooks.surprisal_of([1.0, 2.0])
    for bad in (float("nan"), float("inf"), -0.5, "x"):
        with pytest.raises(ValueError, match="'c d'"):
            hooks.logprobs_from_surprisal({"a b": 1.0, "c d": bad})


def test_a_missing_sentence_is_named(datasets):
    sentences = hooks.sentences("contstim.pll", datasets)
    logprobs = {s: -float(i + 10) for i, s in enumerate(sentences[1:])}
    with pytest.raises(ValueError, match="1 sentence.*no given log-probability"):
        hooks.evaluate_logprobs("contstim.pll", datasets, logprobs, "partial")


def test_a_changed_ceiling_is_refused(written):
    spec = json.loads((written / "reference.json").read_text())["benchmarks"]["Golan2023.pll-srcs"]
    values = {"ceiling": spec["ceiling"], "ceiling_upper": spec["ceiling_upper"] + 0.01}
    with pytest.raises(ValueError, match="ceiling_upper.*its data changed"):
        hooks.check_ceiling(values, spec)
    hooks.check_ceiling({"ceiling": spec["ceiling"], "ceiling_upper": spec["ceiling_upper"]}, spec)


def test_tampered_plugin_data_are_named(written, tmp_path):
    copy = tmp_path / "golan2023"
    shutil.copytree(written, copy)
    table = copy / "data" / "contstim" / "trials" / "pll.parquet"
    import pyarrow.parquet as pq

    t = pq.read_table(table)
    pq.write_table(t.slice(1), table)  # one trial fewer
    with pytest.raises(ValueError, match="trials"):
        hooks.sentences("contstim.pll", copy / "data")


def test_writing_again_replaces_its_own_folder(written, datasets, capsys):
    out = written.parents[1]
    before = (written / "reference.json").read_text()
    assert cli_main(["brainscore", "plugin", "--out", str(out), "--datasets", str(datasets)]) == 0
    assert capsys.readouterr().out.strip() == str(written)
    assert (written / "reference.json").read_text() == before


def test_bad_inputs_are_named_and_nothing_is_lost(tmp_path, datasets, capsys):
    # a folder holding a user's file
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    assert cli_main(["brainscore", "plugin", "--out", str(mine), "--datasets", str(datasets)]) == 1
    assert "--out" in capsys.readouterr().err
    assert (mine / "notes.txt").read_text() == "keep me" and len(list(mine.iterdir())) == 1
    # the datasets folder itself, or a folder that holds it
    before = snapshot(datasets)
    for out in (datasets, datasets.parent):
        assert cli_main(["brainscore", "plugin", "--out", str(out), "--datasets", str(datasets)]) == 1
        err = capsys.readouterr().err
        assert "--datasets" in err and "nothing was written" in err
    # a folder inside the datasets folder
    assert cli_main(["brainscore", "plugin", "--out", str(datasets / "plug"), "--datasets", str(datasets)]) == 1
    assert "--datasets" in capsys.readouterr().err
    assert snapshot(datasets) == before
    # a datasets folder without pll, where no raw data can build it
    empty, no_raw = tmp_path / "empty", tmp_path / "no_raw"
    empty.mkdir(), no_raw.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTSTIM_RAW_DATA", str(no_raw))
        assert cli_main(["brainscore", "plugin", "--out", str(tmp_path / "p"), "--datasets", str(empty)]) == 1
    err = capsys.readouterr().err
    assert "no pll experiment" in err and "contstim data build --only contstim" in err
    assert not (tmp_path / "p").exists()
    # no --out
    with pytest.raises(SystemExit):
        cli_main(["brainscore", "plugin"])
    assert "--out" in capsys.readouterr().err


def test_the_main_experiment_gets_its_benchmarks(tmp_path):
    """With the main experiment's results file (a FAKE one in the raw layout: tests/fixtures_main.py),
    the plugin registers Golan2023.main-accuracy and -srcs, read per participant group; the reference
    subject is GPT-2 (the first reference model that scored every main sentence), and its values are
    the driver's for precomputed:gpt2 evaluated as a new model."""
    from contstim_bench.data import build_contstim as bc
    from contstim_bench.data.writer import write_dataset
    from contstim_bench.driver import RunOptions, evaluate
    from fixtures_main import write_main_fixture

    info = write_main_fixture(tmp_path / "fake_main.csv", n_groups=4, participants_per_group=3, seed=11,
                              pll_readouts=True)
    write_dataset(bc.build_spec(main_results_csv=info.path), tmp_path / "ds")
    plugin, names = write_plugin_folder(tmp_path / "plugin", tmp_path / "ds")
    assert names == ["Golan2023.main-accuracy", "Golan2023.main-srcs", "Golan2023.pll-accuracy", "Golan2023.pll-srcs"]
    ref = json.loads((plugin / "reference.json").read_text())["benchmarks"]
    mine = evaluate("precomputed:gpt2", ["contstim.main"], datasets_dir=tmp_path / "ds", name="a new model",
                    options=RunOptions(cache=False, progress=False), log=lambda m: None)["contstim.main"]
    entry = mine["experiments"]["main"]["all"]
    assert entry["unit"] == "group" and entry["n_units"] == 4
    for measure in ("accuracy", "srcs"):
        spec = ref[f"Golan2023.main-{measure}"]
        assert spec["reference"]["subject"] == "gpt2" and spec["units"] == 4
        assert spec["reference"]["raw"] == pytest.approx(entry[measure], abs=1e-12)
        assert spec["ceiling"] == pytest.approx(entry[f"{measure}_noise_ceiling"]["lower"], abs=1e-12)
