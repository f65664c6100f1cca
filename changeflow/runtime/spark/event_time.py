"""Event time on Spark: watermarks as control rows, window table functions, window aggregation.

**Watermarks.** Spark keeps one watermark per query and moves it between
micro-batches by its own rules; changeflow keeps Flink's instead, in band, as
watermark rows (:mod:`.control_rows`). A watermark assigner
(:class:`~changeflow.plan.event_time.WatermarkAssigner`) computes its watermark
expression in the JVM for every row, and one ``mapInArrow`` per partition passes
the rows on and adds a watermark row wherever Flink's WatermarkAssignerOperator
would emit one (:func:`emitted_watermarks`): right after the row that moved the
watermark more than ``pipeline.auto-watermark-interval`` ahead, stamped with that
row's position, and at the end of the micro-batch for the rest. Stateless
operators pass watermark rows on; the packing stage of every stateful operator
sends them to every bucket (:class:`~.control_rows.ControlFanOut`); an
event-time operator's processor applies each one after the rows before its
position, keeping the largest watermark per assigner in state and giving the
kernel the least of them over its assigners
(:meth:`~.processor.KernelProcessor._watermarks`). So a row is late exactly when
it would be in Flink reading the same rows in the same order (one source at
parallelism 1); a micro-batch boundary adds a watermark where Flink's periodic
timer would. At the end of bounded input every event-time kernel sees
``MAX_WATERMARK`` (the end-of-input control row), and every window fires.

**Windows.** A window TVF is stateless Spark columns: TUMBLE a floor (over a TIMESTAMP
outside a session zone by Spark's ``window()``, :mod:`.tumble_columns`), HOP and
CUMULATE an ``explode`` of the row's windows (:func:`window_frame`), in batch and
streaming alike. A window aggregation runs the
:class:`~changeflow.kernels.aggregate.window_agg.WindowAggregate` kernel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.common.types import DataType
from changeflow.kernels.aggregate.local_window import LocalWindowAggregate
from changeflow.kernels.aggregate.window_agg import WindowAggregate as WindowAggregateKernel
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.window.session_tvf import SessionWindowTableFunction
from changeflow.plan.event_time import ProcessingTimeAssigner, WatermarkAssigner, WindowAggregate, WindowTableFunction
from changeflow.plan.nodes import Filter, PlanNode, Project, Source, side_inputs
from changeflow.runtime.spark.columns import compile_expr
from changeflow.runtime.spark.control_rows import CONTROL, MAX_ASSIGNERS, WATERMARK
from changeflow.runtime.spark.current_watermark import calls_current_watermark
from changeflow.runtime.spark.sources import kernel_input_dtype, kernel_key_dtype
from changeflow.runtime.spark.tumble_columns import tumble_plain
from changeflow.kernels.watermark_emissions import emitted_watermarks, shifted_epoch_ms
from changeflow.plan.time_joins import shifted_time

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


def assigner_key(node: WatermarkAssigner) -> str:
    """What tells a query's watermark assigners apart: the sources they read and their rowtime column."""
    return ",".join(s.name for s in _sources(node)) + "." + node.rowtime


def _sources(node: PlanNode) -> list[Source]:
    if isinstance(node, Source):
        return [node]
    return [s for child in side_inputs(node) for s in _sources(child)]


def has_watermarks(root: PlanNode) -> bool:
    """Whether the plan has a watermark assigner (then watermark rows flow through the query)."""
    return isinstance(root, WatermarkAssigner) or any(has_watermarks(child) for child in side_inputs(root))


def rowtime_mini_batch_intervals(root: PlanNode) -> dict[str, int]:
    """The assigners under a row-time MiniBatchAssigner (by :func:`assigner_key`), with its interval in ms.

    The filter itself runs where a watermark is applied (``processor.KernelProcessor``),
    which keeps the last one passed per assigner in state across micro-batches.
    """
    intervals: dict[str, int] = {}

    def visit(node: PlanNode) -> None:
        interval = rowtime_interval(node)
        if isinstance(node, WatermarkAssigner) and interval is not None:
            intervals[assigner_key(node)] = interval
        for child in side_inputs(node):
            visit(child)

    visit(root)
    return intervals


def rowtime_interval(node: PlanNode) -> int | None:
    """The interval (ms) of the row-time MiniBatchAssigner on ``node`` if it is a watermark assigner with one."""
    assigner = node.traits.mini_batch_assigner if node.traits is not None else None
    if isinstance(node, WatermarkAssigner) and assigner is not None and assigner[2] == "RowTime" and assigner[0] > 0:
        return assigner[0]
    return None


