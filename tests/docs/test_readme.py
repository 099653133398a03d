"""Every code block of the README and of the ``docs/`` pages runs, in order, as a user would run it
(or says why it cannot).

The pages run in one deterministic order: ``README.md`` first, then the ``docs/*.md`` pages of
:data:`PAGES` in its order (a page's blocks use files that the blocks of earlier pages wrote, e.g.
``models/trigram.arpa`` from the README's Compare section, ``results/smollm2-135m.json`` from its
Evaluate section, ``sentences.txt`` and ``corpus.txt`` from ``docs/models.md``), then any other
``docs/*.md`` page in alphabetical order; within a page, top to bottom
(:func:`test_blocks_run_after_the_blocks_whose_files_they_use` checks this order for the files of
:data:`SHARED_FILES`).  A test id names the file and the line of the opening fence, e.g.
``docs/models.md:L17-run-bash``.

Each fenced block is preceded by a marker comment (invisible on GitHub):

- ``<!-- readme-test: run [timeout=S] [before="CMD"] [sub="OLD => NEW ;; ..."] [drop="TEXT ;; ..."] -->``:
  a ``bash`` block runs in ``bash -euo pipefail``, a ``python`` block with this interpreter, in one
  work folder shared by every block of every page (later blocks use what earlier ones wrote), with
  the offline models and the tests' caches.  ``before`` runs first (to create an input file the block names),
  ``sub`` replaces placeholders (e.g. a Hub model that cannot be downloaded here by an offline one),
  ``$CONTSTIM_README_ROOT`` in ``before`` is the repository (for the tests' data generators),
  ``$CONTSTIM_README_DATA`` the raw data folder the package reads (``$CONTSTIM_RAW_DATA``, else
  ``../shared/data``),
  ``drop`` removes the commands containing TEXT (with their continuation lines);
- ``<!-- readme-test: output -->`` on a ``text`` block: every non-blank line of it must appear, in
  order and exactly (trailing spaces aside), in what the last ``run`` block of the same page printed,
  so the test fails when a shown output changes;
- ``<!-- readme-test: skip REASON -->``: not run here, and why (downloads, hours of compute, a
  server that runs until stopped); the reason is required.

A block without a marker fails the test: a new example is either run or explained.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "contstim_bench").is_dir())
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = ("evaluate.md", "lm-eval.md", "brainscore.md", "report.md", "analyses.md", "models.md", "large-models.md", "datasets.md", "plausibility-blimp.md",
         "generation.md", "experiment.md", "rounds.md", "leaderboard.md", "reliability.md", "shipping.md",
         "performance.md", "testing.md")
"""The ``docs/`` pages in the order their blocks run, after the README's (see the module docstring)."""
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!-- readme-test: (run|output|skip)\b(.*?)-->\s*$")
OPTION = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


@dataclass
class Block:
    page: str  # the file, relative to the repository: README.md, docs/models.md
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    kind: str | None  # run, output, skip (None: unmarked)
    options: dict = field(default_factory=dict)
    reason: str = ""

    @property
    def id(self) -> str:
        return f"{self.page}:L{self.line}-{self.kind or 'unmarked'}-{self.lang or 'text'}"

    @property
    def where(self) -> str:
        return f"{self.page} line {self.line}"


def pages() -> list[Path]:
    """The pages whose blocks run, in their order: README.md, the pages of :data:`PAGES`, then any
    other ``docs/*.md`` page alphabetically."""
    listed = [DOCS / name for name in PAGES]
    others = sorted(p for p in DOCS.glob("*.md") if p.name not in PAGES)
    return [README, *listed, *others]


def blocks(text: str, page: str = "README.md") -> list[Block]:
    """The fenced blocks of ``text`` (the page ``page``) with their markers (the last non-blank line
    before the fence)."""
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        prev = start - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        marker = MARKER.match(lines[prev]) if prev >= 0 else None
        kind, options, reason = None, {}, ""
        if marker:
            kind, rest = marker.group(1), marker.group(2).strip()
            if kind == "skip":
                reason = rest
            else:
                for key, value in OPTION.findall(rest):
                    options[key] = value[1:-1].replace('\\"', '"') if value.startswith('"') else value
        out.append(Block(page, start + 1, lang, "\n".join(lines[start + 1:j]) + "\n", kind, options, reason))
        i = j + 1
    return out


BLOCKS = [b for p in pages() if p.is_file()
          for b in blocks(p.read_text(encoding="utf-8"), p.relative_to(ROOT).as_posix())]


def _drop(code: str, texts: list[str]) -> str:
    """``code`` without the commands containing any of ``texts`` (a command: a line and the lines
    its trailing backslashes continue onto)."""
    out, lines, i = [], code.splitlines(), 0
    while i < len(lines):
        command = [lines[i]]
        while command[-1].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            command.append(lines[i])
        if not any(t in "\n".join(command) for t in texts):
            out += command
        i += 1
    return "\n".join(out) + "\n"


def prepared(block: Block) -> str:
    code = block.code
    for pair in filter(None, (p.strip() for p in block.options.get("sub", "").split(";;"))):
        old, _, new = pair.partition("=>")
        old, new = old.strip(), new.strip()
        assert old in code, f"{block.where}: sub {old!r} not found in the block"
        code = code.replace(old, new)
    drops = [t.strip() for t in block.options.get("drop", "").split(";;") if t.strip()]
    if drops:
        for t in drops:
            assert t in code, f"{block.where}: drop {t!r} not found in the block"
        code = _drop(code, drops)
    return code


