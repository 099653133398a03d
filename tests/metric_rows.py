"""The metric's input columns for a trials frame and a model's log-probabilities (what a user
passes to ``evaluate.load(contstim_bench.metric_path()).compute``)."""
from __future__ import annotations

TARGETS = ("sentence1_accept_model", "sentence1_reject_model", "sentence2_accept_model", "sentence2_reject_model")


def metric_columns(trials, logprobs) -> dict[str, list]:
    """``predictions`` (log p(sentence2) - log p(sentence1), nats), ``references`` (ratings) and
    every other feature of the metric, one value per trial (a missing target is None)."""
    from contstim_bench.analysis.evaluation import log_ratios_from_logprobs

    return dict(
        predictions=log_ratios_from_logprobs(trials, logprobs).tolist(),
        references=trials["rating"].astype(int).tolist(),
        participant=trials["participant"].tolist(),
        group=trials["group"].astype(int).tolist(),
        pair_id=trials["pair_id"].tolist(),
        sentence1=trials["sentence1"].tolist(),
        sentence2=trials["sentence2"].tolist(),
        trial_type=trials["trial_type"].tolist(),
        **{col: [None if v is None or v != v else v for v in trials[col]] for col in TARGETS},
    )


def small_inputs() -> dict[str, list]:
    """Six hand-made trials of two pairs (three participants) in the metric's input columns."""
    return dict(
        predictions=[2.0, -1.5, 2.0, -1.5, 2.0, -1.5],
        references=[6, 2, 5, 1, 3, 4],
        participant=["p1", "p1", "p2", "p2", "p3", "p3"],
        group=[1] * 6,
        pair_id=["a", "b"] * 3,
        sentence1=["I saw it.", "It was late."] * 3,
        sentence2=["Saw I it.", "Late it was."] * 3,
        trial_type=["synthetic_vs_synthetic"] * 6,
        sentence1_accept_model=["m"] * 6,
        sentence1_reject_model=["-"] * 6,
        sentence2_accept_model=[""] * 6,
        sentence2_reject_model=["m"] * 6,
    )
