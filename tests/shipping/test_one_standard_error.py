"""The package states the uncertainty of a mean one way (ARCHITECTURE.md: ``uncertainty.py``): no
module but ``uncertainty.py`` computes a standard error of its own, that is, calls scipy's ``sem``
or divides a sample standard deviation (``std(..., ddof=1)``) by something.  Kauf et al.'s
plausibility statistics once called ``scipy.stats.sem`` beside the analysis' own formula; the last
test runs the check on that code and on the analysis' formula as it stood."""
from __future__ import annotations

import ast

from test_house_claims import called, sources


def _sample_std(node: ast.AST) -> bool:
    """``node`` is a call to ``std`` with ``ddof=1`` (``np.std(x, ddof=1)``, ``x.std(ddof=1)``)."""
    return (isinstance(node, ast.Call) and called(node) == "std"
            and any(k.arg == "ddof" and isinstance(k.value, ast.Constant) and k.value.value == 1
                    for k in node.keywords))


def own_standard_errors(tree: ast.AST) -> list[int]:
    """Lines where ``tree`` computes a standard error itself: a call of ``sem`` (``stats.sem(h)``,
    ``sem(x)``), or a sample standard deviation divided by anything (``np.std(x, ddof=1) / n ** 0.5``)."""
    lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and called(n) == "sem"]
    lines += [n.lineno for n in ast.walk(tree)
              if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and _sample_std(n.left)]
    return sorted(lines)


def test_one_standard_error():
    """``uncertainty.standard_error`` is the package's one standard error; the analysis and the
    plausibility statistics call it."""
    found = {path: lines for path, tree in sources(".").items() if path != "uncertainty.py"
             for lines in [own_standard_errors(tree)] if lines}
    assert found == {}, f"a standard error computed outside uncertainty.py: {found}"
    assert own_standard_errors(sources("uncertainty.py")["uncertainty.py"])  # the one, found by the check


def test_the_check_catches_a_second_standard_error():
    plausibility = ast.parse("from scipy import stats\n\n"
                             "def standard_error(hits):\n"
                             "    h = _hits(hits)\n"
                             "    return float(stats.sem(h.astype(np.float64))) if h.size >= 2 else None\n")
    analysis = ast.parse("def standard_error(values):\n"
                         "    x = np.asarray(values, dtype=np.float64).ravel()\n"
                         "    return float(np.std(x, ddof=1) / x.size ** 0.5)\n")
    spread = ast.parse("se = frame.std(ddof=1) / math.sqrt(len(frame))\nsd = np.std(x, ddof=0) / 2\n")
    assert own_standard_errors(plausibility) == [5]
    assert own_standard_errors(analysis) == [3]
    assert own_standard_errors(spread) == [1]  # the population deviation halved is no standard error
