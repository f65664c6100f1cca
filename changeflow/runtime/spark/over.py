"""OVER aggregation on Spark: the :class:`~changeflow.kernels.over.OverAggregate` kernel.

Streaming: the kernel keyed by the window's ``PARTITION BY`` columns, with the
watermarks of the assigners upstream (an event-time window releases rows when the
watermark passes them; :mod:`.event_time`). Batch: the same kernel over each
partition's complete rows (Spark's own window functions would order tied rows and
type the results their own way): every row is released by the end of input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from changeflow.kernels.changelog import INSERT, KIND, SEQ, SUB
from changeflow.kernels.over import OverAggregate as OverKernel
from changeflow.plan.over import OverAggregate
from changeflow.runtime.spark.sources import kernel_input_dtype

if TYPE_CHECKING:
    from changeflow.runtime.spark.batch import BatchTranslator
    from changeflow.runtime.spark.streaming import StreamingTranslator


def over_kernel(node: OverAggregate) -> OverKernel:
    return OverKernel(list(node.partition_keys), list(node.input.field_names), node.order_by, list(node.calls),
                      rows=node.frame.rows, preceding=node.frame.preceding, proctime=node.proctime)


def over_aggregate_stream(tr: "StreamingTranslator", node: OverAggregate) -> DataFrame:
    """An OVER aggregation in a streaming query."""
    from changeflow.runtime.spark.streaming import upstream_sources

    child = tr._translate(node.input)
    types = node.input.type_map()
    names = list(node.input.field_names)
    child = child.select(*[F.col(f"`{n}`") for n in names], KIND, SEQ, SUB)
    return tr.stateful(child, over_kernel(node), list(node.partition_keys),
                       {n: kernel_input_dtype(types[n]) for n in names}, node.schema,
                       sources=upstream_sources(node),
                       watermarks=frozenset() if node.proctime else tr.watermark_scans.below())


def over_aggregate_batch(tr: "BatchTranslator", node: OverAggregate) -> DataFrame:
    """An OVER aggregation over bounded input: the kernel over each partition's rows, all at once."""
    child = tr.translate(node.input)
    keys = list(node.partition_keys)
    types = node.input.type_map()
    names = list(node.input.field_names)
    dtypes = {n: kernel_input_dtype(types[n]) for n in names}
    kernel = over_kernel(node)
    if node.proctime:   # bounded input has no processing time to order by: arrival order is the order
        kernel.proctime, kernel.event_time = False, True

    def fold(rows: pd.DataFrame | None) -> pd.DataFrame | None:
        if rows is None:
            return None
        rows[KIND] = INSERT
        rows[SUB] = 0
        return kernel.process_bounded(rows)

    return tr.by_key_partition(child, keys, dtypes, node.schema, fold)
