"""TUMBLE over a TIMESTAMP by Spark's window() (runtime/spark/tumble_columns.py) against the epoch-ms formula."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from pyspark.sql import functions as F

from changeflow.common.types import DataType
from changeflow.plan.event_time import WindowSpec
from changeflow.runtime.spark import event_time
from changeflow.runtime.spark.tumble_columns import tumble_plain

pytestmark = pytest.mark.spark

TIME = DataType("TIMESTAMP", True, (3,))


class _Input:
    field_names = ["ts", "k"]

    def type_map(self):
        return {"ts": TIME, "k": DataType("BIGINT", True, ())}


class _Node:   # what window_frame and tumble_plain read of a WindowTableFunction
    def __init__(self, window) -> None:
        self.window, self.input, self.time_column = window, _Input(), "ts"


@pytest.mark.parametrize("size_ms, offset_ms", [(10_000, 0), (10_000, 3_000), (10_000, -3_000), (7, 0),
                                                (86_400_000, 3_600_000), (1_000, 12_345), (3, -1)])
def test_the_windows_are_those_of_the_millisecond_formula(spark, size_ms, offset_ms):
    # Times on both sides of 1970, with microseconds below the millisecond, and null times (control rows).
    rng = random.Random(size_ms + offset_ms)
    rows = [(None if i % 17 == 0 else dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=rng.randint(-10**13, 10**13)),
             i) for i in range(2_000)]
    frame = spark.createDataFrame(rows, "ts timestamp_ntz, k long")
    node = _Node(WindowSpec("TUMBLE", size_ms, offset_ms=offset_ms))
    columns = ["k", "window_start", "window_end", "window_time"]
    ms = event_time.window_ms(F.col("ts"), TIME, None)
    start = ms - F.pmod(ms - F.lit(offset_ms), F.lit(size_ms))
    formula = (frame.withColumn("__start", start).withColumn("__end", start + F.lit(size_ms))
               .select(*event_time._with_window_columns(node, TIME), "k").select(*columns))   # the general path's
    got = sorted(tumble_plain(frame, node, ["k"]).select(*columns).collect())
    assert got == sorted(formula.collect())
    assert sum(r.window_start is None for r in got) == 118 and all(
        r.window_end - r.window_start == dt.timedelta(milliseconds=size_ms) for r in got if r.window_start)
