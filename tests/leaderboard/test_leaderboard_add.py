"""``contstim leaderboard add``: one validated file per model (identity: weights' content
fingerprint + scorer settings + revision, not the name nor the log-probabilities), refused twice,
replaced with --replace; display names are model names, never paths; equal shown scores share a
rank."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.leaderboard.add import add_result
from contstim_bench.leaderboard.identity import display_name, identity
from contstim_bench.analysis.ranking import rank_models, rank_text
from contstim_bench.leaderboard.table import ranking_rows
from contstim_bench.leaderboard.validate import ValidationError, load_file, validate_files
from leaderboard_helpers import with_scores  # tests/leaderboard/leaderboard_helpers.py

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"


@pytest.fixture(scope="module")
def datasets(rescoring_datasets_with_smollm2):
    """A score cache of this module's own, starting with SmolLM2's scores of the shipped sentences
    (tests/leaderboard/conftest.py): nothing here counts what re-scoring sends to the model."""
    return rescoring_datasets_with_smollm2


@pytest.fixture(scope="module")
def smollm2():
    return load_file(SHIPPED / "smollm2-135m.json")


@pytest.fixture(scope="module")
def rerun(smollm2, datasets):
    """The same model evaluated again from a folder, with another batch size: every
    log-probability moved by up to 1.4e-4 nats (as float32 batching does), the scores recomputed,
    the model named by its folder spec."""
    result = copy.deepcopy(smollm2)
    result["logprobs"] = {s: v + (1.4e-4 if i % 3 == 0 else -0.7e-4 if i % 3 == 1 else 0.0)
                          for i, (s, v) in enumerate(smollm2["logprobs"].items())}
    result["model"].update(batch_size=8, spec="hf-causal:runs/checkpoints/smollm2-135m-final",
                           name="hf-causal:runs/checkpoints/smollm2-135m-final",
                           spec_typed="hf-causal:runs/checkpoints/smollm2-135m-final",
                           folder="runs/checkpoints/smollm2-135m-final")
    return with_scores(result, datasets)


def _write(path: Path, result: dict) -> Path:
    path.write_text(json.dumps(result), encoding="utf-8")
    return path


def test_identity_ignores_name_batch_size_and_logprobs(smollm2, rerun):
    assert rerun["logprobs"] != smollm2["logprobs"] and identity(rerun) == identity(smollm2)
    for key, value in (("fingerprint", "0" * 64), ("dtype", "bfloat16"), ("start_token", "<|im_start|>"),
                       ("method", "other"), ("revision", "v2")):
        changed = copy.deepcopy(smollm2)
        changed["model"][key] = value
        assert identity(changed) != identity(smollm2), key
    masked = copy.deepcopy(smollm2)
    masked["model"]["spec"] = "hf-masked:bert-base-cased?method=pll-word-l2r"
    other = copy.deepcopy(masked)
    other["model"]["spec"] = "hf-masked:bert-base-cased?method=pll"
    assert identity(masked) != identity(other)  # a spec option that changes the numbers


@pytest.mark.parametrize("name,spec,folder,shown", [
    ("hf-causal:smollm2-135m", "hf-causal:smollm2-135m", "/root/.cache/contstim_bench/models/smollm2-135m-0.1.2",
     "smollm2-135m"),
    ("hf-causal:path/to/x", "hf-causal:path/to/x", "path/to/x", "x"),
    ("hf-causal:models/x", "hf-causal:models/x", "/work/models/x", "x"),
    ("hf-causal:/abs/ckpt/", "hf-causal:/abs/ckpt/", None, "ckpt"),
    ("hf-causal:org/model", "hf-causal:org/model", "/h/hub/models--org--model/snapshots/abc", "org/model"),
    ("hf-causal:gpt2", "hf-causal:gpt2", "/h/hub/models--gpt2/snapshots/abc", "gpt2"),
    ("kenlm:models/trigram.arpa", "kenlm:models/trigram.arpa", None, "trigram"),
    ("lstm:runs/lstm", "lstm:runs/lstm", None, "lstm"),
    ("hf-masked:bert-base-cased?method=pll-word-l2r", "hf-masked:bert-base-cased?method=pll-word-l2r", None,
     "bert-base-cased (method=pll-word-l2r)"),
    ("my model", "hf-causal:path/to/x", "path/to/x", "my model"),  # a name the user chose
    ("bert", "precomputed:bert", None, "bert"),
])
def test_display_names_are_model_names(name, spec, folder, shown):
    result = {"model": {"name": name, "spec": spec, **({"folder": folder} if folder else {})}}
    assert display_name(result) == shown


def test_add_refuses_the_same_model_then_replaces_it(tmp_path, smollm2, rerun, datasets):
    """One entry per model by identity, without re-scoring (``--no-rescore``: every file is in one
    group; verified files are tested in test_leaderboard_public)."""
    results = tmp_path / "results"
    first = add_result(SHIPPED / "smollm2-135m.json", results, datasets_dir=datasets, rescore=False)
    assert first.path == results / "smollm2-135m.json" and first.name == "smollm2-135m" and first.replaced is None
    assert first.path.read_bytes() == (SHIPPED / "smollm2-135m.json").read_bytes()
    again = _write(tmp_path / "rerun.json", rerun)
    with pytest.raises(ValueError) as err:
        add_result(again, results, datasets_dir=datasets, rescore=False)
    msg = str(err.value)
    assert f"already has this model in {first.path}" in msg and "--replace" in msg
    assert sorted(p.name for p in results.glob("*.json")) == ["smollm2-135m.json"]  # nothing changed
    second = add_result(again, results, replace=True, datasets_dir=datasets, rescore=False)
    assert second.replaced == first.path and second.name == "smollm2-135m-final"
    assert sorted(p.name for p in results.glob("*.json")) == ["smollm2-135m-final.json"]
    assert json.loads(second.path.read_text(encoding="utf-8"))["model"]["batch_size"] == 8
    # the folder's other checks see one model: validate with --results finds no duplicate of another file
    [checked] = validate_files([second.path], results_dir=results, datasets_dir=datasets)
    assert checked.ok, checked.problems


def test_add_keeps_other_models_and_refuses_invalid_files(tmp_path, smollm2, datasets):
    results = tmp_path / "results"
    add_result(SHIPPED / "smollm2-135m.json", results, datasets_dir=datasets)  # re-scored: verified
    other = copy.deepcopy(smollm2)
    other["model"]["fingerprint"] = "f" * 64  # other weights, same display name
    with pytest.raises(ValidationError, match="model.fingerprint is 'fff"):  # re-scoring proves it false
        add_result(_write(tmp_path / "other.json", other), results, datasets_dir=datasets)
    added = add_result(tmp_path / "other.json", results, datasets_dir=datasets, rescore=False)
    assert added.path.name == f"smollm2-135m-{identity(other)[:8]}.json"
    tampered = copy.deepcopy(smollm2)
    tampered["model"]["fingerprint"] = "e" * 64
    tampered["experiments"]["pll"]["all"]["accuracy"] += 0.01
    before = sorted(p.name for p in results.glob("*.json"))
    with pytest.raises(ValidationError, match="score does not match the log-probabilities"):
        add_result(_write(tmp_path / "tampered.json", tampered), results, datasets_dir=datasets, rescore=False)
    assert sorted(p.name for p in results.glob("*.json")) == before


def test_cli_add_twice_then_replace(tmp_path, rerun, datasets, capsys):
    results = tmp_path / "board"
    args = ["leaderboard", "add", "--results", str(results), "--datasets", str(datasets), "--no-rescore"]
    assert cli_main([*args, str(SHIPPED / "smollm2-135m.json")]) == 0
    assert f"added 'smollm2-135m' as {results / 'smollm2-135m.json'}" in capsys.readouterr().out
    again = _write(tmp_path / "rerun.json", rerun)
    assert cli_main([*args, str(again)]) == 1
    err = capsys.readouterr().err
    assert f"already has this model in {results / 'smollm2-135m.json'}" in err
    assert f"`contstim leaderboard add {again} --results {results} --replace`" in err
    assert cli_main([*args, str(again), "--replace"]) == 0
    assert f"(replaced {results / 'smollm2-135m.json'})" in capsys.readouterr().out
    assert [p.name for p in results.glob("*.json")] == ["smollm2-135m-final.json"]


def _ranks(values, selection="all", degenerate=None):
    ranked = rank_models([{"selection": selection, "accuracy": v, "degenerate": degenerate} for v in values])
    return [r.rank for r in ranked], [r.tied for r in ranked]


def test_equal_shown_scores_share_a_rank():
    assert _ranks([0.8571, 0.8569, 0.857, 0.80, 0.9]) == ([2, 2, 2, 5, 1], [True, True, True, False, False])
    assert _ranks([0.5]) == ([None], [False])  # alone: nothing to rank against
    ranked = rank_models([{"selection": "all", "accuracy": v, "degenerate": None} for v in (0.857, 0.857, 0.8)])
    assert [rank_text(r) for r in ranked] == ["=1/3", "=1/3", "3/3"]


def test_like_for_like_groups_ties_and_degenerate_models():
    """A model on every trial is never ranked with models on their own targeted trials, another
    ties convention makes a group of its own, and degenerate predictions are never ranked."""
    entries = [{"selection": "targeted", "accuracy": 0.80, "degenerate": None},
               {"selection": "targeted", "accuracy": 0.70, "degenerate": None},
               {"selection": "all", "accuracy": 0.90, "degenerate": None},
               {"selection": "all", "accuracy": 0.60, "degenerate": None},
               {"selection": "all", "accuracy": 1.00, "degenerate": "every one of the 9 trials is a tie"},
               {"selection": "all", "accuracy": 0.95, "degenerate": None}]
    ties = ["half"] * 5 + ["hit"]
    ranked = rank_models(entries, "accuracy", ties)
    assert [rank_text(r) for r in ranked] == ["1/2", "2/2", "1/2", "2/2", "-", "-"]
    assert ranked[4].reason.startswith("degenerate predictions: every one of the 9 trials is a tie")
    assert ranked[5].group.endswith("a tie counts as a hit") and "no other model" in ranked[5].reason


def test_shipped_panel_ties_are_ranked_honestly():
    results = [load_file(p) for p in sorted(SHIPPED.glob("*.json"))]
    rows = [r for r in ranking_rows(results) if r["condition"] == "all"]
    best = max(float(f"{r['accuracy']:.3f}") for r in rows)
    tied = [r for r in rows if float(f"{r['accuracy']:.3f}") == best]
    assert len(tied) >= 3
    assert all(r["rank"] == 1 and r["tied"] for r in tied)
    assert [r["model"] for r in rows[: len(tied)]] == sorted((r["model"] for r in tied), key=str.casefold)
    after = rows[len(tied)]
    assert after["rank"] == len(tied) + 1  # the next rank counts the tied models
