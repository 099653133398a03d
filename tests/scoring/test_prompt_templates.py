"""The Word Comparison prompt (Kauf et al. 2024, Appendix B, Table 7) and the query types of
Appendix C.2: exact prompt texts, the Word Comparison read-out against a naive computation on a
tiny Llama, the spec and method options, and errors."""
from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("transformers")

from contstim_bench.scoring.causal import CausalScorer  # noqa: E402
from contstim_bench.scoring.prompt_templates import (  # noqa: E402
    QUERIES,
    TEMPLATES,
    canonical_query,
    get_template,
    word_continuations,
)
from contstim_bench.scoring.prompting import PromptScorer  # noqa: E402
from contstim_bench.scoring.registry import load_scorer  # noqa: E402
from test_scoring_causal import naive_logprob, save_tiny_llama  # noqa: E402

GOOD, BAD = "The nanny tutored the boy.", "The boy tutored the nanny."
DT_GOOD, DT_BAD = "The actor won the award.", "The actor won the battle."

# Table 7 of Kauf et al. (2024), whitespace-normalised, with the answer {award, battle} left out.
TABLE7 = "What word is most likely to come next in the following sentence (award, or battle)? The actor won the"

# The Table 2 prompts framed by the other two query types: the phrases of the authors'
# utils/make_prompts.py (metaQuestionComplex for Sentence Choice I and Sentence Judgment,
# metaInstruct for Sentence Choice II, _format_likert_prompt's phrases for Likert), whitespace-normalised.
VARIANTS = {
    ("sentence-choice-1", "makes-sense"): "Here are two English sentences: 1) The nanny tutored the boy. 2) The boy "
    "tutored the nanny. Which sentence makes more sense? Respond with either 1 or 2 as your answer. Answer:",
    ("sentence-choice-1", "sounds-good"): "Here are two English sentences: 1) The nanny tutored the boy. 2) The boy "
    "tutored the nanny. Which sentence sounds better? Respond with either 1 or 2 as your answer. Answer:",
    ("sentence-judgment", "makes-sense"): "Here is a sentence: The nanny tutored the boy. Does this sentence make "
    "sense? Respond with either Yes or No as your answer. Answer:",
    ("sentence-judgment", "sounds-good"): "Here is a sentence: The nanny tutored the boy. Does this sentence sound "
    "good? Respond with either Yes or No as your answer. Answer:",
    ("sentence-choice-2", "makes-sense"): "You are evaluating the plausibility of sentences. A sentence makes perfect "
    "sense if the situation it describes commonly occurs in the real world. A sentence makes no sense if the "
    "situation it describes never occurs in the real world. Tell me if the following sentence makes sense. The "
    "nanny tutored the boy. Respond with either Yes or No as your answer. Answer:",
    ("sentence-choice-2", "sounds-good"): "You are evaluating the plausibility of sentences. A sentence sounds "
    "perfect if the situation it describes commonly occurs in the real world. A sentence sounds horrible if the "
    "situation it describes never occurs in the real world. Tell me if the following sentence sounds good. The "
    "nanny tutored the boy. Respond with either Yes or No as your answer. Answer:",
    ("likert", "makes-sense"): "You will be given a sentence. Your task is to read the sentence and rate how much "
    "sense it makes. Here is the sentence: The nanny tutored the boy. How much sense does this sentence make? "
    'Respond with a number on a scale from 1 to 7 as your answer, with 1 meaning "makes no sense", and 7 meaning '
    '"makes perfect sense". Answer:',
    ("likert", "sounds-good"): "You will be given a sentence. Your task is to read the sentence and rate how good "
    "it sounds. Here is the sentence: The nanny tutored the boy. How good does this sentence sound? Respond with "
    'a number on a scale from 1 to 7 as your answer, with 1 meaning "sounds terrible", and 7 meaning "sounds '
    'perfect". Answer:',
}


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    folder = save_tiny_llama(tmp_path_factory.mktemp("tiny_llama_words"))
    return CausalScorer(folder, cache=False, progress=False, batch_size=3)


def answer_lp(lm, prompt: str, option: str) -> float:
    """Definition: log p(prompt + option) - log p(prompt), each scored alone from <s>."""
    return (naive_logprob(lm.model, lm.tokenizer, prompt + option, "<s>")
            - naive_logprob(lm.model, lm.tokenizer, prompt, "<s>"))


