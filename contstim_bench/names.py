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


BLANK_LOOKING = frozenset([0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), 0x2800, 0x3164, 0xFFA0])
"""Code points outside those categories that show as nothing (the Hangul fillers, the combining
grapheme joiner, the Mongolian variation selectors, the Braille blank): ``gpt2`` followed by
U+3164 looks like ``gpt2``.  Spaces other than U+0020 (category Zs: no-break, ideographic, ...)
are refused too."""


def _refused(ch: str) -> str | None:
    """What ``ch`` is when a name may not hold it, else None."""
    category = unicodedata.category(ch)
    if category in REFUSED_CATEGORIES:
        return REFUSED_CATEGORIES[category]
    if ord(ch) in BLANK_LOOKING or (category == "Zs" and ch != " "):
        return "blank-looking character"
    return None


def unsafe_characters(text: str) -> list[str]:
    """The distinct characters of ``text`` of a :data:`REFUSED_CATEGORIES` category, or blank
    looking (:data:`BLANK_LOOKING`, spaces other than U+0020), in order of appearance, each as
    ``U+202E RIGHT-TO-LEFT OVERRIDE`` (``U+0000 (control character)`` for a character without a
    Unicode name)."""
    found: list[str] = []
    for ch in dict.fromkeys(text):
        what = _refused(ch)
        if what is not None:
            name = unicodedata.name(ch, "")
            found.append(f"U+{ord(ch):04X} {name}" if name else f"U+{ord(ch):04X} ({what})")
    return found


MAX_NAME_LENGTH = 100
"""Most characters a model name may have: every door that shows a name (the summary, the report's
figures, the leaderboard's tables and pages) then lays it out in bounded time and memory."""

MAX_TEXT_LENGTH = 500
"""Most characters of any other displayed string of a result: a model spec (a local path or a Hub
id with its options), its typed form."""

SHOWN_CHARACTERS = 60
"""How much of an over-long text an error message shows."""


def shown(text: str) -> str:
    """``text`` as an error message shows it: its repr (control and blank-looking characters
    escaped), cut to :data:`SHOWN_CHARACTERS` characters with the total length named."""
    out = repr(text[:SHOWN_CHARACTERS])  # escapes what is not printable; the blank-looking printable ones too:
    for c in {c for c in text[:SHOWN_CHARACTERS] if _refused(c) and c.isprintable()}:
        out = out.replace(c, f"\\u{ord(c):04x}")
    return out if len(text) <= SHOWN_CHARACTERS else f"{out[:-1]}...{out[-1]} ({len(text):,} characters)"


def name_problem(text: str, max_length: int = MAX_NAME_LENGTH) -> str | None:
    """Why ``text`` may not be a name, or None when it may: longer than ``max_length``
    characters, whitespace around it (``roberta `` would be listed as ``roberta``), or a refused
    character (``contains U+202E RIGHT-TO-LEFT OVERRIDE``, every one, see :func:`unsafe_characters`)."""
    if len(text) > max_length:
        return f"is {len(text):,} characters long, more than the {max_length} allowed"
    if text != text.strip():
        return "starts or ends with whitespace"
    found = unsafe_characters(text)
    return "contains " + ", ".join(found) if found else None


def check_name(text: str, what: str = "model name", max_length: int = MAX_NAME_LENGTH) -> str:
    """``text`` if it may be a name (:func:`name_problem`); ValueError naming ``what``, the text
    (escaped, cut: :func:`shown`) and the problem otherwise."""
    problem = name_problem(text, max_length)
    if problem is not None:
        raise ValueError(f"{what} {shown(text)} {problem}: a name is at most {max_length} characters, with no "
                         "surrounding whitespace and no control, invisible or blank-looking characters (they "
                         "reorder, hide or break the text wherever the name is shown)")
    return text


def name_key(text: str) -> str:
    """What two names are compared by: ``text`` with invisible and bidirectional characters removed,
    NFKC-normalised, case-folded, its whitespace collapsed and mapped to its confusable skeleton
    (Unicode TR39 prototypes, through the ``disarm`` library, with ``m`` -> ``rn`` as TR39 maps it
    and the digits 0/1 as O/l), so that ``roberta``, ``roberta ``, ``RoBERTa`` and ``rоberta`` (a
    Cyrillic о) have one key.  The key is for comparing, never for showing."""
    import disarm

    return disarm.skeleton_key(" ".join(text.split()), digit_policy="tr39").replace("m", "rn")


def lookalike(name: str, others) -> str | None:
    """The first of ``others`` that is not ``name`` but has its :func:`name_key`, or None."""
    key = name_key(name)
    return next((o for o in others if o != name and name_key(o) == key), None)
