"""Fig. 2 of Golan et al. (2023) from a real synthesis run: a trigram against a bigram (both
trained by ``contstim train ngram`` on 400 sentences of the synthesis pool), three start sentences,
a 600-word vocabulary.  The panel's paths are the search's recorded replacements, ending at the
recorded synthetic sentences; percentiles are checked by hand; the figure is drawn with a key."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from contstim_bench.analysis.synthesis_paths import percentile, synthesis_panel, synthesis_path
from contstim_bench.cli import main as cli_main
from contstim_bench.data.build_contstim import POOL_SYNTHESIS
from contstim_bench.data.sources import resolve
from contstim_bench.generate.illustration import run_rows, synthesis_item
from contstim_bench.report.paper import write_report


@pytest.fixture(scope="module")
def run(kn_trigram, datasets, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fig2")
    bigram = tmp / "bi.arpa"
    assert cli_main(["train", "ngram", "--corpus", str(kn_trigram.parent / "corpus.txt"), "--order", "2",
                     "--output", str(bigram), "--backend", "python"]) == 0
    lines = resolve(POOL_SYNTHESIS).read_text(encoding="utf-8").splitlines()
    (tmp / "starts.txt").write_text("\n".join(lines[400:420]) + "\n", encoding="utf-8")
    from contstim_bench.data.load import dataset_folder

    vocab = pd.read_parquet(dataset_folder("contstim") / "vocabulary" / "train.parquet")
    vocab = vocab.sort_values("frequency", ascending=False, kind="stable")
    top = pd.concat([vocab[vocab["capitalized"]].head(300), vocab[~vocab["capitalized"]].head(300)])
    top[["word", "capitalized"]].to_parquet(tmp / "vocab.parquet")
    out = tmp / "run"
    assert cli_main(["generate", "synthetic", "--models", f"tri=kenlm:{kn_trigram},bi=kenlm:{bigram}",
                     "--start-sentences", "3", "--seed", "3", "--pool", str(tmp / "starts.txt"), "--vocabulary",
                     str(tmp / "vocab.parquet"), "--no-cache", "--quiet", "--output", str(out)]) == 0
    return out


def test_percentile_by_hand():
    ref = np.array([-50.0, -40.0, -30.0, -20.0])
    # -40 is at least two of four values: 50; below all: 0; above all: 100; between: 25
    assert percentile(ref, [-40.0, -60.0, -10.0, -45.0]).tolist() == [50.0, 0.0, 100.0, 25.0]


def test_panel_from_the_run(run, tmp_path):
    rows = run_rows(run)
    assert len(rows) == 3 and {(r["m1"], r["m2"]) for r in rows} == {("tri", "bi")}
    best = max(rows, key=lambda r: r["controversiality"])
    t = synthesis_item(run)["data"]["triplet"]  # by default the most controversial triplet (Eq. 4)
    assert (t["N"], t["S1"], t["S2"]) == (best["N"], best["S1"], best["S2"])
    # the triplet whose two searches both replaced words
    best = next(r for r in rows if r["replacements_S1"] and r["replacements_S2"])
    item = synthesis_item(run, start_index=best["N_idx"])
    data = item["data"]
    t = data["triplet"]
    assert (t["N"], t["S1"], t["S2"]) == (best["N"], best["S1"], best["S2"]) and data["models"] == ["tri", "bi"]
    # the path to S1: N, then one point per accepted replacement (log p under tri, under bi)
    s1 = t["path_S1"]["logprob"]
    assert len(s1) == 1 + len(best["history_S1"]) == 1 + best["replacements_S1"]
    assert s1[0] == [best["lp_N_given_m1"], best["lp_N_given_m2"]]
    assert s1[-1] == pytest.approx([best["lp_S1_given_m1"], best["lp_S1_given_m2"]], abs=1e-9)
    # S1 keeps the trigram's probability at least N's and lowers the bigram's; S2 the reverse
    assert s1[-1][0] >= s1[0][0] and s1[-1][1] < s1[0][1]
    s2 = t["path_S2"]["logprob"]
    assert s2[-1][1] >= s2[0][1] and s2[-1][0] < s2[0][0]
    # percentiles among the run's three start sentences, by hand
    xs = sorted(r["lp_N_given_m1"] for r in rows)
    x = s1[-1][0]
    assert t["path_S1"]["percentile"][-1][0] == 100.0 * sum(v <= x for v in xs) / 3
    assert sorted(p[0] for p in data["natural"]["percentile"]) == pytest.approx([100 / 3, 200 / 3, 100.0])
    # the figure: drawn with a key for every mark
    paths = write_report({"experiment": "run", "unit": "participant", "seed": 0, "models": {}, "items": [item],
                          "skipped": {}}, tmp_path / "rep")
    svg = (tmp_path / "rep" / "run_F2.svg").read_text(encoding="utf-8")
    for key in ("natural sentences (start sentences of the run)", "start sentence N", "S1: keeps tri, lowers bi",
                "S2: keeps bi, lowers tri", "search path to S1"):
        assert key in svg
    assert json.loads((tmp_path / "rep" / "report.json").read_text())["items"][0]["id"] == "F2"
    assert any(p.name == "index.html" for p in paths)


def test_what_the_published_table_lacks(run):
    row = dict(run_rows(run)[0])
    del row["history_S1"]
    with pytest.raises(ValueError, match="no history_S1"):
        synthesis_path(row, "S1")
    with pytest.raises(ValueError, match="several model pairs"):
        synthesis_panel([row, {**row, "m1": "x"}])
    with pytest.raises(ValueError, match="no triplet of model pair"):
        synthesis_item(run, pair=("bi", "tri"))
