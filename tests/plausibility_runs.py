"""The plausibility result of a model spec through the one driver (what ``contstim plausibility``
runs): a test helper on ``sys.path`` for the plausibility tests."""
from __future__ import annotations


def plausibility_result(model, method=None, *, progress=False, log=None, **options) -> dict:
    """``driver.evaluate(model, ["plausibility"])`` with ``method`` and benchmark ``options``."""
    from contstim_bench.driver import RunOptions, evaluate

    return evaluate(model, ["plausibility"], options=RunOptions(progress=progress),
                    benchmark_options={"method": method, **options}, log=lambda m: None)["plausibility"]
