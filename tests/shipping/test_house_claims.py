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
import functools
from pathlib import Path

from contstim_bench.scoring.spec import FAMILIES

PACKAGE = Path(__file__).resolve().parents[2] / "contstim_bench"


def sources(*folders: str) -> dict[str, ast.AST]:
    """``{path relative to the package: tree}`` of the modules in ``folders`` (files or folders);
    each file parsed once per test process (:func:`parsed`: the checks only read the trees)."""
    out = {}
    for name in folders:
        path = PACKAGE / name
        for file in sorted([path] if path.suffix == ".py" else path.rglob("*.py")):
            out[str(file.relative_to(PACKAGE))] = parsed(file, file.stat().st_mtime_ns)
    return out


@functools.lru_cache(maxsize=None)
def parsed(file: Path, mtime_ns: int) -> ast.AST:
    """The tree of ``file`` as it is at ``mtime_ns`` (a file changed since is parsed again)."""
    return ast.parse(file.read_text(encoding="utf-8"))


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


def module_name(path: str) -> str:
    """``contstim_bench.commands.report`` for ``commands/report.py`` (a package's ``__init__.py``: the package)."""
    parts = Path(path).with_suffix("").parts
    return ".".join(["contstim_bench", *(parts[:-1] if parts[-1] == "__init__" else parts)])


Function = tuple[str, str]
"""A function of the package: ``(module, name)``."""


