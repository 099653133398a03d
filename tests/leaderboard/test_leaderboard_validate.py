"""``contstim leaderboard validate``: accepts every shipped result and a fresh honest submission;
rejects tampered scores, missing sentences, NaN, wrong fingerprints, malformed JSON, duplicates,
reference-name spoofing; experiment fingerprints do not depend on how the parquet was written."""
from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.leaderboard import known
from contstim_bench.leaderboard.validate import (
    ValidationError,
    check_result,
    parse_json,
    validate_files,
)
from contstim_bench.leaderboard.verification import rescore, validate_and_rescore
from contstim_bench.benchmarks.contstim import recompute
from leaderboard_helpers import with_scores  # tests/leaderboard/leaderboard_helpers.py

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"
REFERENCE = ("bert", "bert_has_a_mouth", "roberta", "roberta_has_a_mouth", "electra", "electra_has_a_mouth")


@pytest.fixture(scope="module")
def datasets(rescoring_datasets):
    """A score cache of this module's own (tests/leaderboard/conftest.py)."""
    return rescoring_datasets


@pytest.fixture(scope="module")
def honest(bert, datasets):
    """A new model the test scores itself: log p(sentence) = -2 x (number of characters)."""
    result = copy.deepcopy(bert)
    result["model"] = {"spec": "test:length", "name": "length-baseline", "method": "characters", "fingerprint": "len-v1"}
    result["logprobs"] = {s: -2.0 * len(s) for s in bert["logprobs"]}
    return with_scores(result, datasets)


def write(tmp_path, name, result, **dump):
    path = tmp_path / name
    path.write_text(json.dumps(result, **dump), encoding="utf-8")
    return path


def problems_of(tmp_path, result, datasets, name="sub.json", results_dir=None):
    [c] = validate_files([write(tmp_path, name, result)], results_dir=results_dir, datasets_dir=datasets)
    return c.problems


def test_every_shipped_result_is_valid_and_small(datasets):
    files = sorted(SHIPPED.glob("*.json"))
    names = {f.stem for f in files}
    assert set(REFERENCE) <= names
    for f in files:
        assert f.stat().st_size < 1_000_000, f
    checked = validate_files(files, results_dir=SHIPPED, datasets_dir=datasets)
    assert [c.problems for c in checked] == [[] for _ in files]
    assert {c.result["model"]["name"] for c in checked} >= set(REFERENCE)
    assert all(len(c.result["logprobs"]) == 264 for c in checked)


def test_honest_new_submission_is_valid(tmp_path, honest, datasets):
    assert problems_of(tmp_path, honest, datasets, results_dir=SHIPPED) == []
    # the length baseline really is scored: its accuracy differs from every reference model
    acc = honest["experiments"]["pll"]["all"]["accuracy"]
    assert 0.3 < acc < 0.9 and not math.isclose(acc, 0.8573232323232322)


@pytest.mark.parametrize(
    "path, delta, named",
    [
        (("all", "accuracy"), 1e-6, None),
        # a per-unit value changed alone no longer gives the block's standard error: refused on reading
        (("synthetic_vs_synthetic", "srcs_by_unit", "pll-s03"), -0.01, ("synthetic_vs_synthetic", "srcs_stderr")),
        (("all", "comparisons", "roberta", "accuracy_p_bh"), 1e-3, None),
        (("all", "models", "length-baseline", "accuracy"), 2e-9, None),
        (("natural_vs_shuffled", "models", "electra", "srcs_noise_ceiling", "lower"), -1e-4, None),
    ],
)
def test_tampered_score_is_rejected(tmp_path, honest, datasets, path, delta, named):
    bad = copy.deepcopy(honest)
    section = "panels" if "models" in path else "experiments"
    node = bad[section]["pll"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] += delta
    problems = problems_of(tmp_path, bad, datasets)
    assert len(problems) == 1
    assert f"{section}.pll." + ".".join(named or path) in problems[0] and "recomputed" in problems[0]


def test_tampered_string_and_bool_are_rejected(tmp_path, honest, datasets):
    bad = copy.deepcopy(honest)
    comp = bad["experiments"]["pll"]["all"]["comparisons"]["bert"]
    assert comp["accuracy_better"] == "bert"  # the length baseline is worse than BERT
    comp["accuracy_better"] = "tie"
    bad["experiments"]["pll"]["all"]["selection"] = "targeted"
    text = "; ".join(problems_of(tmp_path, bad, datasets))
    assert "experiments.pll.all.comparisons.bert.accuracy_better: submitted \"tie\"" in text
    assert "experiments.pll.all.selection: submitted \"targeted\", recomputed \"all\"" in text
    comp["accuracy_significant"] = not comp["accuracy_significant"]  # inconsistent with its own p
    assert "accuracy_significant" in problems_of(tmp_path, bad, datasets)[0]


