"""The masked copies (rows) that masked-LM scoring runs through the model, as padded id matrices,
and where each log-probability is read out of them.

:func:`prepare` turns the :class:`.orders.Plan` of each sentence of a chunk into one padded id
matrix with the read-outs sorted by row, and :func:`batches` cuts it into model batches;
:func:`completion_rows` and :func:`completion_batch` do the same for the word-completion
regressor.  Pure numpy: nothing here runs a model.
"""
from __future__ import annotations

import numpy as np

from .orders import Plan, order_weight
from .word_pieces import TokenizedSentence


def prepare(
    toks: list[TokenizedSentence], plans: list[Plan], norms: list[bool], pad_id: int, mask_id: int,
    dedupe: bool = True,
):
    """All rows of a chunk (sentences sorted by decreasing token length) as one padded id
    matrix, their lengths, and the read-outs sorted by row.

    With ``dedupe``, identical rows (the same token ids: the same sentence layout and mask
    pattern, from the same or another sentence of the chunk) are kept once, in the order of
    their first occurrence, and their read-outs all point to it.

    Returns ``(ids, lengths, readouts, out_offsets, n_out)``: ``readouts`` maps ``row``, ``pos``
    (position in the padded row), ``tok`` (true token id), ``coef``, ``out`` and ``norm``
    (whitespace normalisation on) to arrays sorted by row; sentence ``i``'s outputs are
    ``out_offsets[i] .. out_offsets[i] + plans[i].n_out - 1`` of ``n_out``.  A plan with
    ``mask_trailing`` also masks, in each row whose last content token is masked, the special
    tokens after the content (PLL-sentence-l2r)."""
    lmax = max(len(t.input_ids) for t in toks)
    xs, lens, tg = [], [], {k: [] for k in ("row", "pos", "tok", "coef", "out", "norm")}
    row_off = out_off = 0
    out_offsets = []
    for tok, plan, norm in zip(toks, plans, norms):
        a = plan.arrays()
        ids = np.asarray(tok.input_ids, dtype=np.int64)
        content = np.asarray(tok.content, dtype=np.int64)
        x = np.full((a.n_rows, lmax), pad_id, dtype=np.int64)
        x[:, : len(ids)] = ids
        full = np.zeros((a.n_rows, lmax), dtype=bool)
        full[:, content] = a.masks
        if plan.mask_trailing:  # closing special tokens masked with the last content token
            full[np.ix_(a.masks[:, -1], np.arange(content[-1] + 1, len(ids)))] = True
        x[full] = mask_id
        xs.append(x)
        lens.append(np.full(a.n_rows, len(ids)))
        pos = content[a.token]
        tg["row"].append(a.row + row_off)
        tg["pos"].append(pos)
        tg["tok"].append(ids[pos])
        tg["coef"].append(a.coef)
        tg["out"].append(a.out + out_off)
        tg["norm"].append(np.full(len(pos), norm, dtype=bool))
        out_offsets.append(out_off)
        row_off += a.n_rows
        out_off += plan.n_out
    x_all, len_all = np.concatenate(xs), np.concatenate(lens)
    t = {k: np.concatenate(v) for k, v in tg.items()}
    if dedupe and len(x_all) > 1:
        _, first, inverse = np.unique(x_all, axis=0, return_index=True, return_inverse=True)
        keep = np.sort(first)  # one row per distinct content, in order of first occurrence
        rank = np.empty(len(x_all), dtype=np.int64)
        rank[keep] = np.arange(len(keep))
        t["row"] = rank[first[inverse.reshape(-1)]][t["row"]]
        x_all, len_all = x_all[keep], len_all[keep]
    srt = np.argsort(t["row"], kind="stable")
    t = {k: v[srt] for k, v in t.items()}
    return x_all, len_all, t, out_offsets, out_off


def batches(prep, batch_size: int):
    """``(start, end, input_ids, attention_mask)`` per batch of ``batch_size`` rows of
    :func:`prepare`'s output, each padded to its longest row."""
    x_all, len_all = prep[0], prep[1]
    for start in range(0, len(x_all), batch_size):
        end = min(start + batch_size, len(x_all))
        blen = int(len_all[start:end].max())
        att = (np.arange(blen)[None, :] < len_all[start:end, None]).astype(np.int64)
        yield start, end, x_all[start:end, :blen], att


def completion_rows(toks: list[TokenizedSentence], position: int, mask_id: int) -> list[tuple[tuple, list]]:
    """The masked copies of :meth:`.masked.MaskedLMScorer.word_completion_logprobs`: for each
    candidate sentence (``toks``, one per candidate), word ``position`` with every proper subset
    of its pieces revealed, the others masked.

    One plan over all candidates: rows deduplicated by their full token content.  Returns
    ``[(row token ids, [(position, true token id, weight, candidate index), ...]), ...]``.
    """
    jobs: dict[tuple, list] = {}
    for ci, tok in enumerate(toks):
        k = tok.pieces[position]
        start = sum(tok.pieces[:position])
        ids = np.asarray(tok.input_ids, dtype=np.int64)
        content = np.asarray(tok.content, dtype=np.int64)
        for revealed in range((1 << k) - 1):
            masked = np.zeros(len(content), dtype=bool)
            masked[start : start + k] = [not (revealed >> j & 1) for j in range(k)]
            row_ids = ids.copy()
            row_ids[content[masked]] = mask_id
            w = order_weight(k, bin(revealed).count("1"))
            entry = jobs.setdefault(tuple(row_ids.tolist()), [])
            for j in range(k):
                if not revealed >> j & 1:
                    p = int(content[start + j])
                    entry.append((p, int(ids[p]), w, ci))
    return list(jobs.items())


def completion_batch(rows: list[tuple[tuple, list]], batch: list[int], pad_id: int):
    """Rows ``batch`` of :func:`completion_rows` padded into one batch: ``(input_ids,
    attention_mask, row in batch, position, true token id, weight, candidate index)`` of every
    read-out."""
    blen = max(len(rows[i][0]) for i in batch)
    x = np.full((len(batch), blen), pad_id, dtype=np.int64)
    att = np.zeros((len(batch), blen), dtype=np.int64)
    b_idx, pos, tok_ids, coef, outi = [], [], [], [], []
    for bi, ri in enumerate(batch):
        row_ids, targets = rows[ri]
        x[bi, : len(row_ids)] = row_ids
        att[bi, : len(row_ids)] = 1
        for p, t, w, ci in targets:
            b_idx.append(bi)
            pos.append(p)
            tok_ids.append(t)
            coef.append(w)
            outi.append(ci)
    tok_arr = np.asarray(tok_ids, dtype=np.int64)
    return x, att, np.asarray(b_idx), np.asarray(pos), tok_arr, np.asarray(coef), np.asarray(outi)
