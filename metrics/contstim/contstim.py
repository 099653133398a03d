"""contstim: how well do a language model's sentence probabilities predict human choices
between controversial sentence pairs (Golan et al. 2023)?

A thin ``evaluate`` wrapper: every number is computed by
:func:`contstim_bench.analysis.evaluation.evaluate_log_ratios`, the same function behind
``contstim evaluate`` and the Python API.
"""
import datasets
import evaluate
import pandas as pd

from contstim_bench.analysis.evaluation import evaluate_log_ratios
from contstim_bench.analysis.metric_inputs import check_metric_inputs, metric_model_name
from contstim_bench.citations import GOLAN_2023


_CITATION = GOLAN_2023 + "\n"

_DESCRIPTION = """\
Human consistency of a language model's sentence probabilities on controversial sentence pairs
(Golan et al. 2023). Each input row is one participant's judgment of one sentence pair and the
model's log-probability ratio for that pair. For every condition (trial type, plus all trials)
the metric returns the binarised prediction accuracy and the signed-rank cosine similarity
(SRCS, Eq. 11) with their per-unit values (participant groups, or participants when there is a
single group), lower and upper noise ceilings, and a two-sided Wilcoxon signed-rank test across
units against the lower ceiling, plus, when reference models' log-ratios are given, the
head-to-head with each of them on the trials where the two disagree (Fig. S4) and like-for-like
comparisons of per-unit scores; Benjamini-Hochberg within the paper's families (model vs lower
ceiling; model vs model; head-to-head).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `float`): the model's log-ratio per trial,
        log p(sentence2) - log p(sentence1) in natural log (Eq. 7); positive = the model
        prefers sentence2. NaN or infinite values raise ValueError.
    references (`list` of `int`): the participant's rating, 1..6 (1 = strong preference for
        sentence1, 6 = strong preference for sentence2). A non-integer (3.5), non-numeric, NaN
        or out-of-range rating raises ValueError naming it; nothing is truncated.
    participant (`list` of `str`): participant id.
    group (`list` of `int`): participant group (participants of a group saw the same pairs);
        integers (a non-integer group raises ValueError naming it).
    pair_id (`list` of `str`): id of the unordered sentence pair (the same for every participant).
    sentence1 (`list` of `str`): the sentence shown first (left).
    sentence2 (`list` of `str`): the sentence shown second (right).
    trial_type (`list` of `str`): one of randomly_sampled_natural, natural_controversial,
        natural_vs_synthetic, synthetic_vs_synthetic, natural_vs_shuffled.
    sentence1_accept_model, sentence1_reject_model, sentence2_accept_model,
    sentence2_reject_model (`list` of `str` or None): the model each sentence was optimised to be
        accepted / rejected by (None, "" or "-" = none).
    model_name (`str`, optional): the evaluated model, by its spec or by the name `contstim
        evaluate` gives it (`precomputed:roberta` and `roberta` are the same model; a spec such as
        `smollm2-135m` becomes its canonical form `hf-causal:smollm2-135m`). A controversial
        condition evaluates the model on the trials that target this name, or on all of its
        trials when none does; a `precomputed:` name that no trial targets raises ValueError.
        Default "model".
    reference_predictions (`dict` of `str` to `list` of `float`, optional): per-trial log-ratios
        of reference models to compare with (each scored on its own selection; head-to-head on
        the same trials).
    unit (`str`, optional): "participant" or "group" (default: "group" when there is more than
        one group, else "participant").
    ties (`str`, optional): what a model tie (log-ratio exactly 0) scores in the accuracy:
        "half" (0.5, default), "miss" (0) or "hit" (1).
    conditions (`list` of `str`, optional): condition keys to compute (default: all that have
        trials): randomly_sampled_natural, natural_controversial, synthetic_vs_synthetic,
        natural_vs_synthetic (model as accept-target), natural_vs_synthetic_reject,
        natural_vs_shuffled, all.
Returns:
    `dict`: condition key -> {selection, unit, n_units, n_trials, n_pairs, accuracy,
    accuracy_stderr (standard error across units: sample SD / sqrt(n_units); None for one unit),
    accuracy_by_unit, accuracy_noise_ceiling {lower, upper, lower_by_unit, upper_by_unit},
    srcs, srcs_stderr, srcs_by_unit, srcs_noise_ceiling {...}, p_vs_lower_ceiling {accuracy, srcs},
    p_vs_lower_ceiling_uncorrected {...}, head_to_head {reference: {selection, n_pairs_selected,
    n_trials, n_pairs, share, share_by_unit, p, p_bh, better, significant}}, comparisons
    {reference: {basis, ...}}, bh_families {...}, rank {accuracy, srcs: {rank, among, tied, group,
    reason}} (the model's place among the references given, like for like)}.
Examples:
    Three participants of one group rate two synthetic pairs; the model prefers the sentence
    most of them chose:

    >>> import evaluate
    >>> import contstim_bench
    >>> contstim = evaluate.load(contstim_bench.metric_path())
    >>> rows = dict(
    ...     predictions=[2.0, -1.5, 2.0, -1.5, 2.0, -1.5],
    ...     references=[6, 2, 5, 1, 3, 4],
    ...     participant=["p1", "p1", "p2", "p2", "p3", "p3"],
    ...     group=[1, 1, 1, 1, 1, 1],
    ...     pair_id=["a", "b", "a", "b", "a", "b"],
    ...     sentence1=["I saw it.", "It was late.", "I saw it.", "It was late.", "I saw it.", "It was late."],
    ...     sentence2=["Saw I it.", "Late it was.", "Saw I it.", "Late it was.", "Saw I it.", "Late it was."],
    ...     trial_type=["synthetic_vs_synthetic"] * 6,
    ...     sentence1_accept_model=["m"] * 6,
    ...     sentence1_reject_model=["other"] * 6,
    ...     sentence2_accept_model=["other"] * 6,
    ...     sentence2_reject_model=["m"] * 6,
    ... )
    >>> out = contstim.compute(model_name="m", **rows)
    >>> sorted(out)
    ['all', 'synthetic_vs_synthetic']
    >>> res = out["synthetic_vs_synthetic"]
    >>> res["selection"], res["unit"], res["n_trials"]
    ('targeted', 'participant', 6)
    >>> round(res["accuracy"], 4), res["accuracy_by_unit"]
    (0.6667, {'p1': 1.0, 'p2': 1.0, 'p3': 0.0})
    >>> round(res["accuracy_stderr"], 4)  # across the 3 participants: SD 0.5774 / sqrt(3)
    0.3333
    >>> ceiling = res["accuracy_noise_ceiling"]
    >>> round(ceiling["lower"], 4), round(ceiling["upper"], 4)
    (0.3333, 0.6667)
    >>> round(res["srcs"], 4), round(res["srcs_noise_ceiling"]["lower"], 4)
    (0.3, -0.5)
"""

