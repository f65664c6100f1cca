"""The query's watermark at its sink, for a sink that acts on it (a filesystem sink's partition-time commit).

The translator keeps the watermark rows in the frame a sink receives when the
sink asks (``StreamingTranslator.keep_watermarks``); each micro-batch's rows are
split here into changes and watermarks. A watermark row carries its assigner's
number in ``_kind`` (``WATERMARK + n``) and the watermark in ``_sub``
(:mod:`.control_rows`): the sink's watermark is the least over the query's
assigners of the largest each has emitted, as an operator with several inputs
takes the least of its inputs' watermarks in Flink; before every assigner has
emitted one there is none. Like Flink's, it starts afresh when a job restarts.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from changeflow.kernels.changelog import KIND, SUB
from changeflow.runtime.spark.control_rows import WATERMARK


class SinkWatermark:
    """The largest watermark seen per assigner across micro-batches, and their least (``current``).

    >>> mark = SinkWatermark(1)
    >>> rows = pa.table({KIND: pa.array([0, WATERMARK], pa.int8()), SUB: pa.array([0, 5000], pa.int64())})
    >>> mark.take(rows).num_rows, mark.current
    (1, 5000)
    """

    def __init__(self, assigners: int) -> None:
        self.assigners = assigners
        self.latest: dict[int, int] = {}

    def take(self, table: pa.Table) -> pa.Table:
        """``table`` without its watermark rows, which advance the watermark."""
        marks = np.asarray(table.column(KIND).to_numpy(zero_copy_only=False)) >= WATERMARK
        if not marks.any():
            return table
        found = table.filter(pa.array(marks))
        for kind, value in zip(found.column(KIND).to_pylist(), found.column(SUB).to_pylist(), strict=True):
            number = kind - WATERMARK
            if value is not None and value > self.latest.get(number, value - 1):
                self.latest[number] = value
        return table.filter(pa.array(~marks))

    @property
    def current(self) -> int | None:
        if self.assigners == 0 or len(self.latest) < self.assigners:
            return None
        return min(self.latest.values())
