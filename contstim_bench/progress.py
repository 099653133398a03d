"""Progress reporting, the one helper every long loop of the package uses.

:func:`progress_bar` takes tqdm's arguments and returns

- on a terminal (stderr is a TTY) or in a notebook: a ``tqdm.auto`` bar, one line per nesting
  level (an inner bar takes the next line and is removed when it closes);
- otherwise (a log file, a pipe, CI): a :class:`PlainProgress`, a tqdm whose display is a plain
  line such as ``smollm2-135m: scoring: 96/264 sent (36%), 00:46 elapsed, 01:19 left`` written
  at most every :data:`INTERVAL` seconds (``$CONTSTIM_PROGRESS_INTERVAL``), and a last line when a
  bar that printed closes.  It writes no carriage return and no escape sequence, and a loop
  shorter than the interval prints nothing.

:func:`quiet_library_bars` turns off the bars of Hugging Face libraries (transformers' weight
loading, datasets, the hub) when output is not interactive; the ``contstim`` command calls it
before it imports them.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import sys
import time

from tqdm import tqdm as _tqdm

ENV_INTERVAL = "CONTSTIM_PROGRESS_INTERVAL"
INTERVAL = 30.0
"""Seconds between two plain progress lines (default; ``$CONTSTIM_PROGRESS_INTERVAL`` overrides)."""

PLAIN_FORMAT = "{desc}: {n_fmt}/{total_fmt} {unit} ({percentage:.0f}%), {elapsed} elapsed, {remaining} left{postfix}"
PLAIN_FORMAT_NO_TOTAL = "{desc}: {n_fmt} {unit}, {elapsed} elapsed{postfix}"


def interactive(stream=None) -> bool:
    """Whether progress goes to a person watching: ``stream`` (default stderr) is a TTY, or the
    code runs in a Jupyter kernel (where ``tqdm.auto`` draws a widget)."""
    stream = sys.stderr if stream is None else stream
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError):
        pass
    return "ipykernel" in sys.modules


def interval() -> float:
    """Seconds between plain progress lines: ``$CONTSTIM_PROGRESS_INTERVAL`` or :data:`INTERVAL`."""
    raw = os.environ.get(ENV_INTERVAL)
    if not raw:
        return INTERVAL
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${ENV_INTERVAL} must be a number of seconds, got {raw!r}") from None
    if value < 0:
        raise ValueError(f"${ENV_INTERVAL} must be >= 0, got {raw!r}")
    return value


class _Discard:
    """Where tqdm's own terminal writes go in plain mode (they are all cursor movements)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


class PlainProgress(_tqdm):
    """A tqdm that writes plain lines (no ``\\r``, no escape sequence) at most every ``every``
    seconds to ``out`` (default stderr), and a last line when it closes after having printed.

    tqdm's documented extension point :meth:`display` writes the line; its own cursor handling
    (``clear``, ``moveto`` and the writes of ``close``) goes to a sink.
    """

    monitor_interval = 0  # no monitor thread

    def __init__(self, iterable=None, *, out=None, every: float | None = None, total=None, **kwargs):
        self._every = interval() if every is None else float(every)
        self._out = sys.stderr if out is None else out
        self._last_line: str | None = None
        self._last_time: float | None = None
        self._born = time.time()  # tqdm's start_t is set only after its first refresh
        for key in ("file", "dynamic_ncols", "position", "ncols", "ascii", "mininterval", "delay"):
            kwargs.pop(key, None)
        known = total
        if known is None and iterable is not None:
            try:
                known = len(iterable)
            except TypeError:
                known = None
        kwargs.setdefault("bar_format", PLAIN_FORMAT if known else PLAIN_FORMAT_NO_TOTAL)
        super().__init__(iterable, total=total, file=_Discard(), mininterval=self._every, delay=self._every,
                         ascii=True, **kwargs)

    def display(self, msg=None, pos=None) -> bool:  # noqa: D102 - tqdm's hook
        if self.disable and self._last_line is None:  # close() of a bar that never printed
            return True
        line = self.format_meter(**self.format_dict)
        if line != self._last_line:
            self._out.write(line + "\n")
            self._out.flush()
            self._last_line = line
            self._last_time = self._time()
        return True

    def refresh(self, nolock=False, lock_args=None):  # noqa: D102 - explicit refreshes keep the interval
        if self.disable:
            return False
        now = self._time()
        if now - self._born < self._every:
            return False
        if self._last_time is not None and now - self._last_time < self._every:
            return False
        return super().refresh(nolock=nolock, lock_args=lock_args)

    def clear(self, nolock=False) -> None:  # noqa: D102 - nothing to erase in a log
        pass

    def moveto(self, n) -> None:  # noqa: D102 - no cursor in a log
        pass


def progress_bar(iterable=None, *, desc: str = "", total: int | None = None, unit: str = "it",
                 disable: bool = False, leave: bool | None = None, **kwargs):
    """A progress bar over ``iterable`` (or updated by hand with ``total``), with tqdm's
    interface: a ``tqdm.auto`` bar when :func:`interactive`, else a :class:`PlainProgress`.

    ``disable=True`` gives a bar that prints nothing (callers pass their ``progress`` flag).
    """
    if disable or not interactive():
        return PlainProgress(iterable, desc=desc, total=total, unit=unit, disable=disable, leave=leave, **kwargs)
    from tqdm.auto import tqdm

    kwargs.setdefault("dynamic_ncols", True)
    return tqdm(iterable, desc=desc, total=total, unit=unit, leave=leave, **kwargs)


@contextlib.contextmanager
def library_bars(module_name: str, enabled: bool = True):
    """Within the block, the bars a library module draws with its own ``tqdm`` (imported by name,
    as transformers' GGUF loader does) go through :func:`progress_bar` (plain lines in a log),
    or nowhere when ``enabled`` is False.  A module that cannot be imported or has no ``tqdm``
    is left alone."""
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        module = None
    original = vars(module).get("tqdm") if module is not None else None
    if original is None:
        yield
        return

    def routed(iterable=None, *args, **kwargs):
        kwargs["disable"] = kwargs.get("disable", False) or not enabled
        return progress_bar(iterable, *args, **kwargs) if not args else original(iterable, *args, **kwargs)

    module.tqdm = routed
    try:
        yield
    finally:
        module.tqdm = original


def quiet_library_bars(stream=None) -> None:
    """Turn off the progress bars of huggingface_hub, datasets and transformers when output is
    not :func:`interactive` (their bars are carriage-return animations); an explicit
    ``$HF_HUB_DISABLE_PROGRESS_BARS`` is respected."""
    if interactive(stream) or "HF_HUB_DISABLE_PROGRESS_BARS" in os.environ:
        return
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"  # read when the libraries are imported
    if "huggingface_hub" in sys.modules:
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    if "transformers" in sys.modules:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    if "datasets" in sys.modules:
        import datasets

        datasets.disable_progress_bars()