def resolver(tree: ast.AST, path: str, modules: set[str]):
    """``call -> (module, name)`` of the package function a call of ``tree`` (the module ``path``)
    calls: a function the module defines, one it imports (``from ..driver import evaluate``) or one
    of a module it imports (``driver.evaluate``); None for anything else (methods, builtins)."""
    here = module_name(path)
    package = here.split(".") if path.endswith("__init__.py") else here.split(".")[:-1]
    names: dict[str, tuple[str, ...]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module
            for a in node.names:
                full = f"{base}.{a.name}"
                names[a.asname or a.name] = ("module", full) if full in modules else ("function", base, a.name)
        elif isinstance(node, ast.Import):
            names.update({a.asname or a.name.split(".")[0]: ("module", a.name if a.asname else a.name.split(".")[0])
                          for a in node.names})
    own = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def resolve(call: ast.Call) -> Function | None:
        f = call.func
        if isinstance(f, ast.Name):
            if f.id in own:
                return here, f.id
            kind = names.get(f.id)
            return (kind[1], kind[2]) if kind and kind[0] == "function" else None
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            kind = names.get(f.value.id)
            return (kind[1], f.attr) if kind and kind[0] == "module" else None
        return None
    return resolve


def evaluating_functions(trees: dict[str, ast.AST]) -> set[Function]:
    """The package functions that load a model or evaluate or score with one, directly (a call of
    :data:`EVALUATES`, a method's included: ``load_model(spec)``, ``scorer.score(...)``) or through
    any chain of package functions (``model_report`` calls the ``load_model`` it is given;
    ``add_result`` re-scores): the static call graph, names resolved through each module's imports."""
    modules = {module_name(p) for p in trees}
    calls: dict[Function, set] = {}
    for path, tree in trees.items():
        resolve = resolver(tree, path, modules)
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                edges = calls.setdefault((module_name(path), fn.name), set())
                edges |= {True if called(c) in EVALUATES else resolve(c) for c in ast.walk(fn) if isinstance(c, ast.Call)}
    found: set[Function] = set()
    while True:
        more = {f for f, edges in calls.items() if f not in found and (True in edges or edges & found)}
        if not more:
            return found
        found |= more


def loops_over(tree: ast.AST, names: set[str], path: str = "x.py", evaluating: set[Function] = frozenset(),
               modules: set[str] = frozenset()) -> list[tuple[int, str]]:
    """``(line, name)`` of each call inside a loop or comprehension of ``tree`` (the module ``path``)
    that calls one of ``names`` or a package function of ``evaluating`` (resolved against
    ``modules``: a helper that evaluates, however deep), or that hands one of them on as an argument
    under any parameter name (``page(r, fetch=driver.load_model)``: the helper calls what it is given)."""
    resolve = resolver(tree, path, set(modules))

    def evaluates(ref: ast.expr) -> bool:
        call = ref if isinstance(ref, ast.Call) else ast.Call(func=ref, args=[], keywords=[])
        return called(call) in names or resolve(call) in evaluating

    found = []
    for loop in ast.walk(tree):
        if isinstance(loop, (ast.For, ast.While, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)):
            for n in ast.walk(loop):
                if not isinstance(n, ast.Call):
                    continue
                handed = [a for a in [*n.args, *(k.value for k in n.keywords)] if isinstance(a, (ast.Name, ast.Attribute))]
                if evaluates(n) or any(evaluates(a) for a in handed):
                    found.append((n.lineno, called(n)))
    return sorted(set(found))


def test_commands_hold_no_evaluation_loop():
    """A command parses its arguments, calls one function and prints the answer: it never loops
    over models, methods, benchmarks or files calling anything that loads or evaluates a model, by
    itself or through any chain of helpers (``contstim blimp`` with several methods did, where
    ``driver.evaluate_variants`` now does; ``contstim report`` looped ``model_report(load_model=)``
    over results and ``contstim leaderboard add`` looped ``add_result(rescore=)`` over files, where
    ``model_reports`` and ``add_results`` now do), and loads nothing itself."""
    everything = sources(".")
    evaluating, modules = evaluating_functions(everything), {module_name(p) for p in everything}
    problems = []
    for path, tree in sources("commands").items():
        problems += [f"{path}:{line}: {name}() in a loop"
                     for line, name in loops_over(tree, EVALUATES, path, evaluating, modules)]
        problems += [f"{path}:{line}: imports {module}" for line, module in imported(tree, path)
                     if module.startswith(("contstim_bench.scoring.registry", "contstim_bench.analysis"))
                     or module.rsplit(".", 1)[0] in FAMILY_MODULES]
    assert problems == [], "\n".join(problems)


FAMILY_MODULES = {f"contstim_bench.{f.factory.split(':')[0].split('.', 1)[1]}" for f in FAMILIES.values()}
"""The model families' modules (``contstim_bench.scoring.causal``, ...)."""

STATISTICS = {"mean", "median", "std", "var", "percentile", "quantile", "polyfit", "corrcoef", "average", "cov",
              "nanmean", "nanmedian", "rankdata", "pearsonr", "spearmanr", "wilcoxon", "ttest_rel", "binomtest",
              "lstsq", "linregress", "pinv", "nanstd", "nanvar", "bincount", "histogram"}
"""Reductions, fits and tests a figure must not compute itself (a numpy function or a method)."""

RANKINGS = {"rank_models", "rank_in_panel"}
"""The ranking of models (:mod:`contstim_bench.analysis.ranking`): a result records its model's rank
(``rank`` in every entry), so report/ shows it and never ranks."""


def hand_means(tree: ast.AST) -> list[int]:
    """Lines where ``tree`` divides a sum by something (``sum(x) / len(x)``, ``np.sum(x) / n``,
    ``x.sum() / k``): a mean computed by hand, which is a statistic like ``np.mean``."""
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
            and any(isinstance(c, ast.Call) and called(c) in ("sum", "nansum", "fsum") for c in ast.walk(n.left))]

DATA_LOADERS = {"load_experiment", "load_config", "load_trials", "fingerprint", "dataset_folder", "read_csv",
                "read_parquet", "read_table", "reference_logprobs"}
"""Functions that read the datasets or raw files."""


