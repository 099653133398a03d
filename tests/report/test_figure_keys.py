"""Every figure kind of the report layer has a key for each mark it draws: the legend entries (and
colour-bar labels) of each kind, drawn from small hand-made items, are exactly the expected ones;
and the item registry (one registration per kind) with its errors."""
from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from contstim_bench.report import items as registry  # noqa: E402
from contstim_bench.report.figures import Mark, add_key, key_labels, pyplot  # noqa: E402
from contstim_bench.report.pages import render_item  # noqa: E402
from contstim_bench.report.paper import FEATURE_MARKS  # noqa: E402

UNITS = ("u1", "u2", "u3")


def block(mean: float, lower: float, upper: float, p: float, measure: str = "accuracy") -> dict:
    """A model block of a panel: three units around ``mean``."""
    other = "srcs" if measure == "accuracy" else "accuracy"
    by_unit = dict(zip(UNITS, (mean - 0.1, mean, mean + 0.1)))
    return {"selection": "all", "unit": "participant", "n_units": 3, "n_trials": 30, "n_pairs": 10,
            measure: mean, f"{measure}_by_unit": by_unit,
            f"{measure}_noise_ceiling": {"lower": lower, "upper": upper},
            other: 0.0, f"{other}_by_unit": dict.fromkeys(UNITS, 0.0),
            f"{other}_noise_ceiling": {"lower": 0.0, "upper": 0.0},
            "p_vs_lower_ceiling": {measure: p, other: 1.0}}


def labels_of(kind: str, data: dict, title: str = "t") -> list[str]:
    fig = registry.kinds()[kind].show({"id": "x", "kind": kind, "title": title, "caption": "", "data": data})
    try:
        return key_labels(fig)
    finally:
        pyplot().close(fig)


def test_bars_key_has_ceiling_star_and_triangles():
    panels = {"all": {"models": {"mine": block(0.6, 0.8, 0.9, 0.001), "ref": block(0.7, 0.8, 0.9, 0.2)}}}
    entries = {"all": {"unit": "participant", "n_units": 3, "selection": "all", "n_trials": 30, "comparisons": {},
                       "head_to_head": {"ref": {"better": "ref", "significant": True}}}}
    got = labels_of("result_bars", {"panels": panels, "entries": entries, "model": "mine", "experiment": "pll",
                                    "measure": "accuracy"})
    assert got == ["mine: mean over 3 participants", "reference model: mean over 3 participants", "a single participant",
                   "noise ceiling (lower..upper bound)", "chance (0.5)", "below the lower noise ceiling (q < .05)",
                   "mine significantly better than that model", "mine significantly worse than that model"]


def test_panel_key_s8b_has_ceiling_and_star():
    """Fig. S6/S8's panel (today's S8b had no key for the grey bars or the *)."""
    models = {"bert": block(0.6, 0.7, 0.75, 0.01, "srcs"), "bert_has_a_mouth": block(-0.5, 0.7, 0.75, 0.01, "srcs")}
    contrast = {"model1": "bert", "model2": "bert_has_a_mouth", "srcs_delta": 1.1, "srcs_p_bh": 1e-6,
                "srcs_significant": True}
    got = labels_of("panel", {"condition": "synthetic_vs_synthetic", "measure": "srcs",
                              "panel": {"models": models, "contrasts": [contrast]}})
    assert got == ["model: mean over 3 participants", "a single participant", "noise ceiling (lower..upper bound)",
                   "zero (no relation)", "below the lower noise ceiling (q < .05)"]


def comparison() -> dict:
    """Three models: a beats b (0.8), b loses to c (0.3), a and c never disagree."""
    shares = {("a", "b"): 0.8, ("b", "a"): 0.2, ("a", "c"): None, ("c", "a"): None, ("b", "c"): 0.3, ("c", "b"): 0.7}
    h2h, agree = {m: {} for m in "abc"}, {m: {} for m in "abc"}
    for (x, y), s in shares.items():
        h2h[x][y] = {"share": s, "share_pooled": s, "p_bh": None if s is None else 0.001, "n_pairs": 4}
        agree[x][y] = {"share": 0.5, "n_pairs": 10}
    return {"experiment": "pll", "conditions": {"synthetic_vs_synthetic": {
        "head_to_head": h2h, "agreement": agree, "unit": "participant", "bh_family_size": 2, "n_pairs": 10}}}


