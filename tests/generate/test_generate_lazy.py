"""The lazy synthetic search (issue 16) finds exactly the triplets of the plain search, scoring
fewer sentences with the causal LM: KenLM n-grams trained here with ``contstim train ngram`` and
a tiny random Llama on a byte-level BPE trained on the pool.  Also: the causal LM's fixed-prefix
methods and bounds, the lazy shortlist, the Methods' stopping rule of the Eq. 3 search, and the
per-attempt progress lines of ``contstim generate synthetic``."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from contstim_bench.cli import main as cli_main
from contstim_bench.data.build_contstim import POOL_SYNTHESIS
from contstim_bench.data.sources import resolve
from contstim_bench.generate.candidates import causal_shortlist, lazy_causal_shortlist
from contstim_bench.generate.inputs import Vocabulary
from contstim_bench.generate.natural_ilp import load_function_words
from contstim_bench.generate.synthetic import SearchModel, SearchSettings, synthesize_triplet
from contstim_bench.generate.triplet_table import OUTPUT_COLUMNS
from contstim_bench.scoring.causal import CausalScorer
from contstim_bench.scoring.protocols import LazySweep
from contstim_bench.scoring.registry import load_scorer

torch = pytest.importorskip("torch")

HELD_OUT = 40  # the first pool lines are start sentences; the n-gram models never see them

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def save_tiny_causal_lm(folder, sentences: list[str]):
    """A random 2-layer Llama on a 600-token byte-level BPE trained on ``sentences``, its
    weights scaled up so that its probabilities differ clearly between words."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(sentences, trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<s>", "</s>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=False)
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(4.0 if p.dim() > 1 else 1.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lazy")
    lines = resolve(POOL_SYNTHESIS).read_text(encoding="utf-8").splitlines()
    held, train = lines[:HELD_OUT], lines[HELD_OUT:]
    corpus = tmp / "corpus.txt"
    corpus.write_text("\n".join(train) + "\n", encoding="utf-8")
    specs = {}
    for order, name in ((3, "trigram"), (2, "bigram")):
        arpa = tmp / f"{name}.arpa"
        assert cli_main(["train", "ngram", "--corpus", str(corpus), "--order", str(order), "--output", str(arpa)]) == 0
        specs[name] = f"kenlm:{arpa}"
    specs["tiny"] = f"hf-causal:{save_tiny_causal_lm(tmp / 'tiny', train)}"
    from contstim_bench.data.load import dataset_folder

    freq = pd.read_parquet(dataset_folder("contstim") / "vocabulary" / "train.parquet")
    freq = freq.sort_values("frequency", ascending=False, kind="stable")
    vocab = Vocabulary(tuple(freq.loc[freq["capitalized"], "word"].head(150)),
                       tuple(freq.loc[~freq["capitalized"], "word"].head(300)), "top 150/300")
    return {"tmp": tmp, "held": held, "specs": specs, "vocab": vocab, "fw": load_function_words()}


def model(setup, name: str, **kw) -> SearchModel:
    return SearchModel(name, load_scorer(setup["specs"][name], cache=False, progress=False, **kw))


def test_fixed_prefix_values_and_bounds(setup):
    """prefix_sweep equals scoring each sentence (to float rounding), also when the candidates
    come in other company; the bounds hold; sweep_at_least agrees with the values."""
    tiny = load_scorer(setup["specs"]["tiny"], cache=False, progress=False)
    assert isinstance(tiny, LazySweep)
    words = setup["held"][3].split()
    cands = list(setup["vocab"].rest[:80])
    for position in (0, 3, len(words) - 1):
        values = tiny.prefix_sweep(words, position, cands)
        sents = [" ".join(words[:position] + [c] + words[position + 1:]) for c in cands]
        np.testing.assert_allclose(values, tiny.score(sents), atol=2e-4)
        fresh = load_scorer(setup["specs"]["tiny"], cache=False, progress=False)
        part = fresh.prefix_sweep(words, position, cands[5:17])  # other company, other batches
        np.testing.assert_allclose(part, values[5:17], atol=1e-4)
        assert (tiny.sweep_upper_bounds(words, position, cands) >= values).all()
        nw = tiny.prefix_next_word_logprobs(words[:position], cands)
        assert (tiny.first_token_logprobs(words[:position], cands) >= nw).all()
        threshold = float(np.median(values))
        decided = fresh.sweep_at_least(words, position, cands, threshold, 1e-3)
        known = ~np.isnan(decided)
        assert known.mean() > 0.9
        assert (decided[known] == (values[known] >= threshold)).all()
        assert (np.abs(values[known] - threshold) > 1e-3).all()
        runs = fresh.evaluation_counts()["bounded"]
        again = fresh.sweep_at_least(words, position, cands, threshold, 1e-3)
        assert np.array_equal(again, decided, equal_nan=True)
        assert fresh.evaluation_counts()["bounded"] == runs  # every decision came from kept sums
        if position < len(words) - 1:  # the last word changed: kept sums of the first tokens still count
            changed = words[:-1] + ["tomorrow" if words[-1] != "tomorrow" else "today"]
            truth = tiny.prefix_sweep(changed, position, cands)
            found = fresh.sweep_at_least(changed, position, cands, threshold, 1e-3)
            ok = ~np.isnan(found)
            assert ok.mean() > 0.9 and (found[ok] == (truth[ok] >= threshold)).all()


def test_sweep_at_least_feeds_the_first_positions_in_one_pass(setup):
    """With a threshold no candidate falls below, every position is fed: all but the last
    DECISION_TAIL in the first forward pass, then one per pass; the decisions match the values
    and each depth's partial sum is kept (a later call decides from them without the model)."""
    words = setup["held"][3].split()
    cands = list(setup["vocab"].rest[:40])
    fresh = load_scorer(setup["specs"]["tiny"], cache=False, progress=False)
    values = load_scorer(setup["specs"]["tiny"], cache=False, progress=False).prefix_sweep(words, 1, cands)
    fed = fresh._split(fresh._prefix_ids(words[:1]), [" ".join(words[:1] + [c] + words[2:]) for c in cands])
    longest = max(len(c) for c in fed) - 1  # positions fed for the longest continuation
    assert longest > fresh.DECISION_TAIL + 1
    passes = []
    forward = fresh._forward
    fresh._forward = lambda ids, *a, **k: passes.append(ids.shape[1]) or forward(ids, *a, **k)
    fresh._fixed_prefix_state(fresh._prefix_ids(words[:1]))  # the prefix's own pass, not counted
    passes.clear()
    low = float(values.min()) - 50.0
    assert (fresh.sweep_at_least(words, 1, cands, low, 1e-3) == 1.0).all()
    assert passes[0] == longest - fresh.DECISION_TAIL and passes[1:] == [1] * fresh.DECISION_TAIL
    passes.clear()
    threshold = float(np.median(values))  # every partial sum needed is kept: no pass
    decided = fresh.sweep_at_least(words, 1, cands, threshold, 1e-3)
    known = ~np.isnan(decided)
    assert passes == [] and known.mean() > 0.9
    assert (decided[known] == (values[known] >= threshold)).all()


def test_lazy_shortlist_is_the_shortlist(setup):
    tiny = load_scorer(setup["specs"]["tiny"], cache=False, progress=False)
    cands = list(setup["vocab"].rest)
    for prefix in ([], setup["held"][5].split()[:2], setup["held"][6].split()[:5]):
        for threshold, min_words in ((-10.0, 10), (-4.0, 10), (-2.0, 40), (-10.0, 1000)):
            fresh = load_scorer(setup["specs"]["tiny"], cache=False, progress=False)
            lazy = lazy_causal_shortlist(fresh, prefix, cands, threshold, 5.0, min_words)
            plain = causal_shortlist(tiny, prefix, cands, threshold, 5.0, min_words)
            assert lazy.tolist() == plain.tolist()
            assert 0 < fresh.evaluation_counts()["next_word"] <= len(cands)
            relevant = np.arange(len(cands)) % 3 == 0  # e.g. the candidates an n-gram model keeps
            fresh = load_scorer(setup["specs"]["tiny"], cache=False, progress=False)
            some = lazy_causal_shortlist(fresh, prefix, cands, threshold, 5.0, min_words, relevant=relevant)
            assert some.tolist() == (plain & relevant).tolist()


def test_shortlist_settles_only_near_the_thresholds_it_tries(setup):
    """A next-word value within NEAR_THRESHOLD of a threshold is replaced by its canonical value
    (two texts scored alone) only when the rule tries that threshold: here one value sits on the
    first threshold and another on the next one down, which the rule never reaches."""
    tiny = load_scorer(setup["specs"]["tiny"], cache=False, progress=False)
    cands = list(setup["vocab"].rest)
    prefix = setup["held"][6].split()[:3]
    lp = tiny.prefix_next_word_logprobs(prefix, cands)
    order = np.argsort(-lp, kind="stable")
    threshold = float(lp[order[20]])  # 21 words pass: the rule stops at the first threshold
    step = threshold - float(lp[order[-5]])  # the next threshold down sits on another word's value
    plain = causal_shortlist(tiny, prefix, cands, threshold, step, 10)
    texts = []
    for strategy in ("plain", "lazy"):
        fresh = load_scorer(setup["specs"]["tiny"], cache=False, progress=False)
        score = fresh.score
        fresh.score = lambda batch, score=score: texts.extend(batch) or score(batch)
        rule = causal_shortlist if strategy == "plain" else lazy_causal_shortlist
        mask = rule(fresh, prefix, cands, threshold, step, 10)
        assert mask.tolist() == plain.tolist() and mask.sum() >= 20
        # the prefix and the word on the first threshold, each once; not the word below
        assert texts == [" ".join(prefix), " ".join(prefix + [cands[order[20]]])], strategy
        texts.clear()


def run_both(setup, names: tuple[str, str], starts: list[str], seed: int):
    """Triplets and attempt reports of the plain and the lazy search (fresh scorers each)."""
    out = {}
    for strategy in ("plain", "lazy"):
        m1, m2 = model(setup, names[0]), model(setup, names[1])
        reports = []
        rows = [synthesize_triplet(s, m1, m2, setup["vocab"], setup["fw"], seed=seed + k,
                                   settings=SearchSettings(strategy=strategy, lazy_batch=4), report=reports.append)
                for k, s in enumerate(starts)]
        out[strategy] = (rows, reports)
    return out


def test_lazy_search_gives_the_plain_triplets(setup):
    starts = setup["held"][10:13]
    runs = run_both(setup, ("tiny", "trigram"), starts, seed=7)
    (plain, plain_reports), (lazy, lazy_reports) = runs["plain"], runs["lazy"]
    for a, b in zip(plain, lazy):
        for col in (*OUTPUT_COLUMNS, "history_S1", "history_S2"):
            assert a[col] == b[col], col
    # the searches do replace words, in both directions
    assert sum(r["replacements_S1"] for r in plain) >= 1 and sum(r["replacements_S2"] for r in plain) >= 1
    assert len(plain_reports) == len(lazy_reports) == sum(r["steps_S1"] + r["steps_S2"] for r in plain)
    for p, q in zip(plain_reports, lazy_reports):
        assert (p.position, p.new, p.loss, p.accept) == (q.position, q.new, q.loss, q.accept)
    spent = {k: sum(r.evaluations.expensive for r in v) for k, v in (("plain", plain_reports), ("lazy", lazy_reports))}
    assert spent["lazy"] < spent["plain"] / 2, spent
    assert all(r.penalty_rule_differs is not None for r in plain_reports if not r.reused)
    assert all(r.penalty_rule_differs is None for r in lazy_reports)


def test_lazy_search_with_the_causal_lm_on_both_sides_of_bigram(setup):
    runs = run_both(setup, ("bigram", "tiny"), setup["held"][20:22], seed=3)
    for a, b in zip(runs["plain"][0], runs["lazy"][0]):
        assert {c: a[c] for c in OUTPUT_COLUMNS} == {c: b[c] for c in OUTPUT_COLUMNS}


def test_masked_search_stops_after_five_evaluations_that_did_not_lower_the_loss(setup, tmp_path):
    """Methods, Eq. 3 search: at most two fitting evaluations plus five that failed per attempt."""
    import tiny_mlm  # tests/tiny_mlm.py

    tok = tiny_mlm.train_wordpiece(setup["held"] + list(setup["vocab"].rest), vocab_size=800)
    folder = tiny_mlm.save(tiny_mlm.random_masked_lm(tok, hidden=32, layers=1, heads=2, seed=1, init_range=0.3),
                           tok, tmp_path / "mlm")
    mlm = SearchModel("mlm", load_scorer(f"hf-masked:{folder}?method=pll", cache=False, progress=False))
    reports = []
    synthesize_triplet(setup["held"][2], model(setup, "trigram"), mlm, setup["vocab"], setup["fw"], seed=2,
                       settings=SearchSettings(max_attempts=6), report=reports.append)
    failed = [r for r in reports if r.new is None]
    assert failed and all(r.evaluations.expensive <= 2 + 5 for r in failed)
    assert any(r.evaluations.expensive == 2 + 5 for r in failed)


def test_vocabulary_size_keeps_the_most_frequent_words(setup, tmp_path):
    from contstim_bench.data.load import dataset_folder
    from contstim_bench.generate.inputs import load_vocabulary

    top = load_vocabulary(size=300)  # no function words kept: exactly the 300 most frequent of each list
    # the table's (alphabetical) order is kept; the set is the fixture's frequency-ordered top 300 / 150
    assert set(top.rest) == set(setup["vocab"].rest) and set(setup["vocab"].first) <= set(top.first)
    assert len(top.first) == len(top.rest) == 300 and "300 most frequent" in top.source
    freq = pd.read_parquet(dataset_folder("contstim") / "vocabulary" / "train.parquet").set_index("word")["frequency"]
    assert freq[list(top.rest)].min() >= freq[[w for w in load_vocabulary().rest if w not in top.rest]].max()
    words = tmp_path / "words.txt"
    words.write_text("b\na\nc\n", encoding="utf-8")
    with pytest.raises(ValueError, match="a word list has no frequencies"):  # main's --vocabulary-size contract
        load_vocabulary(words, size=2)
    with pytest.raises(ValueError, match="vocabulary size"):
        load_vocabulary(size=0)


def test_progress_lines_of_generate_synthetic(setup, tmp_path, capfd):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(setup["vocab"].rest[:120]) + "\n", encoding="utf-8")
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(setup["held"][:5]) + "\n", encoding="utf-8")
    models = f"tiny={setup['specs']['tiny']},trigram={setup['specs']['trigram']}"
    assert cli_main(["generate", "synthetic", "--models", models, "--start-sentences", "1", "--pool", str(pool),
                     "--vocabulary", str(vocab), "--max-attempts", "3", "--no-cache",
                     "--output", str(tmp_path / "run")]) == 0
    err = capfd.readouterr().err
    lines = [ln for ln in err.splitlines() if re.match(r"\[p0\] 00-01_\d{6} \S+>\S+ attempt \d+ position \d+: ", ln)]
    assert len(lines) == 2 * 3, err[-2000:]
    assert all(re.search(r"loss -?\d+\.\d{3} nats, \d+ candidates, \d+ causal-LM sentences", ln) for ln in lines)
    assert {ln.split()[2] for ln in lines} == {"tiny>trigram", "trigram>tiny"}


