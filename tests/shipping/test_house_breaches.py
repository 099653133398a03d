"""The house checks of ``test_house_claims.py`` fail on what they are for: each runs on a small
piece of code that breaks its claim (the code a check replaced, or a breach that once kept the
suite green), so a check that watches names and not behaviour shows here."""
from __future__ import annotations

import ast

from test_house_claims import (
    BUILT_OUTSIDE_SCORING, EVALUATES, FAMILY_MODULES, OTHER_COLON_TEXTS, RANKINGS, STATISTICS,
    alpha_definitions, cache_internals, called, colon_splits, evaluating_functions, experiment_tests, hand_means,
    imported, knows_processes, loops_over, mask_builders, module_name, scorer_classes, sources,
    spec_splits, star_returns)


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


def test_the_checks_catch_the_breaches_that_once_slipped_through():
    """Issue 53: each of these was written into the package on purpose and the house checks
    stayed green; each is now caught, on a small piece of such code."""
    # an evaluation loop in a command through helpers, across modules
    trees = {"commands/x.py": ast.parse("from ..benchmarks import pages\n\ndef run(args):\n"
                                        "    return [pages.page(r) for r in args.results]\n"),
             "benchmarks/pages.py": ast.parse("def page(result):\n    return _tokens(result)\n\n"
                                              "def _tokens(result):\n    return load_model(result['spec'])\n"),
             "benchmarks/__init__.py": ast.parse("")}
    evaluating, modules = evaluating_functions(trees), {module_name(p) for p in trees}
    assert evaluating == {("contstim_bench.benchmarks.pages", "page"), ("contstim_bench.benchmarks.pages", "_tokens"),
                          ("contstim_bench.commands.x", "run")}
    assert loops_over(trees["commands/x.py"], EVALUATES, "commands/x.py", evaluating, modules) == [(4, "page")]
    assert loops_over(trees["commands/x.py"], EVALUATES, "commands/x.py") == []  # what the name check saw
    # a loader handed to a helper under another parameter name, in a loop
    handed = ast.parse("from .. import driver\n\ndef run(args):\n    for r in args.results:\n"
                       "        show(r, fetch=driver.load_model)\n    return [page(r, load_model) for r in args.results]\n")
    assert loops_over(handed, EVALUATES, "commands/y.py") == [(5, "show"), (6, "page")]
    # a mean and a fit by hand in report/
    report = ast.parse("m = sum(xs) / len(xs)\nk = np.sum(a) / n\nw = 0.8 / len(p)\nn = sum(len(g) for g in gs)\n"
                       "coef = np.linalg.lstsq(a, b, rcond=None)\n")
    assert sorted(hand_means(report)) == [1, 2]
    assert [called(n) for n in ast.walk(report) if isinstance(n, ast.Call) and called(n) in STATISTICS] == ["lstsq"]
    # report/contstim.py before the result held its rank
    ranked = ast.parse("ranks = rank_models([panel['models'][n] for n in names], measure, [ties] * len(names))\n")
    assert [called(n) for n in ast.walk(ranked) if isinstance(n, ast.Call) and called(n) in RANKINGS] == ["rank_models"]
    # a spec taken apart under another name
    spec = ast.parse('family, _, target = text.partition(":")\n')
    assert spec_splits(spec) == [] and colon_splits(spec) == [(1, "text.partition(':')")]
    assert ("x.py", "text.partition(':')") not in OTHER_COLON_TEXTS
    # a scorer constructed in a benchmark
    built = ast.parse("from ..scoring.causal import CausalScorer\nscorer = CausalScorer(model, tokenizer)\n")
    assert [called(n) for n in ast.walk(built) if isinstance(n, ast.Call)] == ["CausalScorer"]
    assert "CausalScorer" in scorer_classes(sources(".")) and "CausalScorer" not in BUILT_OUTSIDE_SCORING
    # a round split by hand
    split = ast.parse("rounds = [e for e in names if e not in EXPERIMENTS]\nif exp in ('pll', 'main'):\n    pass\n"
                      "for e in EXPERIMENTS:\n    pass\nok = is_paper_experiment(e)\n")
    assert sorted(line for line, _ in experiment_tests(split)) == [1, 2]
    # a process's rank read from the environment
    rank = ast.parse("import os\nrank = int(os.environ['RANK'])\n")
    assert knows_processes(rank, "benchmarks/x.py")
    assert not knows_processes(ast.parse("import os\nhome = os.environ['HOME']\n"), "benchmarks/x.py")
    # a second mask builder beside packing.py
    lockstep = ast.parse("mask = torch.zeros(shape, dtype=dt)\nmask.masked_fill_(~allowed, torch.finfo(dt).min)\n")
    assert mask_builders(lockstep) == [2]
    # the merged passes reading a request's cache beside kv_cache.py (merged_passes.py before it)
    merged = ast.parse("from transformers import DynamicCache\nfor (k, v), layer in zip(layers, r.cache.layers):\n"
                       "    k[row] = layer.keys\ncache = DynamicCache(ddp_cache_data=layers)\n")
    assert cache_internals(merged) == [(1, "DynamicCache"), (2, "layers"), (4, "DynamicCache"), (4, "ddp_cache_data")]
