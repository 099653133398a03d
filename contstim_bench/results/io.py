"""Reading and writing result files.

Reading is safe for files from anyone: at most :data:`MAX_BYTES`, UTF-8, plain JSON (no pickle,
no eval), no duplicate keys, nesting at most :data:`MAX_DEPTH` deep (a deeper file would exhaust
Python's recursion in the parser and everything that walks the tree), integers at most
:data:`MAX_INT` in size (a longer literal would hit Python's int-size limit, or make every later
``float()`` overflow).  Every failure to read is a :class:`ValidationError` naming the source.
"""
from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from ..names import slug
from .schema import validate_result

MAX_BYTES = 50 * 1024 * 1024
"""Largest accepted result file (a result with the log-probabilities of both experiments is ~1 MB)."""
MAX_DEPTH = 64
"""Deepest accepted nesting of JSON objects and arrays (a result nests about 8 deep)."""
MAX_INT = int(sys.float_info.max)
"""Largest accepted magnitude of a JSON integer (that of the largest float, about 1.8e308, 309
digits): every number a result or a request holds is a float quantity, a count or an id, so a
larger integer is no valid value of any field."""
_MAX_INT_DIGITS = len(str(MAX_INT))


class ValidationError(ValueError):
    """A result file is invalid; ``problems`` lists every reason (the message joins them)."""

    def __init__(self, source: str, problems: Sequence[str]):
        self.source = source
        self.problems = list(problems)
        super().__init__(f"{source}: " + "; ".join(self.problems))


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.S)
"""A JSON string literal, escapes included; an unterminated one runs to the end of the text."""
_BRACKETS = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """Deepest nesting of ``[``/``{`` in JSON ``text`` (brackets inside strings do not count; an
    unterminated string runs to the end).  The strings are cut out by a regular expression and
    only the brackets left are walked: a 200 KB result in about 2.5 ms, not 10 ms character by
    character."""
    depth = deepest = 0
    for ch in _BRACKETS.findall(_JSON_STRING.sub("", text)):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _int_literal(literal: str, source: str) -> int:
    """The value of a JSON integer ``literal``, or ValidationError when it is beyond
    :data:`MAX_INT`.  The length is checked before converting, so no literal reaches Python's
    int-size limit (4,300 digits by default) nor costs quadratic time."""
    digits = len(literal) - literal.startswith("-")
    if digits <= _MAX_INT_DIGITS:
        value = int(literal)
        if abs(value) <= MAX_INT:
            return value
    shown = literal if len(literal) <= 24 else f"{literal[:12]}...{literal[-6:]}"
    raise ValidationError(source, [f"integer {shown} has {digits:,} digits: larger than any number a field can hold "
                                   f"(at most {MAX_INT:.1e}, the float range)"])