def test_word_comparison_prompt_is_table_7(lm):
    scorer = PromptScorer(lm, "word-comparison", cache=False)
    prompt = scorer.render(a="award", b="battle", p="The actor won the")
    assert _flat(prompt) == TABLE7 and not prompt.endswith("Answer:")
    assert _flat(prompt + " award") == TABLE7 + " award"  # the paper's {award, battle} continuation
    assert get_template("wc") is TEMPLATES["word-comparison"] and TEMPLATES["word-comparison"].title == "Word Comparison"


def test_word_continuations():
    assert word_continuations(DT_GOOD, DT_BAD) == ("The actor won the", "award", "battle")
    # DTFit's one two-word patient: the whole differing rest (the authors' script scored "can" alone)
    assert word_continuations("The mother pushed the stroller.", "The mother pushed the trash can.") == \
        ("The mother pushed the", "stroller", "trash can")
    for a, b in ((GOOD.replace("The", "A", 1), BAD), (DT_GOOD, DT_GOOD), ("The actor won", "The actor won the award.")):
        with pytest.raises(ValueError, match="Word Comparison needs two sentences that share their first words"):
            word_continuations(a, b)


def test_word_comparison_log_odds(lm):
    """choose(a, b) = log p(" award" | prompt) - log p(" battle" | prompt), the prompt listing a's
    word first; order=both averages with the prompt that lists it second."""
    given = PromptScorer(lm, "word-comparison", cache=False)
    both = PromptScorer(lm, "word-comparison", order="both", cache=False)
    first = given.render(a="award", b="battle", p="The actor won the")
    second = given.render(a="battle", b="award", p="The actor won the")
    want1 = answer_lp(lm, first, " award") - answer_lp(lm, first, " battle")
    want2 = answer_lp(lm, second, " award") - answer_lp(lm, second, " battle")
    assert want1 != pytest.approx(want2, abs=1e-3)  # the order of the listed words matters
    got = given.choose_many([(DT_GOOD, DT_BAD), (DT_BAD, DT_GOOD)])
    assert got[0] == pytest.approx(want1, abs=1e-4)
    assert got[1] == pytest.approx(-want2, abs=1e-4)  # (battle sentence, award sentence): battle listed first
    assert both.choose(DT_GOOD, DT_BAD) == pytest.approx(0.5 * (want1 + want2), abs=1e-4)
    assert given.n_model_pairs == 2
    with pytest.raises(ValueError, match="word-comparison has no fixed answer labels"):
        given.constrained_answers([(DT_GOOD, DT_BAD)])
    with pytest.raises(ValueError, match="word-comparison has no fixed answer labels"):
        given.generate([(DT_GOOD, DT_BAD)])
    with pytest.raises(ValueError, match="share their first words"):
        given.choose_many([(DT_GOOD, DT_BAD), ("Cats sleep.", "Dogs bark.")])
    with pytest.raises(ValueError, match="compares two sentences: use choose"):
        given.judge([DT_GOOD])


@pytest.mark.parametrize("name,query", list(VARIANTS))
def test_query_variant_texts(lm, name, query):
    scorer = PromptScorer(lm, name, query=query, cache=False)
    text = scorer.render(a=GOOD, b=BAD) if scorer.template.pair else scorer.render(s=GOOD)
    assert _flat(text) == VARIANTS[(name, query)]
    assert scorer.template.query == query and scorer.method.endswith(f":query={query}")
    assert scorer.describe()["query"] == query


def test_default_query_is_table_2():
    for name in ("sentence-choice-1", "sentence-choice-2", "likert", "sentence-judgment"):
        assert get_template(name, "is plausible") == TEMPLATES[name]
        assert TEMPLATES[name].query == "is-plausible"
    assert QUERIES == ("is-plausible", "makes-sense", "sounds-good")
    assert canonical_query("Makes sense") == "makes-sense" and canonical_query(None) == "is-plausible"
    with pytest.raises(ValueError, match=r"unknown query type 'is likely'.*makes-sense"):
        canonical_query("is likely")
    for name in ("word-comparison", "sense-judgment", "sense-judgment-context"):
        with pytest.raises(ValueError, match=f"template {name} takes no query"):
            get_template(name, "makes-sense")


def test_query_and_word_comparison_specs(lm):
    s = load_scorer(f"prompt:hf-causal:{lm.folder}?template=sc1&query=makes-sense", cache=False, progress=False)
    assert "Which sentence makes more sense?" in s.template.text
    plain = PromptScorer(lm, "sentence-choice-1", cache=False)
    assert s.fingerprint() != plain.fingerprint() and s.method != plain.method
    assert plain.method == "prompt:sentence-choice-1:chat=no:order=given"  # the default keeps its cache key
    w = load_scorer(f"prompt:{lm.folder}?template=word-comparison&order=both", cache=False, progress=False)
    assert w.template.word_choice and w.order == "both"
    with pytest.raises(ValueError, match="template word-comparison takes no query"):
        load_scorer(f"prompt:{lm.folder}?template=word-comparison&query=makes-sense", cache=False)


