"""``contstim report RESULT...``: pages for the shipped SmolLM2 result (leaderboard/results/, pll
experiment), a precomputed reference evaluated here (``precomputed:roberta``), a plausibility and
a BLiMP result of a Kneser-Ney trigram trained here (``kn_trigram``, first few items); the pages'
content against the results (tables, captions, provenance, the most severe failures recounted by
hand from the trials), then every page in headless Chromium (Debian's /usr/bin/chromium driven by
playwright, as tests/test_leaderboard_site.py): every figure rendered, every link resolving, no
console error, no request off the disk."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from contstim_bench.benchmarks.contstim import load_experiment
from contstim_bench.benchmarks.model_report import model_report
from contstim_bench.cli import main as cli_main
from contstim_bench.results import read_result

pytestmark = pytest.mark.slow  # a real dataset, four results and 20 figures

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2 = ROOT / "leaderboard" / "results" / "smollm2-135m.json"
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PLL_REFERENCES = ("bert", "bert_has_a_mouth", "roberta", "roberta_has_a_mouth", "electra", "electra_has_a_mouth")
PAGES = {"smollm2": "hf-causal_smollm2-135m.contstim.pll.html", "roberta": "roberta.contstim.pll.html"}


@pytest.fixture(scope="module")
def written(tmp_path_factory, datasets, kn_trigram):
    root = tmp_path_factory.mktemp("report")
    files = {"smollm2": SMOLLM2, "roberta": root / "roberta.json", "plausibility": root / "plausibility.json",
             "blimp": root / "blimp.json"}
    assert cli_main(["evaluate", "--model", "precomputed:roberta", "--experiment", "pll", "--output",
                     str(files["roberta"]), "--no-plots", "--quiet"]) == 0
    trigram = f"kenlm:{kn_trigram}"
    assert cli_main(["plausibility", "--model", trigram, "--output", str(files["plausibility"]), "--limit", "4",
                     "--quiet"]) == 0
    assert cli_main(["blimp", "--model", trigram, "--output", str(files["blimp"]), "--limit", "2", "--quiet"]) == 0
    out = root / "pages"
    assert cli_main(["report", *map(str, files.values()), "--out", str(out)]) == 0
    results = {k: read_result(p) for k, p in files.items()}
    pages = sorted(p.name for p in out.glob("*.html"))
    return {"out": out, "files": files, "results": results, "pages": pages, "datasets": datasets}


class Sections(HTMLParser):
    """Per ``<section id>``: its text, its tables (rows of cell texts) and its images."""

    def __init__(self):
        super().__init__()
        self.sections: dict[str, dict] = {}
        self.current = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self.current = self.sections.setdefault(attrs["id"], {"text": "", "rows": [], "imgs": 0})
        elif self.current is not None:
            if tag == "tr":
                self.current["rows"].append([])
            elif tag in ("td", "th"):
                self.cell = []
            elif tag == "img":
                self.current["imgs"] += 1

    def handle_endtag(self, tag):
        if tag == "section":
            self.current = None
        elif tag in ("td", "th") and self.cell is not None:
            self.current["rows"][-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data):
        if self.current is not None:
            self.current["text"] += data
            if self.cell is not None:
                self.cell.append(data)


def parse_sections(text: str) -> dict[str, dict]:
    parser = Sections()
    parser.feed(text)
    return parser.sections


def sections(written, name: str) -> dict[str, dict]:
    return parse_sections((written["out"] / name).read_text(encoding="utf-8"))


def table(section: dict) -> list[dict]:
    head, *rows = section["rows"]
    return [dict(zip(head, r)) for r in rows]


def test_one_page_per_result_and_an_index(written):
    names = written["pages"]
    trigram = sorted(p for p in names if p.startswith("kenlm_"))
    assert "all_1_plausibility_results.kauf2024_statistics.html" in names  # test_kauf2024_across_results
    assert len(names) == 6 and "index.html" in names and set(PAGES.values()) <= set(names)
    assert [p.split(".")[-2] for p in trigram] == ["blimp", "plausibility_logprobs"]
    index = (written["out"] / "index.html").read_text(encoding="utf-8")
    for page in names:
        if page != "index.html":
            assert f'href="{page}"' in index
    rows = {r["model"]: r for r in table(sections_of_index(index))}
    smollm2 = written["results"]["smollm2"]["experiments"]["pll"]["all"]
    assert rows["hf-causal:smollm2-135m"]["pll accuracy"] == f"{smollm2['accuracy']:.3f}"
    assert rows["hf-causal:smollm2-135m"]["pll SRCS ceiling (lower)"] == f"{smollm2['srcs_noise_ceiling']['lower']:.3f}"
    assert rows["roberta"]["pll SRCS"] == f"{written['results']['roberta']['experiments']['pll']['all']['srcs']:.3f}"


def sections_of_index(index: str) -> dict:
    first = index.index("<table")
    return parse_sections(f'<section id="i">{index[first:index.index("</table>", first)]}</table></section>')["i"]


@pytest.mark.parametrize("who", ["smollm2", "roberta"])
def test_contstim_page_items_and_scores(written, who):
    result = written["results"][who]
    name = result["model"]["name"]
    secs = sections(written, PAGES[who])
    refs = [r for r in PLL_REFERENCES if r != name]
    expected = (["pll_scores", "pll_accuracy", "pll_accuracy_dominance", "pll_srcs", "pll_srcs_dominance", "pll_versus"] + [f"pll_scatter_{r}" for r in refs]
                + ["pll_S4_synthetic_vs_synthetic", "pll_T1", "pll_T2", "pll_T3", "pll_TS2", "provenance"])
    assert list(secs) == expected
    for id_ in ("pll_accuracy", "pll_srcs", *[f"pll_scatter_{r}" for r in refs], "pll_S4_synthetic_vs_synthetic"):
        assert secs[id_]["imgs"] == 1, id_
    assert "Figures 1 and 3: prediction accuracy" in secs["pll_accuracy"]["text"]
    assert "the grey band the noise ceiling, * a model significantly below its lower ceiling" in secs["pll_accuracy"]["text"]
    for id_, cond in (("pll_T1", "controversial natural"), ("pll_T3", "natural vs synthetic")):
        assert f"Not available: the pll experiment has no {cond} trials" in secs[id_]["text"]
    entries = result["experiments"]["pll"]
    rows = table(secs["pll_scores"])
    assert [r["condition"] for r in rows] == list(entries)
    for row in rows:
        e = entries[row["condition"]]
        assert row["accuracy"] == f"{e['accuracy']:.3f}" and row["SRCS"] == f"{e['srcs']:.3f}"
        assert row["accuracy ceiling"] == (f"{e['accuracy_noise_ceiling']['lower']:.3f}-"
                                           f"{e['accuracy_noise_ceiling']['upper']:.3f}")
        assert row["units"] == "30" and row["trials"] == str(e["n_trials"])
    versus = table(secs["pll_versus"])
    h = entries["all"]["head_to_head"]
    assert len(versus) == sum(len(e["head_to_head"]) for e in entries.values())
    for row in (r for r in versus if r["condition"] == "all"):
        share = h[row["other model"]]["share"]
        assert row["share for this model"] == ("" if share is None else f"{share:.3f}")
    prov = {r["field"]: r["value"] for r in table(secs["provenance"])}
    assert prov["model.spec"] == result["model"]["spec"] and prov["model.fingerprint"] == result["model"]["fingerprint"]
    for key in ("package_version", "git_commit", "created", "dataset_fingerprint"):
        assert prov[f"provenance.{key}"] == result["provenance"][key]
    assert prov["benchmark.dataset_fingerprint"] == result["benchmark"]["dataset_fingerprint"]


def per_pair_accuracy(trials, lp: dict, targeted: str | None) -> dict[str, float]:
    """By hand: each synthetic pair's accuracy of a model, mean over the participants who saw it."""
    t = trials[trials["trial_type"] == "synthetic_vs_synthetic"]
    if targeted is not None:
        cols = ["sentence1_accept_model", "sentence1_reject_model", "sentence2_accept_model", "sentence2_reject_model"]
        t = t[np.logical_or.reduce([(t[c] == targeted).to_numpy() for c in cols])]
    acc: dict[str, list[float]] = {}
    for pid, s1, s2, rating in zip(t["pair_id"], t["sentence1"], t["sentence2"], t["rating"]):
        d = lp[s2] - lp[s1]
        hit = 0.5 if d == 0 else float((d > 0) == (rating >= 4))
        acc.setdefault(pid, []).append(hit)
    return {p: float(np.mean(v)) for p, v in acc.items()}