def test_score_within_tolerance_is_accepted(tmp_path, honest, datasets):
    ok = copy.deepcopy(honest)
    ok["experiments"]["pll"]["all"]["accuracy"] += 5e-10
    assert problems_of(tmp_path, ok, datasets) == []


def test_missing_sentence_is_rejected(tmp_path, honest, datasets):
    bad = copy.deepcopy(honest)
    sentence = next(iter(bad["logprobs"]))
    del bad["logprobs"][sentence]
    [problem] = problems_of(tmp_path, bad, datasets)
    assert "lacks 1 benchmark sentence" in problem and repr(sentence) in problem


def test_nan_and_infinity_are_rejected(tmp_path, honest, datasets):
    bad = copy.deepcopy(honest)
    s1, s2 = list(bad["logprobs"])[5:7]
    bad["logprobs"][s1] = math.nan
    bad["logprobs"][s2] = -math.inf
    path = write(tmp_path, "nan.json", bad, allow_nan=True)
    assert "NaN" in path.read_text()
    [c] = validate_files([path], datasets_dir=datasets)
    problem = c.problems[0]
    assert "NaN/infinite value(s) for 2 sentence(s)" in problem and repr(s1) in problem and repr(s2) in problem


def test_non_numeric_and_extra_sentences_are_rejected(tmp_path, honest, datasets):
    bad = copy.deepcopy(honest)
    first = next(iter(bad["logprobs"]))
    bad["logprobs"][first] = "-12.5"
    bad["logprobs"]["A sentence nobody rated."] = -30.0
    problems = problems_of(tmp_path, bad, datasets)
    text = "; ".join(problems)
    assert "non-numeric" in text and repr(first) in text
    assert "outside the benchmark" in text and "A sentence nobody rated." in text


def test_wrong_dataset_fingerprint_is_rejected(tmp_path, honest, datasets):
    bad = copy.deepcopy(honest)
    bad["benchmark"]["dataset_fingerprint"] = "0" * 64
    assert "provenance.dataset_fingerprint: differs" in problems_of(tmp_path, bad, datasets)[0]
    bad["provenance"]["dataset_fingerprint"] = "0" * 64
    [problem] = problems_of(tmp_path, bad, datasets)
    assert "benchmark.dataset_fingerprint" in problem and "0" * 64 in problem and "not a known build" in problem


def test_unknown_format_and_schema_errors_are_named(tmp_path, honest, datasets):
    bad = copy.deepcopy(honest)
    bad["format_version"] = 99
    del bad["model"]["name"]
    bad["experiments"]["pll"]["all"]["accuracy"] = "high"
    text = "; ".join(problems_of(tmp_path, bad, datasets))
    assert "result.format_version: 99 is not a supported version of contstim-bench-result" in text
    assert "result.model.name: missing" in text
    assert "result.experiments.pll.all.accuracy: expected a finite number" in text
    other = copy.deepcopy(honest)
    other["benchmark"]["dataset"] = "blimp"
    assert "benchmark.dataset: 'blimp' is not 'contstim'" in problems_of(tmp_path, other, datasets)[0]


def test_malformed_json_is_rejected(tmp_path, honest, datasets):
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(honest)[:-40], encoding="utf-8")
    [c] = validate_files([path], datasets_dir=datasets)
    assert not c.ok and c.result is None
    assert c.problems[0].startswith("malformed JSON") and "line 1 column" in c.problems[0]
    with pytest.raises(ValidationError, match="top level must be a JSON object"):
        parse_json("[1, 2]")
    with pytest.raises(ValidationError, match="duplicate keys: format"):
        parse_json('{"format": 1, "format": 2}')