_NONE = {"", "-"}


def _target(values):
    return [None if v is None or v in _NONE else v for v in values]


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Contstim(evaluate.Metric):
    """Accuracy, signed-rank cosine similarity, noise ceilings and tests on controversial sentence pairs."""

    def _info(self):
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("float64"),
                    "references": datasets.Value("int64"),
                    "participant": datasets.Value("string"),
                    "group": datasets.Value("int64"),
                    "pair_id": datasets.Value("string"),
                    "sentence1": datasets.Value("string"),
                    "sentence2": datasets.Value("string"),
                    "trial_type": datasets.Value("string"),
                    "sentence1_accept_model": datasets.Value("string"),
                    "sentence1_reject_model": datasets.Value("string"),
                    "sentence2_accept_model": datasets.Value("string"),
                    "sentence2_reject_model": datasets.Value("string"),
                }
            ),
            homepage="https://github.com/dpmlab/contstimlang",
            codebase_urls=["https://github.com/dpmlab/contstimlang"],
            reference_urls=["https://doi.org/10.1038/s42256-023-00718-1"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Check the raw inputs (:func:`~contstim_bench.analysis.metric_inputs.check_metric_inputs`)
        before ``datasets`` casts them to the features' types, then add them."""
        features = {k: v for k, v in kwargs.items() if k in self._feature_names()}
        check_metric_inputs({"predictions": predictions, "references": references, **features})
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """One trial; checked like :meth:`add_batch`."""
        features = {k: [v] for k, v in kwargs.items() if k in self._feature_names()}
        check_metric_inputs({"predictions": [prediction], "references": [reference], **features})
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        participant,
        group,
        pair_id,
        sentence1,
        sentence2,
        trial_type,
        sentence1_accept_model,
        sentence1_reject_model,
        sentence2_accept_model,
        sentence2_reject_model,
        model_name="model",
        reference_predictions=None,
        unit=None,
        conditions=None,
        ties="half",
    ):
        trials = pd.DataFrame(
            {
                "participant": participant,
                "group": group,
                "pair_id": pair_id,
                "sentence1": sentence1,
                "sentence2": sentence2,
                "trial_type": trial_type,
                "sentence1_accept_model": _target(sentence1_accept_model),
                "sentence1_reject_model": _target(sentence1_reject_model),
                "sentence2_accept_model": _target(sentence2_accept_model),
                "sentence2_reject_model": _target(sentence2_reject_model),
                "rating": references,
            }
        )
        model_name = metric_model_name(
            model_name, [*sentence1_accept_model, *sentence1_reject_model, *sentence2_accept_model,
                         *sentence2_reject_model])
        return evaluate_log_ratios(
            trials,
            predictions,
            model_name,
            reference_log_ratios=reference_predictions,
            unit=unit,
            conditions=conditions,
            ties=ties,
        )