@pytest.mark.parametrize("who,targeted", [("smollm2", None), ("roberta", "roberta")])
def test_table2_is_the_worst_pair_by_hand(written, who, targeted):
    result = written["results"][who]
    trials, refs = load_experiment("pll", written["datasets"])
    acc = per_pair_accuracy(trials, result["logprobs"], targeted)
    lowest = min(acc.values())
    report = model_report(result, written["datasets"])
    [failure] = next(i for i in report["items"] if i["id"] == "pll_T2")["data"]["rows"]
    assert failure["accuracy"] == pytest.approx(lowest)
    assert failure["n_tied_pairs"] == sum(v == lowest for v in acc.values())
    assert acc[failure["pair_id"]] == pytest.approx(lowest)
    rows = trials[trials["pair_id"] == failure["pair_id"]]
    chose = [s2 if r >= 4 else s1 for s1, s2, r in zip(rows["sentence1"], rows["sentence2"], rows["rating"])]
    assert failure["human_choices"] == (chose.count(failure["sentence1"]), chose.count(failure["sentence2"]))
    assert failure["human_choices"][0] >= failure["human_choices"][1]
    lp = result["logprobs"]
    assert failure["logprob_model"] == (lp[failure["sentence1"]], lp[failure["sentence2"]])
    assert failure["logprob_other"] == (refs[failure["other"]][failure["sentence1"]],
                                        refs[failure["other"]][failure["sentence2"]])
    if targeted:  # model 2 is the model the pair pitted roberta against
        assert set(rows[["sentence1_accept_model", "sentence1_reject_model"]].iloc[0]) | set(
            rows[["sentence2_accept_model", "sentence2_reject_model"]].iloc[0]) >= {"roberta", failure["other"]}
    shown = table(sections(written, PAGES[who])["pll_T2"])
    assert shown[0]["model"] == result["model"]["name"] and shown[0]["accuracy"] == f"{lowest:.2f}"
    assert shown[0]["sentence"] == f"s1: {failure['sentence1']}" and shown[1]["sentence"] == f"s2: {failure['sentence2']}"
    assert [r["log p (model 1)"] for r in shown] == [f"{v:.2f}" for v in failure["logprob_model"]]
    assert [r["human choices"] for r in shown] == [str(v) for v in failure["human_choices"]]


