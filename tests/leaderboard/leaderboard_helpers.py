"""What several leaderboard test modules share: making a result file internally consistent (its
score sections recomputed from its log-probabilities), and a stand-in for the site's figures."""
from __future__ import annotations

import copy
from pathlib import Path

from contstim_bench.leaderboard.validate import recomputed_sections


def with_scores(result: dict, datasets) -> dict:
    """``result`` (changed in place and returned) with ``experiments`` and ``panels`` recomputed
    from its ``logprobs`` on the datasets folder ``datasets``.

    One analysis gives both sections (``recompute`` and ``recompute_panels`` would run it once
    each), and it runs through the validator's memo
    (:func:`contstim_bench.leaderboard.validate.recomputed_sections`), so that validating the file
    afterwards in the same folder compares its scores with that same analysis instead of running
    it again."""
    result.setdefault("panels", {})  # the memo recomputes the panels of a result that has the section
    result.update(copy.deepcopy(recomputed_sections(result, datasets)))
    return result


def one_png(result_path, out_dir, **_) -> list[Path]:
    """A stand-in for the site's figures (``build_site(plot=...)``) for tests that assert nothing
    about them (test_leaderboard_site.py builds the site with the real figures): one PNG file."""
    path = Path(out_dir) / "pll_accuracy.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n")
    return [path]
