"""The ``contstim`` evaluate module: loading (offline, three ways), identical numbers to the
API on the real pll data, docstring examples, bad input, and publishing to a stand-in Hub."""
from __future__ import annotations

import base64
import doctest
import inspect
import json
import shutil
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import evaluate
import pytest
import yaml

import contstim_bench
from contstim_bench.analysis.evaluation import evaluate_logprobs, log_ratios_from_logprobs
from contstim_bench.cli import main as cli_main
from contstim_bench.metric_hub import push_metric
from contstim_bench.benchmarks.contstim import load_experiment
import served  # tests/served.py
from metric_rows import small_inputs

ROOT = Path(contstim_bench.__file__).resolve().parent.parent
TARGETS = ("sentence1_accept_model", "sentence1_reject_model", "sentence2_accept_model", "sentence2_reject_model")


def metric_inputs(trials, log_ratio) -> dict:
    """The metric's per-trial inputs for a trials frame of the dataset."""
    inputs = {
        "predictions": [float(v) for v in log_ratio],
        "references": trials["rating"].astype(int).tolist(),
        "participant": trials["participant"].tolist(),
        "group": trials["group"].astype(int).tolist(),
    }
    for col in ("pair_id", "sentence1", "sentence2", "trial_type", *TARGETS):
        inputs[col] = [None if v is None or v != v else v for v in trials[col].tolist()]
    return inputs


@pytest.fixture(scope="module")
def pll(built_contstim):
    trials, refs = load_experiment("pll", built_contstim.parent)
    return trials, refs


def test_loads_three_ways_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = str(tmp_path / "cache")
    monkeypatch.chdir(ROOT)
    from_root = evaluate.load("metrics/contstim", cache_dir=cache)
    monkeypatch.chdir(ROOT / "metrics")
    from_metrics = evaluate.load("contstim", cache_dir=cache)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    from_anywhere = evaluate.load(contstim_bench.metric_path(), cache_dir=cache)
    for m in (from_root, from_metrics, from_anywhere):
        assert m.name == "contstim"
        assert list(m.features) == ["predictions", "references", "participant", "group", "pair_id", "sentence1",
                                    "sentence2", "trial_type", *TARGETS]
        assert m.features["predictions"].dtype == "float64" and m.features["references"].dtype == "int64"
    assert contstim_bench.metric_path() == str(ROOT / "metrics" / "contstim")


def test_metric_equals_api_on_pll(pll, metric):
    trials, refs = pll
    others = {m: refs[m] for m in refs if m != "electra"}
    api = evaluate_logprobs(trials, refs["electra"], "electra", others)
    out = metric.compute(
        model_name="electra",
        reference_predictions={m: log_ratios_from_logprobs(trials, lp).tolist() for m, lp in others.items()},
        **metric_inputs(trials, log_ratios_from_logprobs(trials, refs["electra"])),
    )
    assert json.dumps(out, sort_keys=True) == json.dumps(api, sort_keys=True)
    e = out["synthetic_vs_synthetic"]
    assert e["selection"] == "targeted" and e["n_trials"] == 1200
    assert e["srcs"] == pytest.approx(0.6532956940680518, abs=1e-12)


def test_docstring_examples_run(metric):
    module = inspect.getmodule(type(metric))
    test = doctest.DocTestParser().get_doctest(module._KWARGS_DESCRIPTION, {}, "contstim", None, 0)
    assert len(test.examples) >= 8
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_metric_bad_inputs(metric):
    def bad(match, **changes):
        rows = {**small_inputs(), **changes}
        with pytest.raises(ValueError, match=match):
            metric.compute(model_name="m", **rows)

    # checked on the raw inputs before datasets casts them (analysis.metric_inputs), so the
    # messages name the input column and position
    bad("mismatched lengths: predictions has 5 values", predictions=[1.0] * 5)
    bad(r"predictions\[2\] = nan", predictions=[1.0, 1.0, float("nan"), 1.0, 1.0, 1.0])
    bad(r"predictions\[0\] = inf", predictions=[float("inf")] + [1.0] * 5)
    bad(r"outside 1..6: references\[3\] = 7", references=[6, 2, 5, 7, 3, 4])
    bad(r"outside 1..6: references\[0\] = 0", references=[0, 2, 5, 1, 3, 4])
    bad("unknown trial type 'random'", trial_type=["random"] * 6)
    bad(r"participant.*empty", participant=["p1", "p1", "", "p2", "p3", "p3"])
    bad("duplicated trial: participant 'p1'", pair_id=["a", "a", "a", "b", "a", "b"])
    with pytest.raises(ValueError, match="empty"):
        metric.compute(model_name="m", **{k: [] for k in small_inputs()})


def test_metric_targets_treat_dash_and_empty_as_none(metric):
    out = metric.compute(model_name="m", **small_inputs())
    assert out["synthetic_vs_synthetic"]["selection"] == "targeted"
    assert metric.compute(model_name="-", **small_inputs())["synthetic_vs_synthetic"]["selection"] == "all"


GIT = "https://example.org/contstim-bench@" + "0123456789abcdef" * 2 + "01234567"


class StandInHub:
    """Records the calls a :class:`huggingface_hub.HfApi` would get and keeps the uploaded files."""

    def __init__(self, store: Path):
        self.store, self.calls = store, []

    def create_repo(self, **kwargs):
        self.calls.append(("create_repo", kwargs))
        return f"https://stand-in/spaces/{kwargs['repo_id']}"

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", kwargs))
        dest = self.store / kwargs["repo_id"]
        shutil.copytree(kwargs["folder_path"], dest)
        return "commit"


