"""``contstim evaluate --model precomputed:NAME``: the result file, identical numbers to the API
and to the evaluate module, the precomputed scorer, and clear errors."""
from __future__ import annotations

import json
import re

import evaluate
import pytest

import contstim_bench
from contstim_bench.analysis.evaluation import evaluate_logprobs, log_ratios_from_logprobs
from contstim_bench.cli import main as cli_main
from contstim_bench.benchmarks.contstim import load_experiment, recompute
from contstim_bench.scoring.base import LoadSettings
from contstim_bench.scoring.precomputed import PrecomputedScorer, from_spec
from metric_rows import metric_columns

PLL_MODELS = {"bert", "bert_has_a_mouth", "roberta", "roberta_has_a_mouth", "electra", "electra_has_a_mouth"}
ENTRY_KEYS = {
    "selection", "unit", "n_units", "n_trials", "n_pairs", "accuracy", "accuracy_stderr", "accuracy_by_unit",
    "accuracy_noise_ceiling", "srcs", "srcs_stderr", "srcs_by_unit", "srcs_noise_ceiling", "p_vs_lower_ceiling",
    "p_vs_lower_ceiling_uncorrected", "comparisons", "head_to_head", "bh_families", "degenerate", "rank",
}


@pytest.fixture(scope="module")
def run(datasets, tmp_path_factory):
    out = tmp_path_factory.mktemp("out") / "roberta.json"
    code = cli_main(["evaluate", "--model", "precomputed:roberta", "--experiment", "pll",
                     "--output", str(out), "--datasets", str(datasets), "--quiet", "--no-plots"])
    assert code == 0
    return datasets, json.loads(out.read_text(encoding="utf-8"))


def test_result_file_layout(run):
    datasets, result = run
    assert result["format"] == "contstim-bench-result" and result["format_version"] == 6
    assert result["model"]["spec"] == "precomputed:roberta" and result["model"]["name"] == "roberta"
    assert result["model"]["method"] == "precomputed"
    assert list(result["experiments"]) == ["pll"]
    pll = result["experiments"]["pll"]
    assert list(pll) == ["synthetic_vs_synthetic", "natural_vs_shuffled", "all"]
    for key, e in pll.items():
        assert set(e) == ENTRY_KEYS, key
        assert set(e["accuracy_noise_ceiling"]) == {"lower", "upper", "lower_by_unit", "upper_by_unit"}
        assert len(e["accuracy_by_unit"]) == len(e["srcs_by_unit"]) == 30
        assert set(e["comparisons"]) == PLL_MODELS - {"roberta"}
        for c in e["comparisons"].values():
            assert {"accuracy_delta", "accuracy_p", "accuracy_p_bh", "accuracy_better", "srcs_delta",
                    "srcs_p_bh", "srcs_better", "selection", "n_units"} <= set(c)
    syn = pll["synthetic_vs_synthetic"]
    assert syn["selection"] == "targeted" and syn["n_trials"] == 1200
    assert syn["accuracy"] == pytest.approx(0.8041666666666667, abs=1e-12)
    assert syn["srcs"] == pytest.approx(0.5766207467630232, abs=1e-12)
    vs_pll = syn["comparisons"]["roberta_has_a_mouth"]
    assert vs_pll["accuracy_better"] == vs_pll["srcs_better"] == "roberta" and vs_pll["srcs_significant"]
    assert pll["all"]["selection"] == "all" and pll["all"]["n_trials"] == 3960
    sentences = load_experiment("pll", datasets)[1]["roberta"]
    assert result["logprobs"] == sentences and len(sentences) == 264
    prov = result["provenance"]
    assert prov["package_version"] == contstim_bench.__version__
    assert {"numpy", "scipy", "pandas"} <= set(prov["libraries"])
    assert prov["dataset_fingerprint"] == result["benchmark"]["dataset_fingerprint"]
    assert len(prov["dataset_fingerprint"]) == 64 and prov["created"].endswith("+00:00")


