"""Searches in lockstep (scoring/lockstep.py, its passes merged by scoring/merged_passes.py): the forward passes of several tasks merged into one
per round give each task the values of its own passes (a tiny Llama in float64: to rounding),
canonical scores run alone (bit for bit), tasks take turns deterministically, and a failing task
stops the others and is raised with its own error."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from contstim_bench.scoring.causal import CausalScorer  # noqa: E402
from contstim_bench.scoring.lockstep import Lockstep, LockstepAborted  # noqa: E402
from contstim_bench.scoring.merged_passes import ForwardRequest, merge_groups, run_alone, run_merged  # noqa: E402
from contstim_bench.scoring.packing import pack_rows, prefix_mask  # noqa: E402

from tiny_causal import SENTENCES, save_tiny_gpt2, save_tiny_llama  # noqa: E402

CANDIDATES = ["cat", "dog", "park", "bread", "milk", "children", "store", "train", "morning", "green", "ideas"]


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("llama"))


def scorer(folder, dtype="float64") -> CausalScorer:
    return CausalScorer(folder, start="<s>", dtype=dtype, cache=False, progress=False)


def test_a_merged_pass_gives_each_request_its_own_pass(llama):
    """Requests of every shape the scorer sends (a prefix without a cache, right-padded rows over
    a repeated cache, packed rows with a 4-D mask, one-token rows) in one pass: logits and the
    extended caches equal their own passes' to float64 rounding."""
    sc = scorer(llama)
    model = sc.model
    ids = sc.encode(SENTENCES[:4])
    with torch.inference_mode():
        _, prefix_cache, _ = sc._prefix_state(ids[0][:3])
        name = sc._cache_name

        def requests():
            import copy

            prefix = ForwardRequest(model, torch.tensor([ids[1][:5]]), torch.ones(1, 5, dtype=torch.long),
                                    want_cache=True, cache_name=name)
            cache = copy.deepcopy(prefix_cache)
            cache.batch_repeat_interleave(3)
            padded = torch.tensor([ids[2][3:7], ids[3][3:7], ids[3][3:5] + [sc.pad_id] * 2])
            mask = torch.cat([torch.ones(3, 3, dtype=torch.long), torch.tensor([[1] * 4, [1] * 4, [1, 1, 0, 0]])], 1)
            rows = pack_rows([ids[2][3:6], ids[3][3:8], ids[1][1:3]], sc.pad_id, width=8, offset=3)
            packed_cache = copy.deepcopy(prefix_cache)
            packed_cache.batch_repeat_interleave(len(rows.ids))
            packed = ForwardRequest(model, torch.tensor(rows.ids), prefix_mask(torch.tensor(rows.segments), 3, model.dtype),
                                    torch.tensor(rows.positions), packed_cache, cache_name=name)
            step_cache = copy.deepcopy(prefix_cache)
            step_cache.batch_repeat_interleave(2)
            step = ForwardRequest(model, torch.tensor([[ids[2][3]], [ids[3][3]]]),
                                  torch.ones(2, 4, dtype=torch.long), cache=step_cache, cache_name=name)
            return [prefix, ForwardRequest(model, padded, mask, cache=cache, cache_name=name), packed, step]

        alone = [run_alone(r) for r in requests()]
        merged_requests = requests()
        merged = run_merged(merged_requests)
    for (la, ca), (lm, cm), r in zip(alone, merged, merged_requests):
        assert lm.shape == la.shape
        np.testing.assert_allclose(lm.numpy(), la.numpy(), rtol=0, atol=1e-10)
        if ca is not None:
            assert cm.get_seq_length() == ca.get_seq_length()
            for a, m in zip(ca.layers, cm.layers):
                np.testing.assert_allclose(m.keys.numpy(), a.keys.numpy(), rtol=0, atol=1e-10)
                np.testing.assert_allclose(m.values.numpy(), a.values.numpy(), rtol=0, atol=1e-10)
        if r.cache is not None:  # extended in place, as the model extends a cache it is given
            assert cm is r.cache