def test_report_loads_no_data_and_computes_no_statistic():
    """report/ draws and formats what it is given: no statistics library, no numpy reduction or
    test of its own, no dataset read (report/plots.py once loaded the trials, ranked percentiles
    and counted agreement and votes; report/kauf_ivanova.py fitted its lines and summed scores;
    report/matrices.py averaged shares; report/contstim.py ranked the model among its panel).
    What it shows comes from the result (its rank included) or from a function of analysis/."""
    problems = []
    for path, tree in sources("report").items():
        for line, module in imported(tree, path):
            if module.startswith(("scipy", "statsmodels", "sklearn", "contstim_bench.data")) \
                    or module.rsplit(".", 1)[-1] in DATA_LOADERS:
                problems.append(f"{path}:{line}: imports {module}")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and called(node) in STATISTICS | DATA_LOADERS | RANKINGS:
                problems.append(f"{path}:{node.lineno}: calls {called(node)}()")
        problems += [f"{path}:{line}: divides a sum (a mean by hand)" for line in hand_means(tree)]
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


OTHER_COLON_TEXTS = {
    ("generate/inputs.py", "str(source).split(':', 1)"): "a natural pool source, contstim:<split>",
    ("generate/triplet_table.py", "text.split(':', 1)"): "a triplet source, contstim:<experiment>",
    ("scoring/hf_loading.py", "item.strip().partition(':')"): "a device memory budget, <device>:<size>",
    ("scoring/registry.py", "FAMILIES[kind].factory.partition(':')"): "a family's factory, module:function",
    ("scoring/catalog.py", "fam.factory.partition(':')"): "a family's factory, module:function",
    ("benchmarks/plausibility.py", "method.partition(':')"): "a plausibility method, prompt:<template>?options",
    ("benchmarks/plausibility.py", "template.partition('?')"): "a plausibility method, prompt:<template>?options",
    ("benchmarks/plausibility.py", "method.partition('?')"): "a plausibility method, prompt:<template>?options",
    ("benchmarks/plausibility_report.py", "method.partition(':')"): "a plausibility method, prompt:<template>",
    ("scoring/credentials.py", "text.partition('?')"): "spec.py's guard, run before its parse: a credential in a "
                                                      "malformed query is refused without echoing it",
}
"""Texts with a ``:`` or ``?`` that are not model specs, split outside ``scoring/spec.py``: each
listed (file, receiver) says what it splits.  Any other split on ``:`` or ``?`` is taken for a hand
parse of a spec, whatever its variable is called (a spec once went through ``text.partition(":")``)."""


