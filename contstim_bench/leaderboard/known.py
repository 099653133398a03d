"""Known benchmark builds: dataset fingerprints and per-experiment content hashes.

(The accepted result formats and versions are :data:`contstim_bench.results.schema.FORMATS`.)

Two fingerprints identify the data a result was computed on, both over *decoded content* with
the one canonical table digest of the data layer (:func:`contstim_bench.data.writer.table_digest`),
so neither depends on the machine, the pyarrow version or the parquet compressor:

- the **dataset fingerprint** written into every result (``benchmark.dataset_fingerprint``,
  :func:`contstim_bench.data.load.fingerprint`): over every table of the built dataset.  It still
  depends on *which* tables were built: the dataset has a ``trials/main`` split only where the
  main experiment's human data could be fetched;
- the **experiment fingerprint** (:func:`experiment_fingerprint`): over the two tables an
  experiment's scores depend on (``trials/<experiment>`` and ``sentences/<experiment>``), so it
  does not depend on the other splits either.

``known_benchmarks.json`` (next to this module) lists, per dataset, the experiment fingerprints of the benchmark and the dataset fingerprints of known builds.
:func:`known_dataset_fingerprints` adds the fingerprint of the dataset built on this machine
*when* its experiment fingerprints match the registry, so a maintainer whose build has other
tables (e.g. the main experiment's human data) still accepts results made with that same build.
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

from ..data.writer import dataset_fingerprint, parquet_table_digest

REGISTRY_FILE = Path(__file__).with_name("known_benchmarks.json")
TABLES = ("trials", "sentences")


def registry() -> dict:
    """The parsed ``known_benchmarks.json`` (dataset name -> known fingerprints)."""
    return json.loads(REGISTRY_FILE.read_text(encoding="utf-8"))


def experiment_fingerprint(experiment: str, datasets_dir: str | os.PathLike | None = None, dataset: str = "contstim") -> str:
    """Content fingerprint of the ``trials/<experiment>`` and ``sentences/<experiment>`` tables.

    :func:`~contstim_bench.data.writer.dataset_fingerprint` over just those two tables' content
    digests: independent of parquet writer version, compression and of the other splits of the
    dataset.  FileNotFoundError names a missing table.
    """
    from ..data.load import dataset_folder

    folder = Path(dataset_folder(dataset, datasets_dir, verify=False))  # hashes the content itself
    digests = {}
    for config in TABLES:
        path = folder / config / f"{experiment}.parquet"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: experiment {experiment!r} is not built in {folder}")
        digests[f"{config}/{experiment}"] = parquet_table_digest(path)
    return dataset_fingerprint(digests)


@lru_cache(maxsize=8)
def _local_state(datasets_dir: str, dataset: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(dataset fingerprint, ((experiment, experiment fingerprint), ...)) of one built dataset
    folder (cached per resolved folder: hashing the decoded tables takes a moment)."""
    from ..data.load import fingerprint

    known = registry()[dataset]["experiments"]
    local = []
    for exp in known:
        try:
            local.append((exp, experiment_fingerprint(exp, datasets_dir, dataset)))
        except FileNotFoundError:
            continue
    return fingerprint(dataset, datasets_dir), tuple(local)


def local_build(datasets_dir: str | os.PathLike | None = None, dataset: str = "contstim") -> dict:
    """``{"dataset_fingerprint", "experiments": {exp: fingerprint}, "matches": {exp: bool}}`` of
    the dataset built on this machine (built first if missing)."""
    from ..data.load import default_datasets_dir

    root = Path(datasets_dir) if datasets_dir is not None else default_datasets_dir()
    fp, local = _local_state(str(root.resolve()), dataset)
    known = registry()[dataset]["experiments"]
    exps = dict(local)
    return {
        "dataset_fingerprint": fp,
        "experiments": exps,
        "matches": {exp: exps.get(exp) == known[exp] for exp in known},
    }


def known_dataset_fingerprints(datasets_dir: str | os.PathLike | None = None, dataset: str = "contstim") -> dict[str, str]:
    """Accepted ``benchmark.dataset_fingerprint`` values -> where each comes from."""
    entry = registry()[dataset]
    out = dict(entry["dataset_fingerprints"])
    local = local_build(datasets_dir, dataset)
    if local["matches"] and all(local["matches"][e] for e in local["experiments"]):
        out.setdefault(local["dataset_fingerprint"], "the dataset built on this machine (experiment fingerprints match)")
    return out
