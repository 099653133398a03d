"""Experiment trial lists from selected pairs (Golan et al. 2023, Methods "Design of the human
experiment"), as a dataset in the ``trials`` layout without ratings.

Participants are split into ``groups``; every group sees its own stimulus set:

* for every model pair, one **natural controversial** pair (type codes N1/N2), and, from the
  pair's selected triplets, one **natural vs synthetic** trial with S1 (N/S1), one with S2 (N/S2)
  and one **synthetic vs synthetic** trial (S1/S2), the three taken from three different
  triplets (a triplet's three trials go to different groups); ``per_group`` of each instead of
  one where a planned round asks each participant for more trials of every model pair
  (``contstim round plan``);
* ``random_pairs`` (9) **randomly sampled natural** pairs (R1/R2) of pool sentences used nowhere
  else in the design, different in every group;
* ``catch_trials`` (12) **natural vs shuffled** trials (C1 a pool sentence used nowhere else, C2
  the same words in a random different order).

No sentence appears twice in a group.  Natural pairs and triplet trials are dealt to groups by
assignment problems (:func:`scipy.optimize.linear_sum_assignment`, random costs break ties,
conflicting sentences are forbidden); a deal that cannot avoid a conflict is redrawn.  Trial order
and left/right sides are randomised per group.  Everything is drawn from one seeded generator.

Targeted models follow :mod:`contstim_bench.data.contstim_trials`: S1 is accepted by m1 and
rejected by m2, S2 the reverse; in a natural pair sentence1 is accepted by model_2 and rejected
by model_1, sentence2 the reverse; other sentences target no model.
"""
from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from scipy.optimize import linear_sum_assignment

from contstim_bench.data.contstim_trials import pair_id
from contstim_bench.scoring.run_options import RunOptions
from contstim_bench.data.design_file import read_design
from contstim_bench.study import TRIAL_COLUMNS

DESIGN_DATASET = "design"
DESIGN_TRIAL_COLUMNS = {k: v for k, v in TRIAL_COLUMNS.items()
                        if k not in ("participant", "rating", "confidence", "reaction_time_ms")}
"""Columns of a generated design: the ``trials`` layout without participant and responses."""

TRIPLET_CONDITIONS = (("N", "S1"), ("N", "S2"), ("S1", "S2"))
_FORBIDDEN = 1e9
_MAX_DEALS = 200