def test_cli_api_and_metric_give_identical_numbers(run, tmp_path):
    datasets, result = run
    trials, refs = load_experiment("pll", datasets)
    others = {m: v for m, v in refs.items() if m != "roberta"}
    api = evaluate_logprobs(trials, refs["roberta"], "roberta", others)
    as_json = json.loads(json.dumps(api))
    assert as_json == result["experiments"]["pll"]
    assert json.loads(json.dumps(recompute(result, datasets))) == result["experiments"]

    metric = evaluate.load(contstim_bench.metric_path(), cache_dir=str(tmp_path / "evaluate"))
    out = metric.compute(
        model_name="roberta",
        reference_predictions={m: log_ratios_from_logprobs(trials, lp).tolist() for m, lp in others.items()},
        **metric_columns(trials, result["logprobs"]),
    )
    assert json.loads(json.dumps(out)) == result["experiments"]["pll"]


def test_summary_and_default_experiments(run, tmp_path, capsys):
    datasets, _ = run
    out = tmp_path / "bert.json"
    assert cli_main(["evaluate", "--model", "precomputed:bert_has_a_mouth", "--output", str(out),
                     "--datasets", str(datasets), "--no-plots"]) == 0
    captured = capsys.readouterr()
    assert "experiment pll" in captured.out and "synthetic_vs_synthetic" in captured.out
    assert "bert_has_a_mouth" in captured.out and "vs reference models" in captured.out
    result = json.loads(out.read_text())
    assert list(result["experiments"]) == ["pll"]
    assert "contstim_Aug2021_n100_results_anon.csv" in result["skipped_experiments"]["main"]
    assert "note: experiment 'main' skipped" in captured.err
    assert result["experiments"]["pll"]["synthetic_vs_synthetic"]["accuracy"] == pytest.approx(0.1791666666666667, abs=1e-12)


@pytest.mark.parametrize(
    "spec,message",
    [
        ("precomputed:nope", "unknown reference model 'nope'"),
        ("precomputed:bert?split=main", "sentence '.*' is not in the dataset's reference log-probabilities for 'bert'"),
        ("precomputed:bert?colour=red", r"unknown option\(s\) 'colour' for precomputed.*accepted: sentences, split"),
        ("precomputed:", "names no reference model"),
        ("precomputed:gpt2", "sentence '.*' is not in the dataset's reference log-probabilities for 'gpt2'"),
    ],
)
def test_cli_errors_name_the_problem(run, tmp_path, capsys, spec, message):
    datasets, _ = run
    code = cli_main(["evaluate", "--model", spec, "--experiment", "pll", "--output", str(tmp_path / "x.json"),
                     "--datasets", str(datasets), "--no-plots"])
    assert code == 1
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("name", ["gpt\u202e2", "gpt2\x00", "\u2066roberta\u2069"])
def test_cli_name_with_bidi_or_control_characters_is_refused_before_any_model_loads(run, tmp_path, capsys,
                                                                                     monkeypatch, name):
    import contstim_bench.driver as driver

    def no_model(*args, **kwargs):
        raise AssertionError("a model was loaded for a name that must be refused")

    monkeypatch.setattr(driver, "load_model", no_model)
    datasets, _ = run
    code = cli_main(["evaluate", "--model", "precomputed:roberta", "--name", name, "--experiment", "pll",
                     "--output", str(tmp_path / "x.json"), "--datasets", str(datasets), "--no-plots"])
    assert code == 1
    err = capsys.readouterr().err
    assert f"model name {name!r} contains U+" in err and name not in err
    assert list(tmp_path.iterdir()) == []


def test_cli_explicit_main_without_human_data(run, tmp_path, capsys):
    datasets, _ = run
    code = cli_main(["evaluate", "--model", "precomputed:gpt2", "--experiment", "main",
                     "--output", str(tmp_path / "x.json"), "--datasets", str(datasets), "--no-plots"])
    assert code == 1
    err = capsys.readouterr().err
    assert "FileNotFoundError" in err and "contstim_Aug2021_n100_results_anon.csv" in err


