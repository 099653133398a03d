"""The Kauf et al. (2024) figures and tables of plausibility results
(contstim_bench.benchmarks.plausibility_report): units from every kind of result, the statistics
on hand-set hits, the human values of the authors' notebooks from the real data, which items a
set of results supports, and the `contstim plausibility --plots` door."""
from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from scipy import stats

from contstim_bench import cli
from contstim_bench.benchmarks import plausibility as runner
from contstim_bench.benchmarks.plausibility_report import plausibility_report, unit_hits
from contstim_bench.plausibility.metrics import EXPERIMENT1_SUBSETS
from contstim_bench.scoring.base import Scorer

LIMIT = 10


class WordScorer(Scorer):
    """Hand-checkable: log p = -(characters) + bonus * (distinct words)."""

    method = "words"

    def __init__(self, bonus: float, name: str):
        super().__init__(cache=False)
        self.bonus, self.spec = bonus, f"test:{name}"

    def fingerprint(self) -> str:
        return self.spec

    def _score_unique(self, sentences):
        return np.array([-len(s) + self.bonus * len(set(s.split())) for s in sentences], dtype=np.float64)


@pytest.fixture(scope="module")
def base():
    return runner.run_plausibility(WordScorer(0.0, "chars"), log=lambda m: None, limit=LIMIT)


@pytest.fixture(scope="module")
def pairs():
    return runner.limit_pairs(runner.load()["experiment1"], LIMIT)


def _with_hits(result: dict, pairs, hits_of) -> dict:
    """A copy of ``result`` whose per-pair hits are ``hits_of(subset, index within subset)``."""
    out = copy.deepcopy(result)
    position = pairs.groupby("subset").cumcount()
    out["scores"]["experiment1"]["pair_hits"] = {pid: bool(hits_of(s, int(i))) for pid, s, i in
                                                 zip(pairs.pair_id, pairs.subset, position)}
    return out


def _as_choice(result: dict, pairs, query: str) -> dict:
    """``result`` as a Sentence Choice I result: log-odds +1 / -1 for the plausible-first order of
    even / odd pairs, -1 (a hit) for every plausible-second order."""
    out = copy.deepcopy(result)
    out["method"] = "prompt:sentence-choice-1"
    out["prompt"] = {"template": "sentence-choice-1", "title": "Sentence Choice I", "query": query, "text": "..."}
    out["scores"] = {"experiment1": {"pair_log_odds": [
        {"pair_id": pid, "plausible_first": 1.0 if k % 2 == 0 else -1.0, "plausible_second": -1.0}
        for k, pid in enumerate(pairs.pair_id)]}}
    for key in ("experiment2",):
        out.pop(key)
    return out


def _item(report: dict, id_: str) -> dict:
    return next(i for i in report["items"] if i["id"] == f"kauf2024-{id_}")


def test_unit_hits_of_every_kind_of_result(base, pairs):
    units = unit_hits(base, pairs)
    assert len(units) == len(pairs) == 50 and set(units.presentation) == {"pair"}
    assert units.hit.tolist() == [base["scores"]["experiment1"]["pair_hits"][p] for p in pairs.pair_id]
    for subset in EXPERIMENT1_SUBSETS:  # the result's own accuracy per subset, recomputed from the units
        assert units[units.subset == subset].hit.mean() == pytest.approx(base["experiment1"][subset]["both"]["accuracy"])
    choice = unit_hits(_as_choice(base, pairs, "is-plausible"), pairs)
    assert len(choice) == 2 * len(pairs)
    first = choice[choice.presentation == "plausible_first"]
    assert first.hit.tolist() == [k % 2 == 0 for k in range(len(pairs))]
    assert choice[choice.presentation == "plausible_second"].hit.all()
    assert (choice.groupby("pair_id").human_hit.nunique() == 1).all()  # one human hit per pair, repeated


