"""Regular and interval joins on Spark: a two-input stateful operator in streaming, Spark's join in batch.

Streaming (:func:`join_stream`): each input is packed by its own ``mapInPandas``
(:class:`~changeflow.runtime.spark.packing.Packer`). Before packing, every row gets
its join key as ``_jk0, _jk1, ...`` cast to the key pair's common type (so equal
keys of the two sides hash to the same bucket: an INT 1 and a BIGINT 1 are one key)
and a ``_side`` tag (0 left, 1 right). The packed frames of both inputs are united
(``unionAll``; they have the same two columns), grouped by bucket and fed to
the :class:`~.processor.KernelProcessor` that hosts every kernel: the
:class:`~changeflow.kernels.join.StreamingJoin` kernel keeps each input's frames
apart (``process_frames``) and joins both sides of the micro-batch at once,
with its state in paged RocksDB map state. Control rows (end of input, flush
signals) pass through the join.

How the two inputs' changes are ordered within a micro-batch is the kernel's rule
(by source position, left before right at equal position; see its module). Flink's
own interleaving of two sources is not deterministic, so conformance compares joins
materialized.

An interval join (:class:`~changeflow.plan.time_joins.IntervalJoin`) runs the
same way with the :class:`~changeflow.kernels.join.interval.IntervalJoin` kernel, an
event-time kernel: its processor gives it the least watermark over both inputs'
assigners; so does a temporal join (:class:`~changeflow.plan.time_joins.TemporalJoin`,
kernel :class:`~changeflow.kernels.join.temporal.TemporalJoin`) and a window join
(:class:`~changeflow.plan.window_ops.WindowJoin`, kernel
:class:`~changeflow.kernels.join.window_join.WindowJoin`). A batch plan has
neither (the regular join gives an interval join's rows; a temporal join is refused).

Batch (:func:`join_batch`): Spark's join of the two inputs on the equi keys and the
remaining condition, with the same output columns; NULL keys never match (``=``
on NULL is not true in Spark either).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.join import SIDE, StreamingJoin, key_column
from changeflow.kernels.join.interval import IntervalJoin as IntervalJoinKernel
from changeflow.kernels.join.temporal import TemporalJoin as TemporalJoinKernel
from changeflow.kernels.join.window_join import WindowJoin as WindowJoinKernel
from changeflow.plan.join_builder import join_key_type
from changeflow.plan.nodes import Join
from changeflow.plan.time_joins import IntervalJoin, TemporalJoin
from changeflow.plan.window_ops import WindowJoin
from changeflow.runtime.spark.event_time import WINDOW_ROWS_PER_PAGE
from changeflow.runtime.spark.deferred_processor import DeferredProcessor
from changeflow.runtime.spark.columns import compile_expr
from changeflow.runtime.spark.control_rows import ControlFanOut
from changeflow.runtime.spark.packing import BUCKET, PACKED, Packer
from changeflow.runtime.spark.processor import KernelProcessor
from changeflow.runtime.spark.sources import kernel_column_dtypes, kernel_input_dtype
from changeflow.runtime.spark.spark_types import to_spark

_SEQ_RIGHT = "_seq_right"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _side_names(node: Join) -> tuple[list[str], list[str]]:
    """The output names of the left columns and of the right columns."""
    names = node.field_names
    n = len(node.left.schema)
    return names[:n], names[n:]


def _kernel_types(node: Join, datetime_columns: bool) -> tuple[list[str], dict[str, str]]:
    """The pandas dtypes of the join key columns (the key pair's common type) and of every input column
    (TIMESTAMP ones as datetime64 for a kernel with ``datetime_columns``: the buckets and state pages
    hash the ``_jk*`` copies, which keep the key dtypes)."""
    _, right_names = _side_names(node)
    key_types = [join_key_type(node.left.type_map()[lk], node.right.type_map()[rk])
                 for lk, rk in zip(node.left_keys, node.right_keys, strict=True)]
    columns = list(node.left.schema) + [(n, t) for n, (_, t) in zip(right_names, node.right.schema, strict=True)]
    types = dict(columns)
    return ([kernel_input_dtype(t) for t in key_types],
            kernel_column_dtypes(types, list(types), [], datetime_columns))


def join_kernel(node: Join) -> Any:
    """The kernel configured as ``node`` says: the regular join, or the interval, window or temporal join."""
    left_names, right_names = _side_names(node)
    right_rename = dict(zip(node.right.field_names, right_names, strict=True))
    regular = not isinstance(node, (IntervalJoin, WindowJoin, TemporalJoin))
    key_dtypes, dtypes = _kernel_types(node, regular and StreamingJoin.datetime_columns)
    left_unique = node.left.traits.row_key
    right_unique = node.right.traits.row_key
    right_keys = [right_rename[k] for k in node.right_keys]
    if isinstance(node, IntervalJoin):  # the event-time interval join (plan/time_joins.py)
        left_time = dict(zip(node.left.field_names, left_names, strict=True))[node.left_time]
        return IntervalJoinKernel(node.join_type, left_names, right_names, list(node.left_keys), right_keys,
                                  left_time, right_rename[node.right_time], node.lower_ms, node.upper_ms,
                                  node.remaining, key_dtypes=key_dtypes, dtypes=dtypes)
    if isinstance(node, WindowJoin):  # the window join (plan/window_ops.py): each window joined at its end
        return WindowJoinKernel(node.join_type, left_names, right_names, list(node.left_keys), right_keys,
                                dict(zip(node.left.field_names, left_names, strict=True))[node.left_window[1]],
                                right_rename[node.right_window[1]], node.condition, key_dtypes=key_dtypes,
                                zone=node.window.zone if node.window is not None else None)
    if isinstance(node, TemporalJoin):  # the event-time temporal join (FOR SYSTEM_TIME AS OF)
        left_time = dict(zip(node.left.field_names, left_names, strict=True))[node.left_time]
        return TemporalJoinKernel(node.join_type, left_names, right_names, list(node.left_keys), right_keys,
                                  left_time, right_rename[node.right_time], node.condition,
                                  key_dtypes=key_dtypes, dtypes=dtypes)
    return StreamingJoin(
        node.join_type, left_names, right_names, list(node.left_keys), right_keys,
        node.condition, key_dtypes=key_dtypes, dtypes=dtypes, mini_batch=node.traits.mini_batch,
        left_unique_key=list(left_unique) if left_unique is not None else None,
        right_unique_key=[right_rename[k] for k in right_unique] if right_unique is not None else None,
        ttl_ms=node.traits.side_ttl_ms or (0, 0))


def join_stream(translator: Any, node: Join) -> DataFrame:
    """The changelog of ``node`` as a streaming DataFrame (columns plus ``_kind/_seq/_sub``)."""
    left_names, right_names = _side_names(node)
    right_rename = dict(zip(node.right.field_names, right_names, strict=True))
    kernel = join_kernel(node)
    key_dtypes, dtypes = _kernel_types(node, kernel.datetime_columns)
    sweep = translator.ttl_sweep(kernel)
    key_columns = [key_column(i) for i in range(len(key_dtypes))]
    settings = translator.settings

    packed = []
    for side, child, names, keys in ((0, node.left, left_names, list(node.left_keys)),
                                     (1, node.right, right_names, [right_rename[k] for k in node.right_keys])):
        frame = translator._translate(child)
        renamed = [F.col(_quote(old)).alias(new) for old, new in zip(child.field_names, names, strict=True)]
        frame = frame.select(*renamed, KIND, SEQ, SUB)
        tagger = _SideTagger(side, keys, key_columns, key_dtypes)
        packer = Packer(key_columns, settings.buckets, frame.columns, {n: dtypes[n] for n in names}, tagger)
        if translator.control:  # end-of-input and flush signals pass through the join
            packer = ControlFanOut(packer, frame.columns, settings.buckets, ticks=False)
        packed.append(frame.mapInPandas(packer, PACKED))
    from changeflow.runtime.spark.streaming import upstream_sources  # streaming.py imports this module
    # Any kernel's processor: the join's frames of each input stay apart (StreamingJoin.process_frames).
    # A join neither buffers nor acts on end of input: control rows only pass through it.
    # An interval join's watermark is the least over both inputs' assigners (the processor combines them).
    watermarks = translator.watermark_scans.below()
    pages, rows_per_page = settings.pages, None
    if isinstance(node, WindowJoin):
        # A window join keeps only its open windows' rows, and every firing scans all of them: one page
        # per bucket, doubling with the rows as the window aggregation's, not a fixed count each firing
        # reads and each row's key is hashed to (object TIMESTAMP keys hash through their strings).
        pages, rows_per_page = 1, WINDOW_ROWS_PER_PAGE
    processor = KernelProcessor(kernel, key_columns, pages, node.field_names,
                                sources=upstream_sources(node), control=translator.control, sweep=sweep,
                                watermarks=watermarks, rows_per_page=rows_per_page,
                                mini_batch_intervals=translator.mini_batch_intervals)
    return packed[0].unionAll(packed[1]).groupBy(BUCKET).transformWithStateInPandas(
        statefulProcessor=DeferredProcessor(processor), outputStructType=translator.changelog_struct(node.schema),
        outputMode="Append",
        timeMode=processor.time_mode)


class _SideTagger:
    """Runs in the packing stage: adds the ``_side`` tag and the join key columns ``_jk*``.

    The key columns are cast to the key pair's common dtype, so that both inputs
    hash an equal key to the same bucket (and the kernel compares them as equal).
    """

    def __init__(self, side: int, keys: list[str], key_columns: list[str], key_dtypes: list[str]) -> None:
        self.side = side
        self.keys = keys
        self.key_columns = key_columns
        self.key_dtypes = key_dtypes

    def process(self, batch: pd.DataFrame) -> pd.DataFrame:
        batch[SIDE] = self.side
        for name, key, dtype in zip(self.key_columns, self.keys, self.key_dtypes, strict=True):
            column = batch[key]
            batch[name] = column if str(column.dtype) == dtype else column.astype(dtype)
        return batch


def join_batch(translator: Any, node: Join) -> DataFrame:
    """``node`` over bounded inputs with Spark's join: the result's columns plus ``_seq``."""
    left_names, right_names = _side_names(node)
    right_rename = dict(zip(node.right.field_names, right_names, strict=True))
    left = translator.translate(node.left)
    right = translator.translate(node.right).select(
        *[F.col(_quote(old)).alias(new) for old, new in right_rename.items()], F.col(SEQ).alias(_SEQ_RIGHT))
    condition = None
    for lk, rk in zip(node.left_keys, node.right_keys, strict=True):
        term = left[_quote(lk)] == right[_quote(right_rename[rk])]
        condition = term if condition is None else condition & term
    if node.condition is not None:
        # The condition sees the inputs' own (not null-padded) types.
        types = {**dict(node.left.schema), **{right_rename[n]: t for n, t in node.right.schema}}
        term = compile_expr(node.condition, types)
        condition = term if condition is None else condition & term
    how = {"INNER": "inner", "LEFT": "left", "RIGHT": "right", "FULL": "full"}[node.join_type]
    if condition is None:
        joined = left.crossJoin(right) if how == "inner" else left.join(right, F.lit(True), how)
    else:
        joined = left.join(right, condition, how)
    # Rows arrive in the order of the later of the two source rows they come from.
    seq = F.greatest(F.coalesce(F.col(SEQ), F.lit(-1)), F.coalesce(F.col(_SEQ_RIGHT), F.lit(-1)))
    return joined.select(*[F.col(_quote(n)).cast(to_spark(t)).alias(n) for n, t in node.schema], seq.alias(SEQ))
