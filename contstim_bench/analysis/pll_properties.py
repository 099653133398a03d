"""The desiderata of a sentence score of Kauf & Ivanova (2023): pure functions on numbers.

- :func:`length_effect` (their §4.1, Figs. 3A, 7-9): the Pearson correlation between a sentence's
  length (tokens, or words) and its *negative* score (surprisal); a score that behaves like a
  probability gives longer sentences lower scores, so r > 0.
- :func:`frequency_effect` (§4.2, Figs. 3B, 10-13): the Pearson correlation between a word's log
  frequency and its score in a neutral template; expected r > 0.
- :func:`score_agreement` (§5, Figs. 4, 14-16): the correlation, per sentence, between a masked
  LM's PLL and a causal LM's log-probability (Pearson as the paper, Spearman beside it).
- :func:`oov_ratio` (Appendix C, Table 2): the share of word occurrences that a tokenizer splits
  into two or more tokens.
- :data:`INFLATION_EXAMPLES` (§2, Figs. 2, 5, 6, 17): the sentences whose per-token values show
  PLL-original inflating a multi-token word; :func:`inflation_by_position` the same comparison
  over every word, by token position and word length.

Their words (``better-mlm-scoring``, ``extract-words.ipynb`` and ``quantify-oov.ipynb``): a
sentence lower-cased, a trailing ``.`` stripped, split on whitespace (:func:`dataset_words`);
the out-of-vocabulary ratio counts every occurrence of the words made of letters only, and a
word's tokens are counted in the template its score is read from (:data:`TEMPLATES`).

Significance marks as their figures: ``***`` p < .001, ``**`` p < .01, ``*`` p < .05, else
``n.s.`` (two-sided tests of scipy).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from scipy import stats

from .inference import stars as inference_stars

TEMPLATES = {
    "my-word-is": 'My word is "{word}".',
    "dictionary": 'I opened a dictionary and randomly picked a word. It was "{word}".',
    "none": "{word}",
}
"""The neutral contexts a word is scored in (Appendix B; ``dictionary``: Fig. 10, ``none``: Fig. 11)."""


def stars(p: float | None) -> str:
    """The paper's significance mark of a two-sided p-value (``n.s.`` when not significant):
    :func:`contstim_bench.analysis.inference.stars`."""
    return inference_stars(p, not_significant="n.s.")


def correlation(x: Sequence[float], y: Sequence[float], method: str = "pearson") -> dict:
    """``{"method", "r", "p", "n", "stars"}`` of ``x`` against ``y`` (scipy's two-sided test).

    ``r``/``p`` are None when a variable is constant (no correlation is defined).  ValueError
    for lengths that differ, fewer than 3 points or a value that is not finite."""
    if method not in ("pearson", "spearman"):
        raise ValueError(f"unknown correlation {method!r}; expected pearson or spearman")
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"correlation needs two equally long vectors, got shapes {a.shape} and {b.shape}")
    if len(a) < 3:
        raise ValueError(f"correlation needs at least 3 points, got {len(a)}")
    bad = ~(np.isfinite(a) & np.isfinite(b))
    if bad.any():
        raise ValueError(f"point {int(bad.argmax())} is not finite ({a[bad.argmax()]}, {b[bad.argmax()]})")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return {"method": method, "r": None, "p": None, "n": int(len(a)), "stars": ""}
    res = stats.pearsonr(a, b) if method == "pearson" else stats.spearmanr(a, b)
    r, p = float(res[0]), float(res[1])
    return {"method": method, "r": r, "p": p, "n": int(len(a)), "stars": stars(p)}


def least_squares_line(x: Sequence[float], y: Sequence[float]) -> dict | None:
    """The least-squares line the figures draw through their dots: ``{"slope", "intercept", "x0",
    "x1"}`` (x0..x1: the range of ``x``), None for fewer than 2 points or a constant ``x``."""
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if len(a) < 2 or np.ptp(a) == 0:
        return None
    slope, intercept = np.polyfit(a, b, 1)
    return {"slope": float(slope), "intercept": float(intercept), "x0": float(a.min()), "x1": float(a.max())}


def length_effect(scores: Sequence[float], lengths: Sequence[float]) -> dict:
    """Pearson correlation of sentence length (tokens or words) with the negative score
    (natural-log surprisal), as Fig. 3A: positive when longer sentences are less probable."""
    return correlation(lengths, -np.asarray(scores, dtype=np.float64))


def frequency_effect(word_scores: Sequence[float], log_frequencies: Sequence[float]) -> dict:
    """Pearson correlation of a word's log frequency with its score (Fig. 3B: the x axis is the
    frequency); positive when frequent words score higher."""
    return correlation(log_frequencies, word_scores)


def score_agreement(masked: Sequence[float], causal: Sequence[float]) -> dict:
    """Per-sentence agreement of two models' scores (Fig. 4: x = the causal model's
    log-probability, y = the masked model's PLL): ``{"pearson": ..., "spearman": ...}``."""
    return {m: correlation(causal, masked, m) for m in ("pearson", "spearman")}