def test_matrix_keys():
    data = {"comparison": comparison(), "condition": "synthetic_vs_synthetic", "highlight": "b"}
    assert labels_of("head_to_head", data) == [
        "* q < .05, ** q < .01, *** q < .001: model 1 differs from 0.5",
        "= the two models never disagree (not separable on this data)", "human choices aligned with model 1"]
    assert labels_of("agreement", data) == ["share of pairs ranked the same way"]
    matrix = {a: {r: {"share": None if (a, r) == ("a", "b") else 0.4, "n_trials": 5} for r in "ab"} for a in "ab"}
    assert labels_of("accept_reject", {"models": ["a", "b"], "matrix": matrix}) == [
        "cell: share aligned with m_accept (number of trials), colour scale at right",
        "no trials of this accept/reject pair", "human choices aligned with m_accept"]


def test_features_and_scatter_keys():
    values = {"human_preferred": [1.0, 2.0], "human_rejected": [0.5, 1.5], "model_preferred": [1.0, 1.5],
              "model_rejected": [0.5, 2.0], "pair_id": ["p1", "p2"]}
    got = labels_of("features", {"label": "GloVe", "tests": {"m": {"values": values, "p_bh": 0.01, "n_pairs": 2}}})
    assert got == [m.label for m in FEATURE_MARKS]
    assert "panel outlined: the model's preference differs from people's (q < .05)" in got
    pairs = {"p1": {"a": "x y", "b": "y x", "trial_type": "synthetic_vs_synthetic", "votes": {"x y": 2, "y x": 1}},
             "p2": {"a": "u v", "b": "v u", "trial_type": "synthetic_vs_synthetic", "votes": {"u v": 1, "v u": 1}}}
    lp = {"x y": -1.0, "y x": -2.0, "u v": -3.0, "v u": -2.5}
    from contstim_bench.analysis.percentile_scatter import scatter_points

    points = scatter_points(pairs, lp, {k: -v for k, v in lp.items()})
    # by hand: percentiles among the 4 sentences; the reference reverses the model's order, so no pair agrees
    assert points == {"n_sentences": 4, "types": {"synthetic_vs_synthetic": {"n_agree": 0, "pairs": [
        {"a": [100.0, 25.0], "b": [75.0, 50.0], "congruent": False, "chosen": "a"},
        {"a": [25.0, 100.0], "b": [50.0, 75.0], "congruent": False, "chosen": None}]}}}
    got = labels_of("scatter", {"model": "m", "reference": "r", "experiment": "pll", "points": points})
    assert got == ["sentence most participants chose", "the other sentence of the pair", "participants split evenly",
                   "pair the two models order the same way", "pair the two models order differently"]


def test_kauf_figure_keys():
    bars = [{"label": "active", "value": 0.9, "human": 1.0, "n": 5}, {"label": "passive", "value": None,
                                                                      "human": 0.95, "n": 5}]
    got = labels_of("accuracy_bars", {"groups": [{"label": "DTFit", "bars": bars}], "chance": 0.25, "model": "m"})
    assert got == ["m: active", "m: passive", "human accuracy on the same items", "chance (0.25)"]
    means = {"no_context": {"Control": -3.0, "SemAnom": -6.0, "Critical": -6.5},
             "context": {"Control": -2.0, "SemAnom": -6.0, "Critical": -3.0}}
    values = {p: {c: [v - 0.5, v + 0.5] for c, v in m.items()} for p, m in means.items()}
    got = labels_of("condition_bars", {"conditions": ["Control", "SemAnom", "Critical"],
                                       "perspectives": [["no_context", "no context"], ["context", "in context"]],
                                       "panels": [{"title": "m", "ylabel": "log p", "means": means, "values": values}]})
    assert got == ["mean, no context", "mean, in context", "a single item"]


def test_synthesis_key_names_every_mark():
    """Fig. 2: the natural sentences, the start sentence, each search path and each synthetic sentence."""
    path = {"percentile": [[50.0, 50.0], [60.0, 20.0]], "logprob": [[-20.0, -21.0], [-19.0, -30.0]]}
    data = {"models": ["tri", "bi"], "natural": {"percentile": [[10.0, 20.0], [30.0, 40.0]],
                                                  "logprob": [[-25.0, -26.0], [-22.0, -24.0]]},
            "triplet": {"N": "a b c", "S1": "a x c", "S2": "a b y", "path_S1": path, "path_S2": path}}
    got = labels_of("synthesis", data)
    assert got == ["natural sentences (start sentences of the run)",
                   "search path to S1 (one dot per word replacement)", "S1: keeps tri, lowers bi",
                   "search path to S2 (one dot per word replacement)", "S2: keeps bi, lowers tri", "start sentence N"]


