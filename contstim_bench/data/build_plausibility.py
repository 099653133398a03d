"""Build the ``plausibility`` dataset (Kauf et al. 2024) from the raw ``llm-plaus-prob`` files.

Configs (one split each, ``test``):

- ``eventsadapt``: the 1,564 EventsAdapt sentences (391 items x plausible/implausible x
  active/passive; trial types AI, AAN and the AAR control items) with the mean human rating.
- ``eventsadapt_ratings``: the 35,882 individual human ratings (long format), raters
  pseudonymised as ``R001``... in order of first appearance.
- ``dtfit``: the 395 DTFit sentence pairs with their human typicality means.
- ``socialn400``: the 300 SocialN400 (Jouravlev et al. 2019) stimuli (100 items x Control /
  SemAnom / Critical): context, target sentence, target word, human "makes sense" rates.
- ``socialn400_judgments``: the 3,300 per-subject binary sensibility judgments.

Every raw file is read through :func:`contstim_bench.data.sources.resolve`; the upstream
``corpus.csv`` files (what Kauf et al. fed their models) are used as cross-checks: any
disagreement with the values derived here raises ValueError naming the row.

The raw files and their readers: :mod:`.plausibility_raw`; one module per source dataset
(:mod:`.plausibility_eventsadapt`, :mod:`.plausibility_dtfit`, :mod:`.plausibility_socialn400`).
This module assembles the dataset spec: schemas, column documentation and the card.
"""
from __future__ import annotations

import os

import pandas as pd
import pyarrow as pa

from . import sources
from .plausibility_dtfit import dtfit_table
from .plausibility_eventsadapt import eventsadapt_tables
from .plausibility_raw import ALL_FILES
from .plausibility_socialn400 import socialn400_tables
from .writer import ConfigSpec, DatasetSpec

NAME = "plausibility"
SPLIT = "test"

LICENSE = (
    "No licence is stated upstream (carina-kauf/llm-plaus-prob has no LICENSE file): default "
    "copyright applies. Use for evaluation only; do not redistribute."
)


# --------------------------------------------------------------------------- spec

def _table(df: pd.DataFrame, schema: dict[str, pa.DataType]) -> pa.Table:
    if list(df.columns) != list(schema):
        raise ValueError(f"columns {list(df.columns)} != schema {list(schema)}")
    return pa.Table.from_pandas(df, schema=pa.schema(list(schema.items())), preserve_index=False)


S, I, F = pa.string(), pa.int64(), pa.float64()

EVENTSADAPT_COLUMNS = {
    "item": "EventsAdapt item number (`ItemNum`, 1-416; 391 items). Each item has four sentences: "
            "plausible and implausible, active and passive.",
    "trial_type": "`AI` (animate agent, inanimate patient: the implausible version is impossible), `AAN` "
                  "(animate-animate, non-reversible: the implausible version is unlikely; the paper's *AA*) or `AAR` "
                  "(animate-animate reversible control items, excluded by Kauf et al. 2024).",
    "voice": "`active` or `passive`.",
    "plausibility": "`plausible` or `implausible` (lower-cased `Plausibility` of the sentence set). For `AAR` items "
                    "`implausible` only marks the role-reversed version (both are plausible; the human-data file "
                    "labels both `Plausible`).",
    "sentence": "The sentence (unique).",
    "pair_id": "`EA<item>-<voice>`: the minimal pair (plausible vs implausible) this sentence belongs to.",
    "synonym_pair": "`SynonymPair`: the two items (`Version1`, `Version2`) that describe the same event with "
                    "synonymous words share this number (e.g. items 1 and 2: *The raider caught the illness* / "
                    "*The marauder contracted the disease*); null for items without a synonym version.",
    "synonym_version": "1 or 2 (`NumSyn` `Version1`/`Version2`); null for items without a synonym version.",
    "human_mean": "Mean of the sentence's non-missing human ratings (1 = completely implausible .. 7 = completely "
                  "plausible), over every row of `clean_EventsAdapt_human_dat.csv` for it (a repeated rating by "
                  "the same rater counts twice, as upstream). Equals `good/bad_human_score` of the upstream "
                  "`corpus.csv` (checked at build time).",
    "human_n": "Number of non-missing ratings averaged in `human_mean`.",
}
EVENTSADAPT_SCHEMA = {"item": I, "trial_type": S, "voice": S, "plausibility": S, "sentence": S, "pair_id": S,
                      "synonym_pair": I, "synonym_version": I, "human_mean": F, "human_n": I}

