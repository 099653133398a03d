"""The lm-eval ``--model_args`` that score sentences as the package's ``hf-causal`` family does:
:func:`hf_model_args` (``contstim lm-eval model-args``).

``hf-causal`` scores ``log p(w_1 .. w_n) = sum_i log p(w_i | <start>, w_1 .. w_{i-1})`` in nats,
the first word included, conditioned on the model's start token (the token a packaged model was
trained with, else the tokenizer's BOS, else its EOS), with float32 weights and a float64
log-softmax.  lm-eval's ``hf`` backend does the same for an empty context when its prefix token
is that start token: ``pretrained=<folder>,prefix_token_id=<start id>,dtype=float32,
softmax_dtype=float64``.
"""
from __future__ import annotations

from ..driver import RunOptions, load_model
from ..scoring.protocols import StartTokenModel


def hf_model_args(model: str | None = None, dtype: str | None = None) -> str:
    """lm-eval ``hf`` model arguments for ``model`` (a spec of the ``hf-causal`` family or a
    packaged model such as ``smollm2-135m``; None: the default model).  ValueError for a model of
    another family, and for a folder whose path holds a comma (lm-eval splits its arguments on
    commas)."""
    scorer = load_model(model, RunOptions(cache=False, progress=False, dtype=dtype))
    if not isinstance(scorer, StartTokenModel):
        raise ValueError(f"{scorer.spec}: lm-eval's hf backend scores like the package only for hf-causal models "
                         "(and the packaged smollm2-135m, gemma3-270m)")
    folder = str(scorer.folder)
    if "," in folder:
        raise ValueError(f"the model folder {folder} holds a comma, which lm-eval's --model_args cannot carry: "
                         "move or link it to a path without one")
    return (f"pretrained={folder},prefix_token_id={scorer.start_id},dtype={dtype or 'float32'},"
            "softmax_dtype=float64")