def test_duplicates_are_rejected(tmp_path, honest, datasets):
    shipped_copy = json.loads((SHIPPED / "roberta.json").read_text(encoding="utf-8"))
    [problem] = problems_of(tmp_path, shipped_copy, datasets, name="my-roberta.json", results_dir=SHIPPED)
    assert problem.startswith("duplicate: model 'roberta'") and "roberta.json" in problem
    a = write(tmp_path, "a.json", honest)
    b = write(tmp_path, "b.json", honest)
    other_revision = copy.deepcopy(honest)
    other_revision["model"]["fingerprint"] = "len-v2"
    c = write(tmp_path, "c.json", other_revision)
    first, second, third = validate_files([a, b, c], datasets_dir=datasets)
    assert first.ok and third.ok and not second.ok
    assert second.problems == [f"duplicate: model 'length-baseline' revision 'len-v1' is already in {Path(a).name}"]


def test_reference_name_spoofing_is_rejected(tmp_path, bert, datasets):
    spoof = copy.deepcopy(bert)
    spoof["model"]["fingerprint"] = "spoof"
    roberta = json.loads((SHIPPED / "roberta.json").read_text(encoding="utf-8"))
    spoof["logprobs"] = roberta["logprobs"]
    spoof["experiments"] = recompute(spoof, datasets)  # internally consistent scores
    del spoof["panels"]  # optional section
    [problem] = problems_of(tmp_path, spoof, datasets)
    assert "model.name 'bert' is a reference model" in problem and "submit under another name" in problem


@pytest.mark.parametrize("name,described", [("gpt\u202e2", "U+202E RIGHT-TO-LEFT OVERRIDE"),
                                           ("gpt2\x00", "U+0000 (control character)")])
def test_names_with_bidi_or_control_characters_are_refused(tmp_path, honest, datasets, capsys, name, described):
    """A name with U+202E shows reversed on the site (``gpt\u202e2`` reads as another model): the
    validator refuses it, naming the field and the character; the same for the spec shown in its place."""
    renamed = copy.deepcopy(honest)
    renamed["model"]["name"] = name
    del renamed["panels"]  # keyed by the model's name; an optional section
    path = write(tmp_path, "renamed.json", renamed)
    assert cli_main(["leaderboard", "validate", str(path), "--no-rescore", "--datasets", str(datasets)]) == 1
    out = capsys.readouterr().out
    assert f"result.model.name: {name!r} contains {described}" in out and name not in out
    respec = copy.deepcopy(honest)
    respec["model"]["spec"] = respec["model"]["spec_typed"] = "hf-causal:gpt2\u2067"
    problems = problems_of(tmp_path, respec, datasets)
    assert "result.model.spec: 'hf-causal:gpt2\\u2067' contains U+2067 RIGHT-TO-LEFT ISOLATE" in problems
    assert any(p.startswith("result.model.spec_typed: ") and "U+2067" in p for p in problems)


def test_experiment_fingerprint_is_independent_of_parquet_bytes(tmp_path, datasets):
    local = known.local_build(datasets)
    assert local["matches"] == {"pll": True}
    assert local["experiments"]["pll"] == known.registry()["contstim"]["experiments"]["pll"]
    copy_root = tmp_path / "copy"
    shutil.copytree(datasets / "contstim", copy_root / "contstim")
    trials = copy_root / "contstim" / "trials" / "pll.parquet"
    table = pq.read_table(trials)
    before = trials.read_bytes()
    pq.write_table(table, trials, compression="gzip", row_group_size=1000)
    assert trials.read_bytes() != before
    assert known.experiment_fingerprint("pll", copy_root) == local["experiments"]["pll"]
    ratings = table.column("rating").to_pylist()
    ratings[0] = 7 - ratings[0]
    pq.write_table(table.set_column(table.schema.get_field_index("rating"), "rating", [ratings]), trials)
    assert known.experiment_fingerprint("pll", copy_root) != local["experiments"]["pll"]


def test_fingerprints_are_the_data_layers_content_fingerprints(datasets):
    """known.py hashes with the data layer's one table digest: the experiment fingerprint is the
    dataset-fingerprint formula over the two tables' digests recorded at build time, and a build
    without the main experiment's human data has a registered dataset fingerprint on any machine."""
    from contstim_bench.data.load import dataset_folder
    from contstim_bench.data.writer import dataset_fingerprint, read_fingerprint

    meta = read_fingerprint(dataset_folder("contstim", datasets))
    two = {k: meta["tables"][k] for k in ("trials/pll", "sentences/pll")}
    assert known.experiment_fingerprint("pll", datasets) == dataset_fingerprint(two)
    assert meta["fingerprint"] == dataset_fingerprint(meta["tables"])
    if "trials/main" not in meta["tables"]:
        assert meta["fingerprint"] in known.registry()["contstim"]["dataset_fingerprints"]