def test_token_count_control_of_the_model_by_hand(written, smollm2):
    """Table S2 on the SmolLM2 page: on each tested synthetic pair of the pll experiment, the sentence
    SmolLM2 gives the higher log-probability (accepted) against the other, counted in SmolLM2's own
    tokens (its tokenizer, through the spec); roberta's page (precomputed, its tokenizer not in the
    offline cache) says why it has none."""
    from contstim_bench.benchmarks.contstim_golan import selected_triplets

    lp = written["results"]["smollm2"]["logprobs"]
    triplets = selected_triplets("pll", written["datasets"])
    pairs = list(dict.fromkeys(zip(triplets["S1"], triplets["S2"])))
    n = dict(zip(*[[s for p in pairs for s in p], smollm2.token_lengths([s for p in pairs for s in p])]))
    more, equal, less = 0, 0, 0
    for a, b in pairs:
        accepted, rejected = (a, b) if lp[a] > lp[b] else (b, a)
        more += n[accepted] > n[rejected]
        equal += n[accepted] == n[rejected]
        less += n[accepted] < n[rejected]
    from contstim_bench.driver import RunOptions, load_model

    report = model_report(written["results"]["smollm2"], written["datasets"],
                          load_model=lambda spec: load_model(spec, RunOptions(progress=False)))
    [row] = next(i for i in report["items"] if i["id"] == "pll_TS2")["data"]["rows"]
    unloaded = model_report(written["results"]["smollm2"], written["datasets"])  # the API without a loader
    assert "no model loader was given" in next(i for i in unloaded["items"] if i["id"] == "pll_TS2")["unavailable"]
    assert (row["n_pairs"], row["accepted_more"], row["equal"], row["rejected_more"]) == (len(pairs), more, equal, less)
    assert len(pairs) == 120
    shown = table(sections(written, PAGES["smollm2"])["pll_TS2"])
    assert (shown[0]["pairs"], shown[0]["accepted has more tokens"]) == ("120", str(more))
    assert "not in the Hugging Face cache" in sections(written, PAGES["roberta"])["pll_TS2"]["text"]


def test_head_to_head_matrix_agrees_with_the_result(written):
    """The matrix recomputed for the page has the result's own head-to-head in its row."""
    result = written["results"]["smollm2"]
    name = result["model"]["name"]
    report = model_report(result, written["datasets"])
    item = next(i for i in report["items"] if i["id"] == "pll_S4_synthetic_vs_synthetic")
    block = item["data"]["comparison"]["conditions"]["synthetic_vs_synthetic"]
    mine = result["experiments"]["pll"]["synthetic_vs_synthetic"]["head_to_head"]
    assert set(block["head_to_head"][name]) == set(mine) == set(PLL_REFERENCES)
    for ref, h in mine.items():
        cell = block["head_to_head"][name][ref]
        assert (cell["n_pairs"], cell["n_trials"]) == (h["n_pairs"], h["n_trials"])
        assert cell["share"] == (None if h["share"] is None else pytest.approx(h["share"], abs=1e-12))


