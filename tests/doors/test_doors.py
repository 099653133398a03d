"""One answer behind every door: the same model on the same benchmark gives the same rank,
accuracy, SRCS, trial selection and ties convention in the ``contstim evaluate`` summary, its
result file, the leaderboard (table rows, CSV export, site page), the Gradio leaderboard's API,
the ``evaluate`` metric module and the metric Space's API.

Four models on the pll experiment, each with the six reference models of the paper:
``precomputed:roberta`` (a reference, on the trials that target it), SmolLM2 (a real LM, on every
trial), a Kneser-Ney trigram trained here, and a model whose every pair is a tie evaluated with
``--ties hit`` (degenerate: never ranked, whatever its accuracy).
"""
from __future__ import annotations

import contextlib
import csv
import importlib.util
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from contstim_bench.cli import main as cli_main
import served  # tests/served.py
from metric_rows import metric_columns

pytestmark = pytest.mark.slow

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"
METRIC_SPACE = Path(__file__).resolve().parents[2] / "metrics" / "contstim" / "app.py"
REFERENCES = ("bert", "bert_has_a_mouth", "roberta", "roberta_has_a_mouth", "electra", "electra_has_a_mouth")
CONDITIONS = ("synthetic_vs_synthetic", "natural_vs_shuffled", "all")
TIMEOUT = 180


def _summary_rows(text: str) -> dict[str, dict]:
    """Condition -> the cells of the ``contstim evaluate`` summary's row (pll)."""
    rows = {}
    for line in text.splitlines():
        key = line.split(" ", 1)[0]
        if key in CONDITIONS and line.count("|") == 2:
            about, acc, srcs = line.split("|")
            acc_cells, srcs_cells = acc.split(), srcs.split()
            rows[key] = {"selection": about.split()[1], "accuracy": acc_cells[0].rstrip("*^"),
                         "rank": acc_cells[-1], "srcs": srcs_cells[0].rstrip("*^"), "srcs_rank": srcs_cells[-1]}
    return rows


def _board_rank(rank_text: str) -> str:
    """A leaderboard rank as the summary writes it (without the count): ``=1``, ``3``, ``-`` (the
    CSV guards a shared rank against spreadsheet formulas as ``'=1``)."""
    rank_text = rank_text.removeprefix("'")
    return {"\u2013": "-", "&ndash;": "-"}.get(rank_text, rank_text)


@pytest.fixture(scope="module")
def doors(tmp_path_factory, datasets, kn_trigram, pll_logprobs):
    """Each model's summary text, result file and leaderboard folder (the references and it);
    SmolLM2's pll scores come from the run's score cache (``pll_logprobs``, conftest)."""
    from contstim_bench.benchmarks import get_benchmark

    d = tmp_path_factory.mktemp("doors")
    sentences = get_benchmark("contstim.pll").sentences(datasets)
    (d / "pll.txt").write_text("\n".join(sentences) + "\n", encoding="utf-8")
    np.save(d / "ties.npy", np.full(len(sentences), -10.0))
    models = {
        "roberta": ("precomputed:roberta", []),
        "smollm2": ("smollm2-135m", []),
        "trigram": (f"kenlm:{kn_trigram}", []),
        "all-ties": (f"precomputed:{d / 'ties.npy'}?sentences={d / 'pll.txt'}", ["--ties", "hit"]),
    }
    out = {}
    for key, (spec, extra) in models.items():
        result_path = d / f"{key}.json"
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert cli_main(["evaluate", "--model", spec, "--experiment", "pll", "--output", str(result_path),
                             "--datasets", str(datasets), "--no-plots", "--threads", "1", *extra]) == 0
        board = d / f"board-{key}"
        board.mkdir()
        for ref in REFERENCES:
            if ref != key:
                shutil.copyfile(SHIPPED / f"{ref}.json", board / f"{ref}.json")
        shutil.copyfile(result_path, board / f"{key}.json")
        out[key] = {"spec": spec, "summary": buf.getvalue(), "result": json.loads(result_path.read_text()),
                    "board": board}
    return out


