"""Runs a pure kernel inside Spark's ``transformWithStateInPandas``.

Spark calls the processor once per grouping key per micro-batch. changeflow groups
by a hash *bucket* of the real key (a few buckets per core), so one Python call
folds thousands of keys vectorised, and keeps the kernel's per-key state in
pages (:mod:`changeflow.state.paged`) in a ``MapState`` of the bucket. The
bucket's rows arrive packed (:mod:`.packing`): a few pickled frames, already in
the dtypes the kernel reads.
"""

from __future__ import annotations

from typing import Any, Iterator

import pandas as pd
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import BinaryType, LongType, StructField, StructType

from changeflow.runtime.spark.packing import unpack
from changeflow.state.paged import PagedKeyedState

_PAGE_KEY = StructType([StructField("page", LongType(), False)])
_PAGE_VALUE = StructType([StructField("blob", BinaryType(), False)])


class KernelProcessor(StatefulProcessor):
    """Feeds each bucket's rows of a micro-batch to ``kernel.process`` as one batch."""

    def __init__(self, kernel: Any, key_columns: list[str], pages: int) -> None:
        self.kernel = kernel
        self.key_columns = list(key_columns)
        self.pages = pages

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.page_store = handle.getMapState("pages", _PAGE_KEY, _PAGE_VALUE)

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:
        # Each input row is (_bucket, _payload); Spark renames columns whose names
        # start with "_", so the payload is taken by position.
        payloads = [f.iloc[:, -1] for f in rows if len(f)]
        if not payloads:
            return
        batch = unpack(pd.concat(payloads, ignore_index=True) if len(payloads) > 1 else payloads[0])
        state = PagedKeyedState(self.page_store, self.key_columns, self.pages)
        out = self.kernel.process(batch, state)
        state.commit()
        if len(out):
            yield out

    def close(self) -> None:
        pass
