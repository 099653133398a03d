"""Building blocks of the one validator (:mod:`.schema`, :mod:`.files`): problems collected as
``path: message`` strings, typed field look-ups, ranges, and the provenance block every file the
package writes carries (:func:`contstim_bench.provenance.provenance`)."""
from __future__ import annotations

import datetime as _dt
import math


class Problems(list):
    """Collects ``path: message`` strings; :meth:`check` records and returns whether ``ok``."""

    def check(self, ok: bool, path: str, message: str) -> bool:
        if not ok:
            self.append(f"{path}: {message}")
        return ok


def is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def typename(v) -> str:
    return type(v).__name__


def field(obj: dict, key: str, kind, path: str, problems: Problems, optional: bool = False):
    """``obj[key]`` if it has the expected kind (a type, a tuple of types, ``"number"``, ``"int"``, or
    ``"int?"``/``"str?"`` that also accept null)."""
    where = f"{path}.{key}"
    if key not in obj:
        if not optional:
            problems.append(f"{where}: missing")
        return None
    value = obj[key]
    if kind == "number":
        ok = is_num(value)
        want = "a finite number"
    elif kind == "int":
        ok = is_int(value) and value >= 0
        want = "a non-negative integer"
    elif kind == "int?":
        ok = value is None or (is_int(value) and value >= 0)
        want = "a non-negative integer or null"
    elif kind == "str?":
        ok = value is None or isinstance(value, str)
        want = "a string or null"
    else:
        ok = isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
    if not ok:
        problems.append(f"{where}: expected {want}, got {typename(value)} {value!r:.60}")
        return None
    return value


def check_range(value, lo: float, hi: float, path: str, problems: Problems) -> None:
    if value is not None and not (lo - 1e-12 <= value <= hi + 1e-12):
        problems.append(f"{path}: {value!r} is outside [{lo}, {hi}]")


def check_provenance(obj: dict, path: str, problems: Problems, fingerprint: str | None = None,
                     fingerprint_at: str = "result.benchmark.dataset_fingerprint") -> None:
    """``obj["provenance"]``: package version, git commit, libraries, dataset fingerprint (equal to
    ``fingerprint``, found at ``fingerprint_at``, when given), device, dtype and an ISO 8601
    creation time."""
    prov = field(obj, "provenance", dict, path, problems)
    if prov is None:
        return
    where = f"{path}.provenance"
    field(prov, "package_version", str, where, problems)
    field(prov, "git_commit", "str?", where, problems)
    field(prov, "libraries", dict, where, problems)
    pfp = field(prov, "dataset_fingerprint", str, where, problems)
    if pfp is not None and fingerprint is not None:
        problems.check(pfp == fingerprint, f"{where}.dataset_fingerprint",
                       f"differs from {fingerprint_at}")
    for key in ("device", "dtype"):
        field(prov, key, "str?", where, problems, optional=True)
    created = field(prov, "created", str, where, problems)
    if created is not None:
        try:
            _dt.datetime.fromisoformat(created)
        except ValueError:
            problems.append(f"{where}.created: {created!r} is not an ISO 8601 time")