def test_searches_in_lockstep_give_the_one_at_a_time_triplets(setup):
    """Issue 43: the searches of several triplets and two model pairs, 3 at a time in lockstep
    (causal-LM passes merged), give the triplets of one search at a time, every column, and the
    same position attempts; each triplet is handed over as soon as it is complete."""
    from contstim_bench.generate.lockstep_search import TripletTask, synthesize_triplets
    from contstim_bench.scoring.lockstep import Lockstep

    pairs = [("tiny", "trigram"), ("tiny", "trigram"), ("tiny", "trigram"), ("bigram", "tiny")]
    starts = setup["held"][10:13] + setup["held"][20:21]
    seeds = [7, 8, 9, 3]
    alone, alone_reports = [], []
    m = {name: model(setup, name) for name in ("tiny", "trigram", "bigram")}
    for k, ((a, b), start, seed) in enumerate(zip(pairs, starts, seeds)):
        reports = []
        alone.append(synthesize_triplet(start, m[a], m[b], setup["vocab"], setup["fw"], seed=seed, natural_index=k,
                                        report=reports.append))
        alone_reports.append(reports)
    m = {name: model(setup, name) for name in ("tiny", "trigram", "bigram")}  # fresh scorers
    tasks = [TripletTask(start, m[a], m[b], seed, k) for k, ((a, b), start, seed) in enumerate(zip(pairs, starts, seeds))]
    reports = [[] for _ in tasks]
    handed = []
    lockstep = Lockstep(workers=3)
    rows = synthesize_triplets(tasks, setup["vocab"], setup["fw"], lockstep=lockstep,
                               report=lambda k, r: reports[k].append(r), on_row=lambda k, row: handed.append(k))
    assert lockstep.counts["passes"] < 0.8 * lockstep.counts["requests"], lockstep.counts
    assert sorted(handed) == [0, 1, 2, 3]  # each triplet once, when its two searches were done
    for k, (a, b) in enumerate(zip(alone, rows)):
        for col in (*OUTPUT_COLUMNS, "history_S1", "history_S2"):
            assert a[col] == b[col], (k, col)
        key = lambda r: (r.accept, r.attempt)  # noqa: E731 - the two searches' attempts interleave
        assert [(r.accept, r.position, r.new, r.loss) for r in sorted(reports[k], key=key)] == \
            [(r.accept, r.position, r.new, r.loss) for r in sorted(alone_reports[k], key=key)]
    assert sum(r["replacements_S1"] + r["replacements_S2"] for r in rows) >= 2


