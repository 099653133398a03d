"""The ``evaluate`` metric validates its raw inputs like scikit-learn: every bad input is named
(column, position, value) before ``datasets`` casts it, and nothing is truncated (a rating of 3.5
is an error, never a 3)."""
from __future__ import annotations

import pandas as pd
import pytest

from contstim_bench.analysis.evaluation import evaluate_log_ratios
from metric_rows import small_inputs


def error_of(metric, **changes) -> str:
    with pytest.raises(ValueError) as err:
        metric.compute(model_name="m", **{**small_inputs(), **changes})
    return str(err.value)


def test_non_integer_rating_and_group_are_named_not_truncated(metric):
    good = metric.compute(model_name="m", **small_inputs())
    text = error_of(metric, references=[6, 2, 3.5, 1, 3, 4])
    assert "references[2] = 3.5" in text and "not an integer" in text
    text = error_of(metric, group=[1, 1, 1.5, 1.5, 1, 1])
    assert "group[2] = 1.5, group[3] = 1.5" in text and "not an integer" in text
    assert good["all"]["n_trials"] == 6  # the valid inputs still compute


@pytest.mark.parametrize("value, why", [("a", "not a number"), ("5", "not a number"), (float("nan"), "not finite"),
                                        (None, "missing"), (True, "not a number"), (7, "outside 1..6")])
def test_bad_rating_is_named(metric, value, why):
    refs = [6, 2, 5, 1, 3, 4]
    refs[4] = value
    text = error_of(metric, references=refs)
    assert f"references[4] = {value!r}" in text and why in text


def test_every_problem_is_named_at_once(metric):
    text = error_of(metric, predictions=[1.0, "x", float("inf"), 1.0, 1.0, 1.0], references=[6, 2, 5, 1, 3.25, 0],
                    group=["one"] * 6)
    for part in ("predictions[1] = 'x'", "predictions[2] = inf", "references[4] = 3.25", "references[5] = 0",
                 "group[0] = 'one'"):
        assert part in text


def test_mismatched_lengths_name_every_column(metric):
    text = error_of(metric, references=[6, 2, 5], participant=["p1"] * 7)
    assert "predictions has 6 values" in text and "references has 3" in text and "participant has 7" in text


def test_library_entry_refuses_a_fractional_group_too():
    rows = small_inputs()
    frame = pd.DataFrame({k: [None if x in ("", "-") else x for x in v] for k, v in rows.items()
                          if k not in ("predictions", "references")})
    frame["rating"] = rows["references"]
    frame["group"] = [2.5] * 6
    with pytest.raises(ValueError, match=r"row 0 .*group 2.5 is not an integer"):
        evaluate_log_ratios(frame, rows["predictions"], "m")
