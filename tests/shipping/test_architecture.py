"""The house says what it is: the layers ARCHITECTURE.md draws, held against the code.

- every import of a module of ``contstim_bench`` (module-level or inside a function) goes to its
  own layer or one below it, never up, and siblings that must not know each other do not;
- no import circle between modules;
- no module over :data:`MAX_LINES` lines;
- no block of :data:`BLOCK` or more lines copied verbatim between two places of the package.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "contstim_bench"
MAX_LINES = 500
BLOCK = 6

LAYERS: list[tuple[str, ...]] = [
    ("_version", "names", "study", "citations", "spreadsheet", "progress", "provenance", "staging", "significance",
     "uncertainty"),
    ("data",),
    ("scoring", "plausibility"),
    ("analysis",),
    ("results",),
    ("benchmarks",),
    ("report", "generate", "experiment"),
    ("driver", "api", "scorefile", "plotting", "planning"),
    ("leaderboard", "spaces", "metric_hub", "harness_tasks", "brainscore_plugin", "__init__"),
    ("commands", "cli", "__main__"),
]
"""ARCHITECTURE.md's layers, bottom to top: the first component of a module's path inside the
package (a sub-package or a top-level module).  The package's own ``__init__`` (its public face)
sits just below the commands."""

SEPARATE = {("generate", "experiment"), ("experiment", "generate"), ("report", "generate"), ("generate", "report"),
            ("report", "experiment"), ("experiment", "report")}
"""Siblings of one layer that never import each other (the design file of data/ sits between
generate and experiment; the report reads results and computes nothing)."""


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        out[".".join(["contstim_bench", *parts])] = path
    return out


def _layer(module: str) -> tuple[int, str]:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for i, names in enumerate(LAYERS):
        if top in names:
            return i, top
    raise AssertionError(f"{module}: not in any layer of ARCHITECTURE.md ({top!r}); add it to LAYERS and the doc")


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The package modules ``module`` imports (module level and inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - (node.level - 1)]
                stem = ".".join(anchor + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            names = [stem] + [f"{stem}.{a.name}" for a in node.names]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module and name.startswith("contstim_bench"):
                found.add(name)
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(m, p, known) for m, p in mods.items()}


def test_every_import_runs_down_the_layers():
    wrong = []
    for module, targets in _graph().items():
        (mine, top) = _layer(module)
        for target in targets:
            if target == "contstim_bench" and module != "contstim_bench":
                wrong.append(f"{module} imports the package's face contstim_bench (import the module itself)")
                continue
            (theirs, other) = _layer(target)
            if theirs > mine:
                wrong.append(f"{module} (layer {mine}: {top}) imports {target} (layer {theirs}: {other}), up a layer")
            elif (top, other) in SEPARATE:
                wrong.append(f"{module} imports {target}: {top} and {other} never import each other")
    assert not wrong, "\n".join(wrong)


def test_no_import_circle():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                circles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not circles, "\n".join(" -> ".join(c) for c in circles)


def test_no_module_over_the_limit():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def _significant(line: str) -> bool:
    """A line that says something on its own (not blank, not only brackets or a keyword)."""
    text = line.strip()
    if text.startswith(("import ", "from ")):
        return False  # imports name what a module uses; they repeat by nature
    return len(text) > 3 and text not in {"else:", "try:", "return", "pass", "finally:", '"""', "break", "continue"}


def test_no_block_copied_verbatim():
    """No run of BLOCK lines (compared without indentation; blank lines and comments skipped;
    function signatures included: a parameter list copied beside another is one set of options
    spread twice, as ``RunOptions`` was in the API) with at least four that say something appears
    twice in the package: the code that does one thing is in one place."""
    seen: dict[tuple[str, ...], tuple[str, int]] = {}
    copies = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(PACKAGE))
        text = path.read_text(encoding="utf-8")
        lines = [(i + 1, ln.strip()) for i, ln in enumerate(text.splitlines())
                 if ln.strip() and not ln.strip().startswith("#")]
        last_end: dict[tuple[str, ...], int] = {}
        for k in range(len(lines) - BLOCK + 1):
            window = tuple(text for _, text in lines[k:k + BLOCK])
            if sum(_significant(t) for t in window) < 4:
                continue
            start = lines[k][0]
            if window in seen:
                where, first = seen[window]
                if where != rel or start > last_end.get(window, 0):
                    copies[(where, rel)].add((first, start))
            else:
                seen[window] = (rel, start)
            last_end[window] = lines[k + BLOCK - 1][0]
    report = [f"{a}:{min(x for x, _ in spots)} and {b}:{min(y for _, y in spots)} ({len(spots)} windows)"
              for (a, b), spots in sorted(copies.items())]
    assert not report, "blocks copied verbatim:\n" + "\n".join(report)
