"""Write a built dataset: deterministic parquet files plus a dataset card with YAML ``configs:``.

Layout of a built dataset folder (loadable with ``datasets.load_dataset(folder, config,
split=...)``)::

    DIR/<name>/README.md                       card: YAML header (configs, license, ...) + text
    DIR/<name>/<config>/<split>.parquet         one file per (config, split)
    DIR/<name>/fingerprint.json                 content fingerprint of the dataset and of
                                                every table, plus each parquet file's and the
                                                card's sha256 (verified on every load:
                                                :mod:`.verify`)

Fingerprints are over *content*, not bytes: :func:`table_digest` hashes a decoded table in a
canonical form (column names and arrow types, then the rows sorted, each serialised as JSON with
float64 values written exactly with :meth:`float.hex`), and :func:`dataset_fingerprint` hashes
the sorted ``config/split:digest`` lines.  They do not depend on the parquet writer's version
string, the compressor, the row-group size or the row order, so every machine that builds the
same data gets the same fingerprint.  This module is the one place that defines them
(:mod:`contstim_bench.leaderboard.known` uses the same functions).

Parquet files are still written from :class:`pyarrow.Table` objects with an explicit schema, no
pandas index, fixed row-group size and compression, so that one machine writes byte-identical
files from the same input (``parquet_sha256`` in ``fingerprint.json`` records them, a cheap way
to see which files changed).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from ..staging import legacy_files, replace_folder, sha256_file

FINGERPRINT_FILE = "fingerprint.json"


@dataclass
class ConfigSpec:
    """One dataset config: its splits (name -> table) and the meaning of each column."""

    name: str
    splits: dict[str, pa.Table]
    description: str
    columns: dict[str, str] = field(default_factory=dict)  # column -> meaning / derivation


@dataclass
class DatasetSpec:
    """A whole dataset: configs plus the card's metadata and text."""

    name: str
    pretty_name: str
    license: str
    description: str  # markdown
    citation: str  # bibtex
    sources: list[str]  # provenance lines (upstream repository, commit, files)
    configs: list[ConfigSpec]
    notes: str = ""  # extra markdown (missing splits, traps in the raw data, ...)
    extra_yaml: dict = field(default_factory=dict)


def _write_parquet(table: pa.Table, path: Path) -> None:
    table = table.replace_schema_metadata(None)
    pq.write_table(
        table,
        path,
        compression="zstd",
        compression_level=3,
        row_group_size=1 << 20,
        use_dictionary=True,
        write_statistics=True,
        store_schema=True,
    )


TABLE_DIGEST_VERSION = "contstim-table-digest/1"


