"""results.io.json_depth: how deep a JSON text nests, counted before it is parsed (so a file nested
100,000 levels deep is refused by name, not by a RecursionError): brackets inside strings, escaped
quotes and unterminated strings, against a character-by-character walk of the same rule."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from contstim_bench.results.io import json_depth

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"


def walk(text: str) -> int:
    """The rule, one character at a time: ``[``/``{`` open and ``]``/``}`` close outside strings;
    a string ends at an unescaped quote, or runs to the end of the text."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


@pytest.mark.parametrize("text, depth", [
    ('{"a": [1, {"b": []}]}', 4),
    ('{"x": "[[[[ {{{{"}', 1),                # brackets inside a string
    ('{"x": "a \\" [[["}', 1),                 # an escaped quote does not end the string
    ('{"x": "a \\\\", "y": [[1]]}', 3),        # an escaped backslash does not escape the quote
    ('["unterminated [[[[', 1),               # an unterminated string runs to the end
    ('["ends in a backslash \\', 1),
    ("[" * 1000 + "]" * 1000, 1000),
    ("", 0),
])
def test_depth_of_tricky_texts(text, depth):
    assert json_depth(text) == walk(text) == depth


def test_depth_equals_the_walk_on_random_texts_and_the_shipped_results():
    rng = random.Random(53)
    alphabet = '[]{}"\\ab,:\n'
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert json_depth(text) == walk(text), repr(text)
    for path in sorted(SHIPPED.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert json_depth(text) == walk(text) == 8, path.name
