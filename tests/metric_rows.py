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
