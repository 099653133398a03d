"""``contstim experiment export``: write a self-contained browser experiment from a design.

Output folder layout (everything local: no CDN, no external URL)::

    OUT/index.html          instructions (Golan et al. 2023, Figure S1), trial screen (Figure S2),
                            end page with the completion code
    OUT/static/app.js       the client: talks to the server's JSON API on the same origin
    OUT/static/style.css
    OUT/experiment.json     the design and the randomisation settings, read by the server only
                            (never served: it holds every group's trials)

``experiment.json``: ``format``, ``experiment_id`` (sha256 over the design rows and settings:
a response database belongs to exactly one experiment), ``title``, ``randomize_order``,
``randomize_sides`` (per-participant re-randomisation by the server), ``groups`` (sorted group
numbers) and ``trials`` (the design rows, :data:`contstim_bench.data.design_file.DESIGN_COLUMNS`).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd

from ..results.io import ValidationError, parse_json
from ..data.design_file import DESIGN_COLUMNS, read_design, validate_design

FORMAT = "contstim-experiment/1"
EXPERIMENT_FILE = "experiment.json"
EXPORT_KIND = "experiment export"
"""The marker kind of an export folder."""
STATIC_FILES = ("app.js", "style.css")
"""Files under ``OUT/static/`` (the only files the server serves besides ``index.html``)."""
DEFAULT_TITLE = "Which sentence is more probable?"


@dataclass(frozen=True)
class Experiment:
    """An exported experiment as the server and ingestion read it."""

    experiment_id: str
    title: str
    randomize_order: bool
    randomize_sides: bool
    design: pd.DataFrame  # validated, DESIGN_COLUMNS

    @property
    def groups(self) -> list[int]:
        return sorted(int(g) for g in self.design["group"].unique())


def _records(design: pd.DataFrame) -> list[dict]:
    out = []
    for row in design.itertuples(index=False):
        rec = {}
        for col in DESIGN_COLUMNS:
            v = getattr(row, col)
            rec[col] = int(v) if col in ("group", "trial") else (None if v is None or v != v else str(v))
        out.append(rec)
    return out


def experiment_id(records: list[dict], randomize_order: bool, randomize_sides: bool) -> str:
    """sha256 over the canonical JSON of the design rows and the randomisation settings."""
    payload = json.dumps(
        {"trials": records, "randomize_order": randomize_order, "randomize_sides": randomize_sides},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _template(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def export_experiment(
    design: str | os.PathLike | pd.DataFrame,
    out_dir: str | os.PathLike,
    *,
    randomize_order: bool = True,
    randomize_sides: bool = True,
    title: str = DEFAULT_TITLE,
) -> Path:
    """Write the experiment for ``design`` (a path to a design, see :func:`read_design`, or a
    design frame) into ``out_dir`` and return it.

    The folder is written beside ``out_dir`` and renamed into place
    (:func:`contstim_bench.staging.replace_folder`): ``out_dir`` must be absent, empty, or an export
    this function wrote that holds nothing else; anything else raises ValueError before anything is
    written, so no unrelated folder and no edited page is lost.
    """
    from ..staging import check_replaceable, replace_folder

    frame = validate_design(design) if isinstance(design, pd.DataFrame) else read_design(design)
    if not isinstance(title, str) or not title.strip():
        raise ValueError("the experiment title must be a non-empty string")
    check_replaceable(out_dir, kind=EXPORT_KIND)
    records = _records(frame)
    meta = {
        "format": FORMAT,
        "experiment_id": experiment_id(records, randomize_order, randomize_sides),
        "title": title.strip(),
        "randomize_order": bool(randomize_order),
        "randomize_sides": bool(randomize_sides),
        "groups": sorted({r["group"] for r in records}),
        "trials": records,
    }
    with replace_folder(out_dir, kind=EXPORT_KIND) as out:
        (out / "static").mkdir(parents=True, exist_ok=True)
        html = _template("index.html").replace("{{TITLE}}", _html_escape(meta["title"]))
        (out / "index.html").write_text(html, encoding="utf-8")
        for name in STATIC_FILES:
            (out / "static" / name).write_text(_template(name), encoding="utf-8")
        (out / EXPERIMENT_FILE).write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return Path(out_dir)


def export_and_load(
    design: str | os.PathLike | pd.DataFrame,
    out_dir: str | os.PathLike,
    *,
    randomize_order: bool = True,
    randomize_sides: bool = True,
    title: str | None = None,
) -> tuple[Path, Experiment]:
    """:func:`export_experiment` (``title`` None: :data:`DEFAULT_TITLE`), then read the folder
    back with :func:`load_experiment` as the server will; returns both (what ``contstim
    experiment export`` runs)."""
    out = export_experiment(design, out_dir, randomize_order=randomize_order, randomize_sides=randomize_sides,
                            title=DEFAULT_TITLE if title is None else title)
    return out, load_experiment(out)

def _html_escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;").replace("'", "&#39;")
    )


def load_experiment(export_dir: str | os.PathLike) -> Experiment:
    """Read and check an exported experiment folder (FileNotFoundError/ValueError name the problem)."""
    folder = Path(export_dir)
    path = folder / EXPERIMENT_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{folder} is not an exported experiment (no {EXPERIMENT_FILE}); run `contstim experiment export`")
    for name in ("index.html", *(f"static/{n}" for n in STATIC_FILES)):
        if not (folder / name).is_file():
            raise FileNotFoundError(f"exported experiment {folder} lacks {name}; export it again")
    try:
        meta = parse_json(path.read_bytes(), str(path))  # size, depth and duplicate-key limits
    except ValidationError as exc:
        raise ValueError(f"{path} is not valid JSON: {'; '.join(exc.problems)}") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: unknown format {meta.get('format')!r} (expected {FORMAT!r})")
    design = validate_design(pd.DataFrame(meta["trials"], columns=list(DESIGN_COLUMNS)))
    records = _records(design)
    expected = experiment_id(records, bool(meta["randomize_order"]), bool(meta["randomize_sides"]))
    if meta.get("experiment_id") != expected:
        raise ValueError(f"{path}: experiment_id does not match its trials (the file was edited); export it again")
    return Experiment(expected, meta["title"], bool(meta["randomize_order"]), bool(meta["randomize_sides"]), design)

