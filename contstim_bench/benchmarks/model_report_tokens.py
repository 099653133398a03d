"""Table S2 of Golan et al. (2023), the token-count control, on the page of a contstim result
(``contstim report RESULT``): does the model's choice follow which sentence has more of its own
tokens, on the tested synthetic pairs of each experiment the result covers?

The model's tokens are counted by its own tokenizer: the scorer the result's spec builds, loaded
by the door that asks for the page (``load_model``: ``contstim report`` passes the driver's
:func:`contstim_bench.driver.load_model`, as every door loads a model; its weights are loaded
too, once), or, for a ``precomputed:`` reference model, the Hugging Face tokenizer the paper's
code counted with when it is in the local cache.  A model without word
pieces (n-grams, RNNs) or whose tokenizer cannot be had here gets the reason instead of the table.
"""
from __future__ import annotations

import os

from collections.abc import Callable

from ..scoring.spec import ModelSpec
from ..study import is_paper_experiment
from .contstim_golan import TokenCounter, reference_token_counters, result_token_counts, scorer_token_counter
from .model_report_contstim import dataset_problem
from .report_items import unavailable


def model_token_counter(result: dict, load_model: Callable[[str], object] | None = None
                        ) -> tuple[TokenCounter | None, str]:
    """``(counter, why)``: the result's model's token counter, or None and why there is none.
    ``load_model``: spec -> scorer, the door's loader (None: only a ``precomputed:`` model's
    tokenizer can be had)."""
    spec = result["model"]["spec"]
    name = result["model"]["name"]
    try:
        parsed = ModelSpec.parse(spec)
    except ValueError as exc:
        return None, f"the result's spec is not one this version reads ({str(exc)[:200]})"
    if parsed.family == "precomputed":
        reference = parsed.target
        counters, missing = reference_token_counters([reference])
        if reference in counters:
            return counters[reference], ""
        return None, missing.get(reference, f"{name} is a word-level model: it has no word pieces to count")
    if load_model is None:
        return None, "no model loader was given (`contstim report` loads the model to count its tokens)"
    try:
        scorer = load_model(spec)
    except (OSError, ValueError, ImportError, RuntimeError) as exc:
        return None, f"the model's tokenizer cannot be loaded here ({str(exc).splitlines()[0][:200]})"
    counter = scorer_token_counter(scorer)
    if counter is None:
        return None, f"{name} has no word pieces (a word-level model)"
    try:
        counter(["A sentence."])  # a backend that cannot count its tokens here says why (a served model)
    except (OSError, ValueError, ImportError, RuntimeError) as exc:
        return None, f"the model's tokens cannot be counted here ({str(exc).splitlines()[0][:200]})"
    return counter, ""


def token_count_items(result: dict, datasets_dir: str | os.PathLike | None = None, seed: int = 0,
                      load_model: Callable[[str], object] | None = None) -> list[dict]:
    """Table S2 of the result's model per experiment of the paper (``{exp}_TS2``), or why not
    (``load_model``: :func:`model_token_counter`)."""
    title = "Table S2: token-count control, {name} ({exp} experiment)"
    name = result["model"]["name"]
    experiments, out = [], []
    for exp in result.get("experiments", {}):
        problem = dataset_problem(result, exp, datasets_dir) if is_paper_experiment(exp) else None
        if problem is not None:  # its pairs are the dataset's: only the one the result was computed on
            out.append(unavailable(f"{exp}_TS2", title.format(name=name, exp=exp), problem, f"{exp} experiment"))
        elif is_paper_experiment(exp):
            experiments.append(exp)
    if not experiments:
        return out
    counter, why = model_token_counter(result, load_model)
    if counter is None:
        return out + [unavailable(f"{exp}_TS2", title.format(name=name, exp=exp), why, f"{exp} experiment")
                      for exp in experiments]
    made, skipped = result_token_counts({**result, "experiments": {e: result["experiments"][e] for e in experiments}},
                                        counter, datasets_dir)
    items = out + [{**item, "id": f"{item['data']['experiment']}_TS2",
                    "section": f"{item['data']['experiment']} experiment"} for item in made]
    items += [unavailable(f"{key.split('/')[1]}_TS2", title.format(name=name, exp=key.split("/")[1]), reason,
                          f"{key.split('/')[1]} experiment") for key, reason in skipped.items()]
    return items
