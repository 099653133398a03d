"""The Gradio leaderboard app: it starts on localhost, renders the ranking table of the shipped
results and refuses invalid submissions (driven with gradio_client, bounded in time)."""
from __future__ import annotations

import copy
import hashlib
import json
import os
import served  # tests/served.py
from pathlib import Path

import pytest

pytest.importorskip("gradio")
pytest.importorskip("gradio_client")

from contstim_bench.leaderboard.app import create_app, evaluate_spec, submit_file, table_frame  # noqa: E402
from contstim_bench.leaderboard.table import ranking_rows  # noqa: E402
from contstim_bench.leaderboard.validate import load_file  # noqa: E402
from leaderboard_helpers import with_scores  # noqa: E402  (tests/leaderboard/leaderboard_helpers.py)

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"
TIMEOUT = 120


@pytest.fixture(scope="module")
def env(datasets, tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTSTIM_DATASETS", str(datasets))
        mp.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        mp.setenv("GRADIO_TEMP_DIR", str(tmp_path_factory.mktemp("gradio")))
        mp.setenv("NO_PROXY", "127.0.0.1,localhost")
        mp.delenv("CONTSTIM_LEADERBOARD_ALLOW_EVAL", raising=False)
        yield datasets


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory, env):
    """Two shipped results (the app validates every file at start: keep it quick)."""
    folder = tmp_path_factory.mktemp("results")
    for name in ("roberta.json", "bert_has_a_mouth.json"):
        (folder / name).write_bytes((SHIPPED / name).read_bytes())
    return folder


@pytest.fixture(scope="module")
def submissions(tmp_path_factory, env):
    folder = tmp_path_factory.mktemp("submissions")
    base = load_file(SHIPPED / "electra.json")
    honest = copy.deepcopy(base)
    honest["model"] = {"spec": "test:length", "name": "length-baseline", "method": "characters", "fingerprint": "len-v1"}
    honest["logprobs"] = {s: -2.0 * len(s) for s in base["logprobs"]}
    with_scores(honest, env)
    tampered = copy.deepcopy(honest)
    tampered["experiments"]["pll"]["all"]["accuracy"] = 0.99
    paths = {
        "valid": folder / "valid.json",
        "tampered": folder / "tampered.json",
        "duplicate": folder / "duplicate.json",
        "malformed": folder / "malformed.json",
    }
    paths["valid"].write_text(json.dumps(honest), encoding="utf-8")
    paths["tampered"].write_text(json.dumps(tampered), encoding="utf-8")
    paths["duplicate"].write_bytes((SHIPPED / "roberta.json").read_bytes())
    paths["malformed"].write_text('{"format": "contstim-bench-result", ', encoding="utf-8")
    return paths


def test_table_frame(results_dir):
    rows = ranking_rows([load_file(p) for p in sorted(results_dir.glob("*.json"))])
    frame = table_frame(rows, "pll / synthetic_vs_synthetic")
    assert list(frame["Model"]) == ["roberta", "bert_has_a_mouth"]
    assert frame["Accuracy"].tolist() == [0.804, 0.179]
    assert frame["p vs leader"].tolist()[0] == "" and frame["p vs leader"].tolist()[1].endswith("*")
    with pytest.raises(ValueError, match="unknown panel"):
        table_frame(rows, "main / all")


def test_submit_file_without_server(results_dir, submissions, env, tmp_path):
    queue = tmp_path / "queue"
    assert submit_file(None, results_dir, env).startswith("**Refused**: no file")
    assert submit_file(submissions["valid"], results_dir, env, queue).startswith("**Valid**")
    digest = hashlib.sha256(submissions["valid"].read_bytes()).hexdigest()
    assert [p.name for p in queue.iterdir()] == [f"{digest}.json"]  # named by content: no upload replaces another
    again = submit_file(submissions["valid"], results_dir, env, queue)
    assert again.startswith("**Valid**") and "**Duplicate**: this exact file is already queued" in again
    assert [p.read_bytes() for p in queue.iterdir()] == [submissions["valid"].read_bytes()]
    text = submit_file(submissions["duplicate"], results_dir, env)
    assert text.startswith("**Refused**") and "duplicate: model 'roberta'" in text


@pytest.fixture(scope="module")
def client(results_dir, env):
    from gradio_client import Client

    demo = create_app(results_dir, allow_eval=False, datasets_dir=env)
    demo.queue(default_concurrency_limit=2)
    demo.launch(server_name="127.0.0.1", server_port=served.free_port(), prevent_thread_lock=True, quiet=True,
                show_error=True, share=False)
    try:
        yield Client(demo.local_url, verbose=False, download_files=False)
    finally:
        demo.close()


def _call(client, *args, api_name):
    return client.submit(*args, api_name=api_name).result(timeout=TIMEOUT)


def test_app_renders_the_table(client):
    frame = _call(client, "pll / all", api_name="/table")
    headers, data = frame["headers"], frame["data"]
    assert headers[:2] == ["Rank", "Model"]
    models = [row[headers.index("Model")] for row in data]
    assert sorted(models) == ["bert_has_a_mouth", "roberta"]
    acc = {row[1]: row[headers.index("Accuracy")] for row in data}
    assert acc == {"roberta": 0.857, "bert_has_a_mouth": 0.318}
    api = client.view_api(print_info=False, return_format="dict")
    assert {"/table", "/submit"} <= set(api["named_endpoints"]) and "/evaluate" not in api["named_endpoints"]


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("tampered", "experiments.pll.all.accuracy: submitted 0.99"),
        ("duplicate", "duplicate: model 'roberta'"),
        ("malformed", "malformed JSON"),
    ],
)
def test_app_refuses_invalid_submissions(client, submissions, kind, expected):
    from gradio_client import handle_file

    text = _call(client, handle_file(str(submissions[kind])), api_name="/submit")
    assert text.startswith("**Refused**") and expected in text


def test_app_accepts_a_valid_submission(client, submissions):
    from gradio_client import handle_file

    text = _call(client, handle_file(str(submissions["valid"])), api_name="/submit")
    assert text.startswith("**Valid**: model `length-baseline`")


def test_evaluation_tab_only_when_enabled(results_dir, env, monkeypatch):
    monkeypatch.setenv("CONTSTIM_LEADERBOARD_ALLOW_EVAL", "1")
    demo = create_app(results_dir, datasets_dir=env)
    names = {dep.get("api_name") for dep in demo.config["dependencies"]}
    assert "evaluate" in names
    monkeypatch.setenv("CONTSTIM_LEADERBOARD_ALLOW_EVAL", "0")
    demo = create_app(results_dir, datasets_dir=env)
    assert "evaluate" not in {dep.get("api_name") for dep in demo.config["dependencies"]}
    assert os.environ["CONTSTIM_LEADERBOARD_ALLOW_EVAL"] == "0"


def test_evaluate_spec(env):
    assert evaluate_spec("  ", env) == "**Refused**: no model spec given."
    text = evaluate_spec("precomputed:roberta", env)
    assert "model: precomputed:roberta" in text and "synthetic_vs_synthetic" in text and "0.804" in text
    assert evaluate_spec("precomputed:gpt5", env).startswith("**Refused**: precomputed: names a reference model")
    assert evaluate_spec("kenlm:/etc/passwd", env).startswith("**Refused**: its model spec names the local model 'passwd'")