RATINGS_COLUMNS = {
    "rater": "Pseudonymous rater id `R001`..`R658`, numbered in order of first appearance in "
             "`clean_EventsAdapt_human_dat.csv` (`WorkerId`, itself a salted hash of the MTurk id in the "
             "shared copy).",
    "item": "EventsAdapt item number (joins `eventsadapt.item`).",
    "sentence": "The rated sentence (joins `eventsadapt.sentence`).",
    "rating": "Likert rating 1 (completely implausible) .. 7 (completely plausible) of how plausible, i.e. likely "
              "to occur in the real world, the sentence is; null where the raw `Score` is `NA` (145 rows).",
}
RATINGS_SCHEMA = {"rater": S, "item": I, "sentence": S, "rating": F}

DTFIT_COLUMNS = {
    "item": "DTFit item number (`ItemNum`; 395 items numbered 1-397, 251 and 297 unused).",
    "sentence_plausible": "The typical (plausible) active sentence, e.g. *The actor won the award.*",
    "sentence_implausible": "The atypical version differing in the inanimate patient, e.g. *The actor won the battle.*",
    "human_mean_plausible": "Mean human typicality rating of the plausible sentence (`Score` of "
                            "`clean_DTFit_human_dat.csv`): 1 very atypical .. 7 very typical, answering "
                            "*How common is it for a {agent} to {predicate} a {patient}?* (Vassallo et al. 2018).",
    "human_mean_implausible": "Same for the implausible sentence.",
}
DTFIT_SCHEMA = {"item": I, "sentence_plausible": S, "sentence_implausible": S,
                "human_mean_plausible": F, "human_mean_implausible": F}

SOCIALN400_COLUMNS = {
    "item": "Item number 1-100 (`ItemNum`).",
    "condition": "`Control` (plausible target sentence), `SemAnom` (anomalous target, unrelated context) or "
                 "`Critical` (the anomalous target, licensed by its context).",
    "context": "The context sentence (`Sentence1_Context`, surrounding whitespace stripped).",
    "target_sentence": "The target sentence (`Sentence2_Main`, stripped). `Critical` and `SemAnom` share it in 93 "
                       "of the 100 items.",
    "target_word": "The critical word: the `target_word_position`-th whitespace-separated word of the target "
                   "sentence without trailing punctuation (upstream `corpus.csv` keeps a trailing comma in 6 rows).",
    "target_word_position": "1-based word index of the target word (`Target_word_position`).",
    "prefix": "The target sentence's words before the target word, joined by single spaces.",
    "spillover": "The rest of the target sentence after the target word (starts with its punctuation or a "
                 "space), so that `prefix + ' ' + target_word + spillover == target_sentence`.",
    "list": "Presentation list 1-4 of this item x condition in the human experiment (`List` of "
            "`SocialN400_stimuli_annotated.csv`; each list has 25 items per condition).",
    "comprehension_question": "Comprehension question asked after the story in the human experiment "
                              "(annotated file, line-break markers removed).",
    "comprehension_answer": "Correct answer to the comprehension question: `yes` or `no`.",
    "human_sense_rate_context": "Proportion of `context`-perspective trials (`Confederate` = 0) on which "
                                "participants judged the target sentence to make sense (`Response` = 1); NaN if none.",
    "human_n_context": "Number of such trials.",
    "human_sense_rate_no_context": "Same for `no_context`-perspective trials (`Confederate` = 1).",
    "human_n_no_context": "Number of such trials.",
}
SOCIALN400_SCHEMA = {"item": I, "condition": S, "context": S, "target_sentence": S, "target_word": S,
                     "target_word_position": I, "prefix": S, "spillover": S, "list": I,
                     "comprehension_question": S, "comprehension_answer": S,
                     "human_sense_rate_context": F, "human_n_context": I,
                     "human_sense_rate_no_context": F, "human_n_no_context": I}

