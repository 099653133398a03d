"""ARCHITECTURE.md's claims about what each part of the package does, held against the code as
``test_architecture.py`` holds its layers: each test reads the package's source (``ast``) and
fails naming the file and line that breaks a claim.

- commands hold no evaluation loop and load nothing themselves;
- report/ loads no data and computes no statistic (the numbers it shows are a result's or an
  analysis function's);
- no module but ``scoring/spec.py`` takes a model spec string apart;
- models are loaded through the registry only by the driver and by generation and simulation,
  which sit below it; no door, benchmark or report loads one;
- a user's experiment or round names are told apart in one place (``driver.asked_benchmarks``);
- only the modules named here know about processes; every other one at most asks
  ``is_main_process()`` before it writes;
- significance has one level and one star formatter (``significance.py``): no other module sets an
  ``ALPHA`` or returns a star mark of its own.

Each check was written against the code it replaced (issue 44) and fails on it; the tests at the
end run each check on a small piece of such code.
"""
from __future__ import annotations

import ast
from pathlib import Path

from contstim_bench.scoring.spec import FAMILIES

PACKAGE = Path(__file__).resolve().parents[2] / "contstim_bench"


def sources(*folders: str) -> dict[str, ast.AST]:
    """``{path relative to the package: tree}`` of the modules in ``folders`` (files or folders)."""
    out = {}
    for name in folders:
        path = PACKAGE / name
        for file in sorted([path] if path.suffix == ".py" else path.rglob("*.py")):
            out[str(file.relative_to(PACKAGE))] = ast.parse(file.read_text(encoding="utf-8"))
    return out


def imported(tree: ast.AST, where: str) -> list[tuple[int, str]]:
    """``(line, module)`` of every import of ``tree`` (relative imports resolved against ``where``)."""
    package = ["contstim_bench", *Path(where).with_suffix("").parts[:-1]]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            out += [(node.lineno, f"{module}.{a.name}") for a in node.names]
    return out


def called(node: ast.Call) -> str:
    """The name a call calls (``evaluate`` for ``driver.evaluate(...)``)."""
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


EVALUATES = {"evaluate", "evaluate_model", "evaluate_variants", "score_sentences", "compare_models", "load_model",
             "load_scorer", "score_file", "run_benchmark", "score", "judge"}
"""Calls that load a model or evaluate or score with one."""