def dataset_words(sentences: Iterable[str], letters_only: bool = False) -> list[str]:
    """Every word occurrence of ``sentences`` as Kauf & Ivanova extract them: lower-cased, a
    trailing ``.`` stripped, split on whitespace; ``letters_only`` keeps the words made of
    letters only (their out-of-vocabulary count drops ``ex-wife``, ``president's``, ...)."""
    out = []
    for s in sentences:
        if not isinstance(s, str):
            raise TypeError(f"a sentence must be a str, got {type(s).__name__}: {s!r}")
        words = s.lower().rstrip(".").split()
        out.extend(w for w in words if w.isalpha() or not letters_only)
    return out


def fill_template(template: str, word: str) -> tuple[str, tuple[int, int]]:
    """``(text, (start, end))``: ``template`` with ``{word}`` replaced by ``word`` and the
    character span of the word in it.  ValueError when the template has no single ``{word}``."""
    if template.count("{word}") != 1:
        raise ValueError(f"a word template needs exactly one {{word}}, got {template!r}")
    start = template.index("{word}")
    return template.replace("{word}", word), (start, start + len(word))


def oov_ratio(words: Sequence[str], n_tokens: Mapping[str, int]) -> dict:
    """Table 2: ``{"n_words", "n_split", "ratio", "n_types", "n_split_types"}``: word occurrences
    (``words``, repetitions counted) and distinct words split into 2 or more tokens, with
    ``n_tokens`` the tokens of each distinct word.  KeyError names a word without a count."""
    counts = Counter(words)
    if not counts:
        raise ValueError("no words to count")
    missing = [w for w in counts if w not in n_tokens]
    if missing:
        raise KeyError(f"no token count for {len(missing)} word(s), e.g. {missing[0]!r}")
    split = {w for w in counts if int(n_tokens[w]) >= 2}
    n_split = sum(counts[w] for w in split)
    total = sum(counts.values())
    return {"n_words": total, "n_split": n_split, "ratio": n_split / total,
            "n_types": len(counts), "n_split_types": len(split)}


INFLATION_EXAMPLES = (
    ("F2", "souvenir", "The traveler lost the souvenir."),
    ("F5", "carnivore", "The carnivore ate the steak."),
    ("F6", "hooligan", "The hooligan wrecked the vehicle."),
)
"""(figure, word, sentence) of the score-inflation examples (Fig. 2 and Appendix A, Figs. 5-6;
the sentences of the authors' ``motivationForAdaptation_runScript.py``; their script loads
bert-base-uncased although the captions say bert-base-cased)."""


def inflation_by_position(values: Mapping[str, Sequence[Sequence[float]]], max_tokens: int = 4) -> list[dict]:
    """The score inflation of multi-token words (Kauf & Ivanova 2023 §2, Figs. 2, 5, 6), over
    every word: ``values`` maps a PLL metric to each word's per-token log-probabilities (natural
    log, token order).  One row per (word length in tokens, token position, metric):
    ``{"n_tokens", "position", "metric", "mean", "n_words"}``, the mean over the words of that
    length of the value of their token at that position (1-based).  Lengths above
    ``max_tokens`` are left out (few words; the rows say how many were used)."""
    rows = []
    for metric, per_word in values.items():
        by_length: dict[int, list[Sequence[float]]] = {}
        for tokens in per_word:
            if 1 <= len(tokens) <= max_tokens:
                by_length.setdefault(len(tokens), []).append(tokens)
        for length in sorted(by_length):
            words = np.asarray(by_length[length], dtype=np.float64)
            for k in range(length):
                rows.append({"n_tokens": length, "position": k + 1, "metric": metric,
                             "mean": float(words[:, k].mean()), "n_words": int(len(words))})
    return rows
