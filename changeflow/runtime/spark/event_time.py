"""Event time on Spark: watermarks as control rows, window table functions, window aggregation.

**Watermarks.** Spark keeps one watermark per query and moves it between
micro-batches by its own rules; changeflow keeps Flink's instead, in band, as
the control rows of :mod:`.control_rows`. A watermark assigner
(:class:`~changeflow.plan.event_time.WatermarkAssigner`) computes its watermark
expression in the JVM for every row, and one ``mapInArrow`` per partition passes
the rows on unchanged and appends one watermark row carrying the largest value
it saw. Stateless operators pass it on; the packing stage of every stateful
operator sends it to every bucket (:class:`~.control_rows.ControlFanOut`); an
event-time kernel's processor keeps the largest watermark per assigner in state
and gives the kernel the least of them over its assigners
(:meth:`~.processor.KernelProcessor._watermark`). So the watermark advances
once per micro-batch, after the micro-batch's rows: a row is late when the
watermark made by *earlier* micro-batches has closed its window. That is when
Flink would have emitted a periodic watermark between the two batches; within
one micro-batch no row is late. At the end of bounded input every event-time
kernel sees ``MAX_WATERMARK`` (the end-of-input control row), and every window fires.

**Windows.** A window TVF is stateless Spark columns: TUMBLE a floor, HOP and
CUMULATE an ``explode`` of the row's windows (:func:`window_frame`), in batch and
streaming alike. A window aggregation runs the
:class:`~changeflow.kernels.aggregate.window_agg.WindowAggregate` kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.common.types import DataType
from changeflow.kernels.aggregate.window_agg import WindowAggregate as WindowAggregateKernel
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan.event_time import WatermarkAssigner, WindowAggregate, WindowTableFunction
from changeflow.plan.nodes import PlanNode, Source
from changeflow.runtime.spark.columns import compile_expr
from changeflow.runtime.spark.control_rows import CONTROL, WATERMARK, watermark_id
from changeflow.runtime.spark.sources import kernel_input_dtype

if TYPE_CHECKING:
    from changeflow.runtime.spark.streaming import StreamingTranslator

_WATERMARK_VALUE = "__watermark"


def epoch_ms(column: Column, t: DataType) -> Column:
    """A TIMESTAMP or TIMESTAMP_LTZ column as epoch milliseconds (a TIMESTAMP read in the job's zone, UTC)."""
    return F.unix_millis(column if t.root == "TIMESTAMP_LTZ" else column.cast("timestamp"))


def from_epoch_ms(millis: Column, t: DataType) -> Column:
    """Epoch milliseconds as a column of the time type ``t`` (the inverse of :func:`epoch_ms`)."""
    instant = F.timestamp_millis(millis)
    return instant if t.root == "TIMESTAMP_LTZ" else instant.cast("timestamp_ntz")


def assigner_id(node: WatermarkAssigner) -> int:
    """The id a watermark assigner's watermark rows carry: its sources' names and its rowtime column."""
    names = ",".join(s.name for s in _sources(node))
    return watermark_id(f"{names}.{node.rowtime}")


def _sources(node: PlanNode) -> list[Source]:
    if isinstance(node, Source):
        return [node]
    return [s for child in node.inputs for s in _sources(child)]


def upstream_watermarks(node: PlanNode) -> frozenset:
    """The ids of the watermark assigners below ``node``."""
    if isinstance(node, WatermarkAssigner):
        return frozenset({assigner_id(node)})
    return frozenset().union(*[upstream_watermarks(child) for child in node.inputs])


def watermark_stream(frame: DataFrame, node: WatermarkAssigner) -> DataFrame:
    """``frame`` (the assigner's input changelog) followed, per partition, by the partition's watermark row."""
    types = node.input.type_map()
    value = compile_expr(node.expression, types)
    rowtime_type = types[node.rowtime]
    # Control rows (null values) give a null watermark, which max() skips.
    with_value = frame.withColumn(_WATERMARK_VALUE, epoch_ms(value, rowtime_type).cast("long"))
    names = frame.columns
    schema = T.StructType([T.StructField(f.name, f.dataType, True) for f in frame.schema.fields])
    arrow_schema = None
    wid = assigner_id(node)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        nonlocal arrow_schema
        best = None
        for batch in batches:
            largest = pc.max(batch.column(len(names))).as_py()
            if largest is not None:
                best = largest if best is None else max(best, largest)
            rows = pa.RecordBatch.from_arrays([batch.column(i) for i in range(len(names))], names=names)
            arrow_schema = rows.schema
            if rows.num_rows:
                yield rows
        if best is not None and arrow_schema is not None:
            yield _watermark_row(arrow_schema, wid, best)

    return with_value.mapInArrow(run, schema)


def _watermark_row(schema: pa.Schema, wid: int, watermark: int) -> pa.RecordBatch:
    arrays = []
    for f in schema:
        if f.name == KIND:
            arrays.append(pa.array([CONTROL], f.type))
        elif f.name == SEQ:
            arrays.append(pa.array([WATERMARK - wid], f.type))
        elif f.name == SUB:
            arrays.append(pa.array([watermark], f.type))
        else:
            arrays.append(pa.nulls(1, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def window_frame(frame: DataFrame, node: WindowTableFunction, bookkeeping: list[str]) -> DataFrame:
    """``frame`` (rows of ``node.input``) with each row once per window: ``window_start/_end/_time`` appended.

    A HOP or CUMULATE row repeated for its windows keeps its position with a
    ``_sub`` of its own per window (when ``_sub`` is among ``bookkeeping``).
    """
    t = node.input.type_map()[node.time_column]
    ms = epoch_ms(F.col(f"`{node.time_column}`"), t)
    w = node.window

    def start_of(size: int) -> Column:
        return ms - F.pmod(ms - F.lit(w.offset_ms), F.lit(size))

    if w.kind == "TUMBLE":
        start, end = start_of(w.size_ms), start_of(w.size_ms) + F.lit(w.size_ms)
        framed = frame.withColumn("__start", start).withColumn("__end", end)
    else:
        if w.kind == "HOP":
            slide = w.slide_ms or 1
            last = start_of(slide)
            starts = F.sequence(last - F.lit(w.size_ms - slide), last, F.lit(slide))
            pairs = F.transform(starts, lambda s: F.struct(s.alias("s"), (s + F.lit(w.size_ms)).alias("e")))
            per_row = w.size_ms // slide
        else:
            step = w.step_ms or 1
            start = start_of(w.size_ms)
            ends = F.sequence(start_of(step) + F.lit(step), start + F.lit(w.size_ms), F.lit(step))
            pairs = F.transform(ends, lambda e: F.struct(start.alias("s"), e.alias("e")))
            per_row = w.size_ms // step
        # explode_outer: a control row (null time) passes once, with null windows.
        framed = frame.select("*", F.posexplode_outer(pairs).alias("__pos", "__window"))
        framed = framed.withColumn("__start", F.col("__window.s")).withColumn("__end", F.col("__window.e"))
        if SUB in bookkeeping:
            position = F.coalesce(F.col("__pos"), F.lit(0)).cast("long")
            framed = framed.withColumn(SUB, F.col(SUB) * F.lit(per_row) + position)
    out = [F.col(f"`{n}`") for n in node.input.field_names]
    out += [from_epoch_ms(F.col("__start"), T_PLAIN).alias("window_start"),
            from_epoch_ms(F.col("__end"), T_PLAIN).alias("window_end"),
            from_epoch_ms(F.col("__end") - F.lit(1), t).alias("window_time")]
    return framed.select(*out, *bookkeeping)


T_PLAIN = DataType("TIMESTAMP", False, (3,))  # window_start and window_end are TIMESTAMP(3) whatever the time type


def window_aggregate_stream(tr: "StreamingTranslator", node: WindowAggregate) -> DataFrame:
    """A window aggregation in a streaming query: its kernel keyed by every grouping column."""
    from changeflow.runtime.spark.streaming import upstream_sources

    child = tr._translate(node.input)
    kernel = WindowAggregateKernel(list(node.keys), list(node.calls), node.window_end)
    types = node.input.type_map()
    needed = list(dict.fromkeys(list(node.keys) + [a for c in node.calls for a in c.arg_columns]))
    child = child.select(*[F.col(f"`{n}`") for n in needed], KIND, SEQ, SUB)
    return tr.stateful(child, kernel, list(node.keys), {n: kernel_input_dtype(types[n]) for n in needed},
                       node.schema, sources=upstream_sources(node), watermarks=upstream_watermarks(node))


def has_watermarks(node: PlanNode) -> bool:
    """Whether the plan assigns watermarks (its streaming query then carries watermark rows)."""
    return bool(upstream_watermarks(node))
