"""A batch :class:`~changeflow.plan.nodes.Sort` (ORDER BY / OFFSET / FETCH) on Spark.

The rows are numbered in the sort order (ties, and a bare LIMIT, by arrival:
``_seq``), cut to ``OFFSET``/``FETCH``, and the number becomes ``_seq``, so the
result is collected in the sorted order. Streaming mode never gets here: the
planner makes a streaming sort a Top-N (:mod:`changeflow.plan.rules.sort_limit`).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from changeflow.plan.nodes import Sort

_N = "__sort_position"


def sort_batch(frame: DataFrame, node: Sort, seq: str) -> DataFrame:
    order = []
    for column, ascending, nulls_first in node.order_by:
        c = F.col(f"`{column}`")
        if ascending:
            order.append(c.asc_nulls_first() if nulls_first else c.asc_nulls_last())
        else:
            order.append(c.desc_nulls_first() if nulls_first else c.desc_nulls_last())
    numbered = frame.withColumn(_N, F.row_number().over(Window.orderBy(*order, F.col(seq))))
    kept = F.col(_N) > node.offset
    if node.fetch is not None:
        kept = kept & (F.col(_N) <= node.offset + node.fetch)
    return numbered.where(kept).select(*[F.col(f"`{c}`") for c in node.field_names],
                                       F.col(_N).cast("long").alias(seq))
