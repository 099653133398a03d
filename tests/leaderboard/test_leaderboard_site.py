"""``contstim leaderboard build``: the static site from the shipped results, checked in headless
Chromium (Debian's /usr/bin/chromium driven by the playwright package) over file:// and over a
localhost static server; the ranking/matrix tables; ``leaderboard push`` against a local stand-in
for the hub."""
from __future__ import annotations

import csv
import inspect
import io
import json
import shutil
from pathlib import Path

import pytest

import served  # tests/served.py
from huggingface_hub import HfApi

from contstim_bench.cli import main as cli_main
from contstim_bench.leaderboard.identity import display_name
from contstim_bench.leaderboard.push import push_results
from contstim_bench.leaderboard.board_html import TABLE_HEAD, slug
from contstim_bench.leaderboard.site import build_site, plot_function
from contstim_bench.leaderboard.table import pairwise_matrix, panels, ranking_rows
from contstim_bench.leaderboard.validate import load_file

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="module")
def results():
    return [load_file(p) for p in sorted(SHIPPED.glob("*.json"))]


@pytest.fixture(scope="module")
def site(tmp_path_factory, datasets):
    # validation of the shipped files is tested in test_leaderboard_validate.py; the model pages
    # carry the figures of contstim_bench.plotting (the plot functions have their own tests)
    out = tmp_path_factory.mktemp("site") / "site"
    build_site(SHIPPED, out, validate=False, datasets_dir=datasets, log=lambda m: None)
    return out