def test_views_in_lockstep_give_the_values_of_a_scorer_alone(llama):
    """Four tasks, each with its own view, ask for sweeps, threshold decisions and next-word
    bounds: the values equal a plain scorer's (float64), canonical scores are bit-identical,
    and the passes were merged (fewer passes run than asked for)."""
    plain = scorer(llama)
    shared = scorer(llama)
    lockstep = Lockstep(workers=4)
    sentences = [s.rstrip(".").split() for s in SENTENCES if len(s.split()) > 3]

    def task(words):
        view = shared.lockstep_view(lockstep)
        position = len(words) // 2
        values = view.prefix_sweep(words, position, CANDIDATES)
        decided = view.sweep_at_least(words, position, CANDIDATES, float(np.median(values)), 1e-6)
        bounds = view.next_word_bounds(words[:position], CANDIDATES, -8.0)
        return values, decided, bounds, view.score([" ".join(words)])[0], view.evaluation_counts()

    got = lockstep.run([lambda w=w: task(w) for w in sentences])
    assert lockstep.counts["passes"] < lockstep.counts["requests"]
    for words, (values, decided, (bound, exact), canonical, counts) in zip(sentences, got):
        position = len(words) // 2
        truth = plain.prefix_sweep(words, position, CANDIDATES)
        np.testing.assert_allclose(values, truth, rtol=0, atol=1e-9)
        known = ~np.isnan(decided)
        assert known.any() and (decided[known] == (truth[known] >= float(np.median(truth)))).all()
        tb, te = plain.next_word_bounds(words[:position], CANDIDATES, -8.0)
        assert (exact == te).all()
        np.testing.assert_allclose(bound, tb, rtol=0, atol=1e-9)
        assert canonical == plain.score([" ".join(words)])[0]  # alone: bit for bit
        assert counts["sweep"] == len(CANDIDATES)  # each view counts its own task's values


def test_tasks_take_turns_and_results_keep_task_order():
    lockstep = Lockstep(workers=2)
    trace = []

    def task(k):
        trace.append(k)
        return k * k

    assert lockstep.run([lambda k=k: task(k) for k in range(5)]) == [0, 1, 4, 9, 16]
    assert trace == [0, 1, 2, 3, 4]  # no pass asked for: each task runs to its end in turn
    with pytest.raises(ValueError, match="positive integer"):
        Lockstep(workers=0)


def test_a_failing_task_stops_the_others_and_is_raised(llama):
    shared = scorer(llama)
    lockstep = Lockstep(workers=3)
    stopped = []

    def busy(k):
        view = shared.lockstep_view(lockstep)
        try:
            for position in range(3):
                view.prefix_sweep(["the", "cat", "sat", "on", "the", "mat"], position, CANDIDATES[k:])
        except LockstepAborted:
            stopped.append(k)
            raise
        return k

    def failing():
        view = shared.lockstep_view(lockstep)
        view.prefix_sweep(["a", "dog", "ran"], 1, CANDIDATES)
        raise ValueError("task 2 broke")

    with pytest.raises(ValueError, match="task 2 broke"):
        lockstep.run([lambda: busy(0), lambda: busy(1), failing])
    assert sorted(stopped) == [0, 1]


def test_a_model_that_cannot_merge_runs_its_passes_alone(tmp_path):
    """GPT-2 keeps packed rows apart, so its views merge; a view of a scorer whose model does
    not (forced here), or whose weights are bfloat16, sends nothing to the lockstep."""
    gpt2 = CausalScorer(save_tiny_gpt2(tmp_path / "gpt2"), dtype="float64", cache=False, progress=False)
    lockstep = Lockstep(workers=2)
    assert gpt2.lockstep_view(lockstep)._lockstep is lockstep
    assert gpt2.with_layout("padded").lockstep_view(lockstep)._lockstep is None
    half = CausalScorer(save_tiny_gpt2(tmp_path / "gpt2-bf16"), dtype="bfloat16", cache=False, progress=False)
    assert half.packs and half.lockstep_view(lockstep)._lockstep is None  # 16 bits round too coarsely to merge


def test_merged_passes_keep_to_the_token_budget():
    """One-token rows of many tasks run as one pass, unless a scorer's --max-tokens-per-batch
    (the request's budget) is smaller than the merged pass; wide and one-token requests whose
    merged rows would cost more than two passes stay apart."""
    ones = [ForwardRequest(None, torch.zeros((40, 1), dtype=torch.long), torch.ones((40, 1))) for _ in range(4)]
    assert merge_groups(ones) == [[0, 1, 2, 3]]
    tight = [ForwardRequest(None, torch.zeros((40, 1), dtype=torch.long), torch.ones((40, 1)), budget=100)
             for _ in range(4)]
    assert merge_groups(tight) == [[0, 1], [2, 3]]
    wide = ForwardRequest(None, torch.zeros((2, 300), dtype=torch.long), torch.ones((2, 300)))
    assert merge_groups([wide, *ones]) == [[1, 2, 3, 4], [0]]
