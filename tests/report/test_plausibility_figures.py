"""The Kauf et al. (2024) figures (contstim_bench.report.plausibility_figures) from hand-made
items: what is drawn, a legend key for every mark, the Markdown tables and the folder writer."""
from __future__ import annotations

import json
import warnings

import pytest

from contstim_bench.report.plausibility_figures import (
    FIGURES,
    bars_figure,
    conditions_figure,
    table_markdown,
    tick_label,
    voice_figure,
    write_plausibility_report,
    yes_shares_figure,
)

BARS = {"id": "kauf2024-F5", "kind": "kauf2024_bars", "title": "Figure 5", "caption": "c", "data": [
    {"title": "EventsAdapt AA (unlikely)", "groups": ["LogProbs", "Sentence Judgment"], "chance": [0.5, 0.25],
     "human": {"n": 258, "hits": 247, "accuracy": 0.957, "se": 0.0126},
     "series": [{"label": "model A", "values": [0.8, None], "se": [0.02, None], "notes": [None, None]},
                {"label": "model B", "values": [0.7, None], "se": [0.03, None], "notes": [None, "no valid answer"]}]},
    {"title": "DTFit (AI, unlikely)", "groups": ["LogProbs"], "chance": [0.5],
     "human": {"n": 395, "hits": 391, "accuracy": 0.99, "se": 0.005},
     "series": [{"label": "model A", "values": [0.9], "se": [0.015], "notes": [None]}]},
]}
MEANS = {"no_context": {"Control": 0.9, "SemAnom": 0.2, "Critical": 0.3},
         "context": {"Control": 0.95, "SemAnom": 0.2, "Critical": 0.85}}
CONDITIONS = {"id": "kauf2024-F3", "kind": "kauf2024_conditions", "title": "Figure 3", "caption": "c", "data": [
    {"title": "Human", "ylabel": "share", "means": MEANS,
     "points": {p: {c: [v - 0.05, v + 0.05] for c, v in m.items()} for p, m in MEANS.items()}},
    {"title": "model A", "ylabel": "log p", "means": {p: {c: -v * 10 for c, v in m.items()} for p, m in MEANS.items()},
     "points": {p: {c: [-v * 10] for c, v in m.items()} for p, m in MEANS.items()}},
]}
VOICE = {"id": "kauf2024-F2", "kind": "kauf2024_voice", "title": "Figure 2", "caption": "c", "data": {
    "subset": "eventsadapt_aa", "voices": ["active", "passive"], "x": ["base", "instruct"],
    "lines": [{"label": "M / M-instruct", "points": {
        "base": {"active": {"accuracy": 0.8, "se": 0.03}, "passive": {"accuracy": 0.75, "se": 0.03}},
        "instruct": {"active": {"accuracy": 0.6, "se": 0.04}, "passive": {"accuracy": 0.74, "se": 0.03}}}}],
    "human": {"active": {"accuracy": 0.95, "se": 0.02}, "passive": {"accuracy": 0.96, "se": 0.02}}}}
TABLE = {"id": "kauf2024-T3", "kind": "table", "title": "Table 3", "caption": "mean (SE)", "data": {
    "columns": ["dataset", "method", "A"], "rows": [["AA", "LogProbs", "0.82 (.02)"], ["AA", "a|b", None]],
    "records": []}}


def _legend(fig) -> list[str]:
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def test_bars_figure_draws_every_value_and_keys_every_mark():
    fig = bars_figure(BARS)
    left, right = fig.axes[:2]
    bars = [b for ax in (left, right) for c in ax.containers if c.__class__.__name__ == "BarContainer" for b in c]
    assert sorted(round(b.get_height(), 3) for b in bars) == [0.7, 0.8, 0.9]
    assert [t.get_text() for t in left.texts] == ["no valid answer"]
    dotted = [ln for ln in left.lines if ln.get_linestyle() == ":"]
    assert sorted(ln.get_ydata()[0] for ln in dotted) == [0.25, 0.5]  # a chance line per group
    assert _legend(fig) == ["model A", "model B", "human accuracy (band: ± 1 SE)", "chance", "± 1 standard error"]
    assert [t.get_text() for t in left.get_xticklabels()] == ["LogProbs", "Sentence\nJudgment"]
    assert left.get_title() == "EventsAdapt AA (unlikely)"