def test_plausibility_methods_carry_the_query():
    from contstim_bench.benchmarks import plausibility as runner
    from contstim_bench.scoring.spec import ModelSpec

    assert runner.parse_method("prompt:sc1?query=makes sense") == ("prompt", "sentence-choice-1")
    assert runner.method_query("prompt:sc1?query=makes sense") == "makes-sense"
    assert runner.method_query("prompt:likert") is None
    spec = runner.spec_for(ModelSpec.parse("hf-causal:x?start=A"), "prompt:likert?query=sounds-good")
    assert spec.typed == "prompt:hf-causal:x?start=A&template=likert&query=sounds-good"
    assert runner.spec_for(ModelSpec.parse("smollm2-135m"), "prompt:wc").typed == \
        "prompt:smollm2-135m?template=word-comparison"
    for bad, msg in (("prompt:sc1?order=both", "the one option of a prompt method is"),
                     ("prompt:wc?query=makes-sense", "template word-comparison takes no query"),
                     ("prompt:sc1?query=vibes", "unknown query type 'vibes'")):
        with pytest.raises(ValueError, match=msg):
            runner.parse_method(bad)


def test_word_comparison_benchmark_runs_on_dtfit_only(lm):
    """The runner restricts Word Comparison to DTFit (Appendix B) and scores both orders."""
    from contstim_bench.benchmarks import plausibility as runner
    from contstim_bench.plausibility import metrics

    judge = PromptScorer(lm, "word-comparison", cache=False, progress=False)
    r = runner.run_plausibility(judge, "prompt:word-comparison", log=lambda m: None, limit=3)
    assert list(r["experiment1"]) == ["dtfit"] and r["method"] == "prompt:word-comparison"
    assert set(r["skipped"]) == {"experiment1_eventsadapt_ai", "experiment1_eventsadapt_aa", "experiment2"}
    assert r["prompt"]["template"] == "word-comparison" and r["prompt"]["query"] is None
    odds = r["scores"]["experiment1"]["pair_log_odds"]
    pairs = runner.limit_pairs(runner.load()["experiment1"], 3)
    pairs = pairs[pairs.subset == "dtfit"].reset_index(drop=True)
    assert [o["pair_id"] for o in odds] == list(pairs.pair_id) == ["DT001", "DT002", "DT003"]
    hits = metrics.choice_hit_vector(pairs, [o["plausible_first"] for o in odds],
                                     [o["plausible_second"] for o in odds])
    assert r["experiment1"]["dtfit"]["both"]["accuracy"] == pytest.approx(hits.mean())
    assert odds[0]["plausible_first"] == pytest.approx(judge.choose(DT_GOOD, DT_BAD))
    prompt = judge.render(a="battle", b="award", p="The actor won the")
    want = answer_lp(lm, prompt, " battle") - answer_lp(lm, prompt, " award")
    assert odds[0]["plausible_second"] == pytest.approx(want, abs=1e-4)
    with pytest.raises(ValueError, match="free generation has no answer labels"):
        runner.run_plausibility(judge, log=lambda m: None, limit=1, free_generation=True)
    assert np.isfinite([o["plausible_second"] for o in odds]).all()


def test_smollm2_word_comparison(smollm2):
    """Table 7's example on the real SmolLM2-135M-Instruct: the read-out equals log p(word | prompt)
    computed directly from one forward pass over the prompt and the word's tokens."""
    import torch

    judge = PromptScorer(smollm2, "word-comparison", cache=False)
    tok, model = smollm2.tokenizer, smollm2.model
    prompt = judge.render(a="award", b="battle", p="The actor won the")

    def direct(word: str) -> float:
        head = [tok.convert_tokens_to_ids("<|endoftext|>")] + tok(prompt, add_special_tokens=False)["input_ids"]
        ids = head + tok(prompt + word, add_special_tokens=False)["input_ids"][len(head) - 1:]
        with torch.no_grad():
            lp = torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), -1)
        return float(sum(lp[i - 1, ids[i]] for i in range(len(head), len(ids))))

    odds = judge.choose(DT_GOOD, DT_BAD)
    assert odds == pytest.approx(direct(" award") - direct(" battle"), abs=1e-3)
    assert odds > 1.0  # "award" is the far likelier continuation of "The actor won the"
