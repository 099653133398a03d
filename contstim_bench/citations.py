"""BibTeX of the papers the benchmark implements (one copy each; dataset cards, generated
datasets and the evaluate module cite from here).

* :data:`GOLAN_2023`: controversial sentence pairs, the ``contstim`` benchmark (Golan,
  Siegelman, Kriegeskorte & Baldassano 2023).
* :data:`KAUF_IVANOVA_2023`: PLL-word-l2r and PLL-whole-word masked-LM scoring, evaluated on
  BLiMP (Kauf & Ivanova 2023).
* :data:`KAUF_2024`: LogProbs versus prompting on the plausibility benchmarks (Kauf, Chersoni,
  Lenci, Fedorenko & Ivanova 2024).

A bottom-layer module: it imports nothing from the package.  The texts are part of dataset
cards, whose fingerprints cover them: editing one changes the fingerprint of every dataset that
cites it.
"""
from __future__ import annotations

GOLAN_2023 = """\
@article{golan2023testing,
  title   = {Testing the limits of natural language models for predicting human language judgements},
  author  = {Golan, Tal and Siegelman, Matthew and Kriegeskorte, Nikolaus and Baldassano, Christopher},
  journal = {Nature Machine Intelligence},
  volume  = {5},
  pages   = {952--964},
  year    = {2023},
  doi     = {10.1038/s42256-023-00718-1}
}"""

KAUF_IVANOVA_2023 = """\
@inproceedings{kauf2023better,
  title     = {A Better Way to Do Masked Language Model Scoring},
  author    = {Kauf, Carina and Ivanova, Anna},
  booktitle = {Proceedings of the 61st Annual Meeting of the Association for Computational Linguistics (Volume 2: Short Papers)},
  pages     = {925--935},
  year      = {2023},
  address   = {Toronto, Canada},
  publisher = {Association for Computational Linguistics},
  doi       = {10.18653/v1/2023.acl-short.80}
}"""

KAUF_2024 = """\
@inproceedings{kauf2024logprobs,
  title = {Log Probabilities Are a Reliable Estimate of Semantic Plausibility in Base and Instruction-Tuned Language Models},
  author = {Kauf, Carina and Chersoni, Emmanuele and Lenci, Alessandro and Fedorenko, Evelina and Ivanova, Anna A.},
  booktitle = {Proceedings of the 7th BlackboxNLP Workshop},
  year = {2024}
}"""