def parse_json(text: str | bytes, source: str = "<submission>", *, max_bytes: int = MAX_BYTES,
               max_depth: int = MAX_DEPTH) -> dict:
    """Parse JSON from anyone: pure JSON, an object at the top, no duplicate keys, at most
    ``max_bytes`` (bytes, or characters of a str) and ``max_depth`` levels of nesting (checked
    before parsing, so no input can exhaust the parser's recursion).  The one reader of untrusted
    JSON: result files, leaderboard submissions and the experiment server's request bodies.

    Numbers: an integer beyond :data:`MAX_INT` (e.g. 5,000 digits) is refused here, since no field
    holds such a number.  NaN/Infinity literals are kept as floats, and so is a float literal
    beyond the float range (``1e999999`` reads as ``inf``, ``1e-999999`` as ``0.0``), so the field
    or sentence a non-finite value belongs to is named by the checks that follow.

    Every failure is a ValidationError naming ``source`` and the problem (with line and column
    for malformed JSON); no input makes another exception escape.
    """
    if isinstance(text, bytes):
        if len(text) > max_bytes:
            raise ValidationError(source, [f"file is {len(text):,} bytes, more than the {max_bytes:,} accepted"])
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationError(source, [f"not UTF-8 text: {exc}"]) from None
    if not isinstance(text, str):
        raise ValidationError(source, [f"expected JSON text, got {type(text).__name__}"])
    if len(text) > max_bytes:
        raise ValidationError(source, [f"text is {len(text):,} characters, more than the {max_bytes:,} accepted"])
    depth = json_depth(text)
    if depth > max_depth:
        raise ValidationError(source, [f"JSON nested {depth} levels deep, more than the {max_depth} accepted"])
    duplicates: list[str] = []

    def pairs(items):
        obj = {}
        for k, v in items:
            if k in obj:
                duplicates.append(k)
            obj[k] = v
        return obj

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_int=lambda literal: _int_literal(literal, source))
    except json.JSONDecodeError as exc:
        raise ValidationError(source, [f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from None
    except ValidationError:
        raise
    except RecursionError:  # pragma: no cover - json_depth bounds the nesting first
        raise ValidationError(source, ["JSON nested too deeply to parse"]) from None
    except (ValueError, ArithmeticError) as exc:  # pragma: no cover - no known input gets here
        raise ValidationError(source, [f"JSON could not be read: {type(exc).__name__}: {exc}"]) from None
    if duplicates:
        raise ValidationError(source, [f"JSON object has duplicate keys: {', '.join(sorted(set(duplicates))[:5])}"])
    if not isinstance(data, dict):
        raise ValidationError(source, [f"top level must be a JSON object, got {type(data).__name__}"])
    return data


def load_file(path: str | os.PathLike) -> dict:
    """Read and parse one result file, unvalidated (FileNotFoundError / ValidationError name it)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"result file {path} does not exist")
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise ValidationError(str(path), [f"file is {size:,} bytes, more than the {MAX_BYTES:,} accepted"])
    return parse_json(path.read_bytes(), str(path))


def check_output_file(path: str | os.PathLike, flag: str = "--output") -> Path:
    """``path`` if a file can be written there, checked before any work is done: ValueError when
    it is an existing folder, or when the nearest existing parent is a file (naming it and the
    flag)."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{flag} {path} is a folder; give a file name, e.g. {path / 'result.json'}")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise ValueError(f"{flag} {path}: {parent} is a file, so no file can be written under it")
    return path


def check_output_folder(path: str | os.PathLike, flag: str = "--output") -> Path:
    """``path`` if a folder can be made or used there, checked before any work is done:
    ValueError when it is an existing file, or when the nearest existing parent is a file."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{flag} {path} is a file; an output without the .json suffix is a folder receiving "
                         "<identifier>.json for each result (give a path ending in .json for one file)")
    parent = path
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        raise ValueError(f"{flag} {path}: {parent} is a file, so no folder can be made under it")
    return path


def write_result(result: dict, path: str | os.PathLike) -> Path:
    """Write ``result`` as indented JSON (UTF-8, keys in insertion order), through a temporary file
    renamed into place: a reader never sees half a file, and a file there that is a hard link to
    another (an input a user kept elsewhere) is replaced, never written into."""
    import tempfile

    path = check_output_file(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # what a plain write would have given it
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def read_result(path: str | os.PathLike) -> dict:
    """Read and :func:`validate_result` a result file (FileNotFoundError / ValueError name it)."""
    path = Path(path)
    try:
        result = load_file(path)
    except ValidationError as exc:
        raise ValueError(f"result file {path} is not valid JSON: {'; '.join(exc.problems)}") from None
    try:
        validate_result(result)
    except ValueError as exc:
        raise ValueError(f"result file {path}: {exc}") from None
    return result


def default_output(spec: str, folder: str | os.PathLike = "results") -> Path:
    """``results/<spec as a file name>.json`` (characters other than letters, digits, ``.``,
    ``-`` and ``_`` become ``_``), e.g. ``results/smollm2-135m.json``."""
    return Path(folder) / f"{slug(spec)}.json"


def default_plots_dir(output: str | os.PathLike) -> Path:
    """Plots folder next to the result file: ``<output stem>_plots``."""
    output = Path(output)
    return output.with_name(f"{output.stem}_plots")


def read_plan(source: str | os.PathLike) -> dict:
    """Read and check a round plan (``plan.json`` of ``contstim round plan``, or the folder holding
    one: :mod:`.plan_file`); FileNotFoundError and ValueError name the file and the problem."""
    from .plan_file import PLAN_FILE, PLAN_FORMAT

    path = Path(source).expanduser()
    path = path / PLAN_FILE if path.is_dir() else path
    if not path.is_file():
        raise FileNotFoundError(f"{source}: no {PLAN_FILE} here; write one with `contstim round plan --out DIR`")
    try:
        doc = load_file(path)
    except ValidationError as exc:
        raise ValueError(f"plan {path} is not valid JSON: {'; '.join(exc.problems)}") from None
    if doc.get("format") != PLAN_FORMAT:
        raise ValueError(f"{path} is not a plan of `contstim round plan` (format {doc.get('format')!r})")
    try:
        validate_result(doc)
    except ValueError as exc:
        raise ValueError(f"plan {path}: {exc}") from None
    return doc
