"""Deduplication and Top-N on Spark: streaming through the rank kernels, batch with ``row_number()``.

Streaming: a :class:`~changeflow.plan.nodes.Deduplicate` or
:class:`~changeflow.plan.nodes.Rank` runs its kernel
(:mod:`changeflow.kernels.rank`) keyed by the partition keys, like a group
aggregation: the kernel picks Flink's append-only or retractable Top-N from the
input's changelog mode, and folds per key when mini-batch is on.

Batch: Spark's window ``row_number()`` over the partition, ordered as the node
orders (deduplication: by arrival, the ``_seq`` column; Top-N: the ``ORDER BY``
columns, then arrival, which is how Flink's streaming Top-N breaks ties), then
the rank range filter. The output keeps ``_seq`` of the kept row.

Ties over an aggregate's output: streaming ranks a re-inserted (updated) row
after the rows with an equal sort key, so ties follow each row's *latest*
update, while a batch aggregate's ``_seq`` is its group's *first* row. The two
modes can then keep different rows among exact ties at the rank boundary (as
Flink's streaming and batch modes can); they agree whenever the boundary has
no tie.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.rank import Deduplicate as DeduplicateKernel
from changeflow.kernels.rank import TopN
from changeflow.plan.nodes import Deduplicate, Rank
from changeflow.runtime.spark.sources import kernel_input_dtype

_ROW_NUMBER = "__row_number"


def rank_stream(translator, node: Deduplicate | Rank) -> DataFrame:
    """The changelog of ``node`` as a Structured Streaming DataFrame."""
    child = translator._translate(node.input)
    columns = node.input.field_names
    insert_only = translator.modes[id(node.input)].insert_only
    mini_batch = translator.settings.mini_batch
    if isinstance(node, Deduplicate):
        _check_proctime(node)
        if not insert_only:
            raise NotImplementedError(
                f"deduplication on keys {list(node.keys)} needs insert-only input; its input emits updates "
                f"(Flink's deduplication also takes only insert-only input)")
        kernel = DeduplicateKernel(columns, list(node.keys), keep_last=node.keep_last, mini_batch=mini_batch)
        keys = list(node.keys)
    else:
        kernel = TopN(columns, list(node.partition_keys), list(node.order_by), node.rank_start, node.rank_end,
                      node.rank_column, input_insert_only=insert_only, mini_batch=mini_batch)
        keys = list(node.partition_keys)
    types = node.input.type_map()
    child = child.select(*[F.col(f"`{c}`") for c in columns], KIND, SEQ, SUB)
    return translator.stateful(child, kernel, keys, {c: kernel_input_dtype(types[c]) for c in columns},
                               node.schema)


def rank_batch(translator, node: Deduplicate | Rank) -> DataFrame:
    """The final result of ``node`` over bounded input (columns plus ``_seq``)."""
    child = translator.translate(node.input)
    if isinstance(node, Deduplicate):
        _check_proctime(node)
        keys, order = list(node.keys), [F.col(SEQ).desc() if node.keep_last else F.col(SEQ).asc()]
        start, end, rank_column = 1, 1, None
    else:
        keys = list(node.partition_keys)
        order = [_order(c, asc, nulls_first) for c, asc, nulls_first in node.order_by] + [F.col(SEQ).asc()]
        start, end, rank_column = node.rank_start, node.rank_end, node.rank_column
    window = Window.partitionBy(*[F.col(f"`{k}`") for k in keys]).orderBy(*order)
    ranked = child.withColumn(_ROW_NUMBER, F.row_number().over(window))
    kept = ranked.where((F.col(_ROW_NUMBER) >= start) & (F.col(_ROW_NUMBER) <= end))
    columns = [F.col(f"`{c}`") for c in node.input.field_names]
    if rank_column is not None:
        columns.append(F.col(_ROW_NUMBER).cast("long").alias(rank_column))
    return kept.select(*columns, SEQ)


def _order(column: str, ascending: bool, nulls_first: bool):
    c = F.col(f"`{column}`")
    if ascending:
        return c.asc_nulls_first() if nulls_first else c.asc_nulls_last()
    return c.desc_nulls_first() if nulls_first else c.desc_nulls_last()


def _check_proctime(node: Deduplicate) -> None:
    if node.order != "proctime":
        raise NotImplementedError(
            f"deduplication on keys {list(node.keys)} ordered by rowtime column {node.order!r} is not supported; "
            f"only processing time (arrival order) is")