def test_generate_synthetic_in_lockstep_writes_the_triplets_of_one_job_at_a_time(setup, tmp_path, monkeypatch):
    """``--lockstep 4`` runs the six jobs' searches four at a time through the lockstep (recorded
    where the runner calls it: a runner that ignored the flag gives the same triplets) and writes
    the triplets of ``--lockstep 1``."""
    from contstim_bench.generate import synthetic_run

    calls, real = [], synthetic_run.synthesize_triplets

    def recorded(tasks, *args, workers, **kwargs):
        calls.append((len(tasks), workers))
        return real(tasks, *args, workers=workers, **kwargs)

    monkeypatch.setattr(synthetic_run, "synthesize_triplets", recorded)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(setup["vocab"].rest[:120]) + "\n", encoding="utf-8")
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(setup["held"][:5]) + "\n", encoding="utf-8")
    models = f"tiny={setup['specs']['tiny']},trigram={setup['specs']['trigram']},bigram={setup['specs']['bigram']}"
    frames = {}
    for lockstep in ("1", "4"):
        out = tmp_path / f"run{lockstep}"
        assert cli_main(["generate", "synthetic", "--models", models, "--start-sentences", "2", "--pool", str(pool),
                         "--vocabulary", str(vocab), "--max-attempts", "4", "--no-cache", "--quiet",
                         "--lockstep", lockstep, "--output", str(out)]) == 0
        frames[lockstep] = pd.read_parquet(next((out / "triplets").rglob("*.parquet")))
        assert len(list((out / "jobs").glob("*.json"))) == 3 * 2
        assert calls == ([] if lockstep == "1" else [(6, 4)]), calls
    pd.testing.assert_frame_equal(frames["1"], frames["4"])
    with pytest.raises(SystemExit):
        cli_main(["generate", "synthetic", "--models", models, "--start-sentences", "2", "--lockstep", "0",
                  "--output", str(tmp_path / "bad")])
