"""Prompting (Kauf et al. 2024, Table 2): prompt texts, answer scoring against a naive
computation on a tiny model, the sentence and pair read-outs, errors, and SmolLM2."""
from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("transformers")

from contstim_bench.scoring.causal import CausalScorer  # noqa: E402
from contstim_bench.scoring.prompting import (  # noqa: E402
    TEMPLATES,
    PromptScorer,
    get_template,
    most_probable,
    parse_answer,
)
from contstim_bench.scoring.registry import load_scorer  # noqa: E402
from tiny_causal import naive_logprob, save_tiny_llama  # noqa: E402

GOOD, BAD = "The nanny tutored the boy.", "The boy tutored the nanny."

# Table 2 of Kauf et al. (2024), whitespace-normalised, with the example sentences.
TABLE2 = {
    "sentence-choice-1": "Here are two English sentences: 1) The nanny tutored the boy. 2) The boy tutored "
    "the nanny. Which sentence is more plausible? Respond with either 1 or 2 as your answer. Answer:",
    "sentence-choice-2": "You are evaluating the plausibility of sentences. A sentence is completely "
    "plausible if the situation it describes commonly occurs in the real world. A sentence is completely "
    "implausible if the situation it describes never occurs in the real world. Tell me if the following "
    "sentence is plausible. The nanny tutored the boy. Respond with either Yes or No as your answer. Answer:",
    "likert": "You will be given a sentence. Your task is to read the sentence and rate how plausible it "
    "is. Here is the sentence: The nanny tutored the boy. How plausible is this sentence? Respond with a "
    'number on a scale from 1 to 7 as your answer, with 1 meaning "is completely implausible", and 7 '
    'meaning "is completely plausible". Answer:',
    "sentence-judgment": "Here is a sentence: The nanny tutored the boy. Is this sentence plausible? "
    "Respond with either Yes or No as your answer. Answer:",
}


# Appendix F of Kauf et al. (2024), whitespace-normalised, with the paper's placeholders filled.
APPENDIX_F = {
    "sense-judgment": 'Here is a sentence: "The girl had a little beak.". Does this sentence make sense? Respond '
                      "with either Yes or No as your answer. Answer:",
    "sense-judgment-context": 'Here is a context: "The girl dressed up as a canary.", and here is a sentence: '
                              '"The girl had a little beak.". Does this sentence make sense considering the context? '
                              "Respond with either Yes or No as your answer. Answer:",
}
CONTEXT, TARGET = "The girl dressed up as a canary.", "The girl had a little beak."


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    folder = save_tiny_llama(tmp_path_factory.mktemp("tiny_llama_prompt"))
    return CausalScorer(folder, cache=False, progress=False, batch_size=3)


def answer_lp(lm, prompt: str, option: str) -> float:
    """Definition: log p(prompt + option) - log p(prompt), each scored alone."""
    return naive_logprob(lm.model, lm.tokenizer, prompt + option, "<s>") - naive_logprob(
        lm.model, lm.tokenizer, prompt, "<s>")


def test_appendix_f_prompt_texts(lm):
    plain = PromptScorer(lm, "sense-judgment", cache=False)
    withc = PromptScorer(lm, "sense-judgment-context", cache=False)
    assert re.sub(r"\s+", " ", plain.render(s=TARGET)) == APPENDIX_F["sense-judgment"]
    assert re.sub(r"\s+", " ", withc.render(c=CONTEXT, s=TARGET)) == APPENDIX_F["sense-judgment-context"]
    with pytest.raises(ValueError, match=r"takes fields \('c', 's'\)"):
        withc.render(s=TARGET)
    with pytest.raises(ValueError, match="judges a sentence in a context: use judge_in_context"):
        withc.judge([TARGET])


def test_judge_in_context_is_log_odds(lm):
    withc = PromptScorer(lm, "sense-judgment-context", cache=False)
    got = withc.judge_in_context([(CONTEXT, TARGET), (CONTEXT, TARGET)])
    prompt = withc.render(c=CONTEXT, s=TARGET)
    want = answer_lp(lm, prompt, " Yes") - answer_lp(lm, prompt, " No")
    assert got[0] == pytest.approx(want, abs=1e-4) and got[1] == got[0]
    assert withc.n_model_pairs == 1
    assert withc.constrained_answers([(CONTEXT, TARGET)]) == ["Yes" if want > 0 else "No"]
    with pytest.raises(TypeError, match="item 0 must be a pair"):
        withc.judge_in_context([TARGET])
    with pytest.raises(ValueError, match="needs a with-context template"):
        PromptScorer(lm, "sense-judgment", cache=False).judge_in_context([(CONTEXT, TARGET)])


