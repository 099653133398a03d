"""Packing token sequences into the rows of one forward pass of a causal LM, without padding.

Padding a batch to its longest sequence feeds positions whose outputs nobody reads, and every
sentence feeds the same start token again; packing puts several sequences one after the other
in a row instead, their positions continuing a shared prefix's (the start token's, run once, or
the words before a synthetic-search position), so that a forward pass feeds only real tokens.
The sequences must not see each other: each row gets a 4-D attention mask in which a position
sees the whole shared prefix (through its key/value cache) and the earlier positions of its own
sequence (:func:`prefix_mask`).  transformers' own packed-sequence support (restarting
``position_ids`` without a mask) takes no key/value cache, so it cannot share the prefix; a 4-D
mask is handed to the attention (SDPA or eager) as it is.  Whether a model's forward pass honours
the mask and the positions is checked once per loaded model (``CausalScorer.packs``); a model
that does not is scored padded, as before.

Rows are filled longest sequence first, in whichever of two layouts feeds fewer positions (rows
times the widest row): first-fit into rows of ``width`` positions (the longest sequence when it is
longer) made as narrow as the same number of rows allows, or next-fit at the best width from the
longest sequence's up (sequences of one length then get the padded layout, one per row).  What is left of a row is
padding in a segment of its own, whose outputs are never read.

Values.  A packed and a padded forward pass compute the same function.  In float64 they agree
to ~1e-7 nats per sentence (the rotary position tables are float32 in both).  In float32 both
round differently (other shapes of the matrix products, other lengths of every softmax, the start
token computed once): about 1e-6 nats per sentence for most models, up to ~6e-5 for SmolLM2,
whose start token carries activations of ~2e4 (either layout is that far from the float64
forward pass).  For the same reason a value may change in its last bits with the other
sentences of its batch; the same batches (the same ``batch_size`` and sentences, as
data-parallel scoring forms them) give bit-identical values.
"""
from __future__ import annotations

from dataclasses import dataclass

#: positions per packed row (the longest sequence when it is longer).  A row's attention grows
#: with its square: on a CPU, SmolLM2 spends the same per position in rows of 16 to 64 as in
#: padded rows of 10, and 10% more in one row of 320 (bench/causal.py)
PACK_WIDTH = 64

#: a forward pass of fewer token rows is replicated to this many (see ``CausalScorer._forward``)
MIN_TOKEN_ROWS = 8


