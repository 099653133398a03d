"""What ``--model`` can name on this machine: :func:`catalog` (``contstim models``).

Four parts, each built from the place that defines it, never from a list of its own:

- ``families``: every family of :data:`.spec.FAMILIES` with its spec grammar, what its target
  is, the options its factory module accepts (``OPTION_KEYS``), and whether it can run here (its
  module imports and the libraries it loads on first use are installed); a family that cannot
  names the package extra that installs it (from the installed package's metadata);
- ``packaged``: the offline models of :data:`.offline.OFFLINE_MODELS` (short name, package and
  its pinned version, licence, whether the package is installed and the model converted in
  :func:`.offline.models_dir`);
- ``precomputed``: the reference models of the paper (``precomputed:NAME``), with the number of
  sentences the built ``contstim`` dataset gives each of them per experiment (each file checked
  against the dataset's ``fingerprint.json`` first); nothing is built to list them;
- ``cached``: converted offline-model folders in :func:`.offline.models_dir`, and the models of
  the Hugging Face hub cache (``models--ORG--NAME`` under ``$HF_HUB_CACHE``, ``$HF_HOME/hub`` or
  ``~/.cache/huggingface/hub``) with the spec that would load them, read from their
  ``config.json`` (``...ForCausalLM`` / ``...LMHeadModel``: ``hf-causal:``, ``...ForMaskedLM``:
  ``hf-masked:``).

Listing never downloads, builds or converts anything, and never fails for a missing optional
dependency.  :func:`format_catalog` is the plain-text form.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
from pathlib import Path

from ..provenance import extra_for
from ..study import ALL_REFERENCE_MODELS, EXPERIMENT_MODELS, EXPERIMENTS
from . import offline
from .spec import FAMILIES

RUNTIME_MODULES: dict[str, tuple[str, ...]] = {
    "hf-causal": ("torch", "transformers"),
    "hf-masked": ("torch", "transformers"),
    "prompt": ("torch", "transformers"),
    "kenlm": ("kenlm",),
    "rnn": ("torch",),
    "lstm": ("torch",),
    "precomputed": ("pyarrow",),
    "lm-eval": ("lm_eval",),
}
"""Libraries a family's factory imports only when a model is loaded (so importing its module
does not prove them installed).  A family not listed here is checked by importing its module."""

CAUSAL_SUFFIXES = ("ForCausalLM", "LMHeadModel")
MASKED_SUFFIXES = ("ForMaskedLM",)
MAX_JSON_BYTES = 1 << 20
"""A config or marker file larger than this is not read (a listing reads small files only)."""


# --------------------------------------------------------------------------- families


def _description(module_name: str) -> str:
    """The first paragraph of a module's docstring, read from its source without importing it."""
    try:
        found = importlib.util.find_spec(module_name)
    except ImportError:
        return ""
    if found is None or not found.origin or not found.origin.endswith(".py"):
        return ""
    doc = ast.get_docstring(ast.parse(Path(found.origin).read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n")[0].split()).replace("``", "`")


def _missing_module_note(module: str) -> str:
    extra = extra_for(module)
    if extra:
        return f"not installed: pip install 'contstim-bench[{extra}]' (no module {module!r})"
    return f"not installed: no module {module!r}"


def family_entries() -> list[dict]:
    """One entry per family of :data:`.spec.FAMILIES` (see the module docstring)."""
    out = []
    for name, fam in FAMILIES.items():
        module_name = fam.factory.partition(":")[0]
        entry = {"family": name, "target": fam.target, "description": _description(module_name),
                 "path_target": fam.path_target, "options": None, "available": True, "note": None}
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            missing = exc.name if isinstance(exc, ModuleNotFoundError) and exc.name else None
            entry.update(available=False, note=_missing_module_note(missing) if missing
                         else f"cannot be imported here: {exc}")
        else:
            keys = getattr(module, "OPTION_KEYS", None)
            if isinstance(keys, dict):
                keys = keys.get(name)
            entry["options"] = None if keys is None else sorted(keys)
            needs = RUNTIME_MODULES.get(name, ())
            absent = [m for m in needs if not offline.importable(m)]
            if absent:
                entry.update(available=False, note=_missing_module_note(absent[0]))
        if fam.open_options:
            entry["open_options"] = fam.open_options
        query = "&".join(f"{k}=..." for k in entry["options"] or ()) or ("..." if fam.open_options else "")
        entry["grammar"] = f"{name}:<{fam.target}>" + (f"[?{query}]" if query else "")
        out.append(entry)
    return out


# --------------------------------------------------------------------------- packaged models


def _read_small_json(path: Path) -> dict | None:
    """A small JSON object file, or None when it is absent, too large or not a JSON object."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_JSON_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _folder_mb(folder: Path) -> float:
    return round(sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20, 1)


def packaged_entries() -> list[dict]:
    """One entry per offline model: name, spec, package, pinned version, requirements, licence,
    installed version (None: not installed), converted folder (None: not converted yet)."""
    out = []
    for name, model in offline.OFFLINE_MODELS.items():
        version = offline.installed_version(model.package)
        folder = offline.models_dir() / f"{name}-{version}-{offline.CONVERSION}" if version else None
        converted = folder is not None and offline._complete(folder)
        out.append({
            "name": name, "spec": f"hf-causal:{name}", "description": model.description,
            "package": model.package, "version": model.version, "requirements": list(model.requirements),
            "license": model.license, "installed": version is not None, "installed_version": version,
            "missing": offline.missing_requirements(name), "converted": converted,
            "folder": str(folder) if converted else None, "pull": f"contstim models pull {name}",
        })
    return out


# --------------------------------------------------------------------------- precomputed


def precomputed_entries(datasets_dir: str | os.PathLike | None = None) -> dict:
    """The reference models (``precomputed:NAME``) and, when the ``contstim`` dataset is built in
    ``datasets_dir``, how many stimulus sentences it gives each of them per experiment."""
    from ..data.paths import default_datasets_dir
    from ..data.verify import CorruptDatasetError, verify_parquet
    from ..data.writer import FINGERPRINT_FILE

    root = Path(datasets_dir) if datasets_dir is not None else default_datasets_dir()
    folder = root / "contstim"
    built = (folder / FINGERPRINT_FILE).is_file()
    counts: dict[str, dict[str, int]] = {n: {} for n in ALL_REFERENCE_MODELS}
    note = None if built else (f"the contstim dataset is not built in {root}: it is built on first use, "
                               f"or now with `contstim data build --only contstim`")
    if built:
        import pyarrow.parquet as pq

        try:
            for split in EXPERIMENTS:
                path = folder / "sentences" / f"{split}.parquet"
                if not path.is_file():
                    continue
                table = pq.read_table(verify_parquet(path))
                for name in ALL_REFERENCE_MODELS:
                    if name in table.column_names:
                        counts[name][split] = len(table) - table.column(name).null_count
        except CorruptDatasetError as exc:
            note = f"CORRUPT: {exc}"
            counts = {n: {} for n in ALL_REFERENCE_MODELS}
    names = [{"name": n, "spec": f"precomputed:{n}",
              "experiments": [e for e in EXPERIMENTS if n in EXPERIMENT_MODELS[e]],
              "sentences": counts[n] if built and note is None else None} for n in ALL_REFERENCE_MODELS]
    return {"datasets": str(folder), "built": built, "note": note, "names": names}


# --------------------------------------------------------------------------- caches


def converted_entries() -> list[dict]:
    """Folders of converted offline models in :func:`.offline.models_dir` (those with the
    marker file), each with whether the short name uses it now."""
    root = offline.models_dir()
    if not root.is_dir():
        return []
    out = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        meta = _read_small_json(folder / offline.MARKER)
        if meta is None:
            continue
        name, version = str(meta.get("name")), offline.installed_version(str(meta.get("package")))
        current = folder.name == f"{name}-{version}-{offline.CONVERSION}"
        complete = offline._complete(folder)
        out.append({"folder": str(folder), "name": name, "package_version": meta.get("package_version"),
                    "complete": complete, "current": current and complete, "size_mb": _folder_mb(folder),
                    "spec": name if current and complete else f"hf-causal:{folder}"})
    return out


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache as huggingface_hub finds it: ``$HF_HUB_CACHE`` (or the older
    ``$HUGGINGFACE_HUB_CACHE``), else ``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``
    or ``~/.cache/huggingface/hub`` (read when called, so a changed environment counts)."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.environ[var]).expanduser()
    home = os.environ.get("HF_HOME") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface"
    return Path(home).expanduser() / "hub"


def _spec_family(architectures: list) -> str | None:
    for arch in map(str, architectures):
        if arch.endswith(CAUSAL_SUFFIXES):
            return "hf-causal"
        if arch.endswith(MASKED_SUFFIXES):
            return "hf-masked"
    return None


def hub_entries() -> dict:
    """The models of the hub cache (``models--ORG--NAME`` folders): id, cached revisions, the
    revision ``main`` points to, architectures from ``config.json``, whether weights are there,
    and the spec that loads it (None when its config names no causal or masked LM head)."""
    root = hub_cache_dir()
    models = []
    if root.is_dir():
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith("models--")):
            repo = folder.name[len("models--"):].replace("--", "/")
            snapshots = folder / "snapshots"
            revisions = sorted(p.name for p in snapshots.iterdir() if p.is_dir()) if snapshots.is_dir() else []
            ref = folder / "refs" / "main"
            main = ref.read_text(encoding="utf-8").strip() if ref.is_file() else None
            pick = main if main in revisions else (revisions[-1] if revisions else None)
            snap = snapshots / pick if pick else None
            config = _read_small_json(snap / "config.json") if snap else None
            architectures = [str(a) for a in (config or {}).get("architectures") or []]
            weights = snap is not None and any(any(snap.glob(g)) for g in ("*.safetensors", "*.bin", "*.pt", "*.gguf"))
            family = _spec_family(architectures)
            models.append({"id": repo, "revisions": revisions, "main": main, "architectures": architectures,
                           "weights": weights, "spec": f"{family}:{repo}" if family else None})
    return {"folder": str(root), "models": models}


def catalog(datasets_dir: str | os.PathLike | None = None) -> dict:
    """Everything ``contstim models`` lists (see the module docstring)."""
    return {"families": family_entries(), "packaged": packaged_entries(),
            "precomputed": precomputed_entries(datasets_dir),
            "cached": {"converted": converted_entries(), "converted_folder": str(offline.models_dir()),
                       "hub": hub_entries()}}


# --------------------------------------------------------------------------- text


def format_catalog(cat: dict) -> str:
    """The plain-text listing of :func:`catalog`'s answer."""
    lines = ["Model families (spec FAMILY:TARGET?KEY=VALUE&..., as `contstim evaluate --model SPEC` takes it):"]
    for f in cat["families"]:
        lines.append(f"  {f['grammar']}")
        if f["description"]:
            lines.append(f"      {f['description']}")
        opts = f.get("open_options") or ("(none)" if f["options"] == [] else
                                          ", ".join(f["options"] or ["(not known: module not importable)"]))
        lines.append(f"      options: {opts}")
        if f["note"]:
            lines.append(f"      {f['note']}")
    lines += ["", "Packaged offline models (spec NAME; install with `contstim models pull NAME`):"]
    for m in cat["packaged"]:
        if m["installed"]:
            state = f"installed {m['installed_version']}"
            state += f", converted: {m['folder']}" if m["converted"] else ", not converted yet (on first use, or pull)"
            if m["missing"]:
                state += f"; missing {', '.join(m['missing'])}"
        else:
            state = f"not installed: {m['pull']}"
        lines.append(f"  {m['name']:<14} {m['package']}=={m['version']} ({m['license']}): {state}")
        lines.append(f"      {m['description']}")
    pre = cat["precomputed"]
    lines += ["", f"Reference models of the paper (spec precomputed:NAME; values from {pre['datasets']}):"]
    if pre["note"]:
        lines.append(f"  {pre['note']}")
    for n in pre["names"]:
        counts = "" if n["sentences"] is None else "; sentences: " + (
            ", ".join(f"{s} {c:,}" for s, c in n["sentences"].items()) or "none")
        lines.append(f"  {n['name']:<22} reference in {', '.join(n['experiments'])}{counts}")
    cached = cat["cached"]
    lines += ["", f"Converted offline models ({cached['converted_folder']}):"]
    for c in cached["converted"] or []:
        use = (f"in use: spec {c['spec']}" if c["current"] else
               "incomplete, not used" if not c["complete"] else "older conversion or package version, not used")
        lines.append(f"  {Path(c['folder']).name:<28} {c['size_mb']:>8.1f} MB  {use}")
    if not cached["converted"]:
        lines.append("  (none)")
    hub = cached["hub"]
    lines += ["", f"Hugging Face hub cache ({hub['folder']}):"]
    for h in hub["models"]:
        what = f"spec {h['spec']}" if h["spec"] else "no causal or masked LM head in its config"
        arch = ", ".join(h["architectures"]) or "no config.json"
        weights = "" if h["weights"] else "; no weights cached"
        lines.append(f"  {h['id']:<40} {what} ({arch}{weights})")
    if not hub["models"]:
        lines.append("  (none)")
    return "\n".join(lines)