def read_natural_pairs(source: str | os.PathLike) -> pd.DataFrame:
    """Selected natural pairs: the output folder of ``generate natural``, its ``natural`` dataset
    folder, or a parquet file with ``model_1, model_2, sentence1, sentence2``."""
    path = Path(source).expanduser()
    if path.is_dir():
        for folder in (path / "natural" / "natural_controversial_pairs", path / "natural_controversial_pairs"):
            if folder.is_dir():
                path = folder / "train.parquet"
                break
        else:
            raise FileNotFoundError(f"{source}: no natural_controversial_pairs table (run `contstim generate natural`)")
    if not path.is_file():
        raise FileNotFoundError(f"natural pair table not found: {path}")
    from contstim_bench.data.verify import verify_parquet

    frame = pd.read_parquet(verify_parquet(path))  # a generated dataset is checked like a built one
    missing = [c for c in ("model_1", "model_2", "sentence1", "sentence2") if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: natural pair table lacks column(s) {missing}")
    return frame


def _unordered(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _units(natural: pd.DataFrame | None, triplets: pd.DataFrame | None) -> list[tuple[str, tuple, list[dict]]]:
    """Per (condition, model pair): the candidate trials (dicts with the two sides)."""
    units: dict[tuple[str, tuple], list[dict]] = {}
    if natural is not None:
        for i, r in enumerate(natural.itertuples(index=False)):
            m1, m2 = str(r.model_1), str(r.model_2)
            units.setdefault(("natural", _unordered(m1, m2)), []).append({
                "source": i,
                "sides": [(str(r.sentence1), "N1", m2, m1), (str(r.sentence2), "N2", m1, m2)],
            })
    if triplets is not None:
        for c in ("m1", "m2", "N", "S1", "S2"):
            if c not in triplets.columns:
                raise ValueError(f"triplet table lacks column {c!r}")
        for i, r in enumerate(triplets.itertuples(index=False)):
            m1, m2 = str(r.m1), str(r.m2)
            role = {"N": (str(r.N), None, None), "S1": (str(r.S1), m1, m2), "S2": (str(r.S2), m2, m1)}
            if len({role[k][0] for k in role}) < 3:
                raise ValueError(f"triplet row {i} ({m1} vs {m2}): N, S1 and S2 are not three different sentences")
            for a, b in TRIPLET_CONDITIONS:
                units.setdefault((f"{a}-{b}", _unordered(m1, m2)), []).append({
                    "source": i,
                    "sides": [(role[a][0], a, role[a][1], role[a][2]), (role[b][0], b, role[b][1], role[b][2])],
                })
    return sorted(units.items())


def _deal(units, groups: int, rng: np.random.Generator, per_group: int = 1) -> list[list[dict]] | None:
    """One random deal of every unit list to the groups (``per_group`` candidates of each unit
    per group, one assignment at a time), or None when a conflict is unavoidable."""
    sentences: list[set[str]] = [set() for _ in range(groups)]
    used_triplet: list[dict[tuple, set[int]]] = [{} for _ in range(groups)]
    trials: list[list[dict]] = [[] for _ in range(groups)]
    for u in rng.permutation(len(units)):
        (cond, mpair), cands = units[u]
        dealt: set[int] = set()
        for _ in range(per_group):
            cost = rng.random((groups, len(cands)))
            for g in range(groups):
                taken = used_triplet[g].get(mpair, set()) if cond != "natural" else set()
                for k, cand in enumerate(cands):
                    if k in dealt or any(s[0] in sentences[g] for s in cand["sides"]) or cand["source"] in taken:
                        cost[g, k] = _FORBIDDEN
            rows, cols = linear_sum_assignment(cost)
            if (cost[rows, cols] >= _FORBIDDEN).any():
                return None
            for g, k in zip(rows, cols):
                cand = cands[k]
                dealt.add(int(k))
                sentences[g].update(s[0] for s in cand["sides"])
                if cond != "natural":
                    used_triplet[g].setdefault(mpair, set()).add(cand["source"])
                trials[g].append({"cond": cond, "sides": cand["sides"]})
    return trials


def _shuffled(words: list[str], rng: np.random.Generator) -> list[str]:
    for _ in range(100):
        perm = [words[i] for i in rng.permutation(len(words))]
        if perm != words:
            return perm
    raise ValueError(f"could not shuffle {' '.join(words)!r} into a different order")


def build_design(natural: pd.DataFrame | None, triplets: pd.DataFrame | None, pool: Sequence[str], *,
                 groups: int = 10, random_pairs: int = 9, catch_trials: int = 12, seed: int = 0,
                 experiment: str = "generated", per_group: int = 1) -> pd.DataFrame:
    """Trial lists for ``groups`` participant groups (see the module docstring), one row per
    group x trial in the columns of :data:`DESIGN_TRIAL_COLUMNS`, sorted by group and trial;
    ``per_group`` trials of each condition and model pair per group.

    ValueError when a model pair has fewer pairs/triplets than groups x ``per_group`` (or fewer
    than three triplets), when the pool has too few unused sentences, or when no conflict-free
    deal is found.
    """
    for name, v in (("groups", groups), ("random_pairs", random_pairs), ("catch_trials", catch_trials), ("seed", seed),
                    ("per_group", per_group)):
        positive = name in ("groups", "per_group")
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < (1 if positive else 0):
            raise ValueError(f"{name} must be a {'positive' if positive else 'non-negative'} integer, got {v!r}")
    units = _units(natural, triplets)
    if not units and not random_pairs and not catch_trials:
        raise ValueError("nothing to put in the design: no pairs, no triplets, no random pairs, no catch trials")
    for (cond, (a, b)), cands in units:
        if len(cands) < groups * per_group:
            what = "natural pairs" if cond == "natural" else "triplets"
            raise ValueError(f"model pair {a} vs {b}: {len(cands)} {what} for {groups} groups (need {per_group} per "
                             f"group)")
        if cond != "natural" and len(cands) < 3:
            raise ValueError(f"model pair {a} vs {b}: {len(cands)} triplets; a triplet's three trials need three "
                             f"different groups' worth of triplets (at least 3)")
    rng = np.random.default_rng(seed)
    dealt = None
    for _ in range(_MAX_DEALS):
        dealt = _deal(units, groups, rng, per_group)
        if dealt is not None:
            break
    if dealt is None:
        raise ValueError(f"no deal of the pairs and triplets to {groups} groups avoids showing a sentence twice "
                         f"to a group (tried {_MAX_DEALS}); use fewer groups or more triplets per model pair")

    used = {s[0] for g in dealt for t in g for s in t["sides"]}
    fresh = [s for s in dict.fromkeys(str(x).strip() for x in pool) if s and s not in used]
    fresh = [fresh[i] for i in rng.permutation(len(fresh))]
    catch_ok = [s for s in fresh if len(set(s.split())) > 1]
    need_random = 2 * random_pairs * groups
    if len(fresh) < need_random:
        raise ValueError(f"the pool has {len(fresh)} sentences unused by the design; {need_random} needed for "
                         f"{random_pairs} random pairs in each of {groups} groups")
    randoms = fresh[:need_random]
    catch_pool = [s for s in catch_ok if s not in set(randoms)]
    if len(catch_pool) < catch_trials * groups:
        raise ValueError(f"the pool has {len(catch_pool)} unused sentences of two or more distinct words; "
                         f"{catch_trials * groups} needed for the catch trials")
    taken = used | set(randoms)
    for g in range(groups):
        for k in range(random_pairs):
            a, b = randoms[2 * (g * random_pairs + k)], randoms[2 * (g * random_pairs + k) + 1]
            dealt[g].append({"cond": "random", "sides": [(a, "R1", None, None), (b, "R2", None, None)]})
        for k in range(catch_trials):
            s = catch_pool[g * catch_trials + k]
            c2 = " ".join(_shuffled(s.split(), rng))
            if c2 in taken:
                raise ValueError(f"the shuffled catch sentence {c2!r} is also a stimulus of the design")
            dealt[g].append({"cond": "catch", "sides": [(s, "C1", None, None), (c2, "C2", None, None)]})

    from contstim_bench.data.contstim_trials import trial_type_of

    rows = []
    for g, trials in enumerate(dealt):
        order = rng.permutation(len(trials))
        flips = rng.random(len(trials)) < 0.5
        for t, k in enumerate(order, start=1):
            left, right = trials[k]["sides"]
            if flips[k]:
                left, right = right, left
            rows.append({
                "experiment": experiment, "group": g + 1, "trial": t, "pair_id": pair_id(left[0], right[0]),
                "sentence1": left[0], "sentence2": right[0],
                "sentence1_type": left[1], "sentence2_type": right[1],
                "trial_type": trial_type_of(left[1], right[1]),
                "sentence1_accept_model": left[2], "sentence1_reject_model": left[3],
                "sentence2_accept_model": right[2], "sentence2_reject_model": right[3],
            })
    frame = pd.DataFrame(rows, columns=list(DESIGN_TRIAL_COLUMNS))
    check_design(frame)
    return frame


def check_design(design: pd.DataFrame) -> None:
    """ValueError when a group sees a sentence twice (the generator's own invariant)."""
    for g, rows in design.groupby("group"):
        seen = pd.concat([rows["sentence1"], rows["sentence2"]])
        dup = seen[seen.duplicated()]
        if len(dup):
            raise ValueError(f"group {g}: sentence {dup.iloc[0]!r} is shown twice")


def design_table(design: pd.DataFrame) -> pa.Table:
    schema = pa.schema([(c, pa.type_for_alias(t)) for c, t in DESIGN_TRIAL_COLUMNS.items()])
    return pa.Table.from_pandas(design[list(DESIGN_TRIAL_COLUMNS)], schema=schema, preserve_index=False)


def write_design_dataset(design: pd.DataFrame, output: Path, info: dict) -> Path:
    """Write ``OUTPUT/design`` (config ``design``, split ``train``) and check that it passes
    :func:`contstim_bench.data.design_file.read_design` (what the experiment server reads)."""
    from contstim_bench.data.writer import ConfigSpec, DatasetSpec, write_dataset

    from ..citations import GOLAN_2023

    docs = {
        "experiment": "Experiment name given to `generate design --experiment`.",
        "group": "Participant group (1-based); every participant of a group sees the group's trials.",
        "trial": "Trial order within the group, 1-based.",
        "pair_id": "Stable id of the unordered sentence pair (contstim_trials.pair_id).",
        "sentence1": "Sentence shown on the left.",
        "sentence2": "Sentence shown on the right.",
        "sentence1_type": "Type code of sentence1: N1/N2 natural controversial, N natural, S1/S2 synthetic, "
                          "R1/R2 randomly sampled natural, C1 natural / C2 shuffled (catch trial).",
        "sentence2_type": "Type code of sentence2.",
        "trial_type": "Condition (contstim_bench.study.TRIAL_TYPES).",
        "sentence1_accept_model": "Model targeted to accept sentence1 (null if none).",
        "sentence1_reject_model": "Model targeted to reject sentence1 (null if none).",
        "sentence2_accept_model": "Model targeted to accept sentence2 (null if none).",
        "sentence2_reject_model": "Model targeted to reject sentence2 (null if none).",
    }
    spec = DatasetSpec(
        name=DESIGN_DATASET, pretty_name="Controversial sentence pairs: experiment design", license="other",
        description=f"Trial lists written by `contstim generate design`: {json.dumps(info)}.",
        citation=GOLAN_2023, sources=[str(v) for v in (info.get("natural"), info.get("triplets"), info.get("pool")) if v],
        configs=[ConfigSpec("design", {"train": design_table(design)},
                            "One row per participant group x trial (trials layout without participants and "
                            "responses).", docs)])
    folder = write_dataset(spec, output)
    read_design(output)  # raises ValueError naming the problem if the design is not servable
    return folder


def design_experiment(output: str | os.PathLike, *, natural: str | os.PathLike | None = None,
                      triplets: str | os.PathLike | None = None, pool: str | None = None, groups: int = 10,
                      random_pairs: int = 9, catch_trials: int = 12, seed: int = 0,
                      experiment: str = "generated", datasets_dir: str | os.PathLike | None = None,
                      score_models: bool = True, options: RunOptions = RunOptions(),
                      log=None, per_group: int = 1,
                      plan: str | os.PathLike | None = None) -> tuple[pd.DataFrame, Path]:
    """Build the trial lists from the outputs of ``generate natural`` (``natural``) and/or
    ``generate select`` (``triplets``) and random/catch sentences of ``pool`` (default: the
    held-out ``start`` part of the contstim synthesis pool), and write them as ``output``/design;
    returns (design, folder).

    With ``score_models`` (default), also write ``output``/models: the targeted models with their
    specs and their log-probabilities of every sentence of the design
    (:mod:`.design_models`), the reference panel of the benchmark round the design becomes.
    ``plan``: the plan of ``contstim round plan`` (folder or ``plan.json``) this design carries out,
    copied to ``output``/plan.json (``experiment ingest`` records it in the round).
    """
    from ..data.design_scores import design_model_names, design_sentences, write_models_dataset
    from .design_models import collect_specs, score_sentences
    from .inputs import load_pool
    from .triplet_table import read_triplets

    if natural is None and triplets is None:
        raise ValueError("`contstim generate design` needs --natural and/or --triplets (the outputs of `generate "
                         "natural` / `generate select`)")
    plan_doc = None
    if plan is not None:
        from ..results.io import read_plan

        plan_doc = read_plan(plan)  # checked before any work
    natural_pairs = read_natural_pairs(natural) if natural is not None else None
    triplet_rows = read_triplets(triplets) if triplets is not None else None
    sentences, pool_desc = load_pool(pool, datasets_dir)
    design = build_design(natural_pairs, triplet_rows, sentences, groups=groups, random_pairs=random_pairs,
                          catch_trials=catch_trials, seed=seed, experiment=experiment, per_group=per_group)
    folder = write_design_dataset(design, Path(output), {
        "natural": None if natural is None else str(natural),
        "triplets": None if triplets is None else str(triplets), "pool": pool_desc, "groups": groups,
        "random_pairs": random_pairs, "catch_trials": catch_trials, "seed": seed, "per_group": per_group})
    if score_models:
        found = collect_specs(natural, triplet_rows, triplets)
        specs = {name: found.get(name, {"spec": None, "role": None}) for name in design_model_names(design)}
        logprobs = score_sentences(design_sentences(design), specs, datasets_dir=datasets_dir,
                                   options=replace(options, progress=False), log=log)
        write_models_dataset(specs, logprobs, Path(output))
    if plan_doc is not None:
        from ..results.plan_file import PLAN_FILE
        from .synthetic_run import write_json_atomic

        write_json_atomic(Path(output) / PLAN_FILE, plan_doc)
    return design, folder