def _no_figures(result_path, out_dir, **_):
    """A stand-in for the figures of a model page (they are tested elsewhere): one tiny PNG."""
    import base64

    png = Path(out_dir) / "figure.png"
    png.write_bytes(base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="))
    return [png]


@pytest.fixture(scope="module")
def sites(doors, datasets, tmp_path_factory):
    """Each board built as the static site (validated: every score recomputed; not re-scored)."""
    from contstim_bench.leaderboard.site import build_site

    built = {}
    for key, door in doors.items():
        out = tmp_path_factory.mktemp(f"site-{key}")
        build_site(door["board"], out, datasets_dir=datasets, rescore=False, plot=_no_figures, log=lambda m: None)
        built[key] = out
    return built


def _csv_rows(site: Path, spec: str) -> dict[str, dict]:
    """The model's rows of the site's CSV export (by its spec: the board shows a display name)."""
    with open(site / "export" / "leaderboard.csv", encoding="utf-8", newline="") as fh:
        return {r["condition"]: r for r in csv.DictReader(fh) if r["spec"] == spec}


def test_summary_result_and_leaderboard_agree(doors, sites):
    for key, door in doors.items():
        result, summary = door["result"], _summary_rows(door["summary"])
        rows = _csv_rows(sites[key], result["model"]["spec"])
        page = (sites[key] / "index.html").read_text(encoding="utf-8")
        data = (sites[key] / "data.js").read_text(encoding="utf-8")
        assert set(summary) == set(CONDITIONS) == set(rows), key
        for cond in CONDITIONS:
            entry, row, cells = result["experiments"]["pll"][cond], rows[cond], summary[cond]
            assert cells["selection"] == entry["selection"] == row["selection"], (key, cond)
            assert cells["accuracy"] == f"{entry['accuracy']:.3f}" == f"{float(row['accuracy']):.3f}", (key, cond)
            assert cells["srcs"] == f"{entry['srcs']:.3f}" == f"{float(row['srcs']):.3f}", (key, cond)
            assert row["ties"] == result["analysis"]["ties"], (key, cond)
            # the rank: the summary's N/M (or '-') is the board's rank in the same group of models
            assert cells["rank"].split("/")[0] == _board_rank(row["rank_text"]), (key, cond, cells, row)
            if cells["rank"] != "-":
                assert int(cells["rank"].split("/")[1]) == sum(
                    1 for r in csv.DictReader(open(sites[key] / "export" / "leaderboard.csv", encoding="utf-8"))
                    if r["condition"] == cond and r["comparison"] == row["comparison"] and r["rank"]), (key, cond)
            assert row["model"] in page and row["model"] in data
    # what the four models show
    smol = _summary_rows(doors["smollm2"]["summary"])
    assert smol["all"]["rank"] == "=1/7" and smol["synthetic_vs_synthetic"]["rank"] == "-"
    assert _summary_rows(doors["roberta"]["summary"])["synthetic_vs_synthetic"]["rank"] == "3/6"
    ties = doors["all-ties"]
    assert all(c["rank"] == "-" for c in _summary_rows(ties["summary"]).values())
    assert ties["result"]["experiments"]["pll"]["all"]["accuracy"] == 1.0  # a tie counts as a hit ...
    assert ties["result"]["experiments"]["pll"]["all"]["degenerate"].startswith("every one of the")
    assert "DEGENERATE predictions on pll" in ties["summary"]  # ... and the model is flagged, never ranked
    row = _csv_rows(sites["all-ties"], ties["result"]["model"]["spec"])["all"]
    assert row["rank"] == "" and row["not_ranked"].startswith("degenerate predictions")
    assert "not ranked: degenerate predictions" in (sites["all-ties"] / "index.html").read_text(encoding="utf-8")


def test_gradio_leaderboard_agrees(doors, datasets):
    from gradio_client import Client

    from contstim_bench.leaderboard.app import create_app
    from contstim_bench.leaderboard.identity import display_name

    for key in ("smollm2", "all-ties"):
        door = doors[key]
        demo = create_app(door["board"], allow_eval=False, datasets_dir=datasets, rescore=False)
        demo.queue(default_concurrency_limit=2)
        demo.launch(server_name="127.0.0.1", server_port=served.free_port(), prevent_thread_lock=True, quiet=True)
        try:
            client = Client(demo.local_url, verbose=False, download_files=False)
            shown_name = display_name(door["result"])
            summary = _summary_rows(door["summary"])
            for cond in CONDITIONS:
                frame = client.submit(f"pll / {cond}", api_name="/unverified_table").result(timeout=TIMEOUT)
                headers = frame["headers"]
                shown = [dict(zip(headers, r)) for r in frame["data"]]
                row = next(r for r in shown if r["Model"] == shown_name)
                assert _board_rank(row["Rank"]) == summary[cond]["rank"].split("/")[0], (key, cond, row)
                assert f"{row['Accuracy']:.3f}" == summary[cond]["accuracy"], (key, cond)
                assert row["Selection"] == summary[cond]["selection"], (key, cond)
                html = client.submit(f"pll / {cond}", api_name="/board").result(timeout=TIMEOUT)
                assert row["Model"] in html
        finally:
            demo.close()


def test_metric_and_its_space_agree(doors, datasets, tmp_path):
    """The metric, given the model by its spec, and the Space's API (raw table in, the metric's
    answer out) give the result file's numbers, selection and degenerate flag."""
    import evaluate
    from gradio_client import Client

    import contstim_bench
    from contstim_bench.benchmarks.contstim import load_experiment

    trials, _ = load_experiment("pll", datasets)
    metric = evaluate.load(contstim_bench.metric_path(), cache_dir=str(tmp_path / "evaluate"))
    spec = importlib.util.spec_from_file_location("metric_space_app", METRIC_SPACE)
    space = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(space)
    space.demo.launch(server_name="127.0.0.1", server_port=served.free_port(), prevent_thread_lock=True, quiet=True)
    try:
        client = Client(space.demo.local_url, verbose=False, download_files=False)
        for key, door in doors.items():
            result = door["result"]
            ties = result["analysis"]["ties"]
            columns = metric_columns(trials, result["logprobs"])
            out = metric.compute(model_name=door["spec"], ties=ties, **columns)
            for cond in CONDITIONS:
                entry, got = result["experiments"]["pll"][cond], out[cond]
                assert got["selection"] == entry["selection"], (key, cond)
                assert got["accuracy"] == pytest.approx(entry["accuracy"], abs=1e-12), (key, cond)
                assert got["srcs"] == pytest.approx(entry["srcs"], abs=1e-12), (key, cond)
                assert got["degenerate"] == entry["degenerate"], (key, cond)
            if key in ("roberta", "trigram"):  # the Space: the same rows as a table, the name as typed
                table = {"headers": list(space.FEATURES),
                         "data": [[columns[f][i] for f in space.FEATURES] for i in range(len(trials))]}
                answer = json.loads(client.predict(table, door["spec"], api_name="/compute"))
                for cond in CONDITIONS:
                    entry = result["experiments"]["pll"][cond]
                    assert answer[cond]["selection"] == entry["selection"], (key, cond)
                    assert answer[cond]["accuracy"] == pytest.approx(entry["accuracy"], abs=1e-12), (key, cond)
                    assert answer[cond]["srcs"] == pytest.approx(entry["srcs"], abs=1e-12), (key, cond)
        # the metric takes a model by its spec or its name: one trial selection either way
        columns = metric_columns(trials, doors["roberta"]["result"]["logprobs"])
        by_name = metric.compute(model_name="roberta", **columns)["synthetic_vs_synthetic"]
        by_spec = metric.compute(model_name="precomputed:roberta", **columns)["synthetic_vs_synthetic"]
        assert by_name["selection"] == by_spec["selection"] == "targeted"
        assert by_name["accuracy"] == by_spec["accuracy"] == pytest.approx(0.804, abs=5e-4)
        with pytest.raises(ValueError, match="names the reference model 'robrta', but no trial targets it"):
            metric.compute(model_name="precomputed:robrta", **columns)
        # the Space shows the metric's own message for a bad rating, and truncates nothing
        rows = [[columns[f][i] for f in space.FEATURES] for i in range(4)]
        for bad, message in ((3.5, "not an integer"), (9, "outside 1..6")):
            rows[0][space.FEATURES.index("references")] = bad
            with pytest.raises(Exception, match=message):
                client.predict({"headers": list(space.FEATURES), "data": rows}, "m", api_name="/compute")
    finally:
        space.demo.close()
