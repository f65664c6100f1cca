"""Spark translation of Python aggregate functions (``udaf`` in a group aggregation, ``udtaf``).

Streaming: the table aggregate runs its kernel
(:class:`~changeflow.kernels.aggregate.table_agg.GroupTableAggregate`) in the same
stateful host as every keyed kernel; a group aggregation with ``udaf`` calls needs
nothing here (the group-aggregate kernel hosts them).

Batch: Spark's aggregate functions cannot call Python, so the rows are
hash-partitioned by the grouping keys and each partition is folded by the
streaming kernel itself (``mapInPandas``; :mod:`changeflow.kernels.aggregate.bounded`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from changeflow.kernels.aggregate.bounded import aggregate_partition, empty_global_row
from changeflow.kernels.aggregate.group_agg import GroupAggregate
from changeflow.kernels.aggregate.table_agg import GroupTableAggregate
from changeflow.kernels.changelog import BOOKKEEPING
from changeflow.kernels.ttl import KeyStateTtl
from changeflow.plan.nodes import Aggregate, TableAggregate
from changeflow.runtime.spark.sources import kernel_input_dtype

if TYPE_CHECKING:
    from changeflow.runtime.spark.batch import BatchTranslator
    from changeflow.runtime.spark.streaming import StreamingTranslator


def _inputs(node: Aggregate | TableAggregate) -> list[str]:
    calls = node.calls if isinstance(node, Aggregate) else (node.call,)
    return list(dict.fromkeys(list(node.keys) + [a for c in calls for a in c.arg_columns]))


def table_aggregate_stream(translator: "StreamingTranslator", node: TableAggregate) -> DataFrame:
    """``flat_aggregate`` in a streaming query."""
    from changeflow.runtime.spark.streaming import upstream_sources
    child = translator._translate(node.input)
    kernel = GroupTableAggregate(list(node.keys), node.call, mini_batch=bool(node.traits.mini_batch),  # type: ignore[arg-type]
                                 columns=node.field_names[len(node.keys):])
    ttl_ms = node.traits.state_ttl_ms or 0
    wrapped = KeyStateTtl(kernel, list(node.keys), ttl_ms) if ttl_ms > 0 else kernel
    types = node.input.type_map()
    needed = _inputs(node)
    child = child.select(*[F.col(f"`{n}`") for n in needed], *BOOKKEEPING)
    return translator.stateful(child, wrapped, list(node.keys), {n: kernel_input_dtype(types[n]) for n in needed},
                               node.schema, None, sources=upstream_sources(node))


def aggregate_batch(translator: "BatchTranslator", node: Aggregate | TableAggregate) -> DataFrame:
    """A group aggregation with ``udaf`` calls, or a table aggregate, over bounded input."""
    child = translator.translate(node.input)
    keys = list(node.keys)
    if isinstance(node, Aggregate):
        kernel = GroupAggregate(keys, list(node.calls), mini_batch=True, input_insert_only=True)
        empty = None if keys else empty_global_row(list(node.calls))
    else:
        kernel = GroupTableAggregate(keys, node.call, mini_batch=True,  # type: ignore[arg-type]
                                     columns=node.field_names[len(keys):])
        empty = None
    types = node.input.type_map()
    needed = _inputs(node)
    dtypes = {n: kernel_input_dtype(types[n]) for n in needed}

    def fold(rows: pd.DataFrame | None) -> pd.DataFrame | None:
        if rows is None:
            return empty  # a global aggregate over no rows still has its one row
        return aggregate_partition(kernel, keys, rows)

    return translator.by_key_partition(child, keys, dtypes, node.schema, fold)
