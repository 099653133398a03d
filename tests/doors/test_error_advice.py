"""Every ``--flag`` the package suggests exists on the command that would show the suggestion.

The messages are collected from the source (every string literal and f-string of the package
that is not a docstring or an argparse definition: errors, notes, printed advice, dataset-card
text), and the help texts from the ``contstim`` parsers themselves.  A flag in a message counts
for the command the message names (``contstim data build --only contstim``, ```generate
design --experiment```, ``python dataset_scripts/contstim.py --main-results FILE``); a flag
named without a command must exist on every ``contstim`` command that can reach the module
(through the imports of its command module), because any of them may print it.  A help text's
flags must exist on its own parser or on the command it names.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import pkgutil
import re
from functools import lru_cache
from pathlib import Path

import pytest

import contstim_bench
from contstim_bench import commands
from contstim_bench.cli import build_parser

PACKAGE = Path(contstim_bench.__file__).resolve().parent
ROOT = PACKAGE.parent
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
EXTERNAL = re.compile(r"\b(?:pip install|lmplz|accelerate launch|torchrun|hf upload|lm_eval|lm-eval's)(?!\w)")
SCRIPT = re.compile(r"python dataset_scripts/(\w+)\.py")
PARSER_KEYWORDS = {"help", "description", "metavar", "epilog", "usage"}


# --------------------------------------------------------------------------- the parsers


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, path + (name,))


@lru_cache(maxsize=1)
def parsers() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every parser of ``contstim`` by its command path (``()`` is ``contstim`` itself)."""
    return dict(_walk(build_parser()))


def options(path: tuple[str, ...]) -> set[str]:
    return {o for a in parsers()[path]._actions for o in a.option_strings}


def options_under(top: str) -> set[str]:
    """The flags of a command and all its sub-commands (``generate`` -> synthetic, select ...)."""
    return {o for path in parsers() if path[:1] == (top,) for o in options(path)}


@lru_cache(maxsize=1)
def command_modules() -> dict[str, list[str]]:
    """``contstim_bench.commands.X`` -> the top-level command names it registers."""
    out = {}
    for info in pkgutil.iter_modules(commands.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        sub = argparse.ArgumentParser().add_subparsers()
        module.register(sub)
        out[module.__name__] = list(sub.choices)
    return out


@lru_cache(maxsize=None)
def script_options(name: str) -> set[str]:
    """The flags of ``python dataset_scripts/<name>.py`` (its argparse parser, run with --help)."""
    import contextlib
    import io
    import runpy

    main = runpy.run_path(str(ROOT / "dataset_scripts" / f"{name}.py"), run_name="dataset_script")["main"]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit):
        main(["--help"])
    return set(FLAG.findall(buf.getvalue()))


# --------------------------------------------------------------------------- imports


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _resolve(current: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


@lru_cache(maxsize=1)
def import_graph() -> dict[str, set[str]]:
    """Module -> package modules it imports anywhere (top level or inside functions, or by name
    through a registry string), with the packages whose ``__init__`` those imports run."""
    known = modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, path.name == "__init__.py", node.level, node.module)
                targets.add(base)
                targets.update(f"{base}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                # imported by name at run time (the registries: "contstim_bench.scoring.ngram:from_spec")
                targets.update(re.findall(r"\bcontstim_bench(?:\.\w+)+", node.value))
        edges = set()
        for t in targets:
            parts = t.split(".")
            for k in range(1, len(parts) + 1):
                if ".".join(parts[:k]) in known:
                    edges.add(".".join(parts[:k]))
        graph[name] = edges - {name}
    return graph


@lru_cache(maxsize=None)
def closure(module: str) -> frozenset[str]:
    seen, todo = {module}, [module]
    while todo:
        for nxt in import_graph().get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return frozenset(seen)


def raising_commands(module: str) -> dict[str, set[str]]:
    """``{command module: its flags}`` for every command whose imports reach ``module``."""
    out = {}
    for cmd, tops in command_modules().items():
        if module in closure(cmd):
            out[cmd] = set().union(*(options_under(t) for t in tops))
    return out


# --------------------------------------------------------------------------- messages


def _text(node) -> str:
    if isinstance(node, ast.Constant):
        return node.value
    return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)