def _canonical(value):
    """A decoded arrow value as JSON-serialisable data, exactly and the same on every platform.

    Floats become :meth:`float.hex` strings (exact for float64; ``nan``, ``inf``, ``-0x0.0p+0``
    distinct), None stays null, bytes become hex, structs dicts (keys sorted when serialised),
    lists/maps lists; temporal and decimal values their ISO/``str`` form.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if hasattr(value, "isoformat"):  # date, time, datetime
        return value.isoformat()
    import datetime
    import decimal

    if isinstance(value, (datetime.timedelta, decimal.Decimal)):
        return str(value)
    raise TypeError(f"table_digest: no canonical form for {type(value).__name__} value {value!r}")


def _canonical_column(column: pa.ChunkedArray) -> list:
    typ = column.type
    values = column.to_pylist()
    if pa.types.is_floating(typ):
        return [None if v is None else v.hex() for v in values]
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_integer(typ) or pa.types.is_boolean(typ):
        return values
    return [_canonical(v) for v in values]


def _type_name(typ: pa.DataType) -> str:
    # a dictionary-encoded column holds the same values as its decoded form
    return str(typ.value_type if pa.types.is_dictionary(typ) else typ)


def table_digest(table: pa.Table) -> str:
    """sha256 over a table's *content* in a canonical form; the one definition in the package.

    First a header line: a version tag and the column names with their arrow types (schema
    order); then one line per row, each the JSON list of the row's canonical values
    (:func:`_canonical`: float64 exact as :meth:`float.hex`, NaN and None distinct), the lines
    sorted.  Independent of the parquet writer, compression, row groups, chunking, schema
    metadata and row order; any change of a value, a column name or a type changes it.
    """
    header = json.dumps(
        {"digest": TABLE_DIGEST_VERSION, "columns": [[f.name, _type_name(f.type)] for f in table.schema]},
        ensure_ascii=False, separators=(",", ":"),
    )
    columns = [_canonical_column(table.column(i)) for i in range(table.num_columns)]
    rows = sorted(
        json.dumps(list(row), ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
        for row in zip(*columns)
    ) if columns else []
    h = hashlib.sha256()
    h.update(header.encode("utf-8") + b"\n")
    h.update(f"{table.num_rows}\n".encode())
    for line in rows:
        h.update(line.encode("utf-8") + b"\n")
    return h.hexdigest()


def parquet_table_digest(path: str | os.PathLike) -> str:
    """:func:`table_digest` of the table stored in a parquet file."""
    return table_digest(pq.read_table(path))


def dataset_fingerprint(digests: dict[str, str]) -> str:
    """sha256 over ``{"config/split": table digest}``, as the sorted ``key:digest`` lines."""
    return hashlib.sha256("".join(f"{k}:{v}\n" for k, v in sorted(digests.items())).encode()).hexdigest()


def _card(spec: DatasetSpec, files: dict[tuple[str, str], str], fingerprint: str) -> str:
    header = {
        "pretty_name": spec.pretty_name,
        "license": spec.license,
        "language": ["en"],
        "configs": [
            {
                "config_name": cfg.name,
                "data_files": [
                    {"split": split, "path": files[(cfg.name, split)]} for split in cfg.splits
                ],
            }
            for cfg in spec.configs
        ],
        **spec.extra_yaml,
    }
    lines = ["---", yaml.safe_dump(header, sort_keys=False).rstrip(), "---", ""]
    lines += [f"# {spec.pretty_name}", "", spec.description.strip(), ""]
    lines += [f"Fingerprint (sha256 over the decoded contents of every table, independent of the "
              f"parquet writer and compression; see `fingerprint.json`): `{fingerprint}`", ""]
    lines += ["## Configs", ""]
    for cfg in spec.configs:
        counts = ", ".join(f"`{s}`: {t.num_rows:,} rows" for s, t in cfg.splits.items())
        lines += [f"### `{cfg.name}`", "", cfg.description.strip(), "", f"Splits: {counts}.", ""]
        if cfg.columns:
            lines += ["| column | type | meaning and derivation |", "|---|---|---|"]
            first = next(iter(cfg.splits.values()))
            for col, meaning in cfg.columns.items():
                typ = str(first.schema.field(col).type) if col in first.schema.names else "?"
                lines.append(f"| `{col}` | {typ} | {meaning} |")
            lines.append("")
    if spec.notes.strip():
        lines += ["## Notes", "", spec.notes.strip(), ""]
    lines += ["## Sources", ""] + [f"- {s}" for s in spec.sources] + [""]
    lines += ["## License", "", spec.license, ""]
    lines += ["## Citation", "", "```bibtex", spec.citation.strip(), "```", ""]
    return "\n".join(lines)


def _dataset_files(folder: Path) -> list[str]:
    """The files an earlier version wrote in a dataset folder: its card, ``fingerprint.json`` and
    the parquet files that lists."""
    try:
        meta = json.loads((folder / FINGERPRINT_FILE).read_text(encoding="utf-8"))
        tables = list(meta.get("parquet_sha256", {}))
    except (OSError, ValueError, AttributeError):
        tables = []
    return [FINGERPRINT_FILE, "README.md", *tables]


LEGACY_DATASET = legacy_files(FINGERPRINT_FILE, written=_dataset_files)
"""A dataset folder written before the output marker: its ``fingerprint.json`` and the files it lists."""


def write_dataset(spec: DatasetSpec, out_dir: str | os.PathLike, flag: str = "--out") -> Path:
    """Write ``spec`` to ``out_dir/<name>`` atomically (a temporary folder renamed into place;
    :func:`contstim_bench.staging.replace_folder`: an existing folder there is replaced only if it
    is a dataset the package wrote, and ValueError naming ``flag`` otherwise).

    Returns the dataset folder.  Column documentation must cover every column of every split:
    a missing or extra entry raises ValueError naming it (cards never go stale silently).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for cfg in spec.configs:
        for split, table in cfg.splits.items():
            if cfg.columns:
                missing = [c for c in table.schema.names if c not in cfg.columns]
                extra = [c for c in cfg.columns if c not in table.schema.names]
                if missing or extra:
                    raise ValueError(
                        f"dataset {spec.name!r} config {cfg.name!r} split {split!r}: "
                        f"undocumented columns {missing}, documented but absent {extra}"
                    )
    final = out_dir / spec.name
    with replace_folder(final, kind="dataset", flag=flag, mode=None, legacy=LEGACY_DATASET) as tmp:
        files: dict[tuple[str, str], str] = {}
        tables: dict[str, str] = {}
        file_sha256: dict[str, str] = {}
        for cfg in spec.configs:
            (tmp / cfg.name).mkdir(parents=True, exist_ok=True)
            for split, table in cfg.splits.items():
                rel = f"{cfg.name}/{split}.parquet"
                _write_parquet(table, tmp / rel)
                files[(cfg.name, split)] = rel
                # digest of the table as stored (read back), so it is what loaders will see
                tables[f"{cfg.name}/{split}"] = parquet_table_digest(tmp / rel)
                file_sha256[rel] = sha256_file(tmp / rel)
        whole = dataset_fingerprint(tables)
        meta = {
            "dataset": spec.name,
            "fingerprint": whole,
            "fingerprint_definition": (
                "sha256 over the sorted 'config/split:digest' lines of `tables`; each table digest is "
                f"{TABLE_DIGEST_VERSION} over the decoded content (contstim_bench.data.writer.table_digest)"
            ),
            "tables": dict(sorted(tables.items())),
            "parquet_sha256": dict(sorted(file_sha256.items())),
            "rows": {
                f"{cfg.name}/{split}": t.num_rows for cfg in spec.configs for split, t in cfg.splits.items()
            },
        }
        (tmp / "README.md").write_text(_card(spec, files, whole), encoding="utf-8")
        meta["card_sha256"] = sha256_file(tmp / "README.md")  # the card names the files loaders read
        (tmp / FINGERPRINT_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    return final


def compute_fingerprint(dataset_folder: str | os.PathLike) -> dict:
    """Recompute ``{"fingerprint", "tables"}`` from the parquet files of a built dataset folder
    (every ``<config>/<split>.parquet``), e.g. to check a folder against its ``fingerprint.json``."""
    folder = Path(dataset_folder)
    tables = {
        f"{path.parent.name}/{path.stem}": parquet_table_digest(path)
        for path in sorted(folder.glob("*/*.parquet"))
    }
    if not tables:
        raise FileNotFoundError(f"{folder} holds no <config>/<split>.parquet files")
    return {"fingerprint": dataset_fingerprint(tables), "tables": dict(sorted(tables.items()))}


def read_fingerprint(dataset_folder: str | os.PathLike) -> dict:
    """The ``fingerprint.json`` of a built dataset (FileNotFoundError names the folder)."""
    path = Path(dataset_folder) / FINGERPRINT_FILE
    if not path.exists():
        raise FileNotFoundError(f"{dataset_folder} is not a built contstim dataset (no {FINGERPRINT_FILE})")
    return json.loads(path.read_text())