def test_precomputed_scorer(run, monkeypatch):
    datasets, result = run
    scorer = from_spec("electra_has_a_mouth", {"split": "pll"}, LoadSettings("precomputed", datasets_dir=datasets))
    assert isinstance(scorer, PrecomputedScorer) and scorer.spec == "precomputed:electra_has_a_mouth?split=pll"
    sentences = list(result["logprobs"])[:3]
    values = scorer.score(sentences + sentences[:1])
    assert values.dtype.name == "float64" and values[0] == values[3]
    assert values.tolist()[:3] == [load_experiment("pll", datasets)[1]["electra_has_a_mouth"][s] for s in sentences]
    with pytest.raises(ValueError, match="sentence 'Not in the data.' is not in .* for 'electra_has_a_mouth'"):
        scorer.score(["Not in the data."])
    assert scorer.describe()["dataset_fingerprint"] == result["benchmark"]["dataset_fingerprint"]
    gpt2 = from_spec("gpt2", {}, LoadSettings("precomputed", datasets_dir=datasets))  # main split: 2,240 sentences
    assert len(gpt2._table) == 2240
    with pytest.raises(ValueError, match="unknown split 'test'"):
        from_spec("gpt2", {"split": "test"}, LoadSettings("precomputed", datasets_dir=datasets))
    # through the scorer registry, which maps the precomputed: prefix to this module
    registry = pytest.importorskip("contstim_bench.scoring.registry")
    monkeypatch.setenv("CONTSTIM_DATASETS", str(datasets))
    via_registry = registry.load_scorer("precomputed:roberta")
    assert via_registry.score(sentences).tolist() == [result["logprobs"][s] for s in sentences]
    with pytest.raises(ValueError, match="colour"):
        registry.load_scorer("precomputed:roberta?colour=red")


# ------------------------------------------------------------------ schema, panels, summary


def test_result_validates_and_has_panels(run):
    from scipy.stats import false_discovery_control, wilcoxon

    from contstim_bench.results import validate_result

    datasets, result = run
    validate_result(result)
    assert result["scoring"] == {"n_sentences": 264, "n_model_sentences": 264, "n_from_cache": 0,
                                 "seconds": result["scoring"]["seconds"]}
    assert result["model"]["dtype"] is None and result["provenance"]["device"] is None
    panels = result["panels"]["pll"]
    assert list(panels) == list(result["experiments"]["pll"])
    syn = panels["synthetic_vs_synthetic"]["models"]
    assert list(syn) == ["roberta", "bert", "bert_has_a_mouth", "roberta_has_a_mouth", "electra", "electra_has_a_mouth"]
    entry = result["experiments"]["pll"]["synthetic_vs_synthetic"]
    for key in ("selection", "n_trials", "accuracy", "accuracy_by_unit", "srcs", "accuracy_noise_ceiling", "srcs_noise_ceiling"):
        assert syn["roberta"][key] == entry[key], key
    for ref, comp in entry["comparisons"].items():
        assert syn[ref]["accuracy"] == comp["accuracy"] and syn[ref]["srcs"] == comp["srcs"]
        assert syn[ref]["selection"] == comp["selection"] == "targeted"
    # the panel's ceiling tests: Wilcoxon per model, BH across the six models (the paper's convention)
    for measure in ("accuracy", "srcs"):
        raw = []
        for b in syn.values():
            x = [b[f"{measure}_by_unit"][u] for u in sorted(b[f"{measure}_by_unit"])]
            y = [b[f"{measure}_noise_ceiling"]["lower_by_unit"][u] for u in sorted(b[f"{measure}_by_unit"])]
            raw.append(wilcoxon(x, y, zero_method="zsplit").pvalue)
        adjusted = false_discovery_control(raw, method="bh")
        assert [b["p_vs_lower_ceiling"][measure] for b in syn.values()] == pytest.approx(adjusted, rel=1e-12)
    # Figure S8b: every model is below its lower ceiling in accuracy except ELECTRA
    below = {m for m, b in syn.items() if b["below_lower_ceiling"]["accuracy"]}
    assert below == PLL_MODELS - {"electra"}
    from contstim_bench.benchmarks.contstim import recompute_panels

    assert json.loads(json.dumps(recompute_panels(result, datasets))) == result["panels"]