def loops_over(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    """``(line, name)`` of each call of ``names`` inside a loop or comprehension."""
    found = []
    for loop in ast.walk(tree):
        if isinstance(loop, (ast.For, ast.While, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)):
            found += [(n.lineno, called(n)) for n in ast.walk(loop) if isinstance(n, ast.Call) and called(n) in names]
    return sorted(set(found))


def test_commands_hold_no_evaluation_loop():
    """A command parses its arguments, calls one function and prints the answer: it never loops
    over models, methods or benchmarks calling the driver (``contstim blimp`` with several
    methods did, where ``driver.evaluate_variants`` now does), and loads nothing itself."""
    problems = []
    for path, tree in sources("commands").items():
        problems += [f"{path}:{line}: {name}() in a loop" for line, name in loops_over(tree, EVALUATES)]
        problems += [f"{path}:{line}: imports {module}" for line, module in imported(tree, path)
                     if module.startswith(("contstim_bench.scoring.registry", "contstim_bench.analysis"))
                     or module.rsplit(".", 1)[0] in FAMILY_MODULES]
    assert problems == [], "\n".join(problems)


FAMILY_MODULES = {f"contstim_bench.{f.factory.split(':')[0].split('.', 1)[1]}" for f in FAMILIES.values()}
"""The model families' modules (``contstim_bench.scoring.causal``, ...)."""

STATISTICS = {"mean", "median", "std", "var", "percentile", "quantile", "polyfit", "corrcoef", "average", "cov",
              "nanmean", "nanmedian", "rankdata", "pearsonr", "spearmanr", "wilcoxon", "ttest_rel", "binomtest"}
"""Reductions and tests a figure must not compute itself (a numpy function or a method)."""

DATA_LOADERS = {"load_experiment", "load_config", "load_trials", "fingerprint", "dataset_folder", "read_csv",
                "read_parquet", "read_table", "reference_logprobs"}
"""Functions that read the datasets or raw files."""


def test_report_loads_no_data_and_computes_no_statistic():
    """report/ draws and formats what it is given: no statistics library, no numpy reduction or
    test of its own, no dataset read (report/plots.py once loaded the trials, ranked percentiles
    and counted agreement and votes; report/kauf_ivanova.py fitted its lines and summed scores;
    report/matrices.py averaged shares).  What it shows comes from the result or from a
    function of analysis/ (a ranking calls analysis.ranking, the one ranking)."""
    problems = []
    for path, tree in sources("report").items():
        for line, module in imported(tree, path):
            if module.startswith(("scipy", "statsmodels", "sklearn", "contstim_bench.data")) \
                    or module.rsplit(".", 1)[-1] in DATA_LOADERS:
                problems.append(f"{path}:{line}: imports {module}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and called(node) in STATISTICS | DATA_LOADERS:
                problems.append(f"{path}:{node.lineno}: calls {called(node)}()")
    assert problems == [], "\n".join(problems)


SPEC_WORDS = ("spec", "target", "model")
"""A text whose expression names one of these is a model spec (or its target)."""


def spec_splits(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, code)`` of each hand parse of a spec: ``.split``/``.partition`` (and their right
    forms) on ``?`` or ``:`` of an expression naming a spec, a target or a model, and
    ``.startswith("<family>:")``."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, (str, tuple))):
            continue
        method, arg = node.func.attr, node.args[0].value
        receiver = ast.unparse(node.func.value).lower()
        if method in ("split", "rsplit", "partition", "rpartition") and arg in ("?", ":") \
                and any(w in receiver for w in SPEC_WORDS):
            found.append((node.lineno, ast.unparse(node)))
        elif method == "startswith":
            prefixes = arg if isinstance(arg, tuple) else (arg,)
            if any(isinstance(p, str) and p.rstrip(":") in FAMILIES and p.endswith(":") for p in prefixes):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_only_spec_py_parses_spec_strings():
    """``scoring/spec.py`` is the only parser of model specs (``names_a_spec``, ``spec_label``,
    ``split_named`` and ``ModelSpec`` for the rest); seven modules once split them by hand
    (``benchmarks/model_report_tokens.py``: ``spec.startswith("precomputed:")``)."""
    problems = [f"{path}:{line}: {code}" for path, tree in sources(".").items() if path != "scoring/spec.py"
                for line, code in spec_splits(tree)]
    assert problems == [], "\n".join(problems)


LOADERS_BELOW_THE_DRIVER = ("generate/", "experiment/simulate.py")
"""Generation and simulation load the models of their runs through the registry: they sit below
the driver (ARCHITECTURE.md), and the commands that call them pass the run options."""


def test_models_load_through_the_driver():
    """Only the driver (and generation and simulation, below it) load a model through the registry;
    no door, benchmark, report or analysis imports the registry or a family's factory
    (``benchmarks/model_report_tokens.py`` loaded a scorer itself; ``contstim report`` now
    passes the driver's ``load_model``)."""
    problems = []
    for path, tree in sources(".").items():
        if path.startswith("scoring/") or path == "driver.py" or path.startswith(LOADERS_BELOW_THE_DRIVER):
            continue
        for line, module in imported(tree, path):
            if module.startswith("contstim_bench.scoring.registry") or module.rsplit(".", 1)[-1] in LOADING:
                problems.append(f"{path}:{line}: imports {module}")
    assert problems == [], "\n".join(problems)


LOADING = {"load_scorer", "load_with_options", "from_spec", "ScoringContext"}
"""What builds a scorer from a spec (the registry and the families' factories); a family's
classes and constants (``isinstance`` checks, ``METHODS``) do not load anything."""


def test_rounds_and_experiments_are_told_apart_once():
    """What a user names (``--experiment ROUND``, ``experiments=[...]``) is read by
    ``driver.asked_benchmarks`` alone, for every door (the API once refused a round the CLI took)."""
    callers = sorted(f"{path}:{n.lineno}" for path, tree in sources(".").items() for n in ast.walk(tree)
                     if isinstance(n, ast.Call) and called(n) == "split_experiments")
    assert [c.split(":")[0] for c in callers] == ["driver.py"], callers
    askers = sorted(p for p, tree in sources(".").items()
                    if any(isinstance(n, ast.Call) and called(n) == "asked_benchmarks" for n in ast.walk(tree)))
    assert askers == ["api.py", "commands/evaluate.py"]


PROCESS_WORDS = {"data_parallel", "launch_state", "shard", "PartialState", "process_index", "num_processes",
                 "wait_for_everyone", "init_process_group", "get_rank", "get_world_size"}
"""Names that mean a module knows about the processes of a data-parallel launch."""

KNOWS_PROCESSES = {"driver.py", "scorefile.py", "generate/natural_run.py", "generate/design_models.py",
                   "generate/synthetic_run.py"}
"""The modules above scoring/ that split work across processes: the driver and ``contstim
score`` open ``data_parallel()`` around scoring, the natural pool and the design's models are
scored inside it, and the synthetic search shards whole jobs (``launch_state``, ``shard``)."""


def test_only_the_named_modules_know_about_processes():
    found = set()
    for path, tree in sources(".").items():
        if path.startswith("scoring/"):
            continue
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} \
            | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} \
            | {m.rsplit(".", 1)[-1] for _, m in imported(tree, path)}
        if names & PROCESS_WORDS:
            found.add(path)
    assert found == KNOWS_PROCESSES


