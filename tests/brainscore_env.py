"""Brain-Score Language's environment for the tests and the docs test: a test helper on ``sys.path``
(as ``tiny_causal``), also run as a script by the docs' Brain-Score example.

- :func:`built`: the python of the cached environment (``scripts/build_brainscore_venv.sh``:
  brainscore-language 2.3.0 with its pins, built once per machine);
- :func:`layer`: a light virtual environment on top of it, whose own ``brainscore_language`` is a
  copy, so that a plugin copied into its ``benchmarks/`` (as a user installs one) never touches the
  cached environment, and whose ``contstim_bench`` is this checkout's;
- :func:`save_subject_model`: a tiny GPT-2 saved by transformers 4 (run it with the layer's python),
  its tokenizer adding a start token or not.

``python tests/brainscore_env.py layer DIR`` and ``python tests/brainscore_env.py subject DIR
[--no-start-token]`` do the same from a shell.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def built() -> Path:
    """The python of the cached Brain-Score environment (built on first use: a few minutes).
    RuntimeError with the build's last words when it cannot be built here."""
    done = subprocess.run(["bash", str(REPO / "scripts" / "build_brainscore_venv.sh")], capture_output=True,
                          text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"no Brain-Score environment could be built here: {done.stderr.strip()[-800:]}")
    return Path(done.stdout.strip().splitlines()[-1])


def _site(python: Path, module: str | None = None) -> Path:
    code = ("import sysconfig; print(sysconfig.get_paths()['purelib'])" if module is None else
            f"import {module}, os; print(os.path.dirname({module}.__file__))")
    return Path(subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip())


def layer(folder: str | Path, base: Path | None = None) -> Path:
    """A virtual environment at ``folder`` (with its own pip, which Brain-Score's ``pip install -r``
    of a plugin's requirements then uses) that sees this checkout first, then the cached
    environment's packages, and holds a copy of ``brainscore_language``; its python."""
    base = base or built()
    folder = Path(folder).resolve()
    subprocess.run([str(base), "-m", "venv", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = _site(python)
    (site / "contstim_brainscore_base.pth").write_text(f"{REPO}\n{_site(base)}\n", encoding="utf-8")
    shutil.copytree(_site(base, "brainscore_language"), site / "brainscore_language",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return python


def save_subject_model(folder: str | Path, start_token: bool = True) -> Path:
    """A random 2-layer GPT-2 on the BPE tokenizer of ``tiny_causal``, saved to ``folder`` by the
    running transformers (4.x in Brain-Score's environment).  With ``start_token`` its tokenizer
    adds ``<s>`` before every text, as Llama's and Gemma's do."""
    import torch
    import transformers
    from tokenizers.processors import TemplateProcessing
    from transformers import GPT2Config, GPT2LMHeadModel

    import tiny_causal

    assert transformers.__version__.startswith("4."), transformers.__version__
    tokenizer = tiny_causal.build_tokenizer(bos=True)
    if start_token:
        tokenizer.backend_tokenizer.post_processor = TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", tokenizer.bos_token_id)])
    tokenizer.model_max_length = 256
    # as GPT-2's own tokenizer: no token_type_ids (GPT-2 would add their embedding to every position)
    tokenizer.model_input_names = tokenizer.init_kwargs["model_input_names"] = ["input_ids", "attention_mask"]
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=4, n_positions=256,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(3)
    model = GPT2LMHeadModel(config)
    with torch.no_grad():  # larger weights: probabilities differ clearly between sentences
        for p in model.parameters():
            p.mul_(8.0 if p.dim() > 1 else 1.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return Path(folder)


if __name__ == "__main__":
    command, target, *flags = sys.argv[1:]
    if command == "layer":
        print(layer(target))
    elif command == "subject":
        print(save_subject_model(target, start_token="--no-start-token" not in flags))
    else:
        raise SystemExit(f"unknown command {command!r}: layer DIR | subject DIR [--no-start-token]")
