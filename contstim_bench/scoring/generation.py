"""Greedy text generation with a :class:`~.causal.CausalScorer`: the free-generation read-out of
prompting (Kauf et al. 2024, Appendix C) in :mod:`.prompting`.

Prompts are tokenised like the scorer's sentences (no special tokens, the start token prepended
unless ``add_start=False``), left-padded in length-sorted batches with an attention mask, and
continued with ``model.generate(do_sample=False)`` (greedy: deterministic) for at most
``max_new_tokens`` tokens, stopping at the model's end-of-sequence token(s).  Only the new tokens
are decoded (special tokens dropped).
"""
from __future__ import annotations

from collections.abc import Sequence

from .base import length_sorted_batches


def greedy_continuations(lm, prompts: Sequence[str], *, max_new_tokens: int = 20,
                         add_start: bool = True) -> list[str]:
    """The greedy continuation (text) of each prompt, in input order.

    ``lm``: a :class:`~.causal.CausalScorer` (its tokenizer, start token, device, batch size and
    lazily loaded model).  ValueError for an empty prompt list, an empty prompt or a bad
    ``max_new_tokens``.
    """
    import torch

    prompts = list(prompts)
    if not prompts:
        raise ValueError("greedy_continuations needs at least one prompt")
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be a positive integer, got {max_new_tokens!r}")
    head = [lm.start_id] if add_start else []
    seqs = []
    for i, ids in enumerate(lm.tokenizer(prompts, add_special_tokens=False)["input_ids"]):
        if not ids:
            raise ValueError(f"prompt {i} ({prompts[i]!r}) has no tokens")
        seqs.append(head + ids)
    model = lm.model
    config = model.generation_config
    eos = config.eos_token_id if config.eos_token_id is not None else lm.tokenizer.eos_token_id
    out: list[str] = [""] * len(prompts)
    with torch.inference_mode():
        for batch in length_sorted_batches([len(s) for s in seqs], lm.batch_size):
            width = max(len(seqs[i]) for i in batch)
            ids = torch.full((len(batch), width), lm.pad_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):  # left padding: every prompt ends at the last column
                ids[row, width - len(seqs[i]):] = torch.tensor(seqs[i], dtype=torch.long)
                mask[row, width - len(seqs[i]):] = 1
            generated = model.generate(
                input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device), do_sample=False,
                max_new_tokens=max_new_tokens, pad_token_id=lm.pad_id, eos_token_id=eos,
                temperature=None, top_p=None, top_k=None,
            )
            for row, i in enumerate(batch):
                out[i] = lm.tokenizer.decode(generated[row, width:].tolist(), skip_special_tokens=True)
    return out
