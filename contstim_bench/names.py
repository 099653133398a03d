"""File-name-safe forms of model names, specs and revisions (the one slug rule of the package).

A bottom-layer module: it imports nothing from the package, so every layer may use it.
"""
from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str, max_length: int | None = None) -> str:
    """``text`` as a file name: every run of characters other than letters, digits, ``.``, ``-``
    and ``_`` becomes one ``_``, leading and trailing ``.``/``_`` are stripped, and an empty
    result is ``model``; cut to ``max_length`` characters when given.

    ``slug("hf-causal:gpt2") == "hf-causal_gpt2"``, ``slug("smollm2-135m") == "smollm2-135m"``.
    """
    text = _UNSAFE.sub("_", text).strip("._") or "model"
    return text if max_length is None else text[:max_length]
