"""File-name-safe forms of model names, specs and revisions (the one slug rule of the package),
and the characters a name may not hold (:func:`name_problem`, :func:`check_name`).

A bottom-layer module: it imports nothing from the package, so every layer may use it.
"""
from __future__ import annotations

import re
import unicodedata

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str, max_length: int | None = None) -> str:
    """``text`` as a file name: every run of characters other than letters, digits, ``.``, ``-``
    and ``_`` becomes one ``_``, leading and trailing ``.``/``_`` are stripped, and an empty
    result is ``model``; cut to ``max_length`` characters when given.

    ``slug("hf-causal:gpt2") == "hf-causal_gpt2"``, ``slug("smollm2-135m") == "smollm2-135m"``.
    """
    text = _UNSAFE.sub("_", text).strip("._") or "model"
    return text if max_length is None else text[:max_length]


REFUSED_CATEGORIES: dict[str, str] = {
    "Cc": "control character",
    "Cf": "invisible format character",
    "Cs": "surrogate",
    "Co": "private-use character",
    "Zl": "line separator",
    "Zp": "paragraph separator",
}
"""Unicode general categories a model name may not contain, with what each is.  ``Cc``: NUL, tab,
newline, escape, ...; ``Cf``: the bidirectional controls (U+200E/U+200F, U+202A-U+202E,
U+2066-U+2069, U+061C), which reverse or reorder the text around them wherever the name is shown
(``gpt2\\u202e`` shows as another name on the leaderboard), and the zero-width characters (U+200B,
U+200D, U+2060, U+FEFF, ...), which make two names that look the same differ."""


def unsafe_characters(text: str) -> list[str]:
    """The distinct characters of ``text`` of a :data:`REFUSED_CATEGORIES` category, in order of
    appearance, each as ``U+202E RIGHT-TO-LEFT OVERRIDE`` (``U+0000 (control character)`` for
    a character without a Unicode name)."""
    found: list[str] = []
    for ch in dict.fromkeys(text):
        category = unicodedata.category(ch)
        if category in REFUSED_CATEGORIES:
            name = unicodedata.name(ch, "")
            found.append(f"U+{ord(ch):04X} {name}" if name else f"U+{ord(ch):04X} ({REFUSED_CATEGORIES[category]})")
    return found


def name_problem(text: str) -> str | None:
    """``contains U+202E RIGHT-TO-LEFT OVERRIDE`` (every refused character, see
    :func:`unsafe_characters`) when ``text`` may not be a name; None when it may."""
    found = unsafe_characters(text)
    return "contains " + ", ".join(found) if found else None


def check_name(text: str, what: str = "model name") -> str:
    """``text`` if it may be a name; ValueError naming ``what``, the text (escaped) and every
    refused character otherwise."""
    problem = name_problem(text)
    if problem is not None:
        raise ValueError(f"{what} {text!r} {problem}: a name may not hold control or invisible format characters "
                         "(they reorder, hide or break the text wherever the name is shown)")
    return text