def colon_splits(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, receiver)`` of each ``.split``/``.partition`` (and right forms) on ``:`` or ``?``."""
    return [(n.lineno, ast.unparse(n.func.value) + f".{n.func.attr}({ast.unparse(n.args[0])}"
             + (", " + ", ".join(ast.unparse(a) for a in n.args[1:]) if n.args[1:] else "") + ")")
            for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("split", "rsplit", "partition", "rpartition") and n.args
            and isinstance(n.args[0], ast.Constant) and n.args[0].value in (":", "?")]


def test_only_spec_py_parses_spec_strings():
    """``scoring/spec.py`` is the only parser of model specs (``names_a_spec``, ``spec_label``,
    ``split_named`` and ``ModelSpec`` for the rest); seven modules once split them by hand
    (``benchmarks/model_report_tokens.py``: ``spec.startswith("precomputed:")``).  Every other
    split on ``:`` or ``?`` is one of :data:`OTHER_COLON_TEXTS`, and each of those still exists."""
    problems, seen = [], set()
    for path, tree in sources(".").items():
        if path == "scoring/spec.py":
            continue
        problems += [f"{path}:{line}: {code}" for line, code in spec_splits(tree)]
        for line, code in colon_splits(tree):
            if (path, code) in OTHER_COLON_TEXTS:
                seen.add((path, code))
            else:
                problems.append(f"{path}:{line}: {code} (a spec parsed by hand? if not, list it in OTHER_COLON_TEXTS)")
    assert problems == [], "\n".join(problems)
    assert seen == set(OTHER_COLON_TEXTS), f"listed but gone: {sorted(set(OTHER_COLON_TEXTS) - seen)}"


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


LOADING = {"load_scorer", "from_spec", "LoadSettings"}
"""What builds a scorer from a spec (the registry and the families' factories); a family's
classes and constants (``isinstance`` checks, ``METHODS``) do not load anything."""


def scorer_classes(trees: dict[str, ast.AST]) -> set[str]:
    """The classes of scoring/ that are scorers: ``Scorer`` and every class deriving from it,
    however deep (``CausalScorer``, ``MaskedLMScorer``, ``GivenScores``, ...)."""
    bases = {c.name: {ast.unparse(b).rsplit(".", 1)[-1] for b in c.bases}
             for path, tree in trees.items() if path.startswith("scoring/")
             for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}
    found = {"Scorer"}
    while more := {name for name, b in bases.items() if b & found} - found:
        found |= more
    return found


BUILT_OUTSIDE_SCORING = {
    "GivenScores": "log-probabilities a caller already has (lm-eval's, Brain-Score's): it loads nothing",
    "PromptScorer": "a second prompt over a judge the driver loaded (Kauf et al. 2024, Appendix F): it loads nothing",
}
"""Scorers that a module above scoring/ may construct, and why."""


def test_scorers_are_built_by_the_registry():
    """A model's scorer is built by the registry from a spec (``load_scorer``), nowhere else:
    no benchmark, door or report constructs ``CausalScorer(...)`` or any other scorer class itself
    (it would skip the run options: threads, device, the token budget, the cache)."""
    trees = sources(".")
    scorers = scorer_classes(trees) | set(BUILT_OUTSIDE_SCORING)
    problems = [f"{path}:{n.lineno}: builds {called(n)}()" for path, tree in trees.items()
                if not path.startswith("scoring/") for n in ast.walk(tree)
                if isinstance(n, ast.Call) and called(n) in scorers - set(BUILT_OUTSIDE_SCORING)]
    assert problems == [], "\n".join(problems)
    assert {"CausalScorer", "MaskedLMScorer", "NgramScorer", "GivenScores"} <= scorers


def test_rounds_and_experiments_are_told_apart_once():
    """What a user names (``--experiment ROUND``, ``experiments=[...]``) is read by
    ``driver.asked_benchmarks`` alone, for every door (the API once refused a round the CLI took)."""
    callers = sorted(f"{path}:{n.lineno}" for path, tree in sources(".").items() for n in ast.walk(tree)
                     if isinstance(n, ast.Call) and called(n) == "split_experiments")
    assert [c.split(":")[0] for c in callers] == ["driver.py"], callers
    askers = sorted(p for p, tree in sources(".").items()
                    if any(isinstance(n, ast.Call) and called(n) == "asked_benchmarks" for n in ast.walk(tree)))
    assert askers == ["api.py", "commands/evaluate.py"]
    problems = [f"{path}:{line}: {code}" for path, tree in sources(".").items() if path != "study.py"
                for line, code in experiment_tests(tree)]
    assert problems == [], "\n".join(problems)


def experiment_tests(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, code)`` of each test of a name against the paper's experiments written by hand:
    ``x in EXPERIMENTS``, ``x not in ("main", "pll")`` (``study.is_paper_experiment`` is the one
    test; iterating over ``EXPERIMENTS`` is no test)."""
    from contstim_bench.study import EXPERIMENTS

    def paper(node) -> bool:
        if isinstance(node, (ast.Name, ast.Attribute)):
            return ast.unparse(node).rsplit(".", 1)[-1] == "EXPERIMENTS"
        return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and \
            {e.value for e in node.elts if isinstance(e, ast.Constant)} == set(EXPERIMENTS)
    return [(n.lineno, ast.unparse(n)) for n in ast.walk(tree) if isinstance(n, ast.Compare)
            and any(isinstance(op, (ast.In, ast.NotIn)) and paper(c) for op, c in zip(n.ops, n.comparators))]


PROCESS_WORDS = {"data_parallel", "launch_state", "shard", "PartialState", "process_index", "num_processes",
                 "wait_for_everyone", "init_process_group", "get_rank", "get_world_size"}
"""Names that mean a module knows about the processes of a data-parallel launch."""

LAUNCH_VARIABLES = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                    "ACCELERATE_PROCESS_INDEX"}
"""Environment variables a launcher (torchrun, ``accelerate launch``) sets for each process: a
module reading one knows about processes as much as one calling ``get_rank()``."""

