"""End to end in headless Chromium (Debian's /usr/bin/chromium driven by Playwright, no browser
download): export, serve on 127.0.0.1, two participants through instructions, every trial and
the end page (one of them reloading mid-way, while another browser with its platform id is
refused), then ingest; and the real 132-trial pll design."""
from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pandas as pd
import pytest

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(f"{CHROMIUM} is absent (apt-get install chromium)", allow_module_level=True)

from playwright.sync_api import sync_playwright  # noqa: E402

import served  # noqa: E402  (tests/served.py)

from contstim_bench.data.build_contstim import load_trials  # noqa: E402
from contstim_bench.data.contstim_trials import pair_id  # noqa: E402
from contstim_bench.data.design_file import design_from_trials, validate_design  # noqa: E402
from contstim_bench.experiment.export import export_experiment  # noqa: E402
from contstim_bench.experiment.ingest import ingest_to_dataset  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = Path("/tmp")
N_TRIALS = 15
CODE = "BROWSER1"


def start_server(export_dir: Path, db: Path) -> tuple[subprocess.Popen, str]:
    port = served.free_port()
    proc = served.start(served.experiment_server(
        export_dir, db, port, "--completion-code", CODE,
        "--completion-url", "https://app.prolific.com/submissions/complete?cc={code}"), port)
    return proc, f"http://127.0.0.1:{port}/"


@pytest.fixture(scope="module")
def pll_design() -> pd.DataFrame:
    return design_from_trials(load_trials("pll"))


@pytest.fixture(scope="module")
def small_design(pll_design) -> pd.DataFrame:
    """One group: the 12 real catch trials and 3 synthetic pairs of the pll experiment."""
    catch = pll_design[pll_design["trial_type"] == "natural_vs_shuffled"]
    other = pll_design[pll_design["trial_type"] != "natural_vs_shuffled"].head(N_TRIALS - len(catch))
    rows = pd.concat([other.iloc[:2], catch, other.iloc[2:]]).copy()
    rows["trial"] = range(1, len(rows) + 1)
    return validate_design(rows)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def choose(design: pd.DataFrame, left: str, right: str, who: int) -> int:
    """The button a simulated participant presses: the natural sentence (very confident) in a
    catch trial; otherwise participant 1 picks the left sentence (confident), participant 2
    the right one (somewhat confident)."""
    row = design[design["pair_id"] == pair_id(left, right)].iloc[0]
    if row.trial_type == "natural_vs_shuffled":
        natural = row.sentence1 if row.sentence1_type == "C1" else row.sentence2
        return 1 if natural == left else 6
    return 2 if who == 1 else 4


def answer_trials(page, design, who: int, first: int, last: int, clicks: dict, screenshot: bool = False) -> None:
    for trial in range(first, last + 1):
        page.wait_for_selector(f'#trial[data-trial="{trial}"]:not([hidden])')
        assert page.inner_text("#progress-text") == f"{trial - 1} / {N_TRIALS}"
        left, right = page.inner_text("#sentence-left"), page.inner_text("#sentence-right")
        rating = choose(design, left, right, who)
        clicks[(who, trial)] = (left, right, rating)
        if screenshot and trial == 3:
            page.screenshot(path=str(SCREENSHOTS / "contstim_experiment_trial.png"))
        side = "left" if rating <= 3 else "right"
        page.click(f'#side-{side} button[data-rating="{rating}"]')


