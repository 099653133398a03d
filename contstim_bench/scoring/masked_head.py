"""Vocabulary logits of a masked LM at the read-out positions only.

A masked-LM forward pass ends with the output projection (the "output embeddings", hidden size
H to vocabulary size V) at *every* position of every row, although a scorer reads out only the
masked positions it scores: for a small model on a 50,000-token vocabulary that projection is
most of the work (H x V multiply-adds per position against about 12 H^2 per layer and token for
the encoder), and for BERT-base still about a fifth.  :class:`ReadoutLogits` runs the encoder
over the whole batch as usual and the projection only at the ``(row, position)`` pairs asked
for, by handing the projection module the gathered hidden states (a forward pre-hook on
:meth:`transformers.PreTrainedModel.get_output_embeddings`, removed after each call).

Whether a model's head allows this is checked, not assumed: the first call also runs the full
forward pass and compares the logits (``atol`` 1e-4 on the float32 scale); a model whose
projection is not that module, is called more than once, or whose head post-processes the
logits by shape, falls back to the full forward pass for good.  Models that are not
``PreTrainedModel`` (the oracle models of the tests) always use the full forward pass.
"""
from __future__ import annotations

#: largest |difference| between the two paths accepted by the self-check (logit units)
CHECK_ATOL = 1e-4


def output_projection(model):
    """The module that maps hidden states to vocabulary logits, or None when ``model`` is not a
    ``transformers.PreTrainedModel`` or declares no output embeddings."""
    from transformers import PreTrainedModel

    if not isinstance(model, PreTrainedModel):
        return None
    return model.get_output_embeddings()


class ReadoutLogits:
    """``logits(input_ids, attention_mask, rows, positions)`` -> ``(n, V)`` logits of ``model``
    at the given (row, position) pairs (see the module docstring).  State: whether the
    projection-only path has been checked for this model, and whether it is used."""

    def __init__(self, model):
        self.model = model
        self.projection = output_projection(model)
        self.checked = False
        self.n_full = 0  # calls served by the full forward pass

    @property
    def selective(self) -> bool:
        """True while the projection runs at the read-out positions only."""
        return self.projection is not None

    def _full(self, input_ids, attention_mask, rows, positions):
        self.n_full += 1
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
        return logits[rows, positions]

    def _selected(self, input_ids, attention_mask, rows, positions):
        calls = []

        def gather(module, args, kwargs):
            calls.append(1)
            if len(calls) > 1 or len(args) != 1 or kwargs:
                return None  # unexpected use: leave the input alone, the shape check below fails
            (hidden,) = args
            return (hidden[rows, positions],), {}

        handle = self.projection.register_forward_pre_hook(gather, with_kwargs=True)
        try:
            logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
        finally:
            handle.remove()
        if len(calls) != 1 or logits.dim() != 2 or logits.shape[0] != len(rows):
            return None
        return logits

    def __call__(self, input_ids, attention_mask, rows, positions):
        """Logits ``(n, V)`` at ``(rows[i], positions[i])``: torch tensors on the model's device."""
        if self.projection is None:
            return self._full(input_ids, attention_mask, rows, positions)
        got = self._selected(input_ids, attention_mask, rows, positions)
        if not self.checked:
            want = self._full(input_ids, attention_mask, rows, positions)
            ok = got is not None and got.shape == want.shape and bool(
                (got.float() - want.float()).abs().max() <= CHECK_ATOL
            )
            self.checked = True
            if not ok:
                self.projection = None
                return want
            return got
        if got is None:  # a model whose head changed behaviour after the check
            self.projection = None
            return self._full(input_ids, attention_mask, rows, positions)
        return got
