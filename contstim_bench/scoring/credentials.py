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
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, urlsplit

SECRET_NAMES = frozenset({
    "api_key", "apikey", "api-key", "key", "token", "auth_token", "access_token", "hf_token",
    "use_auth_token", "secret", "client_secret", "password", "passwd", "header", "headers",
    "authorization", "bearer", "credential", "credentials", "subscription-key",
})
"""Option (and URL query parameter) names that carry a credential, compared in lower case;
names ending in ``_api_key``, ``_secret`` or ``_password`` too."""

_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^\s&]+", re.IGNORECASE)

ENV_HINT = ("credentials are read from the environment by the backend (e.g. OPENAI_API_KEY for "
            "lm-eval's completions backends), never from a model spec, which is written to result files")


def secret_name(name: str) -> bool:
    """Whether an option or query-parameter name carries a credential (see :data:`SECRET_NAMES`)."""
    low = name.strip().lower()
    return low in SECRET_NAMES or low.endswith(("_api_key", "_secret", "_password", "-key"))


def _url_problem(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.username or parts.password:
        return "a URL with a user name or password"
    for name, _ in parse_qsl(parts.query, keep_blank_values=True):
        if secret_name(name):
            return f"a URL query parameter {name!r}"
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
    for name, _ in pairs:
        if secret_name(name):
            raise ValueError(f"model spec option {name!r} would carry a credential into result files; {ENV_HINT}")
    for match in (m for t in (text, *(v for _, v in pairs)) for m in _URL.finditer(t)):  # raw and decoded
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