def test_push_metric_to_stand_in_hub(tmp_path):
    hub = StandInHub(store=tmp_path / "hub")
    url = push_metric("my-org/controversial_sentences", token="hf_x", api=hub, requirement="contstim-bench @ git+https://example.org/contstim-bench")
    assert url == "https://huggingface.co/spaces/my-org/controversial_sentences"
    (name, create), (name2, upload) = hub.calls
    assert name == "create_repo" and name2 == "upload_folder"
    assert create == dict(repo_id="my-org/controversial_sentences", token="hf_x", private=False,
                          repo_type="space", space_sdk="gradio", exist_ok=True)
    assert upload["repo_type"] == "space" and upload["repo_id"] == "my-org/controversial_sentences"
    space = tmp_path / "hub" / "my-org" / "controversial_sentences"
    assert sorted(p.name for p in space.iterdir()) == ["README.md", "app.py", "controversial_sentences.py", "requirements.txt"]
    card = (space / "README.md").read_text()
    assert "title: controversial_sentences" in card and "sdk: gradio" in card and "- metric" in card
    reqs = (space / "requirements.txt").read_text().splitlines()
    assert "contstim-bench @ git+https://example.org/contstim-bench" in reqs and "evaluate>=0.4.6" in reqs
    assert "gr.Interface" in (space / "app.py").read_text()  # evaluate's launch_gradio_widget needs Gradio 3
    # what online users get with evaluate.load("my-org/controversial_sentences") is this script
    pushed = evaluate.load(str(space / "controversial_sentences.py"), cache_dir=str(tmp_path / "cache"))
    assert pushed.compute(model_name="m", **small_inputs())["all"]["accuracy_by_unit"] == {"p1": 1.0, "p2": 1.0, "p3": 0.0}


class _HubStandIn(BaseHTTPRequestHandler):
    """The few Hub endpoints ``HfApi.create_repo``/``upload_folder`` call, on localhost."""

    def _reply(self, obj, code=200):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):  # noqa: N802 (http.server API)
        data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        hub = self.server.hub
        hub["auth"].add(self.headers.get("Authorization"))
        base = f"http://127.0.0.1:{self.server.server_port}"
        if self.path == "/api/repos/create":
            body = json.loads(data)
            hub["created"].append(body)
            return self._reply({"url": f"{base}/spaces/{body['organization']}/{body['name']}"})
        if self.path == "/api/validate-yaml":
            header = json.loads(data)["content"].split("---")[1]
            hub["card"] = yaml.safe_load(header)
            return self._reply({"errors": [], "warnings": []})
        if "/preupload/" in self.path:
            files = json.loads(data)["files"]
            return self._reply({"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                          for f in files]})
        if "/commit/" in self.path:
            for line in data.decode().splitlines():
                item = json.loads(line)
                if item["key"] == "file":
                    hub["files"][item["value"]["path"]] = base64.b64decode(item["value"]["content"])
            return self._reply({"commitUrl": f"{base}/spaces/org/contstim/commit/{'a' * 40}", "commitOid": "a" * 40})
        return self._reply({"error": f"stand-in has no {self.path}"}, code=404)

    def log_message(self, *args):
        pass


@pytest.fixture
def hub_stand_in(monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)  # the stand-in is local
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HubStandIn)
    server.hub = {"created": [], "files": {}, "auth": set(), "card": None}
    with served.in_thread(server) as url:
        yield url, server.hub


def test_metric_push_cli_with_hf_api_against_local_hub(hub_stand_in, tmp_path, capsys):
    endpoint, hub = hub_stand_in
    assert cli_main(["metric", "push", "--repo", "org/contstim", "--token", "hf_test", "--endpoint", endpoint,
                     "--git", GIT]) == 0
    assert f"{endpoint}/spaces/org/contstim" in capsys.readouterr().out
    assert hub["created"] == [{"name": "contstim", "organization": "org", "visibility": "public",
                               "type": "space", "sdk": "gradio"}]
    assert "Bearer hf_test" in hub["auth"]
    assert sorted(hub["files"]) == ["README.md", "app.py", "contstim.py", "requirements.txt"]
    assert hub["card"]["sdk"] == "gradio" and hub["card"]["app_file"] == "app.py"
    assert {"evaluate", "metric"} <= set(hub["card"]["tags"])
    # installed from a pinned commit, never from an index that has no contstim-bench
    assert hub["files"]["requirements.txt"].decode().splitlines()[-1] == f"contstim-bench @ git+{GIT}"
    space = tmp_path / "space"
    space.mkdir()
    for name, content in hub["files"].items():
        (space / name).write_bytes(content)
    pushed = evaluate.load(str(space / "contstim.py"), cache_dir=str(tmp_path / "cache"))
    assert pushed.compute(model_name="m", **small_inputs())["all"]["accuracy_by_unit"] == {"p1": 1.0, "p2": 1.0, "p3": 0.0}


def test_metric_push_rejects_bad_repo_ids(capsys):
    assert cli_main(["metric", "push", "--repo", "not a repo", "--git", GIT]) == 1
    assert "--repo must look like ORG/NAME" in capsys.readouterr().err
    assert cli_main(["metric", "push", "--repo", "org/has-dash", "--git", GIT]) == 1
    assert "valid Python module name" in capsys.readouterr().err