def test_site_files(site, results):
    names = {display_name(r) for r in results}  # model names, never specs or paths
    assert "smollm2-135m" in names and "hf-causal:smollm2-135m" not in names
    for f in ("index.html", "matrix.html", "data.js", "app.js", "style.css", "export/leaderboard.csv", "export/leaderboard.json"):
        assert (site / f).is_file(), f
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "http://" not in index and "https://" not in index  # no CDN, no external resource
    for name in names:
        page = site / "models" / f"{slug(name)}.html"
        assert page.is_file(), name
        for figure in ("pll_accuracy.png", "pll_srcs.png", "pll_accuracy.svg"):
            assert (site / "models" / slug(name) / figure).stat().st_size > 10_000, figure
        assert f">{name}</a>" in index.replace("<wbr>", "")  # names may wrap after _ - . /
    data = json.loads((site / "data.js").read_text(encoding="utf-8").removeprefix("window.CONTSTIM_LEADERBOARD = ").rstrip().rstrip(";"))
    rows = list(csv.DictReader(io.StringIO((site / "export" / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert len(rows) == len(data["rows"]) == len(names) * len(panels(results))
    assert sorted(p.name for p in (site / "results").iterdir()) == sorted(p.name for p in SHIPPED.glob("*.json"))


def test_ranking_rows_match_results(results):
    rows = ranking_rows(results)
    by = {(r["condition"], r["model"]): r for r in rows}
    bert = next(r for r in results if r["model"]["name"] == "bert")["experiments"]["pll"]["synthetic_vs_synthetic"]
    row = by[("synthetic_vs_synthetic", "bert")]
    assert row["accuracy"] == bert["accuracy"] and row["selection"] == "targeted"
    assert row["accuracy_normalised"] == pytest.approx(bert["accuracy"] / bert["accuracy_noise_ceiling"]["lower"])
    assert row["p_accuracy_vs_ceiling"] == bert["p_vs_lower_ceiling"]["accuracy"]
    syn = [r for r in rows if r["condition"] == "synthetic_vs_synthetic"]
    # the reference models, each on the trials that target it, are ranked among themselves (as the
    # paper's Fig. 3a); the packaged models, on every synthetic trial, among themselves: never in one column
    targeted = [r for r in syn if r["selection"] != "all"]
    on_all = [r for r in syn if r["selection"] == "all"]
    assert syn == targeted + on_all and len(targeted) == 6 and len(on_all) == 2
    assert {r["comparison"] for r in targeted} == {"the trials that target each model"}
    assert {r["comparison"] for r in on_all} == {"every trial of the condition"}
    assert targeted[0]["model"] == "electra" and targeted[0]["rank"] == 1 and targeted[0]["p_accuracy_vs_leader"] is None
    assert all(r["accuracy_leader"] == "electra" for r in targeted)
    assert [r["accuracy"] for r in targeted] == sorted((r["accuracy"] for r in targeted), reverse=True)
    assert [r["rank_text"] for r in on_all] == ["=1", "=1"] and [r["rank_text"] for r in targeted][:2] == ["1", "2"]
    assert all(r["accuracy_leader"] == on_all[0]["model"] for r in on_all)
    assert all(r["n_trials"] == 3600 for r in on_all) and all(r["n_trials"] == 1200 for r in targeted)
    # the PLL read-outs are far below the leader: significant after BH
    assert by[("synthetic_vs_synthetic", "bert_has_a_mouth")]["p_accuracy_vs_leader"] < 1e-4
    # ties share the best rank
    ties = [r for r in rows if r["condition"] == "all" and r["accuracy"] == max(x["accuracy"] for x in rows if x["condition"] == "all")]
    assert len(ties) >= 3 and {r["rank"] for r in ties} == {1}


def test_pairwise_matrix(results):
    m = pairwise_matrix(results, "pll", "synthetic_vs_synthetic", "accuracy")
    n = len(results)
    assert len(m["models"]) == n and m["scores"] == sorted(m["scores"], reverse=True)
    targeted = {r["model"]["name"]: r["experiments"]["pll"]["synthetic_vs_synthetic"]["selection"] != "all"
                for r in results}
    labels = {display_name(r): targeted[r["model"]["name"]] for r in results}
    for i in range(n):
        assert m["p"][i][i] is None
        for j in range(n):
            if i == j:
                continue
            if labels[m["models"][i]] != labels[m["models"][j]]:
                # a model on every synthetic pair vs one on its own targeted pairs: not like for like
                assert m["p"][i][j] is None and m["delta"][i][j] is None
                continue
            assert m["p"][i][j] == m["p"][j][i] and 0 < m["p"][i][j] <= 1
            assert m["delta"][i][j] == pytest.approx(-m["delta"][j][i])
    assert sum(labels.values()) == 6 and len(labels) - sum(labels.values()) >= 1
    i, j = m["models"].index("electra"), m["models"].index("electra_has_a_mouth")
    assert m["p"][i][j] < 0.05 and m["delta"][i][j] > 0.5
    with pytest.raises(ValueError, match="no result has experiment 'main'"):
        pairwise_matrix(results, "main", "all", "accuracy")


def test_model_pages_use_the_figure_plots():
    fn = plot_function()
    assert fn.__module__ == "contstim_bench.plotting"
    assert {"out_dir", "datasets_dir", "formats"} <= set(inspect.signature(fn).parameters)


def test_slug_is_the_package_slug_cut_to_80():
    from contstim_bench.names import slug as package_slug

    for name in ("hf-causal:gpt2", "smollm2-135m", "..odd name//x..", "", "a" * 100):
        assert slug(name) == package_slug(name)[:80]
    assert slug("hf-causal:gpt2") == "hf-causal_gpt2" and slug("") == "model" and len(slug("a" * 100)) == 80


def test_cli_build_refuses_foreign_folder(tmp_path, datasets, capsys):
    foreign = tmp_path / "docs"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert cli_main(["leaderboard", "build", "--results", str(SHIPPED), "--out", str(foreign), "--no-validate"]) == 1
    assert "already holds files the package did not write" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "keep me"
    assert cli_main(["leaderboard", "build", "--results", str(tmp_path / "none"), "--out", str(tmp_path / "s")]) == 1
    assert "does not exist" in capsys.readouterr().err


# --------------------------------------------------------------------------- browser


@pytest.fixture(scope="module")
def server(site):
    with served.files(site) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed at /usr/bin/chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, timeout=60_000)
        yield b
        b.close()


def _accuracies(page) -> list[float]:
    return [float(v) for v in page.eval_on_selector_all(
        "#panel-pll-all tbody tr td:nth-child(5)", "tds => tds.map(td => td.getAttribute('data-value'))")]


@pytest.mark.parametrize("mode", ["file", "http"])
def test_site_in_chromium(mode, site, server, browser, results, tmp_path):
    base = site.as_uri() if mode == "file" else server
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{base}/index.html")

    # the table of the default panel (pll / all) has every model, the other panels are hidden
    assert page.is_visible("#panel-pll-all") and not page.is_visible("#panel-pll-synthetic_vs_synthetic")
    shown = page.eval_on_selector_all("#panel-pll-all tbody td.model a", "as => as.map(a => a.textContent)")
    assert sorted(shown) == sorted(display_name(r) for r in results)
    page.screenshot(path=str(tmp_path / "index.png"), full_page=True)

    # sorting by a column reorders rows (SRCS: not the initial order)
    def order():
        return page.eval_on_selector_all("#panel-pll-all tbody td.model", "tds => tds.map(td => td.textContent)")

    initial = order()
    page.click("#panel-pll-all th[data-key=srcs]")
    ascending = order()
    srcs = {display_name(r): r["experiments"]["pll"]["all"]["srcs"] for r in results}
    assert ascending == sorted(srcs, key=srcs.get) and ascending != initial
    assert page.get_attribute("#panel-pll-all th[data-key=srcs]", "aria-sort") == "ascending"
    page.click("#panel-pll-all th[data-key=srcs]")
    assert order() == ascending[::-1]
    page.click("#panel-pll-all th[data-key=accuracy]")
    acc = _accuracies(page)
    assert acc == sorted(acc)

    # the panel selector shows another condition
    page.select_option("#panel-select", "panel-pll-synthetic_vs_synthetic")
    assert page.is_visible("#panel-pll-synthetic_vs_synthetic") and not page.is_visible("#panel-pll-all")

    # exports download (generated from the inlined data, works under file:// too)
    with page.expect_download() as info:
        page.click("#export-csv")
    dl = info.value
    assert dl.suggested_filename == "contstim-leaderboard.csv"
    text = Path(dl.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(results) * 3 and {r["model"] for r in rows} == set(srcs)
    with page.expect_download() as info:
        page.click("#export-json")
    exported = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    assert len(exported["rows"]) == len(rows) and len(exported["matrices"]) == 6

    # a model page shows its plot (the image is loaded and has a size)
    page.select_option("#panel-select", "panel-pll-all")
    page.click("#panel-pll-all a:text-is('roberta')")
    page.wait_for_load_state()
    assert page.url.endswith("/models/roberta.html")
    img = page.wait_for_selector(".plots img")
    assert page.evaluate("img => img.complete && img.naturalWidth > 400", img)
    page.screenshot(path=str(tmp_path / "model.png"), full_page=True)

    # the matrix page
    page.goto(f"{base}/matrix.html")
    assert page.locator("table.matrix").count() == 6

    assert errors == []
    local = ("file://", "http://127.0.0.1", "blob:", "data:")
    assert [u for u in requests if not u.startswith(local)] == []
    context.close()
    if mode == "file":  # keep screenshots for a human to look at
        for name in ("index.png", "model.png"):
            assert (tmp_path / name).stat().st_size > 20_000


LAYOUT = """() => {
  const wrap = document.querySelector('#panel-pll-all .table-wrap');
  const table = wrap.querySelector('table');
  const page = document.documentElement;
  return {page: page.scrollWidth - page.clientWidth, wrap: wrap.scrollWidth - wrap.clientWidth,
          shown: Array.from(table.tHead.rows[1].cells).filter(c => c.offsetParent !== null).map(c => c.dataset.key),
          ranks: Array.from(table.tBodies[0].rows).map(r => r.cells[0].textContent)};
}"""


@pytest.mark.parametrize("width", [1366, 390])
def test_ranking_table_fits_the_window(width, site, browser, results):
    """No horizontal scrolling at 1,366 px (every column shown) nor at 390 px (detail groups
    folded); a folded group opens with its button; tied ranks read =1."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{site.as_uri()}/index.html")
    page.wait_for_function("document.readyState === 'complete'")
    layout = page.evaluate(LAYOUT)
    assert layout["page"] <= 0 and layout["wrap"] <= 0, layout
    columns = [key for key, _, _ in TABLE_HEAD]
    if width == 1366:
        assert layout["shown"] == columns
    else:
        assert layout["shown"] == ["rank", "model", "accuracy", "srcs"]
        page.click("#panel-pll-all button.fold[data-fold=fold-acc]")
        opened = page.evaluate(LAYOUT)["shown"]
        assert [k for k in columns if k.startswith(("accuracy", "p_accuracy"))] == \
            [k for k in opened if k.startswith(("accuracy", "p_accuracy"))]
        assert page.get_attribute("#panel-pll-all button.fold[data-fold=fold-acc]", "aria-pressed") == "true"
        page.set_viewport_size({"width": 1366, "height": 900})  # a wider window unfolds the rest
        page.wait_for_timeout(400)
        assert page.evaluate(LAYOUT)["shown"] == columns
    rows = [r for r in ranking_rows(results) if r["condition"] == "all"]
    assert layout["ranks"] == [f"={r['rank']}" if r["tied"] else str(r["rank"]) for r in rows]
    assert layout["ranks"][:5] == ["=1"] * 5
    assert errors == []
    context.close()


# --------------------------------------------------------------------------- push


class LocalHub:
    """A local folder standing in for the hub: the two HfApi methods push uses, with the real
    signatures checked (``inspect.signature(HfApi.method).bind``)."""

    def __init__(self, root: Path, endpoint=None, token=None):
        self.root = root
        self.calls = []

    def create_repo(self, repo_id, **kwargs):
        inspect.signature(HfApi.create_repo).bind(None, repo_id, **kwargs)
        self.calls.append(("create_repo", repo_id, kwargs))
        (self.root / kwargs["repo_type"] / repo_id).mkdir(parents=True, exist_ok=True)
        return f"local://{kwargs['repo_type']}/{repo_id}"

    def upload_folder(self, **kwargs):
        inspect.signature(HfApi.upload_folder).bind(None, **kwargs)
        self.calls.append(("upload_folder", kwargs["repo_id"], kwargs))
        target = self.root / kwargs["repo_type"] / kwargs["repo_id"]
        assert target.is_dir(), "upload before create_repo"
        shutil.copytree(kwargs["folder_path"], target, dirs_exist_ok=True)
        return "commit"


def test_push_to_local_hub(tmp_path, datasets, monkeypatch, capsys):
    hub = LocalHub(tmp_path / "hub")
    url = push_results(SHIPPED, "contstim/leaderboard-results", api=hub, validate=False)
    assert url == "local://dataset/contstim/leaderboard-results"
    repo = tmp_path / "hub" / "dataset" / "contstim" / "leaderboard-results"
    assert sorted(p.name for p in (repo / "results").iterdir()) == sorted(p.name for p in SHIPPED.glob("*.json"))
    assert (repo / "results" / "bert.json").read_bytes() == (SHIPPED / "bert.json").read_bytes()
    card = (repo / "README.md").read_text(encoding="utf-8")
    assert "config_name: leaderboard" in card and "path: leaderboard.csv" in card
    import datasets as hf_datasets

    table = hf_datasets.load_dataset(str(repo), "leaderboard", split="train")
    assert table.num_rows == 3 * len(list(SHIPPED.glob("*.json"))) and "p_accuracy_vs_leader" in table.column_names
    assert [c[0] for c in hub.calls] == ["create_repo", "upload_folder"]
    assert hub.calls[0][2]["repo_type"] == "dataset" and hub.calls[0][2]["exist_ok"] is True
    with pytest.raises(ValueError, match="must look like ORG/NAME"):
        push_results(SHIPPED, "no-slash", api=hub)

    class Unreachable(LocalHub):
        def create_repo(self, repo_id, **kwargs):
            raise ConnectionError("hub unreachable")

    with pytest.raises(RuntimeError, match="to dataset org/x failed: ConnectionError: hub unreachable"):
        push_results(SHIPPED, "org/x", api=Unreachable(tmp_path / "nowhere"), validate=False)

    # the CLI builds huggingface_hub.HfApi(endpoint=..., token=...): replace it by the stand-in
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", lambda endpoint=None, token=None: LocalHub(tmp_path / "hub2"))
    code = cli_main(["leaderboard", "push", "--repo", "org/name", "--results", str(SHIPPED), "--no-validate"])
    assert code == 0 and "pushed" in capsys.readouterr().out
    assert (tmp_path / "hub2" / "dataset" / "org" / "name" / "leaderboard.csv").is_file()