def test_voice_figure():
    fig = voice_figure(VOICE)
    assert [ax.get_title() for ax in fig.axes] == ["active voice", "passive voice"]
    line = next(ln for ln in fig.axes[0].lines if ln.get_marker() == "o")
    assert list(line.get_ydata()) == [0.8, 0.6]
    assert _legend(fig) == ["M / M-instruct", "human accuracy", "± 1 standard error"]


def test_voice_figure_wraps_a_long_model_name():
    """A model named by its file (``kenlm:/a/long/path``) is one x position: its label is broken
    after ``/`` and ``:`` into lines of at most 14 characters, so that the two voices' labels do not
    run into each other and the layout fits (unwrapped, this label made matplotlib warn "Tight
    layout not applied")."""
    spec = "kenlm:/tmp/pytest-of-root/pytest-336/popen-gw0/kn0/models/trigram-kneser-ney.arpa"
    points = {spec: VOICE["data"]["lines"][0]["points"]["base"]}
    item = {**VOICE, "data": {**VOICE["data"], "x": [spec], "lines": [{"label": spec, "points": points}]}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = voice_figure(item)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["kenlm:/tmp/\npytest-of-\nroot/pytest-\n336/popen-gw0/\nkn0/models/\ntrigram-\nkneser-\nney.arpa"]
    assert tick_label("Sentence Judgment") == "Sentence\nJudgment"  # spaces as before
    assert tick_label("mistral-7b-instruct") == "mistral-7b-\ninstruct"  # and hyphens
    assert tick_label("kenlm:/models/a-very-long-file-name.arpa") == "kenlm:/models/\na-very-long-\nfile-name.arpa"
    assert tick_label("abcdefghijklmnopqrstuvwxyz") == "abcdefghijklmn\nopqrstuvwxyz"  # no break point


def test_condition_figures():
    fig = conditions_figure(CONDITIONS)
    human, model = fig.axes
    heights = [round(b.get_height(), 3) for c in human.containers for b in c]
    assert heights == [0.9, 0.2, 0.3, 0.95, 0.2, 0.85]  # no context, then with context
    assert len(human.collections) == 6 and len(model.collections) == 6  # the item dots per condition x perspective
    assert _legend(fig) == ["no context", "with context", "one item"]
    shares = yes_shares_figure({**CONDITIONS, "kind": "kauf2024_yes_shares",
                                "data": [{"title": p["title"], "means": p["means"]} for p in CONDITIONS["data"]]})
    assert _legend(shares) == ["no context", "with context"] and not shares.axes[0].collections
    assert set(FIGURES) == {"kauf2024_bars", "kauf2024_voice", "kauf2024_conditions", "kauf2024_yes_shares"}


def test_table_markdown_and_writer(tmp_path):
    assert table_markdown(TABLE) == ("| dataset | method | A |\n|---|---|---|\n| AA | LogProbs | 0.82 (.02) |\n"
                                     "| AA | a\\|b |  |\n")
    report = {"items": [BARS, TABLE], "skipped": {"kauf2024-F4": "why"}}
    paths = write_plausibility_report(report, tmp_path, formats=("png",))
    assert [p.name for p in paths] == ["kauf2024-F5.png", "kauf2024-T3.md", "kauf2024-report.json"]
    assert (tmp_path / "kauf2024-F5.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "kauf2024-T3.md").read_text().startswith("## Table 3\n\nmean (SE)\n\n| dataset")
    assert json.loads((tmp_path / "kauf2024-report.json").read_text())["skipped"] == {"kauf2024-F4": "why"}
    with pytest.raises(KeyError):
        write_plausibility_report({"items": [{**BARS, "kind": "nope"}]}, tmp_path)