KNOWS_PROCESSES = {"driver.py", "scorefile.py", "generate/natural_run.py", "generate/design_models.py",
                   "generate/synthetic_run.py"}
"""The modules above scoring/ that split work across processes: the driver and ``contstim
score`` open ``data_parallel()`` around scoring, the natural pool and the design's models are
scored inside it, and the synthetic search shards whole jobs (``launch_state``, ``shard``)."""


def knows_processes(tree: ast.AST, path: str) -> bool:
    """Whether the module ``tree`` names a process word (:data:`PROCESS_WORDS`) or reads a
    launcher's variable (:data:`LAUNCH_VARIABLES`, ``os.environ["RANK"]``)."""
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} \
        | {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} \
        | {m.rsplit(".", 1)[-1] for _, m in imported(tree, path)}
    texts = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return bool(names & PROCESS_WORDS or texts & LAUNCH_VARIABLES)


def test_only_the_named_modules_know_about_processes():
    found = {path for path, tree in sources(".").items() if not path.startswith("scoring/") and knows_processes(tree, path)}
    assert found == KNOWS_PROCESSES


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


def test_one_attention_mask_builder():
    """The 4-D attention masks of packed rows and of a lockstep's merged passes are made by
    ``packing.additive_mask`` alone (the lockstep once built its own beside ``packing.py``): no
    other module asks ``torch.finfo`` for the lowest value a mask adds."""
    problems = [f"{path}:{line}" for path, tree in sources(".").items() if path != "scoring/packing.py"
                for line in mask_builders(tree)]
    assert problems == [], "\n".join(problems)


def mask_builders(tree: ast.AST) -> list[int]:
    """Lines of ``tree`` that read ``finfo`` (``torch.finfo(dtype).min``: what an additive mask fills)."""
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "finfo"]


CACHE_LAYOUT = {"layers", "DynamicCache", "ddp_cache_data"}
"""What reading or building the inside of a transformers key/value cache goes through: a cache's
``layers`` (their ``keys`` and ``values``), ``DynamicCache`` and its ``ddp_cache_data``."""


def cache_internals(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, name)`` where ``tree`` uses a name of :data:`CACHE_LAYOUT`: ``.layers`` of any object,
    ``DynamicCache`` imported or named, the ``ddp_cache_data`` keyword."""
    found = []
    for n in ast.walk(tree):
        name = (n.attr if isinstance(n, ast.Attribute) else n.id if isinstance(n, ast.Name)
                else n.arg if isinstance(n, ast.keyword) else n.name if isinstance(n, ast.alias) else None)
        if name in CACHE_LAYOUT and (name != "layers" or isinstance(n, ast.Attribute)):  # a variable may be named so
            found.append((getattr(n, "lineno", 0), name))
    return sorted(set(found))


def test_one_module_reads_the_key_value_caches():
    """Only ``scoring/kv_cache.py`` reads the layers of a transformers key/value cache or builds
    one (the lockstep's merged passes and the scorer's bounds each read them once); everything
    else passes caches to the model and asks their length."""
    problems = [f"{path}:{line}: {name}" for path, tree in sources(".").items() if path != "scoring/kv_cache.py"
                for line, name in cache_internals(tree)]
    assert problems == [], "\n".join(problems)