def messages(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every user-facing string of a module: literals and f-strings (values as
    ``{}``) except docstrings, argparse definitions and bare flag tokens (subprocess arguments)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
                skip.add(id(node.body[0].value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):  # attribute docstrings
            skip.add(id(node.value))
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("add_argument", "add_parser", "add_argument_group"):
                for sub in ast.walk(node):
                    skip.add(id(sub))
            for kw in node.keywords:
                if kw.arg in PARSER_KEYWORDS:
                    for sub in ast.walk(kw.value):
                        skip.add(id(sub))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            for v in node.values:
                skip.add(id(v))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            text = _text(node)
            if FLAG.search(text) and not re.fullmatch(r"\s*--[\w-]+\s*", text):
                out.append((node.lineno, text))
    return out


def _command_paths() -> list[tuple[str, ...]]:
    return sorted((p for p in parsers() if p), key=len, reverse=True)


def mentions(text: str) -> list[tuple[int, object]]:
    """(position, what) of every command a text names: a ``contstim`` path (tuple), a dataset
    script (``("script", name)``), or an outside program (``None``: its flags are not ours)."""
    found = []
    for m in re.finditer(r"\bcontstim((?: [a-z][a-z-]*)+)", text):
        words = m.group(1).split()
        for path in _command_paths():
            if tuple(words[: len(path)]) == path:
                found.append((m.start(), path))
                break
    for m in re.finditer(r"`([a-z][a-z-]*(?: [a-z][a-z-]*)*)", text):  # `generate design --experiment`
        words = m.group(1).split()
        for path in _command_paths():
            if tuple(words[: len(path)]) == path:
                found.append((m.start(), path))
                break
    for m in SCRIPT.finditer(text):
        found.append((m.start(), ("script", m.group(1))))
    for m in EXTERNAL.finditer(text):
        found.append((m.start(), None))
    return sorted(found, key=lambda x: x[0])


def attributed_flags(text: str) -> list[tuple[str, object]]:
    """Each flag of ``text`` with the command it is suggested for (the last one named before it,
    or ``"unnamed"``)."""
    marks = mentions(text)
    out = []
    for m in FLAG.finditer(text):
        owner: object = "unnamed"
        for pos, what in marks:
            if pos < m.start():
                owner = what
        out.append((m.group(0), owner))
    return out


def _problems_of(module: str, line: int, text: str) -> list[str]:
    problems = []
    for flag, owner in attributed_flags(text):
        where = f"{module}:{line}: {flag} in {text[:90]!r}"
        if owner is None:
            continue
        if owner == "unnamed":
            reach = raising_commands(module)
            lacking = sorted(cmd.rsplit(".", 1)[1] for cmd, flags in reach.items() if flag not in flags)
            if lacking:
                problems.append(f"{where}: names no command, and `contstim {'/'.join(lacking)}` can show it "
                                f"but has no {flag}")
        elif owner[0] == "script":
            if flag not in script_options(owner[1]):
                problems.append(f"{where}: dataset_scripts/{owner[1]}.py has no {flag}")
        elif flag not in options(owner):
            problems.append(f"{where}: `contstim {' '.join(owner)}` has no {flag}")
    return problems


# --------------------------------------------------------------------------- tests


def test_the_walk_finds_the_messages():
    """The collection sees what it must: f-string messages, named commands, and the flags."""
    found = {m: messages(p) for m, p in modules().items()}
    assert sum(len(v) for v in found.values()) > 30
    text = next(t for _, t in found["contstim_bench.data.build_contstim"] if "rebuild with" in t and "{}" in t)
    assert ("--only", ("data", "build")) in attributed_flags(text)
    assert ("--main-results", ("data", "build")) in attributed_flags(text)
    assert ("--main-results", ("script", "contstim")) in attributed_flags(
        "or build it with `python dataset_scripts/contstim.py --main-results FILE`")
    assert "contstim_bench.commands.evaluate" in raising_commands("contstim_bench.data.sources")
    assert ("leaderboard", "validate") in parsers() and "--results" in options(("leaderboard", "validate"))


def test_every_flag_in_a_message_exists_where_it_is_suggested():
    problems = []
    for module, path in sorted(modules().items()):
        for line, text in messages(path):
            problems += _problems_of(module, line, text)
    assert problems == []


def test_every_flag_in_a_help_text_exists():
    problems = []
    for path, parser in parsers().items():
        texts = [parser.description or ""] + [a.help or "" for a in parser._actions]
        for text in texts:
            for flag, owner in attributed_flags(text):
                if owner is None:
                    continue
                if owner == "unnamed":
                    # a parent's help may describe its sub-commands' flags
                    mine = options(path) | {o for p in parsers() if p[: len(path)] == path for o in options(p)}
                    if flag not in mine:
                        problems.append(f"contstim {' '.join(path)}: help names {flag}, which it does not have: {text[:90]!r}")
                elif owner[0] == "script":
                    if flag not in script_options(owner[1]):
                        problems.append(f"contstim {' '.join(path)}: help names dataset_scripts/{owner[1]}.py {flag}")
                elif flag not in options(owner):
                    problems.append(f"contstim {' '.join(path)}: help names `contstim {' '.join(owner)}` {flag}")
    assert problems == []


def test_a_wrong_suggestion_is_caught():
    """The check fails for the advice of issue 18 (evaluate has no --source)."""
    wrong = "put it at <data dir>/x.csv (or pass --source DIR / set $CONTSTIM_RAW_DATA)"
    problems = _problems_of("contstim_bench.data.sources", 1, wrong)
    assert problems and "`contstim " in problems[0] and "evaluate" in problems[0] and "has no --source" in problems[0]
    assert _problems_of("contstim_bench.data.sources", 1, "run `contstim data build --source DIR`") == []
    assert _problems_of("contstim_bench.data.sources", 1, "run `contstim data build --sauce DIR`")


def test_evaluate_without_the_main_results_gives_runnable_advice(capsys):
    """Issue 18's case: `contstim evaluate --experiment main` without the main experiment's file."""
    from contstim_bench.cli import main as cli_main
    from contstim_bench.data import sources

    if sources.available("contstimlang/behavioral_results/contstim_Aug2021_n100_results_anon.csv"):
        pytest.skip("the main experiment's human data is available here")
    assert cli_main(["evaluate", "--model", "precomputed:roberta", "--experiment", "main", "--no-plots",
                     "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "contstim_Aug2021_n100_results_anon.csv" in err and "`contstim data build --source DIR`" in err
    assert _problems_of("contstim_bench.commands.evaluate", 0, err) == []
    for flag, owner in attributed_flags(err):
        assert owner != "unnamed" and (owner is None or owner[0] == "script" or flag in options(owner)), flag


def test_a_missing_optional_dependency_names_its_extra(capsys):
    """A command that needs a package of an extra the user did not install (e.g. the bare wheel
    without ``[scoring]``) ends with one line naming the module and the extra, not a traceback."""
    import argparse

    from contstim_bench.cli import run

    def needs(module):
        def func(args):
            raise ModuleNotFoundError(f"No module named '{module}'", name=module)
        return func

    for module, extra in (("transformers", "scoring"), ("kenlm", "ngram"), ("not_a_dependency", None)):
        parser = argparse.ArgumentParser(prog="contstim")
        parser.set_defaults(func=needs(module))
        assert run(parser, []) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"contstim: error: ModuleNotFoundError: No module named '{module}'")
        if extra:
            assert err.endswith(f"install the '{extra}' extra (pip install 'contstim-bench[{extra}]')")
        else:
            assert err == f"contstim: error: ModuleNotFoundError: No module named '{module}'"