@pytest.mark.parametrize("name", list(TABLE2))
def test_prompt_texts_are_table_2(lm, name):
    scorer = PromptScorer(lm, name, cache=False)
    text = scorer.render(a=GOOD, b=BAD) if scorer.template.pair else scorer.render(s=GOOD)
    assert text.endswith("\n\nAnswer:")
    assert re.sub(r"\s+", " ", text) == TABLE2[name]


def test_aliases_and_unknown_template():
    assert get_template("Sentence Choice I").name == "sentence-choice-1"
    assert get_template("sc2").name == "sentence-choice-2"
    assert get_template("sentence_judgment").name == "sentence-judgment"
    with pytest.raises(ValueError, match=r"unknown prompt template 'vibes'.*likert"):
        get_template("vibes")


@pytest.mark.parametrize("name", ["sentence-choice-2", "sentence-judgment"])
def test_yes_no_score_is_log_odds(lm, name):
    scorer = PromptScorer(lm, name, cache=False)
    got = scorer.judge([GOOD, BAD, GOOD])
    for sentence, value in zip([GOOD, BAD], got):
        prompt = scorer.render(s=sentence)
        want = answer_lp(lm, prompt, " Yes") - answer_lp(lm, prompt, " No")
        assert value == pytest.approx(want, abs=1e-4)
    assert got[0] == got[2] and scorer.n_model_sentences == 2
    lp = scorer.answer_logprobs([GOOD])
    assert lp.shape == (1, 2) and scorer.labels == ("Yes", "No")
    assert lp[0, 0] == pytest.approx(answer_lp(lm, scorer.render(s=GOOD), " Yes"), abs=1e-4)


def test_likert_most_probable_rating(lm):
    """Likert Scoring reads out the constrained answer: the most probable of the ratings 1..7
    (Kauf et al. 2024 §3.3), not an expectation over them."""
    scorer = PromptScorer(lm, "likert", cache=False)
    (value,) = scorer.judge([GOOD])
    prompt = scorer.render(s=GOOD)
    lp = np.array([answer_lp(lm, prompt, f" {k}") for k in range(1, 8)])
    assert value == float(int(np.argmax(lp)) + 1)
    assert scorer.constrained_answers([GOOD]) == [str(int(value))]
    np.testing.assert_allclose(scorer.answer_logprobs([GOOD])[0], lp, atol=1e-4)
    assert scorer.method.endswith(":rating=most-probable")  # never served an old expected rating


def test_most_probable_and_parse_answer():
    likert, sj, sc1 = TEMPLATES["likert"], TEMPLATES["sentence-judgment"], TEMPLATES["sentence-choice-1"]
    assert most_probable(("1", "2", "3"), np.array([[-3.0, -1.0, -2.0], [-1.0, -1.0, -5.0]])) == ["2", "1"]
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        most_probable(("1", "2", "3"), np.zeros((2, 2)))
    assert parse_answer(likert, " 7") == "7"
    assert parse_answer(likert, " I would rate it 6 out of seven.") == "6"
    assert parse_answer(likert, " 3 or 4") is None          # two numbers
    assert parse_answer(likert, " 17") is None             # one number, not an allowed answer
    assert parse_answer(likert, " 8") is None and parse_answer(likert, " plausible") is None
    assert parse_answer(sc1, "\n\n2) The boy tutored the nanny.") == "2"
    assert parse_answer(sc1, " 1 2") is None
    assert parse_answer(sj, " yes, it is.") == "Yes"
    assert parse_answer(sj, " No") == "No"
    assert parse_answer(sj, " Yes and no") is None
    assert parse_answer(sj, " Nobody knows") is None       # whole words only


