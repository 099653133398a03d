"""Statistics of Kauf et al. (2024) §3.4 and Tables 3-4 (contstim_bench.plausibility.statistics):
hand-computed values on small inputs, and Table 3 rebuilt from the authors' hit counts."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from contstim_bench.plausibility.statistics import (
    base_vs_instruct,
    TABLE4_MARKS,
    bonferroni,
    paired_ttest,
    se_from_counts,
    standard_error,
    summarize,
    versus_human,
)
from contstim_bench.significance import stars


def _hits(k: int, n: int) -> np.ndarray:
    return np.arange(n) < k


def test_standard_error_by_hand():
    # hits 1,1,0,1: mean .75, sample variance (3 * .0625 + .5625) / 3 = .25, SE sqrt(.25 / 4) = .25
    assert standard_error([True, True, False, True]) == pytest.approx(0.25)
    assert se_from_counts(3, 4) == pytest.approx(0.25)
    assert standard_error([1, 0]) == pytest.approx(0.5)  # sd sqrt(.5), / sqrt(2)
    assert standard_error([True]) is None and se_from_counts(1, 1) is None
    assert summarize([1, 1, 0, 1]) == {"n": 4, "hits": 3, "accuracy": 0.75, "se": pytest.approx(0.25)}
    with pytest.raises(ValueError, match="booleans"):
        standard_error([0.5, 1.0])
    with pytest.raises(ValueError, match="0 <= hits <= n"):
        se_from_counts(5, 4)


def test_table3_from_the_authors_counts():
    """Table 3 (Mistral, EventsAdapt AA): every "mean (SE)" cell from the hit counts of the authors'
    EventsAdapt-prompt-choice notebook (258 pairs; 516 presentations for Sentence Choice I and II)."""
    counts = {  # method: ((base hits, units), (instruct hits, units)), paper cell base, instruct
        "LogProbs": (((211, 258), (188, 258)), ("0.82 (.02)", "0.73 (.03)")),
        "Sentence Choice I": (((323, 516), (436, 516)), ("0.63 (.02)", "0.84 (.02)")),
        "Sentence Choice II": (((258, 516), (258, 516)), ("0.50 (.02)", "0.50 (.02)")),
        "Likert Scoring": (((119, 258), (157, 258)), ("0.46 (.03)", "0.61 (.03)")),
        "Sentence Judgment": (((35, 258), (118, 258)), ("0.14 (.02)", "0.46 (.03)")),
    }
    for method, (kn, cells) in counts.items():
        for (k, n), cell in zip(kn, cells):
            s = summarize(_hits(k, n))
            assert f"{s['accuracy']:.2f} ({s['se']:.2f})".replace("(0.", "(.") == cell, method
            assert s["se"] == pytest.approx(se_from_counts(k, n))
    # the notebook's own sem column (LogProb-analysis, cell 19): Mistral base AA, MPT base AI
    assert standard_error(_hits(211, 258)) == pytest.approx(0.024077, abs=5e-7)
    assert standard_error(_hits(239, 256)) == pytest.approx(0.015592, abs=5e-7)


def test_paired_ttest_by_hand():
    a = [1, 1, 0, 1, 0]
    b = [1, 0, 0, 0, 0]
    # differences 0,1,0,1,0: mean .4, sample variance (3 * .16 + 2 * .36) / 4 = .3
    t = 0.4 / math.sqrt(0.3 / 5)
    got = paired_ttest(a, b)
    assert got["t"] == pytest.approx(t) and got["t"] == pytest.approx(1.6329931618554523)
    assert got["p"] == pytest.approx(2 * stats.t.sf(t, 4))
    assert (got["n"], got["df"], got["mean_a"], got["mean_b"]) == (5, 4, 0.6, 0.2)
    assert got["mean_difference"] == pytest.approx(0.4) and got["defined"]
    swapped = paired_ttest(b, a)
    assert swapped["t"] == pytest.approx(-t) and swapped["p"] == pytest.approx(got["p"])
    same = paired_ttest(a, a)
    assert same["t"] is None and same["p"] is None and same["undefined_because"] == "the two hit vectors are identical"
    shifted = paired_ttest([0, 0, 0], [1, 1, 1])
    assert not shifted["defined"] and "same amount" in shifted["undefined_because"]
    with pytest.raises(ValueError, match="the two must score the same units"):
        paired_ttest([1, 0], [1, 0, 1])


def test_bonferroni_and_marks():
    assert bonferroni([0.01, None, 0.3, 0.02]) == [pytest.approx(0.03), None, pytest.approx(0.9), pytest.approx(0.06)]
    assert bonferroni([0.6, 0.5]) == [1.0, 1.0]
    assert bonferroni([]) == []
    with pytest.raises(ValueError, match="outside"):
        bonferroni([1.5])
    assert [stars(p, levels=TABLE4_MARKS) for p in (0.009, 0.01, 0.049, 0.05, None)] == ["**", "*", "*", "", ""]
    assert stars(0.0009, levels=((0.001, "***"), (0.01, "**"), (0.05, "*"))) == "***"


def test_versus_human_and_base_vs_instruct_by_hand():
    human = [1, 1, 1, 1, 0, 1]
    m1 = [1, 0, 1, 0, 0, 1]   # differences 0,-1,0,-1,0,0
    m2 = [1, 1, 0, 1, 1, 1]   # differences 0,0,-1,0,1,0
    tests = versus_human([m1, m2], [human, human])
    # m1: mean -1/3, variance (4 * (1/3)^2 + 2 * (2/3)^2) / 5 = 4/15
    t1 = (-1 / 3) / math.sqrt((4 / 15) / 6)
    p1 = 2 * stats.t.sf(abs(t1), 5)
    assert tests[0]["t"] == pytest.approx(t1) and tests[0]["p"] == pytest.approx(p1)
    assert tests[0]["p_bonferroni"] == pytest.approx(min(1.0, 2 * p1))
    # m2: differences sum to 0: t = 0, p = 1, Bonferroni 1
    assert tests[1]["t"] == pytest.approx(0.0) and tests[1]["p_bonferroni"] == pytest.approx(1.0)
    assert tests[1]["marks"] == ""
    base = [1] * 20
    instruct = [1] * 12 + [0] * 8   # base right on 8 more pairs: differences eight 1s, twelve 0s
    t = 0.4 / math.sqrt((8 * 0.36 + 12 * 0.16) / 19 / 20)
    got = base_vs_instruct(base, instruct)
    assert got["t"] == pytest.approx(t) and got["better"] == "base"
    assert got["p"] == pytest.approx(2 * stats.t.sf(t, 19)) and got["p"] < 0.01 and got["marks"] == "**"
    assert base_vs_instruct(instruct, instruct)["better"] is None