def _mutate(result, path, value):
    import copy

    out = copy.deepcopy(result)
    obj = out
    for key in path[:-1]:
        obj = obj[key]
    if value is KeyError:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value
    return out


@pytest.mark.parametrize(
    "path,value,message",
    [
        (("format_version",), 7, r"result.format_version: 7 is not a supported version of contstim-bench-result \(\(6,\)\)$"),
        (("format_version",), 5, r"result.format_version: 5 is not a supported version of contstim-bench-result \(\(6,\)\); "
                                 r"the file was written by an earlier version of the package: evaluate the model again"),
        (("model", "name"), "", r"result.model.name: is empty"),
        (("provenance",), KeyError, r"result.provenance: missing"),
        (("experiments", "pll", "all", "accuracy"), 1.5, r"result.experiments.pll.all.accuracy: 1.5 is outside \[0.0, 1.0\]"),
        (("experiments", "pll", "all", "srcs"), "high", r"result.experiments.pll.all.srcs: expected a finite number, got str"),
        (("experiments", "pll", "nonsense"), {}, r"result.experiments.pll.nonsense: unknown condition"),
        (("experiments", "pll", "all", "comparisons", "roberta_has_a_mouth", "accuracy_significant"), False,
         r"comparisons.roberta_has_a_mouth.accuracy_significant: False does not match accuracy_p_bh"),
        (("panels", "pll", "all", "models", "roberta"), KeyError, r"result.panels.pll.all.models: lacks the evaluated model 'roberta'"),
        (("logprobs", "The cat sat."), float("nan"), r"result.logprobs: 1 value\(s\) are not finite numbers, e.g. sentence 'The cat sat.'"),
        (("provenance", "dataset_fingerprint"), "0" * 64, r"provenance.dataset_fingerprint: differs"),
        (("experiments", "main"), "x", r"result.experiments.main: expected a non-empty object"),
        (("experiments", "pll", "all", "rank"), KeyError, r"result.experiments.pll.all.rank: missing"),
        (("experiments", "pll", "synthetic_vs_synthetic", "rank", "accuracy", "rank"), 9,
         r"synthetic_vs_synthetic.rank.accuracy.rank: 9 is not between 1 and among = 6"),
        (("experiments", "pll", "all", "rank", "srcs", "rank"), None,
         r"pll.all.rank.srcs.reason: a model is either ranked or has a reason why not"),
        (("experiments", "pll", "synthetic_vs_synthetic", "rank", "accuracy", "rank"), 1,
         r"synthetic_vs_synthetic.rank.accuracy: .* is not the model's rank among the panel \(ranked again: .*'rank': 3"),
    ],
)
def test_validator_names_the_problem(run, path, value, message):
    from contstim_bench.results import validate_result

    bad = _mutate(run[1], path, value)
    with pytest.raises(ValueError, match=message):
        validate_result(bad)


def test_validator_type_and_read_result(run, tmp_path):
    from contstim_bench.results import read_result, validate_result, write_result

    with pytest.raises(TypeError, match="must be a dict"):
        validate_result([1, 2])
    path = write_result(run[1], tmp_path / "r.json")
    assert read_result(path) == run[1]
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="broken.json is not valid JSON"):
        read_result(tmp_path / "broken.json")
    with pytest.raises(FileNotFoundError, match="nope.json does not exist"):
        read_result(tmp_path / "nope.json")
    write_result(_mutate(run[1], ("model",), KeyError), tmp_path / "bad.json")
    with pytest.raises(ValueError, match=r"bad.json: invalid result: result.model: missing"):
        read_result(tmp_path / "bad.json")


