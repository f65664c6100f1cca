"""Runs a pure kernel inside Spark's ``transformWithStateInPandas``.

Spark calls the processor once per grouping key per micro-batch. changeflow groups
by a hash *bucket* of the real key (a few buckets per core), so one Python call
folds thousands of keys vectorised, and keeps the kernel's per-key state in
pages (:mod:`changeflow.state.paged`) in a ``MapState`` of the bucket.
"""

from __future__ import annotations

from typing import Any, Iterator

import pandas as pd
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import BinaryType, LongType, StructField, StructType

from changeflow.kernels.changelog import BOOKKEEPING
from changeflow.state.paged import PagedKeyedState

BUCKET = "_bucket"
_PAGE_KEY = StructType([StructField("page", LongType(), False)])
_PAGE_VALUE = StructType([StructField("blob", BinaryType(), False)])


class KernelProcessor(StatefulProcessor):
    """Feeds each bucket's rows of a micro-batch to ``kernel.process`` as one batch.

    ``columns`` maps each input column to the pandas dtype the kernel expects:
    Spark's Arrow conversion turns a nullable integer column into float64, which
    would lose the distinction between a number and NULL for the kernel.
    """

    def __init__(self, kernel: Any, key_columns: list[str], dtypes: dict[str, str], pages: int,
                 input_columns: list[str]) -> None:
        self.kernel = kernel
        self.input_columns = list(input_columns)
        self.key_columns = list(key_columns)
        self.dtypes = dict(dtypes)
        self.pages = pages

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.page_store = handle.getMapState("pages", _PAGE_KEY, _PAGE_VALUE)

    def handleInputRows(self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any) -> Iterator[pd.DataFrame]:
        frames = [f for f in rows if len(f)]
        if not frames:
            return
        batch = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        # Spark hands columns whose names start with "_" over as "_<position>";
        # the positions are those of the input DataFrame, so restore the names.
        batch.columns = self.input_columns[: len(batch.columns)]
        batch = normalize(batch.drop(columns=[BUCKET], errors="ignore"), self.dtypes)
        state = PagedKeyedState(self.page_store, self.key_columns, self.pages)
        out = self.kernel.process(batch, state)
        state.commit()
        if len(out):
            yield out

    def close(self) -> None:
        pass


def normalize(batch: pd.DataFrame, dtypes: dict[str, str]) -> pd.DataFrame:
    """Cast columns to the dtypes the kernels expect (nullable integers stay exact)."""
    for name, dtype in dtypes.items():
        if name in batch.columns and str(batch[name].dtype) != dtype:
            batch[name] = batch[name].astype(dtype)
    for name in BOOKKEEPING:
        if name in batch.columns:
            batch[name] = batch[name].astype("int8" if name == "_kind" else "int64")
    return batch
