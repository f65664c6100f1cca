"""``assign_timestamps_and_watermarks``: event timestamps on records, a watermark after each partition's records.

:class:`TimestampAssigning` runs over one partition of a micro-batch (a
``mapInPandas`` function, after the stateless chain below it): every record
gets the timestamp its strategy's assigner extracts
(``extract_timestamp(value, record_timestamp)``, the record's own timestamp
or Flink's ``Long.MIN_VALUE``), and after the partition's records comes one
watermark row (a control row, :mod:`.records`) carrying the strategy's watermark
for the largest timestamp the partition saw (``max - out_of_orderness - 1``).
Downstream, every keyed operator keeps the largest watermark per assigner
(``changeflow.runtime.spark.processor``), so a stream's watermark is the
largest any partition made, advancing once per micro-batch: Flink's periodic
watermark, with the micro-batch as the period. ``no_watermarks()`` makes no
watermark row. Control rows from below pass through.

The strategy is the API's ``WatermarkStrategy``, used through
``extractor()`` and ``watermark_for(max_timestamp)`` only.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pandas as pd

from changeflow.kernels.changelog import KIND
from changeflow.kernels.keyed.records import (RECORD_COLUMNS, VALUE, control_mask, decode, dumps, fail, record_frame,
                                              timestamp_of)
from changeflow.kernels.keyed.user import close_functions, open_functions

NO_TIMESTAMP = -(2**63)  # Flink's Long.MIN_VALUE: the record_timestamp of a record without one


class TimestampAssigning:
    """Timestamps records and appends the partition's watermark record (see the module docstring).

    ``chain`` (a :class:`~changeflow.kernels.chain.ChainRunner` or None) runs first;
    ``watermark_kind`` is the watermark row's ``_kind`` (``WATERMARK`` plus the
    assigner's number, ``changeflow.runtime.spark.control_rows``), None for no watermark records (batch
    execution, where control rows do not flow and event time ends at once). A record has no position
    (``_seq``): its micro-batch's records precede its watermark.

    >>> from changeflow.common.watermark_strategy import WatermarkStrategy
    >>> from changeflow.common.time import Duration
    >>> from changeflow.kernels.keyed.records import record_frame
    >>> from changeflow.kernels.order import source_stamp, stamps_of
    >>> strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(10)).with_timestamp_assigner(
    ...     lambda value, _: value * 100)
    >>> frame = record_frame([dumps(v) for v in (3, 1)], [source_stamp(i, 0) for i in range(2)])
    >>> records, mark = TimestampAssigning(strategy, 9, name="wm")([frame])
    >>> [timestamp_of(v) for v in records[VALUE]], stamps_of(mark)[0], int(mark["_kind"][0])
    ([300, 100], (0, 289), 9)
    """

    def __init__(self, strategy: Any, watermark_kind: int | None, chain: Any = None,
                 name: str = "Timestamps/Watermarks", runtime_context: Any = None) -> None:
        self.strategy = strategy
        self.watermark_kind = watermark_kind
        self.chain = chain
        self.name = name
        self.runtime_context = runtime_context

    def __call__(self, frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        extract = self.strategy.extractor()
        opened = open_functions([self.strategy.timestamp_assigner], self.name, self.runtime_context)
        largest = None
        try:
            for frame in frames:
                if not len(frame):
                    continue
                if self.chain is not None:
                    frame = self.chain.process(frame)
                control = control_mask(frame)
                blobs = frame[VALUE].to_numpy(dtype=object).copy()
                kinds = frame[KIND].to_numpy()  # kept as they are: a timestamp changes no record's kind
                for i in np.flatnonzero(~control):
                    blob = blobs[i]
                    before = timestamp_of(blob)
                    if extract is not None:
                        value = decode(blob, int(kinds[i]))
                        try:
                            timestamp = int(extract(value, NO_TIMESTAMP if before is None else before))
                        except Exception as error:
                            raise fail(self.name, value, error) from error
                        blobs[i] = dumps(value, timestamp)
                    else:
                        timestamp = before
                    if timestamp is not None and (largest is None or timestamp > largest):
                        largest = timestamp
                out = frame.loc[:, RECORD_COLUMNS].copy()
                out[VALUE] = blobs
                yield out
        finally:
            close_functions(opened)
        watermark = self.strategy.watermark_for(largest) if largest is not None else None
        if watermark is not None and self.watermark_kind is not None:
            yield record_frame([None], [(0, watermark)], kinds=[self.watermark_kind])
