"""The prompts of Kauf et al. (2024): Table 2, Appendix B (Table 7) and Appendix F, with the
query types of Appendix C.2 (Figure 8).  :func:`get_template` is the one way to a prompt.

Wording: Table 2's four prompts as the table prints them (line breaks as in the authors'
``utils/make_prompts.py``); Appendix F's two sensibility-judgment prompts as printed; the Word
Comparison prompt of Table 7 as printed ("What word is most likely to come next in the following
sentence (award, or battle)? The actor won the {award, battle}", with the authors' line break
before the sentence; their code has ``(award, or battle?)?`` where the paper prints
``(award, or battle)?``).

Query types (``query=``, Appendix C.2): every Table 2 prompt is framed by the direct query
"is plausible"; the paper's Figure 8 compares Sentence Choice I framed by "makes sense", and the
authors' code also frames every Table 2 prompt by "sounds good".  The paper prints only the "is
plausible" wording: the substitutions of the other two are the authors' (``make_prompts.py`` at
commit 726c813), phrase for phrase:

==================  ===================================  ==================================  ==================================
query               Sentence Choice I question           Sentence Judgment question          Sentence Choice II / Likert anchors
==================  ===================================  ==================================  ==================================
``is-plausible``    Which sentence is more plausible?    Is this sentence plausible?         is completely (im)plausible
``makes-sense``     Which sentence makes more sense?     Does this sentence make sense?      makes perfect sense / makes no sense
``sounds-good``     Which sentence sounds better?        Does this sentence sound good?      sounds perfect / horrible (Likert: terrible)
==================  ===================================  ==================================  ==================================

Word Comparison asks which word "is most likely" (the query type of Figure 6); it and the
Appendix F prompts take no ``query``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

ANSWER_SUFFIX = "\n\nAnswer:"
"""Appended to a prompt for plain (not chat) prompting: the answer label is its continuation."""


@dataclass(frozen=True)
class Template:
    """One prompt: its text and its answer labels.

    ``fields`` are the text's placeholders: ``("s",)`` a sentence, ``("a", "b")`` two sentences
    (``pair``), ``("c", "s")`` a context and a sentence, ``("a", "b", "p")`` two words and the
    sentence prefix they continue (Word Comparison: ``labels`` empty, each pair's own two words
    are its answers).  ``suffix`` ends a plain prompt (``"\\n\\nAnswer:"``; Word Comparison ends
    with the sentence prefix, the word being its continuation).  ``query``: the query type."""

    name: str
    title: str  # as in the paper
    text: str  # ends with the question; ``suffix`` is appended for plain prompting
    labels: tuple[str, ...]
    pair: bool = False
    fields: tuple[str, ...] = ("s",)
    suffix: str = ANSWER_SUFFIX
    query: str | None = None

    @property
    def word_choice(self) -> bool:
        """True for Word Comparison: the answers are the two candidate words of each pair."""
        return self.fields == ("a", "b", "p")


DEFAULT_QUERY = "is-plausible"
QUERY_PHRASES: dict[str, dict[str, str]] = {
    "is-plausible": {
        "choice": "Which sentence is more plausible?", "judge": "Is this sentence plausible?",
        "tell": "Tell me if the following sentence is plausible.", "high": "is completely plausible",
        "low": "is completely implausible", "rate": "rate how plausible it is",
        "rate_question": "How plausible is this sentence?", "likert_high": "is completely plausible",
        "likert_low": "is completely implausible",
    },
    "makes-sense": {
        "choice": "Which sentence makes more sense?", "judge": "Does this sentence make sense?",
        "tell": "Tell me if the following sentence makes sense.", "high": "makes perfect sense",
        "low": "makes no sense", "rate": "rate how much sense it makes",
        "rate_question": "How much sense does this sentence make?", "likert_high": "makes perfect sense",
        "likert_low": "makes no sense",
    },
    "sounds-good": {
        "choice": "Which sentence sounds better?", "judge": "Does this sentence sound good?",
        "tell": "Tell me if the following sentence sounds good.", "high": "sounds perfect",
        "low": "sounds horrible", "rate": "rate how good it sounds",
        "rate_question": "How good does this sentence sound?", "likert_high": "sounds perfect",
        "likert_low": "sounds terrible",
    },
}
"""Query type -> the phrases it puts into the Table 2 prompts (the ``[[key]]`` markers of
:data:`_QUERY_TEXTS`)."""
QUERIES = tuple(QUERY_PHRASES)
QUERY_ALIASES = {"plausible": "is-plausible", "sense": "makes-sense", "good": "sounds-good"}

_QUERY_TEXTS = {
    "sentence-choice-1": ("Here are two English sentences:\n\n1) {a} 2) {b} [[choice]] "
                          "Respond with either 1 or 2 as your answer."),
    "sentence-choice-2": ("You are evaluating the plausibility of sentences. A sentence [[high]] if the situation "
                          "it describes commonly occurs in the real world. A sentence [[low]] if the situation it "
                          "describes never occurs in the real world. [[tell]]\n\n{s} Respond with either Yes or No "
                          "as your answer."),
    "likert": ("You will be given a sentence. Your task is to read the sentence and [[rate]].\nHere is the "
               "sentence: {s}\n\n[[rate_question]]\n\nRespond with a number on a scale from 1 to 7 as your answer, "
               'with 1 meaning "[[likert_low]]", and 7 meaning "[[likert_high]]".'),
    "sentence-judgment": ("Here is a sentence:\n\n{s} [[judge]] Respond with either Yes or No as your answer."),
}
"""The Table 2 prompts with their query phrases marked ``[[key]]``."""


def query_text(name: str, query: str) -> str:
    """The text of the Table 2 prompt ``name`` framed by ``query`` (:data:`QUERY_PHRASES`)."""
    text = _QUERY_TEXTS[name]
    for key, phrase in QUERY_PHRASES[query].items():
        text = text.replace(f"[[{key}]]", phrase)
    return text


TEMPLATES: dict[str, Template] = {
    "sentence-choice-1": Template("sentence-choice-1", "Sentence Choice I", query_text("sentence-choice-1", DEFAULT_QUERY),
                                  ("1", "2"), pair=True, fields=("a", "b"), query=DEFAULT_QUERY),
    "sentence-choice-2": Template("sentence-choice-2", "Sentence Choice II",
                                  query_text("sentence-choice-2", DEFAULT_QUERY), ("Yes", "No"), query=DEFAULT_QUERY),
    "likert": Template("likert", "Likert Scoring", query_text("likert", DEFAULT_QUERY),
                       ("1", "2", "3", "4", "5", "6", "7"), query=DEFAULT_QUERY),
    "sentence-judgment": Template("sentence-judgment", "Sentence Judgment",
                                  query_text("sentence-judgment", DEFAULT_QUERY), ("Yes", "No"), query=DEFAULT_QUERY),
    # Appendix B, Table 7: Hu and Levy's (2023) best prompt for DTFit
    "word-comparison": Template(
        "word-comparison", "Word Comparison",
        "What word is most likely to come next in the following sentence ({a}, or {b})?\n\n{p}",
        (), pair=True, fields=("a", "b", "p"), suffix=""),
    # Appendix F: the sensibility-judgment task of Jouravlev et al. (2019), worded as printed
    "sense-judgment": Template(
        "sense-judgment", "Sensibility Judgment (Appendix F, no context)",
        'Here is a sentence: "{s}". Does this sentence make sense? Respond with either Yes or No as your answer.',
        ("Yes", "No")),
    "sense-judgment-context": Template(
        "sense-judgment-context", "Sensibility Judgment (Appendix F, with context)",
        'Here is a context: "{c}", and here is a sentence: "{s}". Does this sentence make sense considering the '
        "context? Respond with either Yes or No as your answer.",
        ("Yes", "No"), fields=("c", "s")),
}

ALIASES = {
    "sc1": "sentence-choice-1", "sentence-choice-i": "sentence-choice-1",
    "sc2": "sentence-choice-2", "sentence-choice-ii": "sentence-choice-2",
    "likert-scoring": "likert", "sj": "sentence-judgment", "wc": "word-comparison",
}


def _key(text: str) -> str:
    return str(text).strip().lower().replace("_", "-").replace(" ", "-")


def canonical_query(query: str | None) -> str:
    """``is-plausible``, ``makes-sense`` or ``sounds-good`` (also ``is plausible``, ``plausible``,
    ``makes sense``, ...); None -> the default ``is-plausible``.  ValueError names the valid ones."""
    if query is None:
        return DEFAULT_QUERY
    key = _key(query)
    key = QUERY_ALIASES.get(key, key)
    if key not in QUERY_PHRASES:
        raise ValueError(f"unknown query type {query!r}; query types: {', '.join(QUERIES)}")
    return key


def get_template(name: str, query: str | None = None) -> Template:
    """Template by name or alias, framed by ``query`` (Table 2 prompts only; None: the default
    "is plausible").  ValueError lists the valid names and query types."""
    key = ALIASES.get(_key(name), _key(name))
    if key not in TEMPLATES:
        raise ValueError(f"unknown prompt template {name!r}; templates: {', '.join(TEMPLATES)}")
    template = TEMPLATES[key]
    if query is None:
        return template
    q = canonical_query(query)
    if key not in _QUERY_TEXTS:
        raise ValueError(f"template {key} takes no query (query {query!r}); query types apply to "
                         f"{', '.join(_QUERY_TEXTS)}")
    return replace(template, text=query_text(key, q), query=q)


def word_continuations(sentence_a: str, sentence_b: str) -> tuple[str, str, str]:
    """``(prefix, word_a, word_b)`` of two sentences that share their first words and differ in
    the rest (a DTFit pair: "The actor won the award." / "The actor won the battle." ->
    ``("The actor won the", "award", "battle")``): the longest common word prefix and each
    sentence's remaining words, final full stop removed.  ValueError when the sentences share no
    first word, or one continues the other."""
    wa, wb = sentence_a.split(), sentence_b.split()
    n = 0
    while n < min(len(wa), len(wb)) and wa[n] == wb[n]:
        n += 1
    rest_a, rest_b = " ".join(wa[n:]).rstrip("."), " ".join(wb[n:]).rstrip(".")
    if n == 0 or not rest_a or not rest_b:
        raise ValueError(f"Word Comparison needs two sentences that share their first words and differ in the "
                         f"rest, got {sentence_a!r} and {sentence_b!r}")
    return " ".join(wa[:n]), rest_a, rest_b
