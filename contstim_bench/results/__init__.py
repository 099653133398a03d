"""The result file: formats and the one validator (:mod:`.schema`), safe reading and writing
(:mod:`.io`).

A result is produced by a benchmark (:mod:`contstim_bench.benchmarks`), written and read here,
summarised and plotted by :mod:`contstim_bench.report`, and checked by the leaderboard, which
recomputes every score from the result's log-probabilities.
"""
from __future__ import annotations

from .io import (
    MAX_BYTES,
    MAX_DEPTH,
    ValidationError,
    default_output,
    default_plots_dir,
    load_file,
    parse_json,
    read_plan,
    read_result,
    write_result,
)
from .schema import FORMAT, FORMAT_VERSION, FORMATS, SUPPORTED_FORMAT_VERSIONS, validate_result

__all__ = [
    "FORMAT", "FORMATS", "FORMAT_VERSION", "MAX_BYTES", "MAX_DEPTH", "SUPPORTED_FORMAT_VERSIONS",
    "ValidationError", "default_output", "default_plots_dir", "load_file", "parse_json", "read_plan", "read_result",
    "validate_result", "write_result",
]
