"""The one validator knows the files written beside the results: ``contstim compare``'s
``comparison.json`` and ``contstim plausibility-glmm``'s GLMM file.  Each is written by the real
command on small inputs, validated, then tampered with (a missing field, a wrong type, a NaN):
the error names the field."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from contstim_bench import cli
from contstim_bench.results.io import read_result
from contstim_bench.results.schema import result_problems, validate_result
from contstim_bench.scoring.base import Scorer


def _tampered(tmp_path, doc: dict, change) -> str:
    """The error of reading ``doc`` after ``change(doc)`` (written as JSON, NaN as the literal)."""
    doc = json.loads(json.dumps(doc))
    change(doc)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError) as err:
        read_result(path)
    return str(err.value)


def test_comparison_file(datasets, tmp_path):
    out = tmp_path / "cmp"
    assert cli.main(["compare", "--models", "precomputed:bert,precomputed:bert_has_a_mouth",
                     "--condition", "synthetic_vs_synthetic", "--output", str(out)]) == 0
    doc = read_result(out / "comparison.json")  # validated as it is read
    assert (doc["format"], doc["format_version"]) == ("contstim-bench-comparison", 2)
    assert doc["provenance"]["created"] and doc["provenance"]["package_version"]
    # not a result of the contstim benchmark: a leaderboard refuses it
    assert result_problems(doc, dataset="contstim") == [
        "result.format: 'contstim-bench-comparison' is not a result of the contstim benchmark (a file the package "
        "writes beside the results)"]
    cell = "file.conditions.synthetic_vs_synthetic.head_to_head.bert.bert_has_a_mouth"
    assert f"{cell}.share: expected a finite number or null, got float nan" in _tampered(
        tmp_path, doc, lambda d: d["conditions"]["synthetic_vs_synthetic"]["head_to_head"]["bert"][
            "bert_has_a_mouth"].__setitem__("share", math.nan))
    assert "file.provenance: missing" in _tampered(tmp_path, doc, lambda d: d.pop("provenance"))
    assert "file.conditions.synthetic_vs_synthetic.n_units: expected a non-negative integer, got str '30'" in _tampered(
        tmp_path, doc, lambda d: d["conditions"]["synthetic_vs_synthetic"].__setitem__("n_units", "30"))
    assert "file.format_version: 1 is not a supported version" in _tampered(
        tmp_path, doc, lambda d: d.__setitem__("format_version", 1))
    assert "agreement.bert.gpt2: expected an object for another compared model" in _tampered(
        tmp_path, doc, lambda d: d["conditions"]["synthetic_vs_synthetic"]["agreement"]["bert"].__setitem__(
            "gpt2", {"share": 0.5, "n_pairs": 3}))


class WordScorer(Scorer):
    """Hand-made log-probabilities: -length - ``penalty`` x (number of " by ")."""

    method = "words"

    def __init__(self, penalty: float, name: str):
        super().__init__(cache=False)
        self.penalty, self.spec = penalty, f"test:{name}"

    def fingerprint(self) -> str:
        return self.spec

    def _score_unique(self, sentences):
        return np.array([-len(s) - self.penalty * s.count(" by ") for s in sentences], dtype=np.float64)


def test_glmm_file(datasets, tmp_path):
    pytest.importorskip("gpboost")
    from contstim_bench.benchmarks import plausibility as runner

    paths = []
    for penalty, name in ((0.0, "plain"), (3.0, "passive-averse")):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(runner.run_plausibility(WordScorer(penalty, name), log=lambda m: None, limit=40)))
        paths.append(str(path))
    out = tmp_path / "glmm.json"
    assert cli.main(["plausibility-glmm", *paths, "--factor", "scorer=plain,passive-averse", "--output", str(out)]) == 0
    doc = read_result(out)
    assert (doc["format"], doc["format_version"]) == ("contstim-bench-plausibility-glmm", 1)
    validate_result(doc)
    assert "file.glmm.coefficients[1].p: expected a finite number, got float nan" in _tampered(
        tmp_path, doc, lambda d: d["glmm"]["coefficients"][1].__setitem__("p", math.nan))
    assert "file.glmm.warnings: missing" in _tampered(tmp_path, doc, lambda d: d["glmm"].pop("warnings"))
    assert "file.results[0].accuracy: expected a finite number, got str" in _tampered(
        tmp_path, doc, lambda d: d["results"][0].__setitem__("accuracy", "0.5"))
    assert "file.provenance.dataset_fingerprint: differs from file.dataset_fingerprint" in _tampered(
        tmp_path, doc, lambda d: d["provenance"].__setitem__("dataset_fingerprint", "0" * 16))
    assert "file.format_version: missing" in _tampered(tmp_path, doc, lambda d: d.pop("format_version"))