def test_human_values_are_the_authors_notebook(base):
    """The human accuracy and SE of every pair of each dataset: the authors' notebook values
    (LogProb-analysis cell 19, DTFit/EventsAdapt-prompt-choice human_values)."""
    human = _item(plausibility_report([base]), "T3")["data"]["human"]
    assert human["eventsadapt_ai"]["accuracy"] == pytest.approx(0.992188, abs=5e-7)
    assert human["eventsadapt_ai"]["se"] == pytest.approx(0.005513, abs=5e-7)
    assert human["eventsadapt_aa"]["accuracy"] == pytest.approx(0.957364, abs=5e-7)
    assert human["eventsadapt_aa"]["se"] == pytest.approx(0.012603, abs=5e-7)
    assert human["dtfit"]["accuracy"] == pytest.approx(0.989873, abs=5e-7)
    assert human["dtfit"]["se"] == pytest.approx(0.005044, abs=5e-7)
    assert (human["eventsadapt_ai"]["n"], human["eventsadapt_aa"]["n"], human["dtfit"]["n"]) == (256, 258, 395)


def test_statistics_on_hand_set_hits(base, pairs):
    # base right everywhere; instruct right on the first 12 of 20 AA pairs, on 9 of 10 DTFit pairs
    b = _with_hits(base, pairs, lambda s, i: not (s == "dtfit" and i < 3))
    ins = _with_hits(base, pairs, lambda s, i: (i < 12) if s == "eventsadapt_aa" else not (s == "dtfit" and i == 9))
    report = plausibility_report([b, ins], names=["base", "instruct"], base_instruct=[(0, 1)])
    t4 = _item(report, "T4")["data"]
    aa = next(t for t in t4["tests"] if t["dataset"] == "eventsadapt_aa")
    t = 0.4 / math.sqrt((8 * 0.6 ** 2 + 12 * 0.4 ** 2) / 19 / 20)  # differences: eight 1s, twelve 0s
    assert aa["t"] == pytest.approx(t) and aa["p"] == pytest.approx(2 * stats.t.sf(t, 19)) and aa["marks"] == "**"
    row = next(r for r in t4["rows"] if r[0].startswith("EventsAdapt AA"))
    assert row[1:3] == ["1.00**", "0.60"]  # the marks sit on the more accurate version, as Table 4
    assert not next(t for t in t4["tests"] if t["dataset"] == "eventsadapt_ai")["defined"]  # identical hits
    # models vs humans on DTFit: the first 10 DTFit pairs are human hits
    dt = pairs[pairs.subset == "dtfit"]
    assert (dt.human_mean_plausible > dt.human_mean_implausible).all()
    records = {r["model"]: r for r in _item(report, "human")["data"]["records"] if r["dataset"] == "dtfit"}
    t_base = -0.3 / math.sqrt((3 * 0.7 ** 2 + 7 * 0.3 ** 2) / 9 / 10)  # differences: three -1s, seven 0s
    t_ins = -0.1 / math.sqrt((0.9 ** 2 + 9 * 0.1 ** 2) / 9 / 10)
    assert records["base"]["t"] == pytest.approx(t_base) and records["instruct"]["t"] == pytest.approx(t_ins)
    p_base, p_ins = 2 * stats.t.sf(-t_base, 9), 2 * stats.t.sf(-t_ins, 9)
    assert records["base"]["p_bonferroni"] == pytest.approx(min(1, 2 * p_base))
    assert records["instruct"]["p_bonferroni"] == pytest.approx(min(1, 2 * p_ins))
    t3 = _item(report, "T3")["data"]
    acc = {(r["dataset"], r["model"]): r for r in t3["records"]}
    assert acc[("dtfit", "base")]["accuracy"] == 0.7
    assert acc[("dtfit", "base")]["se"] == pytest.approx(math.sqrt(0.7 * 0.3 / 9))
    assert ["DTFit (AI, unlikely)", "LogProbs", "0.70 (.15)", "0.90 (.10)", "0.99 (.01)"] in t3["rows"]
    voice = _item(report, "F2")["data"]
    assert voice["x"] == ["base", "instruct"]
    pts = voice["lines"][0]["points"]
    aa = pairs[pairs.subset == "eventsadapt_aa"].reset_index(drop=True)
    assert aa.voice.tolist()[:4] == ["active", "passive", "active", "passive"]  # items 1, 2, ... in both voices
    assert pts["base"]["active"]["accuracy"] == 1.0
    assert pts["instruct"]["active"]["accuracy"] == pts["instruct"]["passive"]["accuracy"] == pytest.approx(0.6)