def test_pages_are_listed_once_and_exist():
    missing = [name for name in PAGES if not (DOCS / name).is_file()]
    assert not missing, f"PAGES names pages that do not exist: {missing}"
    assert len(set(PAGES)) == len(PAGES), "a page listed twice in PAGES"


SHARED_FILES = {
    "models/trigram.arpa": "--output models/trigram.arpa",
    "results/smollm2-135m.json": 'output="results/smollm2-135m.json"',
    "results/precomputed_roberta.json": "contstim evaluate --model precomputed:roberta --plots",
    ".datasets/contstim": "contstim evaluate",
    "sentences.txt": "> sentences.txt",
    "corpus.txt": " corpus.txt;",
}
"""Files that a run block reads from the shared work folder -> what the block that writes them says
(in its code or its ``before``)."""


def test_blocks_run_after_the_blocks_whose_files_they_use():
    """Every run block that names a file of :data:`SHARED_FILES` (in its code, ``before`` or ``sub``)
    comes after the first block that writes it, in the order the pages run."""
    runs = [b for b in BLOCKS if b.kind == "run"]
    text = [b.code + "\n" + "\n".join(b.options.values()) for b in runs]
    late = []
    for name, writes in SHARED_FILES.items():
        writer = next((k for k, t in enumerate(text) if writes in t), None)
        assert writer is not None, f"no run block writes {name} (none says {writes!r})"
        late += [f"{runs[k].where} uses {name}, written later by {runs[writer].where}"
                 for k, t in enumerate(text[:writer]) if name in t]
    assert not late, "; ".join(late)


def test_every_block_is_marked():
    unmarked = [f"{b.where} ({b.lang or 'text'})" for b in BLOCKS if b.kind is None]
    assert not unmarked, ("code blocks without a `<!-- readme-test: run|output|skip REASON -->` marker: "
                          + "; ".join(unmarked))
    no_reason = [b.where for b in BLOCKS if b.kind == "skip" and len(b.reason) < 10]
    assert not no_reason, f"skipped blocks must say why ({no_reason})"
    orphans = [b.where for k, b in enumerate(BLOCKS) if b.kind == "output"
               and not any(a.kind == "run" and a.page == b.page for a in BLOCKS[:k])]
    assert not orphans, f"output blocks with no run block before them on their page ({orphans})"
    assert len({b.id for b in BLOCKS}) == len(BLOCKS)


@pytest.fixture(scope="module")
def work(tmp_path_factory, pll_logprobs):
    """The pages' one working folder and environment: the package's commands on PATH, offline, its
    own datasets folder (docs/report.md builds an extra one with a main-experiment file), the tests'
    score cache (holding SmolLM2's and Gemma's pll scores: ``pll_logprobs``, conftest) and converted
    offline models, one thread per process."""
    folder = tmp_path_factory.mktemp("readme")
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["CONTSTIM_DATASETS"] = str(folder / ".datasets")
    from contstim_bench.data.sources import local_data_dir

    data = local_data_dir()
    assert data is not None and data.is_dir(), "the raw data folder: set $CONTSTIM_RAW_DATA or put it at ../shared/data"
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1", CONTSTIM_README_ROOT=str(ROOT),
               CONTSTIM_README_DATA=str(data))
    return {"dir": folder, "env": env, "last_output": None}


def _run(cmd: list[str], work: dict, timeout: float, what: str) -> str:
    proc = subprocess.run(cmd, cwd=work["dir"], env=work["env"], capture_output=True, text=True, timeout=timeout)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{what} failed with exit code {proc.returncode}:\n{output[-6000:]}"
    return output


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.kind in ("run", "output")], ids=lambda b: b.id)
def test_readme_block(block: Block, work):
    if block.kind == "output":
        expected = [ln.rstrip() for ln in block.code.splitlines() if ln.strip()]
        assert work["last_output"] is not None, f"{block.where}: the block it shows did not run"
        shown = [ln.rstrip() for ln in work["last_output"].splitlines()]
        k = 0
        for ln in shown:
            if k < len(expected) and ln == expected[k]:
                k += 1
        assert k == len(expected), (f"{block.where}: the shown output differs from what the command "
                                    f"printed; first line not found in order: {expected[k]!r}\n"
                                    f"--- printed ---\n{work['last_output'][-6000:]}")
        return
    work["last_output"] = None
    timeout = float(block.options.get("timeout", 600))
    if "before" in block.options:
        _run(["bash", "-euo", "pipefail", "-c", block.options["before"]], work, timeout,
             f"{block.where} (before)")
    code = prepared(block)
    if block.lang == "python":
        script = work["dir"] / f"{re.sub(r'[^A-Za-z0-9]+', '_', block.page)}_{block.line}.py"
        script.write_text(code, encoding="utf-8")
        cmd = [sys.executable, str(script)]
    elif block.lang in ("bash", "sh", "shell"):
        cmd = ["bash", "-euo", "pipefail", "-c", code]
    else:
        pytest.fail(f"{block.where}: cannot run a {block.lang or 'text'} block")
    work["last_output"] = _run(cmd, work, timeout, f"{block.where}: {shlex.quote(code[:200])}")
