"""A batch :class:`~changeflow.plan.nodes.Sort`: Spark's global sort, then the offset and fetch.

The batch result is read in ``_seq`` order (:mod:`.jobs`), so the sorted rows get
new ``_seq`` stamps in sort order: their 1-based position. Ties keep the order
the rows arrived in (the old ``_seq``), so a sort is stable and repeatable.
A streaming Sort never gets here: the planner made it a Top-N (``rules/sort_limit``).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from changeflow.kernels.changelog import SEQ
from changeflow.plan.nodes import Sort

_POSITION = "__sort_position"


def sort_batch(translator, node: Sort) -> DataFrame:
    """The rows of ``node.input`` in order, ``offset`` skipped, at most ``fetch`` kept (columns plus ``_seq``)."""
    child = translator.translate(node.input)
    order = [_order(c, asc, nulls_first) for c, asc, nulls_first in node.order_by] + [F.col(SEQ).asc()]
    # One window over the whole input: Spark moves every row to one partition, as a global sort must.
    numbered = child.withColumn(_POSITION, F.row_number().over(Window.orderBy(*order)))
    kept = numbered.where(F.col(_POSITION) > node.offset)
    if node.fetch is not None:
        kept = kept.where(F.col(_POSITION) <= node.offset + node.fetch)
    return kept.select(*[F.col(f"`{c}`") for c in node.input.field_names], F.col(_POSITION).cast("long").alias(SEQ))


def _order(column: str, ascending: bool, nulls_first: bool):
    c = F.col(f"`{column}`")
    if ascending:
        return c.asc_nulls_first() if nulls_first else c.asc_nulls_last()
    return c.desc_nulls_first() if nulls_first else c.desc_nulls_last()
