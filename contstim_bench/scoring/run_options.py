"""How a model runs, the same options on every door and every run of generation and simulation:
:class:`RunOptions`.  It sits with the scorers so that every layer that loads a model
(``generate/``, ``experiment/simulate.py``, the driver) takes it whole; the driver re-exports it
(``contstim_bench.driver.RunOptions``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RunOptions:
    """How a model runs, the same options on every door: ``device`` (``cpu``, ``cuda``, ...;
    None: the family's default), ``dtype`` of the weights (``float32`` default, ``bfloat16``,
    ...), ``batch_size`` (sentences per forward pass), ``max_tokens_per_batch`` (length-sorted
    batches under a budget of padded tokens, ``hf-causal``), ``threads`` (torch CPU threads;
    None: torch's default), ``cache`` (a :class:`~.base.ScoreCache`, None for the default
    on-disk cache, False for none) and ``progress`` (progress bars)."""

    device: str | None = None
    dtype: str | None = None
    batch_size: int | None = None
    max_tokens_per_batch: int | None = None
    threads: int | None = None
    cache: Any = field(default=None, compare=False)
    progress: bool = True

    @property
    def use_cache(self) -> bool:
        """Whether scores are read from and written to a score cache (``cache`` is not False)."""
        return self.cache is not False