def test_free_generation_is_greedy(lm):
    """generate() equals a naive greedy loop (argmax of the next-token distribution, one token at a
    time from the start token and the prompt), decoded."""
    import torch

    scorer = PromptScorer(lm, "likert", cache=False)
    texts = scorer.generate([GOOD, BAD, GOOD], max_new_tokens=4)
    assert texts[0] == texts[2]
    for sentence, text in zip([GOOD, BAD], texts):
        ids = [lm.start_id] + lm.tokenizer(scorer.render(s=sentence), add_special_tokens=False)["input_ids"]
        new = []
        with torch.no_grad():
            for _ in range(4):
                nxt = int(lm.model(torch.tensor([ids + new])).logits[0, -1].argmax())
                new.append(nxt)
                if nxt == lm.model.generation_config.eos_token_id:
                    break
        assert text == lm.tokenizer.decode(new, skip_special_tokens=True)
    with pytest.raises(ValueError, match="max_new_tokens must be a positive integer"):
        scorer.generate([GOOD], max_new_tokens=0)


def test_sentence_choice_pair(lm):
    scorer = PromptScorer(lm, "sentence-choice-1", cache=False)
    prompt = scorer.render(a=GOOD, b=BAD)
    want = answer_lp(lm, prompt, " 1") - answer_lp(lm, prompt, " 2")
    assert scorer.choose(GOOD, BAD) == pytest.approx(want, abs=1e-4)
    both = PromptScorer(lm, "sentence-choice-1", order="both", cache=False)
    swapped = scorer.render(a=BAD, b=GOOD)
    want_swapped = answer_lp(lm, swapped, " 2") - answer_lp(lm, swapped, " 1")
    assert both.choose(GOOD, BAD) == pytest.approx(0.5 * (want + want_swapped), abs=1e-4)
    # order=both is antisymmetric by construction
    assert both.choose(BAD, GOOD) == pytest.approx(-both.choose(GOOD, BAD), abs=1e-9)
    with pytest.raises(ValueError, match=r"sentence-choice-1 compares two sentences.*choose"):
        scorer.judge([GOOD])


def test_pair_scores_are_cached(lm, tmp_path):
    from contstim_bench.scoring.base import ScoreCache

    first = PromptScorer(lm, "sc1", cache=ScoreCache(tmp_path / "c.sqlite"))
    a = first.choose_many([(GOOD, BAD), (BAD, GOOD), (GOOD, BAD)])
    assert first.n_model_pairs == 2 and a[0] == a[2]
    second = PromptScorer(lm, "sc1", cache=ScoreCache(tmp_path / "c.sqlite"))
    np.testing.assert_array_equal(second.choose_many([(GOOD, BAD)]), a[:1])
    assert second.n_model_pairs == 0


CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")


def test_changed_chat_template_is_not_served_from_the_cache(tmp_path):
    """The chat template (``chat_template.jinja`` beside the weights) is part of a chat=yes
    judge's cache key: after it changes, the judgments are recomputed with the new template."""
    from contstim_bench.scoring.base import ScoreCache

    folder = save_tiny_llama(tmp_path / "model")
    template_file = folder / "chat_template.jinja"
    template_file.write_text(CHAT_TEMPLATE, encoding="utf-8")
    spec = f"prompt:{folder}?template=sentence-judgment&chat=yes"

    def judged(**kw):
        judge = load_scorer(spec, progress=False, **kw)
        return judge, judge.judge([GOOD, BAD])

    first, a = judged(cache=ScoreCache(tmp_path / "c.sqlite"))
    again, b = judged(cache=ScoreCache(tmp_path / "c.sqlite"))
    assert (first.n_model_sentences, again.n_model_sentences) == (2, 0)  # the same template: cached
    np.testing.assert_array_equal(a, b)
    template_file.write_text("{{ bos_token }}System: judge strictly.\n" + CHAT_TEMPLATE, encoding="utf-8")
    changed, c = judged(cache=ScoreCache(tmp_path / "c.sqlite"))
    assert changed.render(s=GOOD).startswith("<s>System: judge strictly.")
    assert changed.n_model_sentences == 2  # sent to the model, not served from the old entries
    assert changed.fingerprint() != first.fingerprint() and not np.array_equal(a, c)
    _, fresh = judged(cache=False)
    np.testing.assert_array_equal(c, fresh)  # the values of the new template