def test_summary_table_ceiling_stars_and_rank(run):
    from contstim_bench.report.contstim import summary_table

    _, result = run
    text = summary_table(result)
    row = next(line for line in text.splitlines() if line.startswith("synthetic_vs_synthetic"))
    # roberta on its targeted synthetic pairs: accuracy 0.804, below the ceiling (q < .01), third of six
    assert "0.804**" in row or "0.804***" in row
    # the rank is the result's (evaluation ranks, the summary only shows it)
    ranked = result["experiments"]["pll"]["synthetic_vs_synthetic"]["rank"]["accuracy"]
    assert (ranked["rank"], ranked["among"], ranked["tied"], ranked["reason"]) == (3, 6, False, None)
    assert ranked["group"] == "the trials that target each model"
    assert row.split("|")[2].split()[-1] == "3/6"
    ceiling = result["experiments"]["pll"]["synthetic_vs_synthetic"]["accuracy_noise_ceiling"]
    assert f"{ceiling['lower']:.3f}-{ceiling['upper']:.3f}" in row
    assert "scored 264 sentences (0 from cache)" in text
    assert "roberta_has_a_mouth" in text and "model*" in text


def test_default_output_paths():
    from pathlib import Path

    from contstim_bench.results import default_output, default_plots_dir

    assert default_output("smollm2-135m") == Path("results/smollm2-135m.json")
    assert default_output("hf-causal:/models/my lm?start=<s>") == Path("results/hf-causal_models_my_lm_start_s.json")
    assert default_plots_dir(Path("out/x.json")) == Path("out/x_plots")


def test_precomputed_reads_datasets_in_every_scoring_command(run, tmp_path, monkeypatch):
    """``--datasets`` reaches ``precomputed:`` in ``score`` (one registry for every command) and
    the result records the spec as typed beside its canonical form."""
    datasets, result = run
    monkeypatch.setenv("CONTSTIM_DATASETS", str(tmp_path / "nothing-built-here"))
    sentences = list(result["logprobs"])[:3]
    (tmp_path / "in.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    code = cli_main(["score", "--model", "precomputed:roberta", "--input", str(tmp_path / "in.txt"),
                     "--output", str(tmp_path / "out.csv"), "--datasets", str(datasets), "--quiet"])
    assert code == 0
    rows = (tmp_path / "out.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert [float(r.rsplit(",", 1)[1]) for r in rows] == [result["logprobs"][s] for s in sentences]
    assert not (tmp_path / "nothing-built-here").exists()
    assert result["model"]["spec"] == result["model"]["spec_typed"] == "precomputed:roberta"


def test_evaluate_any_benchmark_by_identifier(run, tmp_path):
    """``contstim evaluate --benchmark contstim.pll`` gives the numbers of ``--experiment pll``,
    recorded under the benchmark's identifier and version; unknown identifiers are named."""
    from contstim_bench.benchmarks import BENCHMARKS, get_benchmark

    datasets, result = run
    assert set(BENCHMARKS) == {"contstim", "contstim.main", "contstim.pll", "blimp", "plausibility", "pll-properties"}
    code = cli_main(["evaluate", "--model", "precomputed:roberta", "--benchmark", "contstim.pll",
                     "--output", str(tmp_path / "out"), "--datasets", str(datasets), "--quiet"])
    assert code == 0
    got = json.loads((tmp_path / "out" / "contstim.pll.json").read_text(encoding="utf-8"))
    assert got["benchmark"]["identifier"] == "contstim.pll" and got["benchmark"]["version"] == "1"
    assert got["experiments"] == result["experiments"] and got["logprobs"] == result["logprobs"]
    assert len(get_benchmark("contstim.pll").sentences(datasets)) == len(result["logprobs"]) == 264
    with pytest.raises(ValueError, match="unknown benchmark .glue.; known: contstim, contstim.main, contstim.pll"):
        contstim_bench.evaluate_model("precomputed:roberta", benchmarks=["glue"], datasets_dir=datasets)
