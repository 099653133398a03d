"""Sentence log-probabilities from any lm-evaluation-harness backend:
``lm-eval:<model type>?<model args>``.

lm-eval speaks to models wherever they run (in this process: ``hf``, ``vllm``; behind a server:
``local-completions`` and the other API backends) through one request, ``loglikelihood(context,
continuation)``.  This family asks it for ``("", sentence)`` with the backend's prefix token set to
the start token, so a sentence is scored exactly as ``hf-causal`` scores it: ``log p(w_1 .. w_n) =
sum_i log p(w_i | <start>, w_1 .. w_{i-1})`` in nats, the first word included.

* Target: the lm-eval model type (``lm_eval.api.registry.get_model``).  Options: the model's
  arguments (``pretrained=...&dtype=float32``; lm-eval's ``--model_args`` with ``&`` for ``,``)
  plus this package's ``start=<token>``.  A ``pretrained``/``tokenizer``/``model`` that is a short
  name of a packaged model (``smollm2-135m``) stands for its converted folder.
* Start token, in order: ``?start=``, the start token recorded in the model's folder (converted
  packaged models), the tokenizer's BOS, its EOS: the ``hf-causal`` rule.
* Identity (the cache key and the result file's ``fingerprint``): the model type and every model
  argument that changes the numbers, the start token, and the files of a local model folder
  (weights, config, tokenizer).  A Hub id is identified by its ``revision`` argument, a served
  model by its address and model name: the package cannot see what a server runs, which is why a
  leaderboard never verifies such a result.
* What the backend returns is checked (:mod:`.harness_checks`); credentials never enter a spec
  (:mod:`.credentials`), and what the backend holds (its key, its headers) is removed from errors
  and from lm-eval's log records.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from .base import hash_files, LoadSettings, Scorer
from .credentials import Redactor, guard_loggers
from .harness_checks import BackendOutputError, check_loglikelihoods, watch_completions
from .spec import format_spec

OPTION_KEYS = None
"""Any lm-eval model argument is accepted (the backend names a wrong one); ``start`` is ours."""

RUN_SETTINGS = frozenset({
    "batch_size", "max_batch_size", "device", "num_concurrent", "max_retries", "timeout", "parallelize",
    "device_map", "max_memory_per_gpu", "max_cpu_memory", "offload_folder", "verify_certificate",
    "ca_cert_path", "tokenizer_backend", "tokenized_requests", "use_fast_tokenizer", "gpu_memory_utilization",
    "tensor_parallel_size", "data_parallel_size", "swap_space", "seed", "max_gen_toks", "logits_cache",
})
"""Model arguments that change how a backend runs, not its numbers: left out of the identity."""

FOLDER_ARGS = ("pretrained", "model", "tokenizer")
"""Model arguments that may name a model folder (hashed into the identity when they do)."""

IN_PROCESS_BATCH = {"hf": 32, "hf-auto": 32, "huggingface": 32}
"""Default batch size of the transformers backends (lm-eval's own default is 1).  They also run on
the ``hf-causal`` defaults unless told otherwise: float32 weights, CUDA when available, else the
CPU, and the log-softmax in float64 (``softmax_dtype``): lm-eval's float32 read-out is up to 2.8e-4
nats away from ``hf-causal`` on the pll stimuli (SmolLM2), the float64 one 3.1e-5."""


@runtime_checkable
class TokenizedBackend(Protocol):
    """An lm-eval backend that tokenises with a tokenizer of its own (``hf``, ``vllm``, the API
    backends with ``tokenizer_backend=huggingface``)."""

    tokenizer: object


def _hf_tokenizer(lm) -> object | None:
    """The backend's Hugging Face tokenizer, or None."""
    from transformers import PreTrainedTokenizerBase

    tok = lm.tokenizer if isinstance(lm, TokenizedBackend) else None
    return tok if isinstance(tok, PreTrainedTokenizerBase) else None


def _local_folder(value: str) -> Path | None:
    path = Path(value).expanduser()
    return path if path.is_dir() else None


class HarnessScorer(Scorer):
    """Sentence log-probabilities from one lm-evaluation-harness backend (see the module
    docstring).  ``model_type``: the lm-eval model name; ``model_args``: its arguments as text
    (converted as lm-eval converts ``--model_args``); ``start``: the start token (None: the
    ``hf-causal`` rule).  The backend is built on first use."""

    method = "causal"

    def __init__(self, model_type: str, model_args: dict[str, str], *, start: str | None = None,
                 default_start: str | None = None, device=None, dtype=None, batch_size=None,
                 cache=None, progress: bool = True, spec: str = "") -> None:
        super().__init__(cache=cache, progress=progress)
        self.model_type = model_type
        self.model_args = dict(model_args)
        self.spec = spec or format_spec("lm-eval", model_type, model_args)
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size if batch_size is not None else IN_PROCESS_BATCH.get(model_type)
        self._start_option = start
        self._default_start = default_start
        self._lm = None
        self.start_token: str | None = start
        self._fingerprint: str | None = None
        self.redact = Redactor()
        #: the arguments the backend was built with (the spec's, then the run settings and defaults)
        self.backend_args: dict[str, str] = {}

    # ----------------------------------------------------------------------------- identity
    def _run_dtype(self) -> str | None:
        """The dtype the backend gets: ``--dtype`` in lm-eval's spelling (``bf16`` -> ``bfloat16``),
        float32 for the transformers backends when none is given, else None (the backend's own)."""
        if self.dtype is None:
            return "float32" if self.model_type in IN_PROCESS_BATCH else None
        from .devices import resolve_dtype

        return str(resolve_dtype(self.dtype)).removeprefix("torch.")

    def _folders(self) -> list[Path]:
        return [f for f in (_local_folder(self.model_args[k]) for k in FOLDER_ARGS if k in self.model_args) if f]

    def fingerprint(self) -> str:
        """sha256 of the model type, the identity arguments, the start token asked for and the
        files of every local model folder the arguments name."""
        if self._fingerprint is None:
            from .hf_loading import causal_model_files, recorded_start_token

            folders = self._folders()
            identity = {k: v for k, v in sorted(self.model_args.items()) if k not in RUN_SETTINGS | set(FOLDER_ARGS)}
            names = {k: v for k, v in self.model_args.items() if k in FOLDER_ARGS and not _local_folder(v)}
            extra = {"kind": "lm-eval", "type": self.model_type, "args": identity, "names": names,
                     "start": self._start_option or self._default_start,
                     "recorded_start": [recorded_start_token(f) for f in folders],
                     "dtype": self.model_args.get("dtype") or self._run_dtype()}
            files = [p for folder in folders for p in causal_model_files(folder)]
            self._fingerprint = hash_files(files, extra=extra) if files else \
                hashlib.sha256(json.dumps(extra, sort_keys=True).encode()).hexdigest()
        return self._fingerprint

    def describe(self) -> dict:
        lm = self.lm
        d = super().describe()
        import lm_eval

        from lm_eval.models.huggingface import HFLM

        dtype = str(lm.model.dtype).removeprefix("torch.") if isinstance(lm, HFLM) else self._run_dtype()
        d.update({
            "backend": self.model_type,
            "model_args": self.backend_args,
            "lm_eval_version": getattr(lm_eval, "__version__", None),
            "start_token": self.start_token,
            "revision": self.model_args.get("revision"),
            "dtype": None if dtype is None else str(dtype),
            "device": None if self.device is None else str(self.device),
            "batch_size": self.batch_size,
        })
        return d

    # ------------------------------------------------------------------------------ tokens
    def context_length(self) -> int | None:
        """The backend's context in tokens (a transformers backend's ``max_length``); None for the
        others."""
        from lm_eval.models.huggingface import HFLM

        return int(self.lm.max_length) if isinstance(self.lm, HFLM) else None

    def token_lengths(self, sentences) -> list[int]:
        """Tokens of each sentence as the backend scores it: its Hugging Face tokenizer's pieces and
        the start token (the prefix of an empty context), as ``hf-causal`` counts them.  ValueError
        for a backend without such a tokenizer (a served model that tokenises on its server)."""
        tok = _hf_tokenizer(self.lm)
        if tok is None:
            raise ValueError(f"{self.spec}: the backend {self.model_type!r} has no Hugging Face tokenizer here, so "
                             "its tokens cannot be counted (give tokenizer_backend=huggingface and tokenizer=...)")
        return [len(ids) + 1 for ids in tok(list(sentences), add_special_tokens=False)["input_ids"]]

    # ------------------------------------------------------------------------------ backend
    @property
    def lm(self):
        """The lm-eval model (built on first access), its prefix token set to the start token."""
        if self._lm is None:
            self._lm = self._build()
        return self._lm

    def _build(self):
        import lm_eval.models  # noqa: F401  (registers every backend)
        from lm_eval.api.registry import get_model
        from lm_eval.models.openai_completions import LocalCompletionsAPI
        from lm_eval.utils import handle_arg_string

        try:
            cls = get_model(self.model_type)
        except ValueError:
            from lm_eval.api.registry import model_registry

            raise ValueError(f"{self.spec}: lm-eval has no model type {self.model_type!r}; its types: "
                             f"{', '.join(sorted(model_registry.keys()))}") from None
        args = {k: handle_arg_string(v) for k, v in self.model_args.items()}
        run = {"batch_size": self.batch_size, "device": self.device, "dtype": self._run_dtype()}
        if self.model_type in IN_PROCESS_BATCH:
            from .devices import resolve_device

            run["device"] = run["device"] or str(resolve_device(None))
            run["softmax_dtype"] = "float64"
        args.update({k: v for k, v in run.items() if v is not None and k not in args})
        self.backend_args = {k: str(v) for k, v in sorted(args.items())}
        try:
            lm = cls.create_from_arg_obj(args)
        except ModuleNotFoundError:  # a backend's own dependency: its message says what to install
            raise
        except Exception as exc:  # noqa: BLE001 - any backend's failure, named with its type
            raise RuntimeError(f"{self.spec}: lm-eval could not build backend {self.model_type!r}: "
                               f"{type(exc).__name__}: {self.redact(str(exc))}") from None
        from lm_eval.api.model import TemplateLM

        if not isinstance(lm, TemplateLM):
            raise ValueError(f"{self.spec}: lm-eval backend {self.model_type!r} ({type(lm).__name__}) does not condition "
                             "an empty context on a start token (it is no TemplateLM), so it cannot score the first "
                             "word as hf-causal does")
        self.redact = Redactor(_held_secrets(lm))
        guard_loggers(self.redact, "lm_eval")
        if isinstance(lm, LocalCompletionsAPI):  # per-token values are reported: check them
            lm.parse_logprobs = watch_completions(type(lm).parse_logprobs, self.model_type)
        self._set_start(lm)
        return lm

    def _set_start(self, lm) -> None:
        """Make ``lm`` condition every sentence on the start token (its ``custom_prefix_token_id``,
        which ``hf``, ``vllm`` and the API backends read for an empty context) and check it does."""
        tok = _hf_tokenizer(lm)
        start = self._start_option or self._default_start
        if start is None and tok is not None:
            from .hf_loading import recorded_start_token

            start = next((s for s in map(recorded_start_token, self._folders()) if s), None) \
                or tok.bos_token or tok.eos_token
        if start is not None:
            if tok is None:
                raise ValueError(f"{self.spec}: start={start} needs a Hugging Face tokenizer, and backend "
                                 f"{self.model_type!r} has none (use its tokenizer_backend=huggingface)")
            vocab = tok.get_vocab()
            if start not in vocab:
                raise ValueError(f"{self.spec}: start token {start!r} is not a single token of the model's vocabulary")
            lm.custom_prefix_token_id = int(vocab[start])
            vars(lm).pop("prefix_token_id", None)  # a cached_property computed before
        prefix = lm.prefix_token_id
        if start is not None and prefix != lm.custom_prefix_token_id:
            raise ValueError(f"{self.spec}: backend {self.model_type!r} conditions on token id {prefix}, not on the "
                             f"start token {start!r}")
        if prefix is None:
            raise ValueError(f"{self.spec}: backend {self.model_type!r} has no start token to condition the first "
                             "word on; give one with ?start=<token>")
        self.start_token = start if start is not None else f"<token id {prefix}>"

    # ------------------------------------------------------------------------------ scoring
    def _score_unique(self, sentences: list[str]) -> np.ndarray:
        from lm_eval.api.instance import Instance

        lm = self.lm
        requests = [Instance(request_type="loglikelihood", doc={}, arguments=("", s), idx=i)
                    for i, s in enumerate(sentences)]
        try:
            answers = lm.loglikelihood(requests, disable_tqdm=not self.progress)
        except BackendOutputError:
            raise
        except Exception as exc:  # noqa: BLE001 - a server's or a backend's failure, named without secrets
            raise RuntimeError(f"{self.spec}: lm-eval backend {self.model_type!r} failed: "
                               f"{type(exc).__name__}: {self.redact(str(exc))}") from None
        return check_loglikelihoods(answers, sentences, self.model_type)


def _held_secrets(lm) -> list[str]:
    """The credentials an API backend holds (its key from the environment, its auth token and the
    values of its request headers), to be removed from messages and logs."""
    from lm_eval.models.api_models import TemplateAPI

    if not isinstance(lm, TemplateAPI):
        return []
    held = [str(lm.api_key or ""), str(lm.auth_token or "")]
    try:
        headers = lm.header or {}
    except Exception:  # noqa: BLE001 - a backend whose key is missing raises here; nothing is held
        headers = {}
    for value in headers.values():
        held.append(str(value))
        held.append(str(value).split(" ", 1)[-1])  # "Bearer <key>" -> the key
    return held


def from_spec(target: str, options: dict[str, str], load: LoadSettings) -> HarnessScorer:
    """Factory of ``lm-eval:<model type>?<model args>&start=<token>`` (see the module docstring)."""
    from . import offline

    try:
        import lm_eval  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name == "lm_eval":
            raise ModuleNotFoundError("the lm-eval model family needs lm-evaluation-harness: "
                                      "pip install 'contstim-bench[lm-eval]'", name="lm_eval") from None
        raise
    args = dict(options)
    start = args.pop("start", None)
    default_start = None
    for key in FOLDER_ARGS:
        if args.get(key) in offline.OFFLINE_MODELS:
            name = args[key]
            args[key] = str(offline.model_dir(name, progress=load.options.progress))
            default_start = default_start or offline.OFFLINE_MODELS[name].start_token
    return HarnessScorer(target, args, start=start, default_start=default_start, device=load.options.device, dtype=load.options.dtype,
                         batch_size=load.options.batch_size, cache=load.options.cache, progress=load.options.progress,
                         spec=format_spec(load.kind, target, options))
