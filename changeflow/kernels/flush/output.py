"""``BufferOutput``: the seed's buffering output, with watermarks and the memory-only mode.

:class:`BufferOutput` sits between an idempotent operator and its real output.
Records are buffered per key (:class:`~changeflow.kernels.flush.buffer.LatestPerKey`);
a watermark is emitted at once while the buffer is empty and otherwise
buffered (only the latest is kept) until the flush. A flush emits, as the
seed orders them when records carry timestamps:

1. the buffered records whose timestamp is at or before the buffered watermark,
2. the watermark,
3. the buffered records whose timestamp is later.

Without a buffered watermark a flush emits the records alone. Every method
returns the elements to pass on now, as a list of changelog frames and
:class:`Watermark` objects, in order.

Flushes happen when the caller says so (:meth:`flush`: the interval has passed,
the input ended), when the input is idle after records arrived
(:meth:`notify_nothing_available`), and, in the memory-buffer-only mode, whenever
the buffer holds more than ``max_entries`` keys (checked every ``max_entries``
input rows, never between the two halves of an update).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import pandas as pd

from changeflow.kernels.changelog import KIND, SEQ, SUB, UPDATE_AFTER
from changeflow.kernels.flush.buffer import LatestPerKey
from changeflow.kernels.frames import column, select


@dataclass(frozen=True)
class Watermark:
    """Event time has reached ``timestamp``: no record at or before it is expected any more."""

    timestamp: int


Element = Union[pd.DataFrame, Watermark]

# The memory-buffer-only mode's default bound, in keys, when none is configured
# (``execution.flush.memory-buffer-max-entries``'s default).
DEFAULT_MAX_ENTRIES = 10_000


class BufferOutput:
    """The latest output per key, held until a flush (FLIP-365's ``BufferOutput``).

    ``timestamp_column`` names the records' event-time column, used to order a
    flush around a buffered watermark; ``max_entries`` (memory-buffer-only mode)
    forces a flush whenever more keys are buffered.

    >>> rows = pd.DataFrame({"k": ["a", "b", "a"], "n": [5, 9, 3], "_kind": [0, 0, 0],
    ...                      "_seq": [0, 1, 2], "_sub": [0, 0, 0]})
    >>> out = BufferOutput(LatestPerKey(["k"], ["n"], changelog=False), timestamp_column="n")
    >>> out.collect(rows), out.emit_watermark(Watermark(4))
    ([], [])
    >>> [e if isinstance(e, Watermark) else e["k"].tolist() for e in out.flush()]
    [['a'], Watermark(timestamp=4), ['b']]
    """

    def __init__(self, buffer: LatestPerKey, timestamp_column: str | None = None,
                 max_entries: int | None = None) -> None:
        if max_entries is not None and max_entries < 1:
            raise ValueError(f"max_entries of a flush buffer must be at least 1, got {max_entries}")
        self.buffer = buffer
        self.timestamp_column = timestamp_column
        self.max_entries = max_entries
        self._buffered: pd.DataFrame | None = None
        self._watermark: Watermark | None = None
        self._input_since_flush = False

    def __len__(self) -> int:
        """The number of buffered keys."""
        return 0 if self._buffered is None else self.buffer.entries(self._buffered)

    def collect(self, changes: pd.DataFrame) -> list[Element]:
        """Buffer the operator's ``changes``; returns what a size-forced flush emits (memory-only mode)."""
        if not len(changes):
            return []
        self._input_since_flush = True
        if self._buffered is None:
            self._buffered = self.buffer.empty(changes)
        if self.max_entries is None:
            self._buffered = self.buffer.merge(self._buffered, changes)
            return []
        emitted: list[Element] = []
        ordered = changes.sort_values([SEQ, SUB], kind="stable", ignore_index=True)
        # Chunk ends never split a -U from its +U: a flush between the two halves of
        # an update would see the +U as a key's first change.
        update_after = ordered[KIND].to_numpy() == UPDATE_AFTER
        start = 0
        while start < len(ordered):
            end = min(start + self.max_entries, len(ordered))
            while end < len(ordered) and update_after[end]:
                end += 1
            self._buffered = self.buffer.merge(self._buffered, ordered.iloc[start:end])
            if len(self) > self.max_entries:
                emitted.extend(self.flush())
            start = end
        return emitted

    def emit_watermark(self, watermark: Watermark) -> list[Element]:
        """A watermark passes at once when nothing is buffered; otherwise the latest waits for the flush."""
        if not len(self):
            return [watermark]
        if self._watermark is None or watermark.timestamp > self._watermark.timestamp:
            self._watermark = watermark
        return []

    def notify_nothing_available(self) -> list[Element]:
        """The input is idle: flush if records arrived since the last flush."""
        return self.flush() if self._input_since_flush else []

    def flush(self) -> list[Element]:
        """Emit and clear everything buffered, in the watermark order of the module docstring."""
        self._input_since_flush = False
        records = self.buffer.drain(self._buffered) if self._buffered is not None else None
        if self._buffered is not None:
            self._buffered = self._buffered.iloc[:0]
        watermark, self._watermark = self._watermark, None
        if records is None or len(records) == 0:
            return [] if watermark is None else [watermark]
        if watermark is None:
            return [records]
        if self.timestamp_column is None:
            raise ValueError("a watermark was buffered but the flush buffer knows no timestamp column "
                             "to order records around it")
        ts = column(records, self.timestamp_column)
        if ts.isna().any():
            bad = records[ts.isna().to_numpy()].iloc[0].to_dict()
            raise ValueError(f"record without a timestamp in column {self.timestamp_column!r} cannot be "
                             f"ordered around watermark {watermark.timestamp}: {bad}")
        early = ts.to_numpy() <= watermark.timestamp
        out: list[Element] = []
        if early.any():
            out.append(select(records, early).reset_index(drop=True))
        out.append(watermark)
        if (~early).any():
            out.append(select(records, ~early).reset_index(drop=True))
        return out


def concat_records(elements: list[Element]) -> pd.DataFrame | None:
    """The records among ``elements`` as one frame (watermarks dropped), or None if there are none."""
    frames = [e for e in elements if isinstance(e, pd.DataFrame) and len(e)]
    if not frames:
        return None
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
