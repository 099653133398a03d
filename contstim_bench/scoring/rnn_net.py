"""The network of the word-level RNN/LSTM language models of :mod:`.rnn` (embedding -> RNN/LSTM ->
linear read-out) and the padding of their batches: the part that needs torch at import time, in a
module of its own so that importing :mod:`.rnn` does not import torch (``contstim models`` imports
every family's module to list its options; the libraries a family runs on are loaded on first use).
"""
from __future__ import annotations

import torch
from torch import nn


class WordLM(nn.Module):
    """Embedding -> RNN/LSTM -> linear read-out over the vocabulary (logits); ``config`` is the
    architecture, a :class:`.rnn.WordLMConfig` (not imported here: :mod:`.rnn` imports this module)."""

    def __init__(self, config) -> None:
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.embed_size)
        if config.kind == "lstm":
            self.rnn = nn.LSTM(config.embed_size, config.hidden_size, config.num_layers, batch_first=True)
        else:
            self.rnn = nn.RNN(
                config.embed_size, config.hidden_size, config.num_layers,
                nonlinearity=config.nonlinearity, batch_first=True,
            )
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size)

    def forward(self, ids: torch.Tensor, state=None):
        """Logits ``[batch, time, vocab]`` for input ids ``[batch, time]`` and the final state."""
        out, state = self.rnn(self.embed(ids), state)
        return self.decoder(out), state


def pad(seqs: list[list[int]], value: int) -> torch.Tensor:
    """The id sequences as one ``[len(seqs), longest]`` long tensor, right-padded with ``value``."""
    width = max(len(s) for s in seqs)
    return torch.tensor([s + [value] * (width - len(s)) for s in seqs], dtype=torch.long)