JUDGMENT_COLUMNS = {
    "subject": "EEG session id of the participant (`SubjID`, e.g. `EEG_03032016a`; 22 participants).",
    "run": "Run = presentation list 1-4 (`Run`, always equal to `List`); each participant did two runs of 75 trials.",
    "confederate": "Raw `Confederate` flag of the run (0 or 1); each participant has one run of each.",
    "perspective": "`context` for `confederate` 0, `no_context` for 1, the mapping of Kauf et al.'s "
                   "SocialN400-stats notebook (Critical targets make sense on 86% of `context` trials vs 28% of "
                   "`no_context` trials).",
    "trial": "Trial number within the run, 1-75 (`TrialNum`).",
    "onset_s": "Trial onset within the run in seconds (`Onset`); null in 29 rows.",
    "item": "Item number (joins `socialn400.item`).",
    "condition": "`Control`, `SemAnom` or `Critical` (joins `socialn400.condition`; the raw `Tag` 1/2/3 codes the "
                 "same and is dropped).",
    "response": "Binary sensibility judgment: 1 = the sentence makes sense, 0 = it does not.",
    "rt_s": "Response time in seconds (`RT`).",
}
JUDGMENT_SCHEMA = {"subject": S, "run": I, "confederate": I, "perspective": S, "trial": I, "onset_s": F,
                   "item": I, "condition": S, "response": I, "rt_s": F}

DESCRIPTION = """
The human plausibility benchmarks of Kauf, Chersoni, Lenci, Fedorenko & Ivanova (2024), *Log
Probabilities Are a Reliable Estimate of Semantic Plausibility in Base and Instruction-Tuned
Language Models*, built from the files of `carina-kauf/llm-plaus-prob`.

- **Experiment 1** (single sentences): EventsAdapt (Fedorenko et al. 2020; human ratings from Kauf
  et al. 2023) and DTFit (Vassallo et al. 2018). A model scores a hit on a minimal pair when it
  gives the plausible sentence the higher score; the paper's *AA* subset is trial type `AAN`, and
  `AAR` control items are excluded. The human accuracy is the same comparison made with the mean
  human ratings (`contstim_bench.data.plausibility_human`).
- **Experiment 2** (context + sentence): SocialN400 (Jouravlev et al. 2019), 100 items in three
  conditions, with per-subject binary "does this sentence make sense" judgments.
"""

CITATION = """
@inproceedings{kauf2024logprobs,
  title = {Log Probabilities Are a Reliable Estimate of Semantic Plausibility in Base and Instruction-Tuned Language Models},
  author = {Kauf, Carina and Chersoni, Emmanuele and Lenci, Alessandro and Fedorenko, Evelina and Ivanova, Anna A.},
  booktitle = {Proceedings of the 7th BlackboxNLP Workshop},
  year = {2024}
}
@article{kauf2023event,
  title = {Event Knowledge in Large Language Models: The Gap Between the Impossible and the Unlikely},
  author = {Kauf, Carina and Ivanova, Anna A. and Rambelli, Giulia and Chersoni, Emmanuele and She, Jingyuan Selena and Chowdhury, Zawad and Fedorenko, Evelina and Lenci, Alessandro},
  journal = {Cognitive Science}, volume = {47}, number = {11}, pages = {e13386}, year = {2023}
}
@inproceedings{vassallo2018dtfit,
  title = {Event Knowledge in Sentence Processing: A New Dataset for the Evaluation of Argument Typicality},
  author = {Vassallo, Paolo and Chersoni, Emmanuele and Santus, Enrico and Lenci, Alessandro and Blache, Philippe},
  booktitle = {Proceedings of the LREC Workshop on Linguistic and Neuro-Cognitive Resources (LiNCR)},
  year = {2018}
}
@article{jouravlev2019tracking,
  title = {Tracking Colisteners' Knowledge States during Language Comprehension},
  author = {Jouravlev, Olessia and Schwartz, Rachael and Ayyash, Dima and Mineroff, Zachary and Gibson, Edward and Fedorenko, Evelina},
  journal = {Psychological Science}, volume = {30}, number = {1}, pages = {3--19}, year = {2019}
}
"""