class WatermarkScans:
    """The numbers of a query's watermark assigners, one per *scan*, as the translator reaches them.

    Every scan of a source is a Spark stream of its own, with row positions no other
    scan uses (``StreamingTranslator._distinct_positions``), so each scan's assigner
    is a watermark of its own, numbered in translation order (the same query numbers
    them the same way, which a checkpoint's watermark state relies on). Two scans of
    one table (a self-join, or Nexmark q5's two copies of its windowed counts, which
    Flink reads once through sub-plan reuse) must not share a number: an operator's
    watermark is the least over the scans below it, and one shared number would
    take the first scan's watermark, far ahead in position, for the second's, making
    the second's rows late. The translator calls :meth:`enter`/:meth:`leave` around
    every node; :meth:`below` gives an operator the numbers of the scans its inputs'
    translation reached.
    """

    def __init__(self, root: PlanNode | None = None) -> None:
        self._intervals = rowtime_mini_batch_intervals(root) if root is not None else {}
        self.mini_batch_intervals: dict[int, int] = {}   # number -> row-time mini-batch interval, ms
        self.count = 0
        self._frames: list[set[int]] = [set()]

    def number(self, node: WatermarkAssigner) -> int:
        """A new number for a scan of ``node`` (the current node's, see :meth:`below`)."""
        if self.count >= MAX_ASSIGNERS:
            raise NotImplementedError(f"a query with more than {MAX_ASSIGNERS} watermarked table scans "
                                      "is not supported")
        number, self.count = self.count, self.count + 1
        interval = self._intervals.get(assigner_key(node))
        if interval is not None:
            self.mini_batch_intervals[number] = interval
        self._frames[-1].add(number)
        return number

    def enter(self) -> None:
        self._frames.append(set())

    def leave(self) -> None:
        below = self._frames.pop()
        self._frames[-1] |= below

    def below(self) -> frozenset:
        """The numbers of the scans the current node's translation has reached so far."""
        return frozenset(self._frames[-1])


def watermark_stream(frame: DataFrame, node: WatermarkAssigner, number: int, interval_ms: int) -> DataFrame:
    """``frame`` (the assigner's input changelog) with its watermark rows: see :func:`emitted_watermarks`."""
    value, shift = watermark_column(node)
    with_value = frame.withColumn(_WATERMARK_VALUE, value)
    names = frame.columns
    schema = T.StructType([T.StructField(f.name, f.dataType, True) for f in frame.schema.fields])
    kind = WATERMARK + number
    seq_index = names.index(SEQ)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        last, pending = None, None   # the last watermark emitted, and the latest seen but not emitted
        rows = None
        for batch in batches:
            rows = pa.RecordBatch.from_arrays([batch.column(i) for i in range(len(names))], names=names)
            values = batch.column(len(names)).to_numpy(zero_copy_only=False)
            marks, last, pending = emitted_watermarks(
                values if shift is None else shifted_epoch_ms(values, shift),
                batch.column(seq_index).to_numpy(zero_copy_only=False), last, pending, interval_ms)
            if rows.num_rows:
                yield rows
            if marks:
                yield _watermark_rows(rows.schema, kind, marks)
        if pending is not None and rows is not None:
            # The end of the partition's micro-batch: where Flink's periodic timer would emit it.
            yield _watermark_rows(rows.schema, kind, [pending])

    return with_value.mapInArrow(run, schema)


def watermark_column(node: WatermarkAssigner) -> tuple[Column, int | None]:
    """What an assigner stage reads per row: :func:`watermark_value`, or for ``rowtime +/- INTERVAL`` of a
    day-time unit (the common bounded delay) the time column itself and the shift (ms) to add in Python
    (:func:`shifted_epoch_ms`): Spark computes the interval's addition and the cast to epoch milliseconds
    with java.time for every row, even in UTC (the event-time window benchmark, docs/benchmarks.md)."""
    shifted = shifted_time(node.expression) if type(node) is WatermarkAssigner else None
    time_type = node.input.type_map().get(shifted[0]) if shifted is not None else None
    if shifted is None or time_type is None or time_type.root not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return watermark_value(node), None
    return F.col(f"`{shifted[0]}`"), shifted[1]