def test_prompt_errors(lm):
    with pytest.raises(ValueError, match="chat=yes but model .* has no chat template"):
        PromptScorer(lm, "likert", chat=True, cache=False)
    with pytest.raises(ValueError, match="order=both applies to sentence-choice-1 and word-comparison only"):
        PromptScorer(lm, "likert", order="both", cache=False)
    with pytest.raises(ValueError, match="choose\\(\\) needs a pair template"):
        PromptScorer(lm, "likert", cache=False).choose(GOOD, BAD)
    with pytest.raises(TypeError, match="pair 0 must be"):
        PromptScorer(lm, "sc1", cache=False).choose_many([GOOD])
    with pytest.raises(ValueError, match="sentence 1 is empty"):
        PromptScorer(lm, "sj", cache=False).judge([GOOD, ""])
    with pytest.raises(ValueError, match=r"needs \?template=NAME"):
        load_scorer(f"prompt:hf-causal:{lm.folder}", cache=False)
    with pytest.raises(ValueError, match=r"prompt: needs a causal model, not kenlm"):
        load_scorer("prompt:kenlm:lm.arpa?template=likert", cache=False)
    with pytest.raises(ValueError, match=r"'temperature'.*accepted"):
        load_scorer(f"prompt:{lm.folder}?template=likert&temperature=0", cache=False)
    with pytest.raises(ValueError, match=r"chat='maybe' must be yes or no"):
        load_scorer(f"prompt:{lm.folder}?template=likert&chat=maybe", cache=False)


def test_spec_builds_prompt_scorer(lm):
    s = load_scorer(f"prompt:hf-causal:{lm.folder}?template=sentence-judgment&start=</s>", cache=False,
                    progress=False)
    assert isinstance(s, PromptScorer) and s.lm.start_token == "</s>"
    assert s.template.name == "sentence-judgment" and s.method.startswith("prompt:sentence-judgment")
    assert s.fingerprint() != PromptScorer(lm, "sentence-judgment", cache=False).fingerprint()


# ----------------------------------------------------------------------------- real SmolLM2
# the session fixture ``smollm2`` is in conftest.py


@pytest.mark.slow
def test_smollm2_prompting(smollm2):
    judge = PromptScorer(smollm2, "sentence-judgment", cache=False)
    lp = judge.answer_logprobs([GOOD, BAD])
    # the tiny instruction-tuned model answers " No" more readily than " Yes" to both (its
    # prompting accuracy is at chance, as the paper finds for most 7B models), but both answers
    # take a sizeable share of the next-token probability
    np.testing.assert_allclose(lp, [[-2.272, -0.946], [-2.150, -0.918]], atol=2e-3)
    assert np.exp(lp).sum(1).min() > 0.4
    chat = PromptScorer(smollm2, "sentence-choice-1", chat=True, cache=False)
    text = chat.render(a=GOOD, b=BAD)
    assert text.startswith("<|im_start|>system") and text.endswith("<|im_start|>assistant\n")
    assert "Answer:" not in text
    odds = chat.choose(GOOD, BAD)
    assert odds == pytest.approx(2.665, abs=2e-3)  # answers "1" readily when chat-formatted


def test_prompt_scorer_is_a_judge_not_a_logprob_scorer(lm):
    from contstim_bench.scoring.protocols import LogProbScorer, PromptedJudge, require_logprobs

    judge = PromptScorer(lm, "sentence-judgment", cache=False)
    assert isinstance(judge, PromptedJudge) and not isinstance(judge, LogProbScorer)
    assert isinstance(lm, LogProbScorer) and not isinstance(lm, PromptedJudge)
    with pytest.raises(ValueError, match=r"plausibility judgments, not sentence log-probabilities; BLiMP needs"):
        require_logprobs(judge, "BLiMP")


def test_score_command_writes_judgments_of_a_prompt_spec(lm, tmp_path):
    """``contstim score`` with a ``prompt:`` spec writes the judge's values under ``judgment``."""
    from contstim_bench.cli import main as cli_main

    (tmp_path / "in.txt").write_text(f"{GOOD}\n{BAD}\n", encoding="utf-8")
    spec = f"prompt:hf-causal:{lm.folder}?template=sentence-judgment&start={lm.start_token}"
    assert cli_main(["score", "--model", spec, "--input", str(tmp_path / "in.txt"),
                     "--output", str(tmp_path / "out.csv"), "--no-cache", "--quiet"]) == 0
    lines = (tmp_path / "out.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "sentence,judgment"
    want = PromptScorer(lm, "sentence-judgment", cache=False).judge([GOOD, BAD])
    assert [float(x.rsplit(",", 1)[1]) for x in lines[1:]] == pytest.approx(want.tolist(), abs=1e-9)
