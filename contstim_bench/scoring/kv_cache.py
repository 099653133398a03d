"""The one module that reads and writes the inside of transformers' key/value caches.

A ``DynamicCache`` holds, per layer, a keys and a values tensor of shape (rows, heads, cache
slots, head size).  The causal scorer keeps caches of prefixes and of its searches; what it needs
of their layout is here:

- :func:`cache_batch` and :func:`tile_cache`: how many rows a cache holds, and repeating them
  (the scorer's small-batch rule, :func:`.packing.replicas`);
- :func:`merged_layers`, :func:`place_cache`, :func:`as_cache` and :func:`take_rows`: the caches of
  a lockstep's merged pass (:mod:`.merged_passes`), an empty cache of the merged rows, each
  request's cache placed in its rows and slots, and each request's part taken back.

Everything else uses the public API of a cache (``get_seq_length``, passing it to the model).
A house check (tests/shipping/test_house_claims.py) keeps reads of the layers here.
"""
from __future__ import annotations

from typing import Any


def cache_batch(cache) -> int:
    """Batch size (rows) of a key/value cache (0 while it is empty)."""
    for layer in cache.layers:
        if getattr(layer, "keys", None) is not None and layer.keys.numel():
            return int(layer.keys.shape[0])
    return 0


def tile_cache(cache, reps: int) -> None:
    """Repeat a key/value cache ``reps`` times along the batch (copies 0..B-1, 0..B-1, ...), in place."""
    for layer in cache.layers:
        if getattr(layer, "keys", None) is not None and layer.keys.numel():
            layer.keys = layer.keys.repeat(reps, *([1] * (layer.keys.dim() - 1)))
            layer.values = layer.values.repeat(reps, *([1] * (layer.values.dim() - 1)))


def merged_layers(template, rows: int, slots: int) -> list[tuple[Any, Any]]:
    """Zero (keys, values) per layer of ``template``'s shape, dtype and device, with ``rows`` rows
    and ``slots`` cache slots: the cache of a merged pass before the requests' caches are placed."""
    return [(layer.keys.new_zeros((rows, layer.keys.shape[1], slots, layer.keys.shape[-1])),
             layer.values.new_zeros((rows, layer.values.shape[1], slots, layer.values.shape[-1])))
            for layer in template.layers]


def place_cache(layers: list[tuple[Any, Any]], cache, rows, slots) -> None:
    """Copy ``cache`` (n rows, p slots) into ``layers`` (:func:`merged_layers`): its row i goes to
    merged row ``rows[i]`` (a (n, 1) long tensor), its slot j to ``slots[i, j]`` ((n, p))."""
    for (keys, values), layer in zip(layers, cache.layers):
        keys.transpose(1, 2)[rows, slots] = layer.keys.transpose(1, 2)
        values.transpose(1, 2)[rows, slots] = layer.values.transpose(1, 2)


def as_cache(layers: list[tuple[Any, Any]]):
    """A ``DynamicCache`` over ``layers`` (a model extends it in place, as it does any cache)."""
    from transformers import DynamicCache

    return DynamicCache(ddp_cache_data=layers)


def take_rows(merged, rows, slots, into=None):
    """The part of cache ``merged`` at merged rows ``rows`` ((n, 1)) and slots ``slots`` ((n, w)),
    appended to cache ``into`` (a request's own cache, extended as its own pass would) or to a new
    cache; returns that cache."""
    if into is None:
        from transformers import DynamicCache

        into = DynamicCache()
    for index, layer in enumerate(merged.layers):
        into.update(layer.keys.transpose(1, 2)[rows, slots].transpose(1, 2),
                    layer.values.transpose(1, 2)[rows, slots].transpose(1, 2), index)
    return into
