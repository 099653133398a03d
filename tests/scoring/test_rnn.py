"""Word-level RNN/LSTM language models: training, checkpoints, scoring, vocabulary sweeps.

Tiny models (embedding 16, hidden 32) trained for a few dozen steps on 300 of the benchmark's
natural sentences; every score is checked against a per-sentence recurrence written out here
with numpy in float64 from the checkpoint's weights.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from contstim_bench import cli
from contstim_bench.data import sources
from contstim_bench.scoring import kneser_ney as kn
from contstim_bench.scoring.base import LoadSettings
from contstim_bench.scoring.run_options import RunOptions
from contstim_bench.scoring import rnn
from contstim_bench.scoring.base import ScoreCache
from contstim_bench.data.build_contstim import POOL_SYNTHESIS

CORPUS = POOL_SYNTHESIS  # the 6,113 natural sentences of the synthesis pool
TINY = dict(embed_size=16, hidden_size=32, max_vocab=150)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def sentences():
    return kn.read_corpus(sources.resolve(CORPUS))[:200]


@pytest.fixture(scope="module", params=["rnn", "lstm"])
def trained(request, sentences, tmp_path_factory):
    settings = rnn.TrainSettings(epochs=3, batch_size=20, seed=3, lr=0.01)
    result = rnn.train(sentences, request.param, settings=settings, progress=False, **TINY)
    folder = rnn.save_checkpoint(result, tmp_path_factory.mktemp(request.param) / "ckpt")
    return result, folder


def naive_logprob(folder, sentence):
    """log p(</s> w1..wn </s>) by the recurrence written out in float64 numpy, one word at a time."""
    from safetensors.numpy import load_file

    w = {k: v.astype(np.float64) for k, v in load_file(str(folder / "model.safetensors")).items()}
    config = json.loads((folder / "config.json").read_text())
    vocab = json.loads((folder / "vocab.json").read_text())
    index = {t: i for i, t in enumerate(vocab)}
    ids = [index["</s>"]] + [index.get(t, index["<unk>"]) for t in sentence.split()] + [index["</s>"]]
    hidden = config["hidden_size"]
    h, c = np.zeros(hidden), np.zeros(hidden)
    sig = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731
    total = 0.0
    for cur, nxt in zip(ids[:-1], ids[1:]):
        x = w["embed.weight"][cur]
        pre = w["rnn.weight_ih_l0"] @ x + w["rnn.bias_ih_l0"] + w["rnn.weight_hh_l0"] @ h + w["rnn.bias_hh_l0"]
        if config["kind"] == "lstm":  # PyTorch gate order: input, forget, cell, output
            i, f, g, o = np.split(pre, 4)
            c = sig(f) * c + sig(i) * np.tanh(g)
            h = sig(o) * np.tanh(c)
        else:
            h = np.maximum(pre, 0.0)
        logits = w["decoder.weight"] @ h + w["decoder.bias"]
        m = logits.max()
        total += logits[nxt] - m - np.log(np.exp(logits - m).sum())
    return total


def test_loss_goes_down_and_training_is_deterministic(trained, sentences):
    result, _ = trained
    steps = result.step_losses
    assert len(steps) == 3 * 10  # 200 sentences / 20 per step, 3 epochs
    assert np.mean(steps[-5:]) < np.mean(steps[:5]) - 0.5
    assert result.epoch_losses[0] > result.epoch_losses[1] > result.epoch_losses[2]
    kind = result.model.config.kind
    again = rnn.train(sentences, kind, settings=rnn.TrainSettings(epochs=1, batch_size=16, seed=3, lr=0.01, max_steps=4),
                      progress=False, **TINY)
    same = rnn.train(sentences, kind, settings=rnn.TrainSettings(epochs=1, batch_size=16, seed=3, lr=0.01, max_steps=4),
                     progress=False, **TINY)
    other = rnn.train(sentences, kind, settings=rnn.TrainSettings(epochs=1, batch_size=16, seed=4, lr=0.01, max_steps=4),
                      progress=False, **TINY)
    assert len(again.step_losses) == 4 and again.step_losses == same.step_losses
    for k, v in again.model.state_dict().items():
        assert torch.equal(v, same.model.state_dict()[k])
    assert not torch.equal(again.model.embed.weight, other.model.embed.weight)


def test_vocab(trained, sentences):
    result, folder = trained
    vocab = json.loads((folder / "vocab.json").read_text())
    assert vocab == result.vocab and vocab[:2] == ["<unk>", "</s>"] and len(vocab) == 152
    counts = {}
    for s in sentences:
        for t in s:
            counts[t] = counts.get(t, 0) + 1
    assert counts[vocab[2]] == max(counts.values())


def test_round_trip_and_scores_equal_naive(trained, sentences):
    result, folder = trained
    model, vocab, config = rnn.load_checkpoint(folder, device="cpu")
    for k, v in result.model.state_dict().items():
        assert torch.equal(model.state_dict()[k], v)
    assert config["kind"] == result.model.config.kind and config["training"]["steps"] == 30
    test = [" ".join(s) for s in sentences[:5]] + ["zzqq blorp the", "Hello", " ".join(sentences[199] * 2)]
    expected = np.array([naive_logprob(folder, s) for s in test])
    s32 = rnn.RecurrentScorer(folder, device="cpu", batch_size=3, cache=False, progress=False)
    np.testing.assert_allclose(s32.score(test), expected, rtol=0, atol=2e-4)
    s64 = rnn.RecurrentScorer(folder, device="cpu", dtype="float64", cache=False, progress=False)
    np.testing.assert_allclose(s64.score(test), expected, rtol=0, atol=1e-9)
    # out-of-vocabulary words all score as <unk>
    assert s64.score(["zzqq the"])[0] == pytest.approx(s64.score(["blorp the"])[0], abs=1e-12)


def test_sweep_equals_one_by_one(trained, sentences):
    _, folder = trained
    scorer = rnn.RecurrentScorer(folder, device="cpu", dtype="float64", cache=False, progress=False)
    words = sentences[7]
    cands = scorer.vocab[2:80] + ["zzqq", "blorp", words[0], scorer.vocab[5]]  # OOV and repeats
    for pos in range(len(words)):
        got = scorer.sweep(words, pos, cands, chunk_size=23)
        ref = scorer.score([" ".join(words[:pos] + [c] + words[pos + 1:]) for c in cands])
        assert got.dtype == np.float64 and got.shape == (len(cands),)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-9)
    f32 = rnn.RecurrentScorer(folder, device="cpu", cache=False, progress=False)
    got = f32.sweep(words, 3, cands)
    np.testing.assert_allclose(got, f32.score([" ".join(words[:3] + [c] + words[4:]) for c in cands]), atol=1e-4)


def test_cache(trained, tmp_path):
    _, folder = trained
    cache = ScoreCache(tmp_path / "s.sqlite")
    a = rnn.from_spec(str(folder), {}, LoadSettings(trained[0].model.config.kind, RunOptions(device="cpu", cache=cache, progress=False)))
    first = a.score(["the cat", "the cat", "a dog"])
    assert a.n_model_sentences == 2 and first[0] == first[1]
    b = rnn.from_spec(str(folder), {}, LoadSettings(trained[0].model.config.kind, RunOptions(device="cpu", cache=cache, progress=False)))
    assert np.array_equal(b.score(["a dog", "the cat"]), first[[2, 0]]) and b.n_model_sentences == 0


def test_errors(trained, tmp_path):
    result, folder = trained
    kind = result.model.config.kind
    wrong = "lstm" if kind == "rnn" else "rnn"
    with pytest.raises(ValueError, match=f"is a {kind} checkpoint"):
        rnn.from_spec(str(folder), {}, LoadSettings(wrong, RunOptions(cache=False)))
    with pytest.raises(ValueError, match="unknown .* option"):
        rnn.from_spec(str(folder), {"layers": "2"}, LoadSettings(kind, RunOptions(cache=False)))
    with pytest.raises(FileNotFoundError, match="nowhere"):
        rnn.from_spec(str(tmp_path / "nowhere"), {}, LoadSettings(kind, RunOptions(cache=False)))
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("vocab.json", "config.json"):
        (broken / name).write_text((folder / name).read_text())
    with pytest.raises(FileNotFoundError, match="model.safetensors"):
        rnn.load_checkpoint(broken)
    (broken / "model.safetensors").write_bytes(b"\x80\x04not a safetensors file")
    with pytest.raises(ValueError, match="not a valid safetensors"):
        rnn.load_checkpoint(broken)
    scorer = rnn.RecurrentScorer(folder, device="cpu", cache=False, progress=False)
    with pytest.raises(ValueError, match="sentence 0 is empty"):
        scorer.score([""])
    with pytest.raises(ValueError, match="position 9"):
        scorer.sweep(["a", "b"], 9, ["c"])
    with pytest.raises(ValueError, match="candidate 0"):
        scorer.sweep(["a", "b"], 0, [""])
    with pytest.raises(ValueError, match="empty corpus"):
        rnn.train([], kind, progress=False)
    with pytest.raises(ValueError, match="max_vocab"):
        rnn.train([["a"]], kind, max_vocab=0, progress=False)
    with pytest.raises(ValueError, match="reserved token '<unk>'"):
        rnn.train([["a", "<unk>"]], kind, progress=False)
    with pytest.raises(ValueError, match="model kind"):
        rnn.train([["a"]], "gru", progress=False)


def test_train_cli(tmp_path, sentences, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(" ".join(s) for s in sentences[:60]) + "\n", encoding="utf-8")
    out = tmp_path / "lstm"
    rc = cli.main(["train", "lstm", "--corpus", str(corpus), "--output", str(out), "--epochs", "2",
                   "--embed-size", "8", "--hidden-size", "16", "--batch-size", "20", "--seed", "1"])
    assert rc == 0
    assert "wrote" in capsys.readouterr().out
    config = json.loads((out / "config.json").read_text())
    assert config["kind"] == "lstm" and config["training"]["steps"] == 6 and config["training"]["corpus"] == str(corpus)
    scorer = rnn.from_spec(str(out), {}, LoadSettings("lstm", RunOptions(device="cpu", cache=False, progress=False)))
    value = scorer.score([" ".join(sentences[0])])[0]
    assert value == pytest.approx(naive_logprob(out, " ".join(sentences[0])), abs=2e-4)
    assert cli.main(["train", "rnn", "--corpus", str(tmp_path / "missing.txt"), "--output", str(out)]) == 1
    assert "corpus file not found" in capsys.readouterr().err
    (tmp_path / "empty.txt").write_text("\n\n")
    assert cli.main(["train", "rnn", "--corpus", str(tmp_path / "empty.txt"), "--output", str(out)]) == 1
    assert "is empty" in capsys.readouterr().err
    assert cli.main(["train", "rnn", "--corpus", str(corpus), "--output", str(out), "--epochs", "0"]) == 1
    assert "--epochs must be >= 1" in capsys.readouterr().err