def test_plausibility_page(written):
    result = written["results"]["plausibility"]
    [name] = [p for p in written["pages"] if p.endswith(".plausibility_logprobs.html")]
    secs = sections(written, name)
    assert list(secs) == ["exp1_datasets", "exp1_voice", "exp1_table", "exp1_free", "exp2_word", "exp2_sentence",
                          "exp2_metrics", "exp2_similarity", "provenance"]
    assert all(secs[i]["imgs"] == 1 for i in ("exp1_datasets", "exp1_voice", "exp2_word", "exp2_sentence"))
    assert "Not available: the result reads out log-probabilities; free generation answers a prompt" in secs[
        "exp1_free"]["text"]
    rows = table(secs["exp1_table"])
    assert len(rows) == 8
    for row in rows:
        subset = {"EventsAdapt AI (impossible)": "eventsadapt_ai", "EventsAdapt AA (unlikely)": "eventsadapt_aa",
                  "DTFit (AI, unlikely)": "dtfit"}[row["dataset"]]
        e = result["experiment1"][subset][row["voice"]]
        assert row["accuracy"] == f"{e['accuracy']:.3f}" and row["human accuracy"] == f"{e['human_accuracy']:.3f}"
        assert row["pairs"] == str(e["n_pairs"]) == ("8" if row["voice"] == "both" and subset != "dtfit" else "4")
    metrics = {r["metric"]: r for r in table(secs["exp2_metrics"])}
    e2 = result["experiment2"]
    assert metrics["Context Sensitivity"]["sentence"] == f"{e2['sentence']['metrics']['context_sensitivity']['accuracy']:.3f}"
    assert metrics["General Plausibility"]["human"] == f"{e2['human']['metrics']['general_plausibility']['accuracy']:.3f}"
    assert "Human dots not shown" not in secs["exp2_word"]["text"]  # the dataset is the result's
    prov = {r["field"]: r["value"] for r in table(secs["provenance"])}
    assert prov["benchmark.limit"] == "4" and prov["method"] == "logprobs"


def test_blimp_page(written):
    result = written["results"]["blimp"]
    [name] = [p for p in written["pages"] if p.endswith(".blimp.html")]
    secs = sections(written, name)
    assert list(secs) == ["blimp_phenomena", "blimp_paradigms", "blimp_table3", "blimp_fields", "provenance"]
    rows = table(secs["blimp_table3"])
    acc = result["accuracy"]
    assert rows[0]["overall"] == f"{100 * acc['overall']['accuracy']:.1f}"
    assert rows[0]["binding"] == f"{100 * acc['phenomenon']['binding']['accuracy']:.1f}"
    assert rows[-1][""] == "Kauf & Ivanova 2023: human (Warstadt et al. 2020)" and rows[-1]["overall"] == "88.6"
    assert "the first 2 pairs of each paradigm (134 pairs)" in secs["blimp_table3"]["text"]