# ------------------------------------------------------------------------- the checks fail


def test_the_checks_catch_what_they_are_for():
    """Each check on a piece of the code it replaced."""
    blimp = ast.parse("def run(args):\n    return {m: evaluate(spec, ['blimp'], method=m) for m in methods}\n")
    assert loops_over(blimp, EVALUATES) == [(2, "evaluate")]
    tokens = ast.parse('if spec.startswith("precomputed:"):\n    reference = spec.split(":", 1)[1]\n')
    assert [line for line, _ in spec_splits(tokens)] == [1, 2]
    label = ast.parse('name = model["spec"].split("?")[0]\n')
    assert spec_splits(label) == [(1, "model['spec'].split('?')")]
    fine = ast.parse('path = factory.partition(":")\nkind = method.partition(":")\n')
    assert spec_splits(fine) == []
    plots = ast.parse("from scipy.stats import rankdata\nfrom ..benchmarks.contstim import load_experiment\n"
                      "x = np.polyfit(a, b, 1)\n")
    assert [m for _, m in imported(plots, "report/plots.py")] == [
        "scipy.stats.rankdata", "contstim_bench.benchmarks.contstim.load_experiment"]
    assert [called(n) for n in ast.walk(plots) if isinstance(n, ast.Call)] == ["polyfit"]
    assert "contstim_bench.scoring.masked" in FAMILY_MODULES and "contstim_bench.scoring.ngram" in FAMILY_MODULES


def alpha_definitions(tree: ast.AST) -> list[int]:
    """Lines where ``tree`` sets a significance level of its own: a number assigned to a name
    ``ALPHA`` (any case) at any depth (``alpha: float = ALPHA`` takes the package's)."""
    return [n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign))
            and isinstance(n.value, ast.Constant) and isinstance(n.value.value, (int, float))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Name) and t.id.upper() == "ALPHA"]


def star_returns(tree: ast.AST) -> list[int]:
    """Lines where ``tree`` picks a star mark by comparing a value with a threshold, spelling the
    mark itself (``"***" if p < .001 else ...``, ``if p < ALPHA: return "*"``): a star formatter
    of its own.  A mark chosen by a flag (``"*" if significant``) or a glob (``rglob("*")``) is none."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def compared(node) -> bool:  # an enclosing test compares
        while node in parents:
            node, child = parents[node], node
            if isinstance(node, (ast.If, ast.IfExp)) and child is not node.test and \
                    any(isinstance(c, ast.Compare) for c in ast.walk(node.test)):
                return True
        return False

    lines = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value
                and set(node.value) == {"*"}):
            continue
        parent = parents.get(node)
        chosen = isinstance(parent, ast.Return) or (isinstance(parent, ast.IfExp) and node is not parent.test)
        if chosen and compared(node):
            lines.append(node.lineno)
    return lines


def test_one_significance_level_and_one_star_formatter():
    """``significance.ALPHA`` is the only level and ``significance.stars`` the only star formatter:
    the analysis, plausibility's statistics (a layer below the analysis, which had its own ALPHA
    and ``marks``), the validator and the reports import them."""
    problems = []
    for path, tree in sources(".").items():
        if path == "significance.py":
            continue
        problems += [f"{path}:{line}: sets its own ALPHA" for line in alpha_definitions(tree)]
        problems += [f"{path}:{line}: returns a star mark of its own" for line in star_returns(tree)]
    assert problems == [], "\n".join(problems)
    own = sources("significance.py")["significance.py"]
    assert alpha_definitions(own) and not star_returns(own)  # its marks are data (STARS), returned by one loop


def test_the_significance_checks_catch_a_second_level_and_formatter():
    """The code the check replaced: ``ALPHA = 0.05`` in three modules, and the stars spelled in a
    function's return."""
    breach = ast.parse("ALPHA = 0.05\n"
                       "def marks(p):\n"
                       "    return '***' if p < 0.001 else '**' if p < 0.01 else ''\n"
                       "class T:\n"
                       "    alpha: float = 0.01\n"
                       "def mark(q, significant, folder):\n"
                       "    if q < 0.05:\n"
                       "        return '*'\n"
                       "    files = folder.rglob('*')\n"
                       "    return 'x' + ('*' if significant else '')\n")
    assert alpha_definitions(breach) == [1, 5]
    assert sorted(star_returns(breach)) == [3, 3, 8]  # not the flag's mark, not the glob
