"""Figures of a result file: one file per figure kind (PNG + SVG) with the right content, the
values drawn equal the result's, and clear errors."""
from __future__ import annotations

import copy
import re

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from contstim_bench import plotting  # noqa: E402
from contstim_bench.report import plots  # noqa: E402
from contstim_bench.api import evaluate_model  # noqa: E402
from contstim_bench.results import write_result  # noqa: E402


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    """``precomputed:roberta`` on pll (no model runs) and its file."""
    root = tmp_path_factory.mktemp("plots")
    datasets = root / "datasets"
    res = evaluate_model("precomputed:roberta", "pll", datasets_dir=datasets, log=lambda m: None)
    path = write_result(res, root / "roberta.json")
    return {"root": root, "datasets": datasets, "result": res, "path": path}


@pytest.fixture(scope="module")
def written(result):
    out = result["root"] / "figures"
    # a str path, as the leaderboard calls it
    paths = plotting.plot_result(str(result["path"]), str(out), datasets_dir=result["datasets"])
    return out, paths


def test_one_file_per_figure_kind(result, written):
    out, paths = written
    assert sorted(p.name for p in paths) == sorted(
        f"pll_{kind}.{fmt}" for kind in ("accuracy", "srcs", "scatter_electra") for fmt in ("png", "svg")
    )
    import matplotlib.image as mpimg

    for p in paths:
        assert p.parent == out and p.stat().st_size > 20_000, p
        if p.suffix == ".png":
            img = mpimg.imread(p)
            assert img.shape[0] > 500 and img.shape[1] > 1000
            colours = np.unique((img[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0)
            assert len(colours) > 50  # bars, dots, bands and text, not a blank canvas
            if "scatter" not in p.name:  # the evaluated model's bar is highlighted
                target = np.array([0xD9, 0x5F, 0x02])
                assert (np.abs((img[..., :3] * 255).astype(int) - target).sum(-1) < 6).sum() > 500


def _svg_texts(path) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", path.read_text(encoding="utf-8"))


def test_svg_labels_and_significance_stars(result, written):
    out, _ = written
    res = result["result"]
    for measure, label in (("accuracy", "prediction accuracy"), ("srcs", "signed-rank cosine similarity")):
        texts = _svg_texts(out / f"pll_{measure}.svg")
        assert texts.count(label) == 3  # one x label per condition
        assert any("synthetic vs synthetic" in t for t in texts) and any("all trials" in t for t in texts)
        for model in ("roberta", "electra_has_a_mouth", "bert_has_a_mouth"):
            assert texts.count(model) == 3
        below = sum(b["below_lower_ceiling"][measure]
                    for panel in res["panels"]["pll"].values() for b in panel["models"].values())
        assert texts.count("*") == below > 0
    scatter = _svg_texts(out / "pll_scatter_electra.svg")
    assert "120 pairs; the models agree on" in " ".join(scatter)
    assert any("roberta" in t for t in scatter) and any("electra" in t for t in scatter)


def test_bars_draw_the_result_values(result):
    res = result["result"]
    fig = plots.bars_figure(res, "pll", "accuracy")
    try:
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert len(axes) == 3
        for ax, (cond, panel) in zip(axes, res["panels"]["pll"].items()):
            labels = [t.get_text() for t in ax.get_yticklabels()]
            widths = [p.get_width() for p in ax.patches if p.get_height() == pytest.approx(0.62)]
            expected = {m: b["accuracy"] for m, b in panel["models"].items()}
            assert sorted(labels) == sorted(expected)
            assert widths == pytest.approx([expected[m] for m in labels], abs=1e-12), cond
            assert widths == sorted(widths)  # the best model on top
            bold = [t.get_text() for t in ax.get_yticklabels() if t.get_fontweight() == "bold"]
            assert bold == ["roberta"]
            n_dots = sum(len(c.get_offsets()) for c in ax.collections if len(c.get_offsets()) == 30)
            assert n_dots == 30 * len(labels)  # one dot per participant and model
    finally:
        plots._pyplot().close(fig)


def test_scatter_pairs_and_percentiles(result):
    from contstim_bench.analysis.percentile_scatter import percentiles
    from contstim_bench.benchmarks.model_report_contstim import best_reference

    assert percentiles(np.array([3.0, 1.0, 2.0, 2.0])) == pytest.approx([100.0, 25.0, 62.5, 62.5])
    res = result["result"]
    assert best_reference(res, "pll") == "electra"  # ties on accuracy (0.857) go to the higher SRCS
    fig, ref = plotting.scatter_figure(res, "pll", "bert_has_a_mouth", result["datasets"])
    try:
        assert ref == "bert_has_a_mouth"
        syn, shuffled = [ax for ax in fig.axes if ax.get_visible()]
        assert len(syn.lines) == 120 and len(shuffled.lines) == 12
        assert syn.get_xlabel().startswith("roberta") and syn.get_ylabel().startswith("bert_has_a_mouth")
        # roberta and its PLL read-out disagree on most synthetic pairs (they were built to)
        agree = int(re.search(r"agree on (\d+)/120", syn.get_title()).group(1))
        slopes = [np.diff(line.get_ydata())[0] * np.diff(line.get_xdata())[0] > 0 for line in syn.lines]
        assert agree == sum(slopes) < 60
        for line in syn.lines + shuffled.lines:
            assert 0 < min(line.get_xdata()) and max(line.get_xdata()) <= 100
    finally:
        plots._pyplot().close(fig)


def test_pair_votes(result):
    from contstim_bench.analysis.trials import pair_votes
    from contstim_bench.benchmarks.contstim import load_experiment

    trials, _ = load_experiment("pll", result["datasets"])
    pairs = pair_votes(trials)
    assert len(pairs) == 132
    assert all(sum(p["votes"].values()) == 30 for p in pairs.values())


def test_plot_errors(result, tmp_path):
    res = result["result"]
    with pytest.raises(ValueError, match="unknown reference model 'gpt2' for the pll experiment"):
        plotting.plot_scatter(res, "pll", tmp_path, reference="gpt2", datasets_dir=result["datasets"])
    with pytest.raises(ValueError, match="experiment 'main' is not in the result"):
        plots.plot_bars(res, "main", "accuracy", tmp_path)
    with pytest.raises(ValueError, match="unknown measure 'f1'"):
        plots.plot_bars(res, "pll", "f1", tmp_path)
    with pytest.raises(ValueError, match="unsupported figure format 'gif'"):
        plotting.plot_result(res, tmp_path, formats=("gif",))
    other = copy.deepcopy(res)
    other["benchmark"]["dataset_fingerprint"] = other["provenance"]["dataset_fingerprint"] = "f" * 64
    with pytest.raises(ValueError, match="is not the one the result was computed on"):
        plotting.plot_scatter(other, "pll", tmp_path, datasets_dir=result["datasets"])
    broken = copy.deepcopy(res)
    del broken["experiments"]["pll"]["all"]["srcs"]
    with pytest.raises(ValueError, match="result.experiments.pll.all.srcs: missing"):
        plotting.plot_result(broken, tmp_path)
    assert not list(tmp_path.iterdir())


def test_bars_draw_the_panels_and_compute_nothing(result, tmp_path):
    res = copy.deepcopy(result["result"])
    del res["panels"]
    with pytest.raises(ValueError, match="the result has no 'panels' section"):
        plots.bars_figure(res, "pll", "srcs")
    fig = plots.bars_figure(result["result"], "pll", "srcs")
    try:
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_yticklabels()]
        widths = [p.get_width() for p in ax.patches if p.get_height() == pytest.approx(0.62)]
        models = result["result"]["panels"]["pll"]["synthetic_vs_synthetic"]["models"]
        assert widths == pytest.approx([models[m]["srcs"] for m in labels], abs=1e-12)
    finally:
        plots._pyplot().close(fig)