def test_dominance_key_and_circles():
    """Figs. 1/3/4 dominance circles: a filled circle where the row model dominates, open where compared."""
    from contstim_bench.analysis.dominance import dominance

    units = ("u1", "u2", "u3", "u4", "u5", "u6")
    models = {m: {"selection": "all", "accuracy_by_unit": dict(zip(units, v))}
              for m, v in (("A", [0.9] * 6), ("B", [0.5, 0.6, 0.4, 0.7, 0.5, 0.6]), ("C", [0.49, 0.62, 0.37, 0.74, 0.45, 0.66]))}
    item = {"id": "x", "kind": "dominance", "title": "t", "caption": "",
            "data": {"measure": "accuracy", "conditions": {"all": dominance(models, "accuracy")}}}
    fig = registry.kinds()["dominance"].show(item)
    try:
        assert key_labels(fig) == ["row model significantly better than the column model (q < .05)",
                                   "compared, no significant difference"]
        filled, open_ = fig.axes[0].collections
        # rows (y) better than columns (x): A (row 0) over B (column 1) and C (column 2)
        assert sorted(map(tuple, filled.get_offsets().tolist())) == [(1.0, 0.0), (2.0, 0.0)]
        assert sorted(map(tuple, open_.get_offsets().tolist())) == [(1.0, 2.0), (2.0, 1.0)]
    finally:
        pyplot().close(fig)


def test_every_figure_kind_is_tested_here():
    """A new figure kind needs its key checked in this module."""
    tested = {"result_bars", "panel", "head_to_head", "agreement", "accept_reject", "features", "scatter",
              "accuracy_bars", "condition_bars", "synthesis", "dominance",
              "pll_length", "pll_frequency", "pll_causal", "pll_inflation_sentence", "pll_inflation_positions",
              # the five above: tests/benchmarks/test_kauf_ivanova_bench.py
              "kauf2024_bars", "kauf2024_voice", "kauf2024_conditions",  # tests/report/test_plausibility_figures.py
              "kauf2024_yes_shares"}
    figures = {k for k, v in registry.kinds().items() if v.shape == "figure"}
    assert figures == tested


def test_add_key_places_the_key_under_the_axes():
    fig, ax = pyplot().subplots()
    ax.plot([0, 1], [0, 1])
    legend = add_key(fig, [Mark("a line", "line"), Mark("a star", "symbol", marker="*")], "a note")
    renderer = fig.canvas.get_renderer()
    assert legend.get_window_extent(renderer).y1 <= ax.get_tightbbox(renderer).y0 + 1
    assert [t.get_text() for t in fig.texts] == ["a note"]
    with pytest.raises(ValueError, match="unknown key mark kind 'blob'"):
        add_key(fig, [Mark("x", "blob")])
    pyplot().close(fig)


def test_one_registration_adds_a_kind():
    @registry.table_kind("test_only_counts", digits=1)
    def rows(item):
        return [{"model": m, "n": n} for m, n in item["data"]["counts"].items()]

    html = render_item({"id": "c", "kind": "test_only_counts", "title": "Counts", "caption": "How many.",
                        "data": {"counts": {"gpt2": 2.25, "bert": 3}}, "section": "s"})
    assert '<section id="c"><h3>Counts</h3><p class="caption">How many.</p>' in html
    assert "<td class=\"short\">gpt2</td><td class=\"num\">2.2</td>" in html and "<td class=\"num\">3</td>" in html
    with pytest.raises(ValueError, match="'test_only_counts' is already registered"):
        registry.table_kind("test_only_counts")(lambda item: [])
    with pytest.raises(ValueError, match="has kind 'nope', which nothing shows"):
        render_item({"id": "n", "kind": "nope", "title": "", "caption": "", "data": {}, "section": "s"})
    with pytest.raises(ValueError, match="lacks caption, data"):
        render_item({"id": "n", "kind": "rows", "title": ""})
    unavailable = render_item({"id": "u", "kind": None, "title": "T", "caption": "", "data": None, "section": "s",
                               "unavailable": "no such trials"})
    assert '<p class="na"><b>Not available:</b> no such trials</p>' in unavailable
