"""Log-probabilities read out of a masked LM's logits at the masked positions.

Each read-out is ``log p(true token | masked copy)``: the token's logit minus a log-sum-exp
taken in float32 or wider.  With the whitespace-constrained normalisation of Golan et al. (2023)
the sum runs only over the vocabulary tokens of the target's whitespace class (tokens that carry
the tokenizer's whitespace mark, or tokens that do not; special tokens in neither), see
:class:`.word_pieces.WhitespaceMarks`.
"""
from __future__ import annotations

import numpy as np

from .word_pieces import WhitespaceMarks


def padded_class_masks(marks: WhitespaceMarks, vocab: int) -> tuple[np.ndarray, np.ndarray]:
    """``(class_masks, marked)`` for a model that predicts ``vocab`` ids: ``(2, vocab)`` bool (row
    0: unmarked non-special tokens, row 1: marked non-special tokens) and ``(vocab,)`` bool (the
    id carries the whitespace mark).  Ids the tokenizer lacks are in neither class."""
    masks = marks.class_masks()
    if masks.shape[1] > vocab:
        raise ValueError(
            f"tokenizer has {masks.shape[1]} tokens but the model predicts only {vocab}"
        )
    padded = np.zeros((2, vocab), dtype=bool)
    padded[:, : masks.shape[1]] = masks
    marked = np.concatenate([marks.marked, np.zeros(vocab - masks.shape[1], dtype=bool)])
    return padded, marked


def readout_logprobs(sel, tk, norm, class_masks, pair=None):
    """log p(``tk[i]``) under the logits ``sel[pair[i]]`` (torch, ``(u, V)`` and ``(n,)``;
    ``pair`` None: ``sel[i]``), as a torch tensor of float32 or wider.  Several read-outs of one
    (row, position) share its logits row and its log-sum-exp.  ``norm`` (numpy bool, ``(n,)``)
    selects the whitespace-class normalisation per read-out; ``class_masks(V)`` gives the
    ``(class masks, marked)`` tensors on ``sel``'s device and is called only when some read-out
    is normalised."""
    import torch

    if sel.dtype in (torch.float16, torch.bfloat16):
        sel = sel.float()
    if pair is None:
        pair = torch.arange(len(tk), device=sel.device)
    top = sel.max(dim=1).values
    ex = torch.exp(sel - top[:, None])
    total = ex.sum(dim=1)
    if bool(np.any(norm)):
        masks, marked = class_masks(sel.shape[1])
        cls = marked[tk].long()
        class_sum = (ex @ masks.to(ex.dtype).T)[pair, cls]
        nm = torch.as_tensor(norm, device=sel.device)
        denom = torch.where(nm, class_sum, total[pair])
        under = nm & (class_sum <= 0)
        lse = top[pair] + torch.log(denom)
        if bool(under.any()):  # class mass underflowed against the global max
            idx = torch.nonzero(under)[:, 0]
            allowed = masks[cls[idx]]
            lse[idx] = sel[pair[idx]].masked_fill(~allowed, float("-inf")).logsumexp(dim=1)
    else:
        lse = top[pair] + torch.log(total[pair])
    return sel[pair, tk] - lse