def test_cli_validate(tmp_path, honest, datasets, capsys):
    good = write(tmp_path, "good.json", honest)
    bad = copy.deepcopy(honest)
    bad["model"]["fingerprint"] = "len-v3"
    bad["experiments"]["pll"]["natural_vs_shuffled"]["srcs"] = 0.99
    path = write(tmp_path, "bad.json", bad)
    args = ["leaderboard", "validate", str(good), str(path), "--results", str(SHIPPED), "--datasets", str(datasets)]
    assert cli_main(args) == 1
    out = capsys.readouterr().out
    assert f"OK {good}: model 'length-baseline' revision len-v1, 264 sentences, experiments pll" in out
    assert f"INVALID {path}" in out and "experiments.pll.natural_vs_shuffled.srcs: submitted 0.99" in out
    assert cli_main(args[:3] + args[4:]) == 0
    with pytest.raises(SystemExit):  # no scorer runs a model's own code, so there is no such option
        cli_main(["leaderboard", "validate", str(good), "--rescore", "--trust-remote-code"])
    assert "unrecognized arguments: --trust-remote-code" in capsys.readouterr().err


def test_rescore_precomputed(bert, datasets):
    assert rescore(bert, datasets) == []
    bad = copy.deepcopy(bert)
    sentence = list(bad["logprobs"])[3]
    bad["logprobs"][sentence] += 0.5
    [problem] = rescore(bad, datasets)
    assert "1 sentence(s)" in problem and repr(sentence) in problem
    # batching and hardware noise (another batch size moves float32 scores by ~1.4e-4) is not a
    # fake; a shift beyond the 1e-3 default tolerance is
    for shift, refused in ((5e-4, False), (-5e-4, False), (2e-3, True)):
        noisy = copy.deepcopy(bert)
        noisy["logprobs"][sentence] += shift
        assert bool(rescore(noisy, datasets)) is refused, shift
    # the rest of the checks still pass the honest fields: only re-scoring catches a faked log-prob
    # when the scores were recomputed from it (and the name is not a reference name)
    assert check_result(bert, datasets_dir=datasets).ok


def test_validate_and_rescore(tmp_path, bert, datasets):
    """Re-scoring runs on the files that passed validation only, and catches a faked log-probability
    whose scores were recomputed from it (which validation alone accepts)."""
    faked = copy.deepcopy(bert)
    faked["model"]["name"] = "not-bert"  # not a reference name, so only re-scoring can tell
    sentence = list(faked["logprobs"])[3]
    faked["logprobs"][sentence] += 0.5
    with_scores(faked, datasets)
    paths = [write(tmp_path, "faked.json", faked), write(tmp_path, "broken.json", {"format": "nope"})]
    # re-scoring is the default now (issue 15: verified only when re-scored); without it the
    # faked file is valid but unverified
    plain = validate_and_rescore(paths, datasets_dir=datasets, rescore_models=False)
    assert plain[0].ok and not plain[1].ok and not plain[0].verified
    checked = validate_and_rescore(paths, datasets_dir=datasets)
    [problem] = checked[0].problems
    assert "re-scoring" in problem and "1 sentence(s)" in problem and repr(sentence) in problem
    assert checked[1].problems == plain[1].problems


def test_experiment_without_local_data_is_refused_clearly(tmp_path, honest, datasets):
    if (datasets / "contstim" / "trials" / "main.parquet").exists():
        pytest.skip("the main experiment's human data is available here")
    bad = copy.deepcopy(honest)
    bad["experiments"]["main"] = bad["experiments"]["pll"]
    bad["panels"]["main"] = bad["panels"]["pll"]
    [problem] = problems_of(tmp_path, bad, datasets)
    assert problem.startswith("experiment 'main' cannot be checked on this machine")


def test_every_rescoring_command_defaults_to_the_package_tolerance():
    from contstim_bench.cli import build_parser
    from contstim_bench.leaderboard.validate import RESCORE_TOLERANCE

    parser = build_parser()
    for argv in (["leaderboard", "validate", "x.json"], ["leaderboard", "build", "--results", "r", "--out", "site"],
                 ["leaderboard", "push", "--results", "r", "--repo", "o/n"]):
        assert parser.parse_args(argv).rescore_tolerance == RESCORE_TOLERANCE, argv