def test_pages_in_chromium(written, tmp_path):
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed at /usr/bin/chromium")
    from playwright.sync_api import sync_playwright

    figures = {"smollm2": 11, "roberta": 10}  # bars and dominance circles x 2, scatters, matrix
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, timeout=60_000)
        context = browser.new_context(viewport={"width": 1300, "height": 900})
        page = context.new_page()
        requests, errors = [], []
        page.on("request", lambda r: requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        for name in written["pages"]:
            path = written["out"] / name
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            imgs = page.eval_on_selector_all("img", "es => es.map(e => [e.complete, e.naturalWidth, e.naturalHeight])")
            assert all(done and w > 200 and h > 100 for done, w, h in imgs), (name, imgs)
            svgs = page.eval_on_selector_all("svg", "es => es.map(e => e.getBoundingClientRect().width)")
            assert all(w > 0 for w in svgs)
            expected = sum(secs["imgs"] for secs in sections(written, name).values())
            assert len(imgs) == expected, name
            for who, n in figures.items():
                if name == PAGES[who]:
                    assert len(imgs) == n
            links = page.eval_on_selector_all("a[href]", "es => es.map(e => e.getAttribute('href'))")
            assert links, name
            for href in links:
                target, _, fragment = href.partition("#")
                assert not re.match(r"^[a-z]+:", target), href  # relative links only: nothing off the disk
                if target:
                    assert (path.parent / target).is_file(), (name, href)
                if fragment and not target:
                    assert page.evaluate("id => document.getElementById(id) !== null", fragment), (name, href)
            if name in (PAGES["smollm2"], "index.html"):
                page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
        assert errors == []
        assert [u for u in requests if not u.startswith(("file://", "data:"))] == []
        context.close()
        browser.close()
    assert (tmp_path / f"{PAGES['smollm2']}.png").stat().st_size > 100_000


def test_what_a_page_cannot_show_says_why(written):
    """Another dataset than the result's, no panels section: the items say so in their place."""
    result = {**written["results"]["smollm2"], "benchmark": {**written["results"]["smollm2"]["benchmark"],
                                                             "dataset_fingerprint": "0" * 64}}
    del result["panels"]
    report = model_report(result, written["datasets"])
    missing = {i["id"]: i["unavailable"] for i in report["items"] if i.get("unavailable")}
    assert set(missing) == {"pll_accuracy", "pll_srcs", "pll_scatter", "pll_S4", "pll_T", "pll_TS2"}
    assert missing["pll_TS2"] == missing["pll_T"]
    assert missing["pll_accuracy"].startswith("the result has no 'panels' section")
    assert re.fullmatch(r"the local contstim dataset \(fingerprint [0-9a-f]{12}\) is not the one the result was "
                        r"computed on \(000000000000\); rebuild it, or pass its folder to `contstim report --datasets`", missing["pll_T"])
    assert [i["id"] for i in report["items"] if not i.get("unavailable")] == ["pll_scores", "pll_versus", "provenance"]


def test_an_analysis_plugs_in_with_one_registration(written):
    """items_for(format) adds items to every page of that format, before the provenance."""
    from contstim_bench.benchmarks import model_report as mr
    from contstim_bench.benchmarks.report_items import report_item
    from contstim_bench.report.pages import result_page

    def paradigm_count(result, datasets_dir=None, seed=0):
        return [report_item("n_paradigms", "rows", "Paradigms", "How many.",
                            {"rows": [{"paradigms": len(result["accuracy"]["paradigm"])}]}, "Extra")]

    mr.items_for("contstim-bench-blimp")(paradigm_count)
    try:
        report = model_report(written["results"]["blimp"])
    finally:
        mr.EXTRA_ITEMS["contstim-bench-blimp"].remove(paradigm_count)
    assert [i["id"] for i in report["items"]][-2:] == ["n_paradigms", "provenance"]
    page = result_page(report)
    assert '<h2>Extra</h2><section id="n_paradigms"><h3>Paradigms</h3>' in page
    assert table(parse_sections(page)["n_paradigms"]) == [{"paradigms": "67"}]
    with pytest.raises(ValueError, match="unknown result format 'x'"):
        mr.items_for("x")



def test_kauf2024_across_results(written):
    """The page across the plausibility results: Kauf et al. (2024) Table 3 (accuracy and standard
    error per method) with the result's own accuracies, each model against the humans, and why the
    items that need other results are not shown."""
    from contstim_bench.plausibility.metrics import SUBSET_TITLES

    result = written["results"]["plausibility"]
    spec = result["model"]["spec"]
    secs = sections(written, "all_1_plausibility_results.kauf2024_statistics.html")
    for fig in ("kauf2024-F1", "kauf2024-F5", "kauf2024-F6"):
        assert secs[fig]["imgs"] == 1, fig
    rows = table(secs["kauf2024-T3"])
    titles = {title: key for key, title in SUBSET_TITLES.items()}
    assert [r["method"] for r in rows] == ["LogProbs"] * len(rows) and len(rows) == 3
    for r in rows:
        accuracy = result["experiment1"][titles[r["dataset"]]]["both"]["accuracy"]
        assert r[spec].startswith(f"{accuracy:.2f} (")
    versus = table(secs["kauf2024-human"])
    assert [(r["model"], r["method"]) for r in versus] == [(spec, "LogProbs")] * 3
    for r in versus:
        both = result["experiment1"][titles[r["dataset"]]]["both"]
        assert (r["units"], r["model accuracy"]) == (str(both["n_pairs"]), f"{both['accuracy']:.3f}")
    assert "needs a prompt:sentence-judgment result" in secs["kauf2024-F4"]["text"]
    assert "with at least two query types (`contstim plausibility --query`)" in secs["kauf2024-F8"]["text"]