NOTES = """
Traps in the raw files, and what the build does about them:

- `SocialN400_V1_Behavioral.csv` has bare CR line endings (normalised on read).
- `SocialN400_stimuli.csv` ends with a column-summary row without item number, and
  `SocialN400_stimuli_annotated.csv` with one such row plus hundreds of blank rows: trailing rows
  without `ItemNum` are dropped (a missing `ItemNum` before the last item is an error).
- The annotated stimulus file (the audio experiment's version) differs in wording from
  `SocialN400_stimuli.csv` (what Kauf et al. scored) in 12 contexts and 14 target sentences (typos,
  one different context): texts come from `SocialN400_stimuli.csv`; only the list and comprehension
  question come from the annotated file.
- EventsAdapt `AAR` items: the human-data file labels both versions `Plausible`, the sentence set
  labels the role-reversed one `Implausible`; `plausibility` follows the sentence set. Any other
  disagreement between the two files fails the build.
- R's `NA` marks missing values in `Score`, `SynonymPair` and `NumSyn` (text columns are never
  reinterpreted).
- `clean_EventsAdapt_human_dat.csv`: 145 `NA` scores (kept as null ratings) and one rater who
  rated 50 sentences twice (both ratings kept, as in the upstream means). `WorkerId` values in the
  shared copy are salted hashes; the dataset replaces them by `R001`... so that the upstream
  original and the pseudonymised copy build identical parquet.
- `SocialN400_V1_Behavioral.csv`: `Subj` (a 1-22 index of `SubjID`), `Question` (always 1) and
  `Tag` (the condition code) carry no extra information and are dropped; `List` equals `Run`.
- The upstream `corpus.csv` files (the model inputs of Kauf et al.) are not copied; they are used
  to check the sentences, target words and human means derived here.
"""


def build_spec(source: str | os.PathLike | None = None) -> DatasetSpec:
    """Read and verify the raw files and return the ``plausibility`` dataset spec."""
    ea, ratings = eventsadapt_tables(source)
    dt = dtfit_table(source)
    sn, judgments = socialn400_tables(source)
    configs = [
        ConfigSpec("eventsadapt", {SPLIT: _table(ea, EVENTSADAPT_SCHEMA)},
                   "EventsAdapt sentences, one row per sentence, with the mean human plausibility rating. "
                   "Minimal pairs: same `pair_id` (item and voice), plausible vs implausible.",
                   EVENTSADAPT_COLUMNS),
        ConfigSpec("eventsadapt_ratings", {SPLIT: _table(ratings, RATINGS_SCHEMA)},
                   "Every individual EventsAdapt human rating (long format, raw file order).", RATINGS_COLUMNS),
        ConfigSpec("dtfit", {SPLIT: _table(dt, DTFIT_SCHEMA)},
                   "DTFit minimal pairs (all active voice) with the mean human typicality ratings.", DTFIT_COLUMNS),
        ConfigSpec("socialn400", {SPLIT: _table(sn, SOCIALN400_SCHEMA)},
                   "SocialN400 stimuli, one row per item x condition, with the human sensibility rates per "
                   "perspective.", SOCIALN400_COLUMNS),
        ConfigSpec("socialn400_judgments", {SPLIT: _table(judgments, JUDGMENT_SCHEMA)},
                   "Per-subject binary sensibility judgments of the SocialN400 experiment (raw file order).",
                   JUDGMENT_COLUMNS),
    ]
    srcs = [sources.entry(p) for p in ALL_FILES]
    return DatasetSpec(
        name=NAME,
        pretty_name="Plausibility benchmarks of Kauf et al. 2024 (EventsAdapt, DTFit, SocialN400)",
        license=LICENSE,
        description=DESCRIPTION,
        citation=CITATION,
        sources=[f"`{s.repo}` @ `{s.commit[:10]}`: `{s.upstream_path}` (git blob `{s.blob_sha1}`)" for s in srcs],
        configs=configs,
        notes=NOTES,
        extra_yaml={"license_details": "no licence upstream; evaluation only, do not redistribute"},
    )
