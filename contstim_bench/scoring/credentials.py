"""Keep API keys and tokens out of everything the package writes.

A model spec is written to result files, cache keys, logs and error messages, so it must never
carry a credential: :func:`refuse_credentials` rejects a spec that does (an option named like a
key or token, a URL with a user name or password, a URL query parameter named like a key),
naming only the option, never its value.  Served models read their keys from the environment
as their own libraries do (``OPENAI_API_KEY`` for lm-evaluation-harness's completions backends).

What a backend holds at run time (the key it read from the environment, its request headers) is
removed from messages and log records by :class:`Redactor`.
"""
from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, unquote, urlsplit

SECRET_NAMES = frozenset({
    "api_key", "apikey", "key", "token", "auth", "auth_token", "access_token", "hf_token", "use_auth_token",
    "secret", "client_secret", "password", "passwd", "pwd", "header", "headers", "authorization", "bearer",
    "credential", "credentials", "subscription_key", "cookie", "cookies", "session", "session_id", "sessionid",
    "code", "sig", "signature", "x_amz_signature", "x_amz_credential", "x_amz_security_token", "x_goog_signature",
    "x_goog_credential", "private_key", "privatekey", "otp",
})
"""The one list of option (and URL query parameter) names that carry a credential, compared after
:func:`normalise_name` (fully percent-decoded, NFKC, case-folded, ``-``, ``.`` and spaces as ``_``)."""

SECRET_ENDINGS = ("token", "secret", "password", "passwd", "api_key", "apikey", "_key", "private_key",
                  "signature", "credential", "credentials", "cookie")
"""Name endings that carry a credential (``access-token``, ``apitoken``, ``bearer_token``,
``aws_secret_access_key``, ...), except a special token's name (:data:`SPECIAL_TOKENS`)."""

SPECIAL_TOKENS = frozenset({"bos", "eos", "pad", "unk", "sep", "cls", "mask", "start", "prefix", "end"})
"""Words before ``token`` that make a model argument name a special token, not a credential
(``add_bos_token``, ``pad_token``)."""

_URL = re.compile(r"(?:[a-z][a-z0-9+.-]*:)?//[^\s&]+", re.IGNORECASE)


def decoded(text: str, rounds: int = 8) -> str:
    """``text`` percent-decoded until it no longer changes (``%255F`` -> ``%5F`` -> ``_``)."""
    for _ in range(rounds):
        new = unquote(text)
        if new == text:
            break
        text = new
    return text


def normalise_name(name: str) -> str:
    """An option name as it is compared: fully percent-decoded, NFKC, case-folded, with ``-``, ``.``
    and whitespace as ``_``."""
    text = unicodedata.normalize("NFKC", decoded(name)).casefold().strip()
    return re.sub(r"[-.\s]+", "_", text)

ENV_HINT = ("credentials are read from the environment by the backend (e.g. OPENAI_API_KEY for "
            "lm-eval's completions backends), never from a model spec, which is written to result files")


def secret_name(name: str) -> bool:
    """Whether an option or query-parameter name carries a credential (:data:`SECRET_NAMES`,
    :data:`SECRET_ENDINGS`), after :func:`normalise_name`."""
    low = normalise_name(name)
    if low in SECRET_NAMES:
        return True
    words = low.split("_")
    if low.endswith("token") and len(words) > 1 and words[-1] == "token" and words[-2] in SPECIAL_TOKENS:
        return False
    return low.endswith(SECRET_ENDINGS)


def _url_problem(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.username or parts.password:
        return "a URL with a user name or password"
    for name, _ in parse_qsl(parts.query, keep_blank_values=True):
        if secret_name(name):
            return f"a URL query parameter named like a credential ({normalise_name(name)[:40]!r})"
    return None


MAX_NESTED_TEXT = 100_000
"""Longest option value parsed for nested names (a longer one is refused as a spec anyway)."""


def nested_secret(value, depth: int = 0) -> str | None:
    """The dotted path of the first name, at any depth of ``value``, that carries a credential
    (:func:`secret_name`), or None.  ``value`` is a mapping or list (lm-eval's nested model
    arguments, ``{"model_kwargs": {"token": ...}}``) or a string holding one as JSON or a Python
    literal; other values have no names."""
    import ast
    import json

    if depth > 32:
        return "(nested too deeply)"
    if isinstance(value, str):
        text = value.strip()
        if not text or text[0] not in "{[" or len(text) > MAX_NESTED_TEXT:
            return None
        for parse in (json.loads, ast.literal_eval):
            try:
                value = parse(text)
                break
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
        else:
            return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and secret_name(key):
                return normalise_name(key)[:40]
            inner = nested_secret(item, depth + 1)
            if inner is not None:
                return f"{str(key)[:40]}.{inner}"
    elif isinstance(value, (list, tuple)):
        for item in value:
            inner = nested_secret(item, depth + 1)
            if inner is not None:
                return inner
    return None


def refuse_credentials(text: str, options: Mapping[str, str] | None = None) -> None:
    """ValueError when the spec ``text`` (or its parsed ``options``) carries a credential; the
    message names the option or the kind of URL, never the value."""
    pairs = list((options or {}).items())
    if options is None:
        try:  # lenient: a malformed query is named by the parser later, without this value
            pairs = parse_qsl(text.partition("?")[2], keep_blank_values=True)
        except ValueError:
            pairs = []
    for name, value in pairs:
        if secret_name(name):
            raise ValueError(f"model spec option {normalise_name(name)[:40]!r} would carry a credential into result "
                             f"files; {ENV_HINT}")
        inner = nested_secret(decoded(value) if isinstance(value, str) else value)
        if inner is not None:
            raise ValueError(f"model spec option {normalise_name(name)[:40]!r} holds {inner!r}, which would carry a "
                             f"credential into result files; {ENV_HINT}")
    texts = (text, decoded(text), *(decoded(v) for _, v in pairs))
    for match in (m for t in texts for m in _URL.finditer(t)):  # raw and fully decoded
        problem = _url_problem(match.group(0))
        if problem:
            raise ValueError(f"model spec has {problem}, which would carry a credential into result files; {ENV_HINT}")


class Redactor(logging.Filter):
    """Replaces known secret values by ``***`` in text and in log records.

    ``secrets``: the values to hide (shorter than 4 characters are ignored: they would hide
    ordinary words).  As a logging filter it rewrites each record's message (its arguments
    merged in) and lets it through.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if isinstance(s, str) and len(s) >= 4}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            try:
                message = record.getMessage()
            except Exception:  # noqa: BLE001 - a record that cannot be formatted keeps its own text
                message = str(record.msg)
            record.msg, record.args = self(message), ()
            if record.exc_info and record.exc_info[1] is not None:
                record.exc_text = self(logging.Formatter().formatException(record.exc_info))
                record.exc_info = None
        return True


def guard_loggers(redactor: Redactor, prefix: str) -> None:
    """Attach ``redactor`` to every logger named ``prefix`` or ``prefix.*`` that exists now (a
    filter runs on the logger a record is logged to, before it reaches any handler)."""
    names = [n for n in logging.Logger.manager.loggerDict if n == prefix or n.startswith(prefix + ".")]
    for name in [prefix, *names]:
        logger = logging.getLogger(name)
        if redactor not in logger.filters:
            logger.addFilter(redactor)
