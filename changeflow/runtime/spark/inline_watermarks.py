"""A two-phase window aggregation's watermark assigner, run inside the aggregation's packing stage.

The watermark assigner of :mod:`.event_time` is a ``mapInArrow``: every row of
the micro-batch goes from the JVM to a Python worker and back, only for the
assigner to find where its watermarks fall. When the assigner feeds a window
aggregation with a local phase (:func:`~.event_time.local_window_assigner`)
through projections and window table functions only, the packing stage after
it sees the same partition's rows in the same order (narrow Spark operators
keep both), so it can run the assigner itself: the assigner's watermark
expression is computed in the JVM as one more column (:data:`ASSIGNED`), the
stateless operators carry it, and :class:`InlineWatermarks` finds the
watermarks among the rows (:func:`~changeflow.kernels.watermark_emissions.emitted_watermarks`, the same
function, the same per-partition state) and hands them to the packing stage
as the watermark rows the ``mapInArrow`` would have added. Every row then
crosses to Python once per micro-batch instead of twice, and the watermarks,
the local phase and what every bucket receives are unchanged.

A filter above the assigner would drop rows whose watermark values count, so
a chain with one keeps the ``mapInArrow``.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame

from changeflow.kernels.changelog import SEQ
from changeflow.plan.event_time import WatermarkAssigner, WindowAggregate
from changeflow.plan.nodes import Filter
from changeflow.runtime.spark.control_rows import Control, control_rows
from changeflow.kernels.watermark_emissions import emitted_watermarks, shifted_epoch_ms
from changeflow.runtime.spark.event_time import local_window_chain, rowtime_interval, watermark_column

ASSIGNED = "__assigned_watermark"   # the assigner's watermark expression per row (epoch ms; null: control row)


def inline_assigner(node: WindowAggregate) -> WatermarkAssigner | None:
    """The watermark assigner below ``node`` that its packing stage can run (see the module docstring), or None.

    Decided from the plan before the input is translated: the translator then
    gives that assigner's rows the :data:`ASSIGNED` column instead of its
    ``mapInArrow`` (:func:`assigned`).
    """
    chain = local_window_chain(node)
    if chain is None:
        return None
    index = next(i for i, n in enumerate(chain) if isinstance(n, WatermarkAssigner))
    assigner = chain[index]
    assert isinstance(assigner, WatermarkAssigner)
    if any(isinstance(n, Filter) for n in chain[:index]) or rowtime_interval(assigner) is not None:
        return None
    return assigner


def assigned(frame: DataFrame, node: WatermarkAssigner) -> DataFrame:
    """``frame`` (the assigner's input changelog) with its watermark expression as the column :data:`ASSIGNED`
    (or the time column it shifts: :func:`~.event_time.watermark_column`, the shift added in Python)."""
    return frame.withColumn(ASSIGNED, watermark_column(node)[0])


def carried(frame: DataFrame) -> list[str]:
    """The columns a stateless operator over ``frame`` keeps beside its own and the bookkeeping: :data:`ASSIGNED`."""
    return [ASSIGNED] if ASSIGNED in frame.columns else []


class InlineWatermarks:
    """Wraps a packing stage's function (``mapInPandas``): the assigner's watermark rows added among the rows.

    ``columns`` names the columns Spark sends, :data:`ASSIGNED` among them;
    ``number`` is the assigner's (:class:`~.event_time.WatermarkScans`),
    ``interval_ms`` its ``pipeline.auto-watermark-interval``, ``shift_ms`` the shift
    :func:`~.event_time.watermark_column` gave (:data:`ASSIGNED` then holds the time it shifts). The wrapped
    function gets each frame as Spark sent it, then the watermarks the assigner
    emitted over it as watermark rows (:func:`~.control_rows.control_rows`), and
    at the end of the partition the watermark not yet emitted, as the
    ``mapInArrow`` assigner yields them (:func:`~.event_time.watermark_stream`).
    """

    def __init__(self, packer: Any, columns: list[str], number: int, interval_ms: int,
                 shift_ms: int | None = None) -> None:
        self.packer = packer
        self.columns = list(columns)
        self.number = number
        self.interval_ms = interval_ms
        self.shift_ms = shift_ms
        # By position: Spark may rename columns starting with "_" on the way to the worker.
        self._value, self._seq = self.columns.index(ASSIGNED), self.columns.index(SEQ)

    def _values(self, column: pd.Series) -> np.ndarray:
        """The watermark expression's values (epoch ms, NaN for a control row) of a frame's :data:`ASSIGNED`."""
        if self.shift_ms is None:
            return column.to_numpy(dtype=np.float64, na_value=np.nan)
        if getattr(column.dtype, "tz", None) is not None:
            column = column.dt.tz_convert("UTC").dt.tz_localize(None)
        return shifted_epoch_ms(column.to_numpy(dtype="datetime64[ns]"), self.shift_ms)

    def _marks(self, marks: list[tuple[int, int]]) -> pd.DataFrame:
        return control_rows(self.columns, Control(watermarks=tuple((self.number, p, w) for p, w in marks)))

    def __call__(self, frames: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        def with_watermarks() -> Iterator[pd.DataFrame]:
            last, pending = None, None
            for frame in frames:
                values = self._values(frame.iloc[:, self._value])
                marks, last, pending = emitted_watermarks(values, frame.iloc[:, self._seq].to_numpy(), last,
                                                          pending, self.interval_ms)
                yield frame
                if marks:
                    yield self._marks(marks)
            if pending is not None:   # the end of the partition's micro-batch
                yield self._marks([pending])

        yield from self.packer(with_watermarks())
