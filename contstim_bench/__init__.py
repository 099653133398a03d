"""contstim-bench: how well do a language model's sentence probabilities predict which of two
sentences people judge more likely?

Public API (lazy, so ``import contstim_bench`` stays light):

- :func:`metric_path` -- the folder of the ``evaluate`` metric module, for ``evaluate.load``;
- :func:`evaluate_model` -- evaluate a model end to end (what ``contstim evaluate`` runs):
  scores, noise ceilings, comparisons with the reference models, result file and figures;
- :func:`compare_models` -- every given model against every other on the same trials (what
  ``contstim compare`` runs): head-to-head and agreement matrices, tables and figures.
- :func:`score_sentences` -- natural-log probabilities of any sentences under a model spec, with
  the scorer, start token, batching and score cache of ``contstim evaluate``.
"""
from __future__ import annotations

from pathlib import Path

from ._version import __version__
from .provenance import repo_root

__all__ = ["__version__", "compare_models", "evaluate_model", "metric_path", "repo_root", "score_sentences"]


def __getattr__(name: str):
    if name in ("evaluate_model", "compare_models", "score_sentences"):  # lazy: importing the package stays light
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def metric_path() -> str:
    """Absolute path of the ``contstim`` evaluate module (``metrics/contstim``).

    >>> import evaluate, contstim_bench
    >>> metric = evaluate.load(contstim_bench.metric_path())  # doctest: +SKIP
    """
    root = repo_root()
    if root is not None and (root / "metrics" / "contstim" / "contstim.py").exists():
        return str(root / "metrics" / "contstim")
    bundled = Path(__file__).resolve().parent / "metric_module" / "contstim"
    if (bundled / "contstim.py").exists():
        return str(bundled)
    raise FileNotFoundError(
        "the contstim evaluate module was not found next to this package "
        f"(looked in {root and root / 'metrics' / 'contstim'} and {bundled})"
    )