def test_items_a_set_of_results_supports(base, pairs):
    only = plausibility_report([base])
    ids = [i["id"].removeprefix("kauf2024-") for i in only["items"]]
    assert ids == ["F1", "F2", "F3", "F9", "F5", "F6", "T3", "T4", "human", "T6", "T8"]
    assert set(only["skipped"]) == {"kauf2024-F4", "kauf2024-F7", "kauf2024-F8"}
    assert "--free-generation" in only["skipped"]["kauf2024-F7"]
    # Figure 3: the model panel's bars are the result's own condition means
    f3 = _item(only, "F3")["data"]
    assert [p["title"] for p in f3] == ["Human", "test:chars"]
    for perspective, means in base["experiment2"]["word"]["condition_means"].items():
        assert f3[1]["means"][perspective] == pytest.approx(means)
    assert len(f3[0]["points"]["context"]["Control"]) == 100  # every SocialN400 item of the humans
    # two Sentence Choice I query types: Figure 8
    both = plausibility_report([base, _as_choice(base, pairs, "is-plausible"), _as_choice(base, pairs, "makes-sense")],
                               names=["m", "m", "m"])
    f8 = _item(both, "F8")["data"]
    assert [p["groups"] for p in f8] == [["is-plausible", "makes-sense"]] * 3
    assert f8[2]["series"][0]["values"] == [0.75, 0.75]  # DTFit: 10 first orders half right, 10 second all right
    f1 = _item(both, "F1")["data"][0]
    assert f1["groups"] == ["LogProbs", "Sentence Choice I"]  # the makes-sense run is not Figure 1's prompt
    assert "Sentence Choice I ['makes-sense']" in [r[1] for r in _item(both, "T3")["data"]["rows"]]


def test_report_errors(base, pairs, tmp_path):
    with pytest.raises(ValueError, match="not a plausibility result"):
        plausibility_report([{"format": "contstim-bench-blimp"}])
    bad = copy.deepcopy(base)
    bad["benchmark"]["dataset_fingerprint"] = "0" * 64
    with pytest.raises(ValueError, match="differs from this plausibility dataset"):
        plausibility_report([bad])
    with pytest.raises(ValueError, match=r"base_instruct pair \(0, 0\)"):
        plausibility_report([base], base_instruct=[(0, 0)])
    with pytest.raises(ValueError, match="2 names for 1 results"):
        plausibility_report([base], names=["a", "b"])
    fewer = copy.deepcopy(base)
    del fewer["scores"]["experiment1"]["pair_hits"]["DT001"]
    with pytest.raises(ValueError, match="score different dtfit units"):
        plausibility_report([base, fewer], base_instruct=[(0, 1)])
    with pytest.raises(ValueError, match="at least one"):
        plausibility_report([])


def test_cli_plots(kn_trigram, tmp_path, capsys):
    out, plots = tmp_path / "r.json", tmp_path / "plots"
    assert cli.main(["plausibility", "--model", f"kenlm:{kn_trigram}", "--limit", "3", "--output", str(out),
                     "--plots", str(plots), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "not produced: kauf2024-F4" in err and "wrote" in err
    for name in ("kauf2024-F1.png", "kauf2024-F3.svg", "kauf2024-F9.png", "kauf2024-T3.md", "kauf2024-human.md"):
        assert (plots / name).stat().st_size > 200, name
    report = json.loads((plots / "kauf2024-report.json").read_text())
    result = json.loads(out.read_text())
    t3 = next(i for i in report["items"] if i["id"] == "kauf2024-T3")["data"]["records"]
    assert [r["accuracy"] for r in t3] == [result["experiment1"][s]["both"]["accuracy"] for s in EXPERIMENT1_SUBSETS]
    assert cli.main(["plausibility", "--model", f"kenlm:{kn_trigram}", "--query", "makes-sense",
                     "--output", str(tmp_path / "q.json")]) == 1
    assert "`contstim plausibility --query makes-sense` frames a prompt: give `contstim plausibility --method prompt:TEMPLATE`" in capsys.readouterr().err
