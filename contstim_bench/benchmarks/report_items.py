"""The pieces every model report is made of (:mod:`.model_report`): an item, the place of an item
that does not apply, and the provenance item (what a result records about how it was made)."""
from __future__ import annotations

SECTION_PROVENANCE = "Provenance"
PROVENANCE_BLOCKS = ("model", "benchmark", "provenance", "scoring", "analysis", "readout")
"""The sections of a result that describe how it was made (shown as fields, not scores)."""


def report_item(id_: str, kind: str, title: str, caption: str, data, section: str) -> dict:
    """A report item in ``section`` (:mod:`.model_report` says what the fields hold)."""
    return {"id": id_, "kind": kind, "title": title, "caption": caption, "data": data, "section": section}


def unavailable(id_: str, title: str, why: str, section: str) -> dict:
    """The place of an item that does not apply to the result, with the reason."""
    return {"id": id_, "kind": None, "title": title, "caption": "", "data": None, "section": section,
            "unavailable": why}


def _value_text(value) -> str:
    """A recorded value as the text a page shows (fields are text, not scores)."""
    if value is None:
        return "not recorded"
    if isinstance(value, (list, tuple)):
        return f"{len(value)} entries" if len(value) > 8 else ", ".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def provenance_rows(result: dict) -> list[dict]:
    """One row per recorded field of :data:`PROVENANCE_BLOCKS` (nested dicts flattened as
    ``block.key.sub``; lists of more than 8 entries as their count)."""
    rows = []

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}", v)
        else:
            rows.append({"field": prefix, "value": _value_text(value)})

    for block in PROVENANCE_BLOCKS:
        if block in result:
            walk(block, result[block])
    for key in ("format", "format_version", "method"):
        if key in result and not isinstance(result[key], dict):
            rows.append({"field": key, "value": _value_text(result[key])})
    return rows


def provenance_item(result: dict) -> dict:
    return report_item("provenance", "rows", "Provenance: how this result was made",
                       "Every field the result file records about the model, the benchmark and the run (package and "
                       "library versions, git commit, dataset fingerprint, device, dates). Scores above are the "
                       "file's own; figures and tables that need the human data read the dataset whose fingerprint "
                       "is given here.", {"rows": provenance_rows(result)}, SECTION_PROVENANCE)