def watermark_value(node: WatermarkAssigner) -> Column:
    """The assigner's watermark expression over a row of its input, epoch ms (null for a control row)."""
    types = node.input.type_map()
    millis = epoch_ms(compile_expr(node.expression, types), types[node.rowtime])
    if isinstance(node, ProcessingTimeAssigner):
        # A micro-batch's rows share one processing time t; later rows have a larger one, so the
        # windows ending by t are complete, and t - 1 ms leaves every row of the batch on time.
        # Data rows only: the end-of-input marker batch comes a micro-batch after the last rows, and
        # its time would fire windows Flink's legacy group window never fires (its job ends at once).
        millis = F.when(F.col(KIND) >= CONTROL, F.lit(None)).otherwise(millis - 1)
    # Control rows (null values) give a null watermark, which the running maximum skips.
    return millis.cast("long")


def _watermark_rows(schema: pa.Schema, kind: int, marks: list[tuple[int, int]]) -> pa.RecordBatch:
    """Watermark rows (null values): ``_kind`` the assigner's, ``_seq`` the position, ``_sub`` the watermark."""
    n = len(marks)
    arrays = []
    for f in schema:
        if f.name == KIND:
            arrays.append(pa.array([kind] * n, f.type))
        elif f.name == SEQ:
            arrays.append(pa.array([p for p, _ in marks], f.type))
        elif f.name == SUB:
            arrays.append(pa.array([w for _, w in marks], f.type))
        else:
            arrays.append(pa.nulls(n, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def window_frame(frame: DataFrame, node: WindowTableFunction, bookkeeping: list[str]) -> DataFrame:
    """``frame`` (rows of ``node.input``) with each row once per window: ``window_start/_end/_time`` appended.

    A HOP or CUMULATE row repeated for its windows keeps its position with a
    ``_sub`` of its own per window (when ``_sub`` is among ``bookkeeping``).
    """
    t = node.input.type_map()[node.time_column]
    w = node.window
    ms = window_ms(F.col(f"`{node.time_column}`"), t, w.zone)
    if w.kind == "SESSION":   # batch only (a streaming SESSION is stateful: session_stream)
        return _session_batch(frame, node, ms, t)
    if w.kind == "TUMBLE" and w.zone is None and t.root == "TIMESTAMP":
        return tumble_plain(frame, node, bookkeeping)

    def start_of(size: int) -> Column:
        return ms - F.pmod(ms - F.lit(w.offset_ms), F.lit(size))

    if w.kind == "TUMBLE":
        start, end = start_of(w.size_ms), start_of(w.size_ms) + F.lit(w.size_ms)
        framed = frame.withColumn("__start", start).withColumn("__end", end)
    else:
        if w.kind == "HOP":
            slide = w.slide_ms or 1
            last = start_of(slide)
            # The starts a row's windows have, from the last back while the window still holds the row; a
            # size that is no multiple of the slide (the Table API's Slide allows one) gives some rows fewer.
            per_row = -(-w.size_ms // slide)
            starts = F.filter(F.sequence(last - F.lit((per_row - 1) * slide), last, F.lit(slide)),
                              lambda s: s > ms - F.lit(w.size_ms))
            pairs = F.transform(starts, lambda s: F.struct(s.alias("s"), (s + F.lit(w.size_ms)).alias("e")))
        else:
            step = w.step_ms or 1
            start = start_of(w.size_ms)
            ends = F.sequence(start_of(step) + F.lit(step), start + F.lit(w.size_ms), F.lit(step))
            pairs = F.transform(ends, lambda e: F.struct(start.alias("s"), e.alias("e")))
            per_row = w.size_ms // step
        # explode_outer: a control row (null time) passes once, with null windows.
        framed = frame.select("*", F.posexplode_outer(pairs).alias("__pos", "__window"))
        framed = framed.withColumn("__start", F.col("__window.s")).withColumn("__end", F.col("__window.e"))
        if SUB in bookkeeping:   # a control row's _sub is its signal or watermark: kept
            position = F.coalesce(F.col("__pos"), F.lit(0)).cast("long")
            framed = framed.withColumn(SUB, F.when(F.col(KIND) >= CONTROL, F.col(SUB))
                                       .otherwise(F.col(SUB) * F.lit(per_row) + position))
    return framed.select(*_with_window_columns(node, t), *bookkeeping)


T_PLAIN = DataType("TIMESTAMP", False, (3,))  # window_start and window_end are TIMESTAMP(3) whatever the time type


def window_ms(time: Column, t: DataType, zone: str | None) -> Column:
    """A row's time on its window's axis (ms): the instant, or in a ``zone`` the wall clock there counted as
    UTC (Flink's ``toUtcTimestampMills``; kernels/window/zone_time.py). Under UTC no conversion is added."""
    if zone is None:
        return epoch_ms(time, t)
    return F.unix_millis(F.from_utc_timestamp(time, zone))


def _with_window_columns(node: WindowTableFunction, t: DataType) -> list[Column]:
    """The input's columns and ``window_start``, ``window_end``, ``window_time`` from ``__start``/``__end``
    (ms on the window's axis). In a zone window_time is the instant of the wall clock ``__end`` - 1 ms as
    java.time's ``atZone`` reads it (Flink's ``toEpochMills``), which Spark's to_utc_timestamp does."""
    last = from_epoch_ms(F.col("__end") - F.lit(1), t)
    if node.window.zone is not None:
        last = F.to_utc_timestamp(F.timestamp_millis(F.col("__end") - F.lit(1)), node.window.zone)
    out = [F.col(f"`{n}`") for n in node.input.field_names]
    return out + [from_epoch_ms(F.col("__start"), T_PLAIN).alias("window_start"),
                  from_epoch_ms(F.col("__end"), T_PLAIN).alias("window_end"), last.alias("window_time")]


def _session_batch(frame: DataFrame, node: WindowTableFunction, ms: Column, t: DataType) -> DataFrame:
    """SESSION over bounded rows: per partition key, rows in time order start a new session after a gap.

    Windows ``[ts, ts + gap)`` merge when they intersect (touching counts), so a
    row more than ``gap`` after the previous one starts a session.
    """
    from pyspark.sql import Window

    keys = [F.col(f"`{k}`") for k in node.window.partition_keys]
    ordered = Window.partitionBy(*keys).orderBy(F.col("__ms"), F.col(SEQ))
    gap = node.window.size_ms
    framed = frame.withColumn("__ms", ms)
    starts = F.when(F.lag("__ms").over(ordered).isNull() | (F.col("__ms") - F.lag("__ms").over(ordered) > gap),
                    F.lit(1)).otherwise(F.lit(0))
    framed = framed.withColumn("__new", starts).withColumn(
        "__session", F.sum("__new").over(ordered.rowsBetween(Window.unboundedPreceding, Window.currentRow)))
    session = Window.partitionBy(*keys, F.col("__session"))
    framed = framed.withColumn("__start", F.min("__ms").over(session)) \
        .withColumn("__end", F.max("__ms").over(session) + F.lit(gap))
    return framed.select(*_with_window_columns(node, t), SEQ)


def session_stream(tr: "StreamingTranslator", node: WindowTableFunction) -> DataFrame:
    """A SESSION window TVF in a streaming query: its rows buffered per partition key until their session closes."""
    from changeflow.runtime.spark.streaming import upstream_sources

    child = tr._translate(node.input)
    names = node.input.field_names
    kernel = SessionWindowTableFunction(names, node.time_column, node.window.size_ms,
                                        list(node.window.partition_keys), zone=node.window.zone)
    types = node.input.type_map()
    return tr.stateful(child, kernel, list(node.window.partition_keys),
                       {n: kernel_input_dtype(types[n]) for n in names}, node.schema,
                       sources=upstream_sources(node), watermarks=tr.watermark_scans.below())


def window_aggregate_stream(tr: "StreamingTranslator", node: WindowAggregate) -> DataFrame:
    """A window aggregation in a streaming query: its kernel keyed by every grouping column."""
    from changeflow.runtime.spark.streaming import upstream_sources

    from changeflow.runtime.spark.inline_watermarks import carried, inline_assigner

    inline = inline_assigner(node) if tr.control else None
    if inline is not None:   # its watermarks found in the packing stage: one trip to Python fewer per row
        tr.inline_assigners.add(id(inline))
    child = tr._translate(node.input)
    zone = node.window.zone
    kernel = WindowAggregateKernel(list(node.keys), list(node.calls), node.window_end,
                                   input_insert_only=node.input.traits.changelog_mode.insert_only,
                                   fire_at_end=node.window.fires_at_end, zone=zone)
    types = node.input.type_map()
    needed = list(dict.fromkeys(list(node.keys) + [a for c in node.calls for a in c.arg_columns]))
    child = child.select(*[F.col(f"`{n}`") for n in needed], KIND, SEQ, SUB, *carried(child))
    # Time keys (window_start, window_end) as datetime64: the kernel hashes and codes them per row.
    dtypes = {n: kernel_input_dtype(types[n]) for n in needed} | {k: kernel_key_dtype(types[k]) for k in node.keys}
    local, assigner = None, local_window_assigner(tr, node)
    if assigner is not None:   # two phases: partial rows per window, key and side cross the shuffle
        local = LocalWindowAggregate(list(node.keys), list(node.calls), node.window_end, zone=zone)
        kernel = WindowAggregateKernel(list(node.keys), list(node.calls), node.window_end, partial_input=True,
                                       fire_at_end=node.window.fires_at_end, zone=zone)
    # Its state is the open windows' keys only (windows that open and fire within a micro-batch are never
    # stored): one page per bucket, doubling with the rows, not a fixed 64 a batch reads and writes each time.
    inline_watermarks = None
    if inline is not None:
        if assigner is None:
            raise AssertionError("an assigner run in the packing stage without its local window phase")
        inline_watermarks = (assigner, watermark_column(inline)[1])
    return tr.stateful(child, kernel, list(node.keys), dtypes, node.schema, local, sources=upstream_sources(node),
                       watermarks=tr.watermark_scans.below(), pages=1, rows_per_page=WINDOW_ROWS_PER_PAGE,
                       assigner=assigner, inline_watermarks=inline_watermarks)


def local_window_assigner(tr: "StreamingTranslator", node: WindowAggregate) -> int | None:
    """The number of the one watermark assigner below ``node`` if its local window phase is exact, else None.

    The local phase (:mod:`changeflow.kernels.aggregate.local_window`) needs: insert-only
    input and calls whose accumulators merge; one assigner, reached through stateless
    operators only (the packing stage then sees the partition the assigner saw, with its
    watermark rows), and not filtered by a row-time mini-batch (which drops watermarks
    after the shuffle); and sources whose rows keep disjoint ranges of positions per
    partition (:func:`partition_local_positions`), so that the other partitions'
    watermarks are one constant over a partition's rows.
    """
    numbers = tr.watermark_scans.below()
    if len(numbers) != 1 or set(numbers) & set(tr.mini_batch_intervals) or local_window_chain(node) is None:
        return None
    return next(iter(numbers))


def local_window_chain(node: WindowAggregate) -> list[PlanNode] | None:
    """The nodes from ``node``'s input down to its source if they allow a local window phase, else None.

    The part of :func:`local_window_assigner`'s conditions the plan alone decides.
    """
    if not node.input.traits.changelog_mode.insert_only or not LocalWindowAggregate.applies_to(node.calls):
        return None
    below: PlanNode = node.input
    chain: list[PlanNode] = []
    while not isinstance(below, Source):
        if isinstance(below, WindowTableFunction):
            if below.window.kind == "SESSION":
                return None
        elif isinstance(below, Project):
            if calls_current_watermark([e for _, e in below.exprs]):
                return None
        elif isinstance(below, Filter):
            if calls_current_watermark([below.predicate]):
                return None
        elif not isinstance(below, WatermarkAssigner):
            return None
        chain.append(below)
        below = below.input   # pyright: ignore[reportAttributeAccessIssue] - every node above is one-input
    assigners = sum(isinstance(n, WatermarkAssigner) for n in chain)
    return chain if assigners == 1 and partition_local_positions(below) else None


def partition_local_positions(source: Source) -> bool:
    """Whether ``source``'s stream gives each partition of a micro-batch its own range of positions.

    True of the sources staged as files by the job (a file's rows numbered in
    order; Spark splits a file into partitions of consecutive rows) and of the
    datagen and nexmark generators (a partition generates a span of row
    numbers). Not of Kafka (positions are offsets per topic partition), user
    streams (positions per file, or none) and other unbounded connectors.
    """
    from changeflow.runtime.spark.connectors.datagen_source import is_bounded_datagen, is_nexmark

    if source.kind in ("elements", "pandas"):
        return True
    if source.kind == "spark":
        return not source.payload.isStreaming
    if source.kind == "connector":
        payload = source.payload
        if is_bounded_datagen(payload) or is_nexmark(payload):
            return True
        from changeflow.runtime.spark.connectors.connector_sources import is_changelog_source

        return bool(getattr(payload, "bounded", False)) and not is_changelog_source(source)
    return False


WINDOW_ROWS_PER_PAGE = 2048  # rows per state page of a window aggregation or window join before its pages double