def replicas(tokens: int) -> int:
    """How many copies of a forward pass of ``tokens`` token positions are run together so that it
    feeds at least :data:`MIN_TOKEN_ROWS` (CPU kernels switch algorithm below a few rows, and a
    model with massive activations then rounds differently: ``CausalScorer._forward``); 1 when it
    feeds that many already.  The one small-batch rule of every causal forward pass."""
    return -(-MIN_TOKEN_ROWS // tokens) if tokens < MIN_TOKEN_ROWS else 1


@dataclass(frozen=True)
class PackedRows:
    """Sequences packed into rows: ``ids``, ``positions`` and ``segments`` are (rows, width)
    lists of lists (``segments`` numbers the sequences of a row, padding its own number);
    ``spans[k] = (row, start)`` says where sequence ``k`` (of the order given) begins."""

    ids: list[list[int]]
    positions: list[list[int]]
    segments: list[list[int]]
    spans: list[tuple[int, int]]
    width: int

    @property
    def fed(self) -> int:
        """Positions one forward pass over these rows feeds (padding included)."""
        return len(self.ids) * self.width


def pack_rows(seqs: list[list[int]], pad_id: int, width: int = PACK_WIDTH, offset: int = 0) -> PackedRows:
    """Pack ``seqs`` (token ids; none empty) into rows of ``max(width, longest)`` positions,
    first-fit with the longest first (deterministic: ties keep the order given); a sequence's
    positions run ``offset, offset + 1, ...`` (``offset``: the length of a shared prefix)."""
    if not seqs:
        raise ValueError("no sequences to pack")
    if any(not s for s in seqs):
        raise ValueError("cannot pack an empty sequence")
    longest = max(len(s) for s in seqs)
    order = sorted(range(len(seqs)), key=lambda k: (-len(seqs[k]), k))
    lengths = [len(seqs[k]) for k in order]
    cap = max(int(width), longest)
    # first-fit at the full width, then as narrow as the same number of rows allows
    sizes = [len(q) for q in seqs]
    first = first_fit(sizes, order, cap)
    total = sum(lengths)
    for narrow in range(max(longest, -(-total // len(first))), cap):
        tried = first_fit(sizes, order, narrow)
        if len(tried) == len(first):
            first = tried
            break
    # next-fit at the width that feeds the fewest positions (linear time per width); at the
    # longest sequence's width it is the padded layout, best for sequences of one length
    best = min(range(longest, cap + 1), key=lambda c: _next_fit_cost(lengths, c))
    rows = min((first, _next_fit(order, lengths, best)), key=lambda r: (len(r) * _widest(seqs, r), len(r)))
    used = _widest(seqs, rows)
    ids: list[list[int]] = []
    positions: list[list[int]] = []
    segments: list[list[int]] = []
    spans: list[tuple[int, int]] = [(0, 0)] * len(seqs)
    for r, members in enumerate(rows):
        row_ids: list[int] = []
        row_pos: list[int] = []
        row_seg: list[int] = []
        for j, k in enumerate(members):
            spans[k] = (r, len(row_ids))
            row_ids.extend(seqs[k])
            row_pos.extend(range(offset, offset + len(seqs[k])))
            row_seg.extend([j] * len(seqs[k]))
        rest = used - len(row_ids)
        row_ids.extend([pad_id] * rest)
        row_pos.extend(range(offset, offset + rest))  # a segment of its own: nothing reads it
        row_seg.extend([len(members)] * rest)
        ids.append(row_ids)
        positions.append(row_pos)
        segments.append(row_seg)
    return PackedRows(ids=ids, positions=positions, segments=segments, spans=spans, width=used)


def _widest(seqs: list[list[int]], rows: list[list[int]]) -> int:
    return max(sum(len(seqs[k]) for k in members) for members in rows)


def _next_fit_cost(lengths: list[int], cap: int) -> tuple[int, int]:
    """(positions fed, rows) of :func:`_next_fit` with rows of at most ``cap``."""
    rows, fill, widest = 0, cap, 0
    for n in lengths:
        if fill + n > cap:
            rows += 1
            fill = 0
        fill += n
        widest = max(widest, fill)
    return rows * widest, rows


def _next_fit(order: list[int], lengths: list[int], cap: int) -> list[list[int]]:
    """Indices in ``order`` into rows of at most ``cap`` positions, a new row when the next one
    does not fit (``lengths``: the lengths in that order)."""
    rows: list[list[int]] = []
    fill = cap
    for k, n in zip(order, lengths):
        if fill + n > cap:
            rows.append([])
            fill = 0
        rows[-1].append(k)
        fill += n
    return rows


def first_fit(lengths: list[int], order: list[int], cap: int) -> list[list[int]]:
    """Indices into ``lengths`` (taken in ``order``) placed in rows of at most ``cap`` positions,
    each into the first row with room (a new row when none has: a length over ``cap`` gets a row
    of its own).  The one row placement of the package: :func:`pack_rows` places sequences after a
    shared prefix with it, and a lockstep's merged pass places the rows of several requests
    (:mod:`.merged_passes`)."""
    rows: list[list[int]] = []
    free: list[int] = []
    for k in order:
        n = lengths[k]
        for r, room in enumerate(free):
            if room >= n:
                rows[r].append(k)
                free[r] -= n
                break
        else:
            rows.append([k])
            free.append(cap - n)
    return rows


def additive_mask(allowed, dtype):
    """The additive 4-D attention mask (rows, 1, width, keys) of ``allowed`` (rows, width, keys:
    True where a position may attend to a key): 0 there, the dtype's lowest value elsewhere.  A
    4-D mask is handed to the attention as it is (transformers' ``masking_utils`` builds none),
    which SDPA and eager attention both add to the scores."""
    import torch

    mask = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
    return mask.masked_fill_(~allowed, torch.finfo(dtype).min)[:, None]


def prefix_mask(segments, prefix_length: int, dtype):
    """Additive 4-D attention mask (rows, 1, width, prefix_length + width) of packed rows after a
    shared key/value prefix: every position sees the whole prefix, and the earlier positions of
    its own segment (:func:`additive_mask`).  ``segments``: a (rows, width) long tensor
    (:attr:`PackedRows.segments`)."""
    import torch

    rows, width = segments.shape
    causal = torch.ones((width, width), dtype=torch.bool, device=segments.device).tril()
    same = (segments[:, :, None] == segments[:, None, :]) & causal
    seen = torch.cat([torch.ones((rows, width, prefix_length), dtype=torch.bool, device=segments.device), same], -1)
    return additive_mask(seen, dtype)
