"""The Replicate operator (:class:`~changeflow.plan.nodes.Replicate`) on Spark: stateless, in the JVM.

Each change row is repeated as many times as its count column says (an
``explode`` of an array of that length), keeping its row kind and position, and
the count column is dropped. A count of zero or less (or NULL) yields no row, as
Flink's ``$REPLICATE_ROWS$``. Control rows (end of input, flush signals) pass once.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from changeflow.kernels.changelog import KIND
from changeflow.plan.nodes import Replicate
from changeflow.runtime.spark.control_rows import CONTROL


def _copies(frame: DataFrame, node: Replicate, times: Column, keep: list[str]) -> DataFrame:
    n = F.greatest(F.coalesce(times.cast("int"), F.lit(0)), F.lit(0))
    repeated = frame.withColumn("__copies", F.explode(F.array_repeat(F.lit(0), n)))
    return repeated.select(*[F.col(f"`{c}`") for c in node.field_names], *keep)


def replicate_stream(frame: DataFrame, node: Replicate, control: bool, bookkeeping: list[str]) -> DataFrame:
    """The changelog ``frame`` of ``node.input`` with each change repeated by its count."""
    times = F.col(f"`{node.count}`")
    if control:
        times = F.when(F.col(KIND) >= CONTROL, F.lit(1)).otherwise(times)
    return _copies(frame, node, times, bookkeeping)


def replicate_batch(frame: DataFrame, node: Replicate, seq: str) -> DataFrame:
    """The rows of ``node.input`` (``frame``) each repeated by its count."""
    return _copies(frame, node, F.col(f"`{node.count}`"), [seq])