def test_two_participants_complete_then_ingest(browser, small_design, tmp_path):
    exp = export_experiment(small_design, tmp_path / "exp")
    db = tmp_path / "responses.sqlite"
    proc, url = start_server(exp, db)
    clicks: dict = {}
    console_errors: list = []
    try:
        for who in (1, 2):
            ctx = browser.new_context(viewport={"width": 1280, "height": 720})
            page = ctx.new_page()
            page.set_default_timeout(20_000)
            page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
            page.goto(f"{url}?PROLIFIC_PID=prolific{who}&STUDY_ID=s1")
            page.wait_for_selector("#instructions:not([hidden])")
            text = page.inner_text("#instructions")
            assert "Your job is to choose which sentence you think is more probable" in text
            assert "Very confident" in text and "Somewhat confident" in text
            if who == 1:
                page.screenshot(path=str(SCREENSHOTS / "contstim_experiment_instructions.png"), full_page=True)
            page.click("#proceed")
            if who == 1:
                answer_trials(page, small_design, who, 1, N_TRIALS, clicks, screenshot=True)
            else:
                answer_trials(page, small_design, who, 1, 6, clicks)
                page.wait_for_selector('#trial[data-trial="7"]:not([hidden])')
                shown = page.inner_text("#sentence-left"), page.inner_text("#sentence-right")
                page.reload()  # resumes at the first unanswered trial, same sentences and sides
                page.wait_for_selector('#trial[data-trial="7"]:not([hidden])')
                assert (page.inner_text("#sentence-left"), page.inner_text("#sentence-right")) == shown
                assert "#token=" in page.url
                other = browser.new_context()  # another browser with the same platform id: refused
                intruder = other.new_page()
                intruder.set_default_timeout(20_000)
                intruder.goto(f"{url}?PROLIFIC_PID=prolific{who}&STUDY_ID=s1")
                intruder.click("#proceed")
                intruder.wait_for_selector("#problem:not([hidden])")
                assert "this platform id already has a session" in intruder.inner_text("#problem-text")
                other.close()
                page.reload()  # the first browser's token still works, at the same trial
                page.wait_for_selector('#trial[data-trial="7"]:not([hidden])')
                assert (page.inner_text("#sentence-left"), page.inner_text("#sentence-right")) == shown
                answer_trials(page, small_design, who, 7, N_TRIALS, clicks)
            page.wait_for_selector("#end:not([hidden])")
            assert page.inner_text("#completion-code") == CODE
            assert page.get_attribute("#completion-link", "href") == f"https://app.prolific.com/submissions/complete?cc={CODE}"
            if who == 1:
                page.screenshot(path=str(SCREENSHOTS / "contstim_experiment_end.png"))
            ctx.close()
    finally:
        served.stop(proc)
    assert not console_errors, console_errors
    conn = sqlite3.connect(db)
    assert sorted(r[0] for r in conn.execute("SELECT external_id FROM participants")) == ["prolific1", "prolific2"]
    conn.close()

    result = ingest_to_dataset(db, tmp_path / "datasets", "browser")
    assert result.participants["included"].all()
    assert (result.participants["catch_correct"] == 12).all()
    t = result.trials
    assert len(t) == 2 * N_TRIALS
    for row in t.itertuples(index=False):
        who = int(row.participant[-1])
        assert (row.sentence1, row.sentence2, row.rating) == clicks[(who, row.trial)]
    assert (t["reaction_time_ms"] > 0).all()


def test_real_pll_design_renders(browser, pll_design, tmp_path):
    exp = export_experiment(pll_design, tmp_path / "pll")
    proc, url = start_server(exp, tmp_path / "pll.sqlite")
    pairs = set(pll_design["pair_id"])
    try:
        ctx = browser.new_context(viewport={"width": 1280, "height": 720})
        page = ctx.new_page()
        page.set_default_timeout(20_000)
        page.goto(url)
        page.click("#proceed")
        for trial in range(1, 4):
            page.wait_for_selector(f'#trial[data-trial="{trial}"]:not([hidden])')
            assert page.inner_text("#progress-text") == f"{trial - 1} / 132"
            left, right = page.inner_text("#sentence-left"), page.inner_text("#sentence-right")
            assert pair_id(left, right) in pairs
            assert page.is_visible('#side-left button[data-rating="1"]') and page.is_visible('#side-right button[data-rating="6"]')
            page.click('#side-right button[data-rating="5"]')
        page.wait_for_selector('#trial[data-trial="4"]:not([hidden])')
        width = page.evaluate("document.getElementById('progress-fill').style.width")
        assert width == f"{100 * 3 / 132:.2f}%"
        ctx.close()
    finally:
        served.stop(proc)
