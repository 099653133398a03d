"""Generate a small, FAKE main-experiment results file in the raw Gorilla layout.

The real ``contstim_Aug2021_n100_results_anon.csv`` is not in the shared data folder.  This
generator writes a file with its layout (the Nov 2022 export's columns plus ``Participant
Private ID`` and ``counterbalance-o1ql`` values ``set N_...``) built from the REAL stimulus files
(tested synthetic triplets, natural controversial pairs, natural sentences of the synthesis
pool) but with ratings and reaction times drawn from a seeded RNG: no human data is copied.

Every group gets its own stimuli and every trial type; one participant gets one pair twice
(as in the real data, where "one subject [had] two extra trials").
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from contstim_bench.data import build_contstim as bc
from contstim_bench.data import safe_pickle, sources
from contstim_bench.study import MAIN_MODELS

RESPONSE_TEXT = {1: "Very confident", 2: "Confident", 3: "Somewhat confident", 4: "Somewhat confident",
                 5: "Confident", 6: "Very confident"}


@dataclass
class FixtureInfo:
    path: Path
    n_groups: int
    participants_per_group: int
    trials_per_participant: int  # distinct pairs per participant
    repeated: tuple[int, int]  # (Participant Private ID, Trial Number) of the repeated presentation
    raw: pd.DataFrame  # what was written


def _scored_extras(source) -> tuple[list[str], list[tuple[str, str]]]:
    """The main stimuli that are neither in the tested triplets nor in the natural controversial
    pairs, all scored by the nine reference models: single natural sentences (the randomly sampled
    ones) and (sentence, word-shuffled sentence) pairs (the catch trials), each sorted."""
    from collections import defaultdict

    probs = safe_pickle.load(sources.resolve(bc.STIM_PROBS, source))
    best = bc.read_csv(sources.resolve(bc.TRIPLETS["main"][1], source))
    nat = bc.read_csv(sources.resolve(bc.NATURAL_PAIRS, source))
    used = set(best.N) | set(best.S1) | set(best.S2) | set(nat.sentence1) | set(nat.sentence2)
    by_words = defaultdict(list)
    for sent in sorted(str(x) for x in probs["trigram"] if str(x) not in used):
        by_words[tuple(sorted(sent.split()))].append(sent)
    singles = sorted(v[0] for v in by_words.values() if len(v) == 1)
    shuffles = sorted(tuple(v) for v in by_words.values() if len(v) == 2)
    return singles, shuffles


def _stimulus_sets(n_groups: int, rng: random.Random, source, scored: bool = False) -> list[list[tuple[str, str, str, str]]]:
    """Per group: (sentence_a, type_a, sentence_b, type_b) for every trial type.

    ``scored``: randomly sampled natural pairs and catch trials made of stimuli that the reference
    models scored (so that every reference model can be evaluated on every trial)."""
    best = bc.read_csv(sources.resolve(bc.TRIPLETS["main"][1], source))
    nat = bc.read_csv(sources.resolve(bc.NATURAL_PAIRS, source))
    pool = sources.resolve(bc.POOL_SYNTHESIS, source).read_text(encoding="utf-8").split("\n")
    used = set(best.N) | set(nat.sentence1) | set(nat.sentence2)
    pool = [s for s in pool if s and s not in used]
    triplet_rows = rng.sample(range(len(best)), 3 * n_groups)
    nat_rows = rng.sample(range(len(nat)), 2 * n_groups)
    if scored:
        singles, shuffles = _scored_extras(source)
        picked = rng.sample(singles, 4 * n_groups)  # 4 per group; slots 5-6 unused (catch from shuffles)
        naturals = [x for k in range(n_groups) for x in picked[4 * k: 4 * k + 4] + ["", ""]]
        shuffle_pairs = rng.sample(shuffles, 2 * n_groups)
    else:
        naturals = rng.sample(pool, 6 * n_groups)
    sets = []
    for g in range(n_groups):
        trials = []
        t1, t2, t3 = (best.iloc[triplet_rows[3 * g + i]] for i in range(3))
        trials.append((t1.N, "N", t1.S1, "S1"))  # natural vs synthetic (S1)
        trials.append((t2.N, "N", t2.S2, "S2"))  # natural vs synthetic (S2)
        trials.append((t3.S1, "S1", t3.S2, "S2"))  # synthetic vs synthetic
        for i in range(2):  # natural controversial
            r = nat.iloc[nat_rows[2 * g + i]]
            trials.append((r.sentence1, "N1", r.sentence2, "N2"))
        mine = naturals[6 * g: 6 * g + 6]
        trials.append((mine[0], "R1", mine[1], "R2"))  # randomly sampled natural
        trials.append((mine[2], "R1", mine[3], "R2"))
        if scored:
            for a, b in shuffle_pairs[2 * g: 2 * g + 2]:  # natural vs shuffled (both scored)
                trials.append((a, "C1", b, "C2"))
        for s in ([] if scored else mine[4:6]):  # natural vs shuffled
            words = s.split()
            shuffled = words[:]
            while shuffled == words:
                rng.shuffle(shuffled)
            trials.append((s, "C1", " ".join(shuffled), "C2"))
        sets.append(trials)
    return sets


def write_main_fixture(
    path: str | Path,
    source=None,
    n_groups: int = 3,
    participants_per_group: int = 2,
    seed: int = 0,
    pll_readouts: bool = False,
) -> FixtureInfo:
    """Write the fake raw results CSV to ``path`` and describe it (see the module docstring).

    ``pll_readouts``: also write ``sentence{1,2}_<model>_has_a_mouth_prob`` columns for BERT,
    RoBERTa and ELECTRA (FAKE: the approximate log-probability plus seeded noise, one value per
    sentence), as a results file carrying PLL read-outs would (Fig. S8a); then every stimulus is
    one the reference models scored (randomly sampled natural pairs and catch trials included),
    so that every reference model can be evaluated on every trial."""
    rng = random.Random(seed)
    probs = safe_pickle.load(sources.resolve(bc.STIM_PROBS, source))
    probs = {str(m): {str(s): float(v) for s, v in d.items()} for m, d in probs.items()}
    best = bc.read_csv(sources.resolve(bc.TRIPLETS["main"][1], source))
    accept = {**dict(zip(best.S1, best.m1)), **dict(zip(best.S2, best.m2))}
    nat = bc.read_csv(sources.resolve(bc.NATURAL_PAIRS, source))
    accept.update(dict(zip(nat.sentence1, nat.model_2)))
    accept.update(dict(zip(nat.sentence2, nat.model_1)))

    sets = _stimulus_sets(n_groups, rng, source, scored=pll_readouts)
    pids = rng.sample(range(3_000_000, 4_000_000), n_groups * participants_per_group)
    rows = []
    readouts: dict[tuple[str, str], float] = {}
    repeated = None
    for g, trials in enumerate(sets, start=1):
        for p in range(participants_per_group):
            pid = pids[(g - 1) * participants_per_group + p]
            order = trials[:]
            rng.shuffle(order)
            if repeated is None:  # one participant sees the first pair again at the end
                order.append(order[0])
            for t, (a, ta, b, tb) in enumerate(order, start=1):
                if repeated is None and t == len(order):
                    repeated = (pid, t)
                if rng.random() < 0.5:
                    a, ta, b, tb = b, tb, a, ta
                rating = rng.randint(1, 6)
                row = {
                    "Zone Type": "response_button_text",
                    "Trial Number": t,
                    "Zone Name": f"resp{rating}",
                    "Response": RESPONSE_TEXT[rating],
                    "Reaction Time": round(rng.uniform(2000, 20000), 1),
                    "counterbalance-o1ql": f"set {g}_fixture",
                    "sentence1": a,
                    "sentence2": b,
                    "sentence1_type": ta,
                    "sentence2_type": tb,
                    "sentence1_model": accept.get(a, ""),
                    "sentence2_model": accept.get(b, ""),
                }
                for m in MAIN_MODELS:
                    row[f"sentence1_{m}_prob"] = probs[m].get(a)
                    row[f"sentence2_{m}_prob"] = probs[m].get(b)
                if pll_readouts:
                    for m in ("bert", "roberta", "electra"):
                        for k, sent in ((1, a), (2, b)):
                            key = (m, sent)
                            if key not in readouts:
                                readouts[key] = round(probs[m][sent] + rng.gauss(0.0, 8.0), 3)
                            row[f"sentence{k}_{m}_has_a_mouth_prob"] = readouts[key]
                row["Participant Private ID"] = pid
                rows.append(row)
    raw = pd.DataFrame(rows)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw.to_csv(path, index=False)
    return FixtureInfo(path, n_groups, participants_per_group, len(sets[0]), repeated, raw)


def link_source_dir(dest: str | Path) -> Path:
    """A source folder with a symlink to every present contstimlang raw file of the manifest."""
    dest = Path(dest)
    for rel, entry in sources.manifest().items():
        if not entry.present_in_shared or not rel.startswith("contstimlang/"):
            continue
        target = sources.resolve(rel)
        link = dest / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target.resolve())
    return dest
