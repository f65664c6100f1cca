"""Deduplication, Top-N, ChangelogNormalize and batch Sort on Spark: kernels streaming, ``row_number()`` in batch.

A :class:`~changeflow.plan.nodes.ChangelogNormalize` runs in streaming plans only, keyed by
its primary key, like a keep-last deduplication over a changelog (:mod:`changeflow.kernels.normalize`).

Streaming: a :class:`~changeflow.plan.nodes.Deduplicate` or
:class:`~changeflow.plan.nodes.Rank` runs its kernel
(:mod:`changeflow.kernels.rank`) keyed by the partition keys, like a group
aggregation: the kernel picks Flink's append-only or retractable Top-N from the
input's changelog mode, and folds per key when mini-batch is on. Deduplication
over insert-only input runs the vectorised kernel of Flink's functions; over a
retracting input (which Flink refuses) the kernel that keeps each key's live
rows in an ordered multiset, on growing pages.

Batch: Spark's window ``row_number()`` over the partition, ordered as the node
orders (deduplication: by arrival, the ``_seq`` column; Top-N: the ``ORDER BY``
columns, then arrival, which is how Flink's streaming Top-N breaks ties), then
the rank range filter. The output keeps ``_seq`` of the kept row. Over an
updating input batch mode sees only its final rows, so deduplication needs no
other algorithm there: a row's arrival is its ``_seq`` (an aggregate's row: its
group's first input row), while streaming orders a key's live rows by their
latest update, so when several rows of one key survive the two modes can show
different ones (as with ties in Top-N below).

Ties over an aggregate's output: streaming ranks a re-inserted (updated) row
after the rows with an equal sort key, so ties follow each row's *latest*
update, while a batch aggregate's ``_seq`` is its group's *first* row. The two
modes can then keep different rows among exact ties at the rank boundary (as
Flink's streaming and batch modes can); they agree whenever the boundary has
no tie.

A batch :class:`~changeflow.plan.nodes.Sort` (:func:`sort_batch`) is Spark's global
sort, then the offset and fetch. The batch result is read in ``_seq`` order (:mod:`.jobs`),
so the sorted rows get new ``_seq`` stamps in sort order: their 1-based position. Ties
keep the order the rows arrived in (the old ``_seq``), so a sort is stable and
repeatable. A streaming Sort never gets here: the planner made it a Top-N
(``rules/sort_limit``).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.contract import KernelBase
from changeflow.kernels.rank import TopN, deduplicate_kernel
from changeflow.kernels.ttl import KeyStateTtl
from changeflow.expressions import Call
from changeflow.kernels.normalize import changelog_normalize_kernel
from changeflow.plan.nodes import ChangelogNormalize, Deduplicate, Rank, Sort
from changeflow.plan.type_inference import is_proctime
from changeflow.runtime.spark.columns import compile_expr
from changeflow.runtime.spark.sources import kernel_column_dtypes
from changeflow.state.paged import ROWS_PER_GROWING_PAGE

_ROW_NUMBER = "__row_number"
_POSITION = "__sort_position"


def _shipped_columns(node: Deduplicate | Rank | ChangelogNormalize) -> tuple[list[str], set[str]]:
    """The input columns the kernel reads, and the processing-time attributes it does not.

    A processing-time attribute (PROCTIME()) is arrival order, which the kernels read
    from the stamps; its value is not shipped (nor compared as row content).
    """
    proctime = {n for n, t in node.input.schema if is_proctime(t)}
    return [c for c in node.input.field_names if c not in proctime], proctime


def rank_kernel(node: Deduplicate | Rank | ChangelogNormalize) -> KernelBase:
    """The kernel configured as ``node`` says."""
    columns, _ = _shipped_columns(node)
    insert_only = node.input.traits.changelog_mode.insert_only
    mini_batch = node.traits.mini_batch
    ttl_ms = node.traits.state_ttl_ms or 0
    if isinstance(node, ChangelogNormalize):  # the last row per primary key (kernels/normalize)
        return changelog_normalize_kernel(columns, list(node.keys), mini_batch=mini_batch, ttl_ms=ttl_ms,
                                          drop_update_before=node.drop_update_before,
                                          generate_update_before=node.update_before)
    if isinstance(node, Deduplicate):
        rowtime = None if node.order == "proctime" else node.order
        return deduplicate_kernel(columns, list(node.keys), keep_last=node.keep_last, mini_batch=mini_batch,
                                  input_insert_only=insert_only, ttl_ms=ttl_ms, rowtime=rowtime,
                                  on_watermark=node.emit_on_watermark)
    kernel = TopN(columns, list(node.partition_keys), list(node.order_by), node.rank_start, node.rank_end,
                  node.rank_column, input_insert_only=insert_only, mini_batch=mini_batch)
    if ttl_ms > 0:  # a partition's state expires a TTL after its last write (kernels/ttl.py)
        return KeyStateTtl(kernel, list(node.partition_keys), ttl_ms)
    return kernel


def rank_stream(translator, node: Deduplicate | Rank | ChangelogNormalize) -> DataFrame:
    """The changelog of ``node`` as a Structured Streaming DataFrame."""
    child = translator._translate(node.input)
    columns, proctime = _shipped_columns(node)
    kernel = rank_kernel(node)
    keys = list(node.partition_keys) if isinstance(node, Rank) else list(node.keys)
    # Over retracting input a deduplication keeps each key's live rows in an ordered multiset, keyed by
    # the key plus a sequence number or identity: pages grow with the rows, as the materializer's.
    retracting_dedup = isinstance(node, Deduplicate) and not node.input.traits.changelog_mode.insert_only
    rows_per_page = ROWS_PER_GROWING_PAGE if retracting_dedup else None
    types = node.input.type_map()
    child = child.select(*[F.col(f"`{c}`") for c in columns], KIND, SEQ, SUB)
    out_schema = tuple((n, t) for n, t in node.schema if n not in proctime)
    timed = {}
    if kernel.event_time:  # keep first on row time: fires on the watermark, and on MAX_WATERMARK at the end
        from changeflow.runtime.spark.streaming import upstream_sources

        timed = {"sources": upstream_sources(node), "watermarks": translator.watermark_scans.below()}
    dtypes = kernel_column_dtypes(types, columns, keys, kernel.datetime_columns)
    changes = translator.stateful(child, kernel, keys, dtypes, out_schema, rows_per_page=rows_per_page, **timed)
    if not proctime:
        return changes
    # Processing time is materialized where the operator emits, as Flink's
    # PROCTIME_MATERIALIZE after a deduplication or Top-N.
    now = compile_expr(Call("proctime", ()), {})
    return changes.select(*[now.alias(n) if n in proctime else F.col(f"`{n}`") for n in node.field_names],
                          KIND, SEQ, SUB)


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


def _check_proctime(node: Deduplicate) -> None:
    if node.order != "proctime":
        raise NotImplementedError(
            f"deduplication on keys {list(node.keys)} ordered by rowtime column {node.order!r} is not supported; "
            f"only processing time (arrival order) is")
