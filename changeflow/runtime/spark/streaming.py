"""Translates a physical plan (:mod:`changeflow.plan.optimizer`) into one Structured Streaming query.

Every operator consumes and produces a changelog DataFrame (the row's columns
plus ``_kind``, ``_seq``, ``_sub``), so stateful operators chain inside one query
in Append mode. Projections and filters are Spark Column expressions; group
aggregations run the pure kernel through :class:`KernelProcessor`.

A stateful operator is two Spark stages: a ``mapInPandas`` over each partition
of the micro-batch packs its rows per hash bucket (:mod:`.packing`), and
``transformWithStateInPandas`` grouped by bucket unpacks them and runs the
kernel. A two-phase aggregation (:mod:`changeflow.plan.rules.agg_phase`) runs its
local phase inside the packing stage, before the shuffle, so only one partial
row per key and partition is packed. Every operator's configuration (changelog
modes, two phases, mini-batch, buffering, state TTL) is read from the plan's
annotations; the translator decides nothing the planner decides.

With ``execution.max-flush-interval`` set, the operators the planner marks as
buffering (the group aggregation) buffer their latest output per key (:mod:`.flush`), and
the query carries control rows (end of input, flush signals: :mod:`.control_rows`)
that the translator drops before the sink.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.kernels.aggregate.local import LocalGroupAggregate
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan.correlate import Correlate
from changeflow.plan.event_time import WatermarkAssigner, WindowAggregate, WindowTableFunction
from changeflow.runtime.spark.event_time import WatermarkScans
from changeflow.plan.window_ops import WindowDeduplicate, WindowRank
from changeflow.plan.over import OverAggregate
from changeflow.plan.flush_policy import FlushPolicy, flushes_from_timers
from changeflow.plan.nodes import (Aggregate, ChangelogNormalize, Deduplicate, Filter, Join, PlanNode, Project, Rank,
                                   Replicate, Sink, Source, TableAggregate, Union, UpsertMaterialize)
from changeflow.plan.optimizer import N, PlannerSettings, planned
from changeflow.runtime.spark.deferred_processor import DeferredProcessor
from changeflow.runtime.spark.columns import compile_expr
from changeflow.runtime.spark.current_watermark import calls_current_watermark, stamped
from changeflow.runtime.spark.signal_use import group_kernel, signals_needed
from changeflow.kernels.current_watermark import COLUMN as CURRENT_WATERMARK_COLUMN
from changeflow.runtime.spark.control_rows import (CONTROL, WATERMARK, ControlFanOut, is_control, source_id,
                                                   without_control)
from changeflow.runtime.spark.inline_watermarks import InlineWatermarks, assigned, carried
from changeflow.runtime.spark.packing import BUCKET, PACKED, Packer
from changeflow.runtime.spark.processor import KernelProcessor
from changeflow.runtime.spark.sources import flush_signal_rows, kernel_input_dtype, stream_frame
from changeflow.runtime.spark.spark_types import struct

_BOOKKEEPING_FIELDS = [
    T.StructField(KIND, T.ByteType(), False),
    T.StructField(SEQ, T.LongType(), False),
    T.StructField(SUB, T.LongType(), False),
]
# What crosses the shuffle into a stateful operator: pickled frames per bucket (see .packing).


@dataclass(frozen=True)
class StreamingSettings:
    mini_batch: bool
    rows_per_batch: int   # source rows per micro-batch (the bundle when mini-batch is on)
    buckets: int          # hash buckets per stateful operator
    pages: int            # state pages per bucket
    agg_phase_strategy: str = "AUTO"  # table.optimizer.agg-phase-strategy
    flush: FlushPolicy | None = None  # execution.max-flush-interval & co (plan/flush_policy.py)
    state_ttl_ms: int = 0  # table.exec.state.ttl; a STATE_TTL hint overrides it per operator
    distinct_agg_split: bool = False  # table.optimizer.distinct-agg.split.enabled
    distinct_agg_split_buckets: int = 1024  # table.optimizer.distinct-agg.split.bucket-num
    watermark_interval_ms: int = 200  # pipeline.auto-watermark-interval
    mini_batch_latency_ms: int = 0    # table.exec.mini-batch.allow-latency (a row-time MiniBatchAssigner's interval)
    mini_batch_size: int = -1         # table.exec.mini-batch.size
    cdc_events_duplicate: bool = False  # table.exec.source.cdc-events-duplicate
    time_zone: str | None = None      # table.local-time-zone (a Table query's; plan/rules/session_time_zone.py)

    def planner(self) -> PlannerSettings:
        """The settings a logical plan is planned with for this query."""
        return PlannerSettings(streaming=True, mini_batch=self.mini_batch,
                               mini_batch_latency_ms=self.mini_batch_latency_ms, mini_batch_size=self.mini_batch_size,
                               agg_phase_strategy=self.agg_phase_strategy,
                               flush=self.flush, state_ttl_ms=self.state_ttl_ms,
                               distinct_agg_split=self.distinct_agg_split,
                               distinct_agg_split_buckets=self.distinct_agg_split_buckets,
                               cdc_events_duplicate=self.cdc_events_duplicate, time_zone=self.time_zone)


def physical_plan(plan: N, settings: StreamingSettings) -> N:
    """``plan`` planned for a streaming query with ``settings`` (as it is if it is planned already)."""
    return planned(plan, settings.planner())


class StreamingTranslator:
    def __init__(self, spark: SparkSession, settings: StreamingSettings, workdir: str) -> None:
        self.spark = spark
        self.settings = settings
        self.workdir = workdir
        self._sources = 0
        self._scan_directories: dict[tuple, str] = {}
        self.root: PlanNode | None = None  # the plan translate() was given (None: operators translated one by one)
        # Set by translate() from the whole plan; a translator used operator by operator has none.
        self.watermark_scans = WatermarkScans()
        self.mini_batch_intervals: dict[int, int] = self.watermark_scans.mini_batch_intervals
        self.control = False
        self.flush_signal_dirs: list[str] = []  # signal directories of unbounded Spark streams (.flush_signals)
        self.keep_watermarks = False  # set before translate(): watermark rows reach the sink (jobs.py)
        self.inline_assigners: set[int] = set()  # ids of assigners a packing stage runs (.inline_watermarks)

    def translate(self, node: PlanNode) -> DataFrame:
        """The changelog frame of ``node``'s physical plan (a logical plan is planned first)."""
        node = physical_plan(node, self.settings)
        flush = node.traits.flush
        # Control rows (end of input, flush signals) flow through the query when an
        # operator acts on them; they never reach the sink.
        # Watermarks travel as control rows too (runtime/spark/event_time.py).
        # Each scan's watermark assigner is numbered as translation reaches it (event_time.WatermarkScans).
        self.watermark_scans = WatermarkScans(node)
        self.mini_batch_intervals = self.watermark_scans.mini_batch_intervals
        # Only where an operator acts on them (signal_use): an assigner nothing reads costs a Python
        # stage per scan and a fan-out of every signal to every bucket, and changes no result.
        # A sink that reads the watermark (a partition-time partition commit) keeps them too.
        self.control = flush is not None or signals_needed(node) or self.keep_watermarks
        # A buffering bucket flushes from a timer, which only fires in a micro-batch: an
        # idle long-running query needs Spark's no-data batches for flushes on idle
        # input and interval boundaries (see runtime/spark/flush.py); an operator
        # with a state TTL sweeps idle keys from one too (ttl_sweep sets this). Not
        # set here: with them an availableNow query never ends.
        self.wants_no_data_batches = flushes_from_timers(flush)
        self.root = node
        self._source_count = _count_sources(node)
        self.flush_signal_dirs: list[str] = []  # signal directories of unbounded Spark streams (.flush_signals)
        frame = self._translate(node)
        if self.control and self.keep_watermarks:  # a sink that reads the watermark (partition commit)
            return frame.where(~is_control(F.col(KIND)) | (F.col(KIND) >= WATERMARK))
        return without_control(frame) if self.control else frame

    def _translate(self, node: PlanNode) -> DataFrame:
        self.watermark_scans.enter()   # the watermark assigners this node's translation reaches
        try:
            return self._translate_node(node)
        finally:
            self.watermark_scans.leave()

    def _translate_node(self, node: PlanNode) -> DataFrame:
        if isinstance(node, Source):
            self._sources += 1
            # Scans of one table with the same columns read the same staged files: a bounded connector table
            # (a JSON file, say) is then decoded once per query, not once per scan (Nexmark's joins scan it twice).
            directory = os.path.join(self.workdir, f"source-{self._sources}")
            if node.kind != "datastream":
                # Each scan has a connector payload of its own, built from the one catalog table.
                scanned = getattr(node.payload, "table", node.payload)
                directory = self._scan_directories.setdefault(
                    (node.name, node.kind, node.schema, node.primary_key, type(node.payload), id(scanned)), directory)
            if node.kind == "datastream":  # a DataStream converted to a Table: its graph runs inside this query
                from changeflow.runtime.spark.bridge import stream_changes
                return self._distinct_positions(stream_changes(self, node, directory), self._sources - 1)
            frame = stream_frame(self.spark, node, directory, self.settings.rows_per_batch,
                                 end_of_input=self.control)
            if node.kind == "spark" and node.payload.isStreaming and flushes_from_timers(node.traits.flush):
                # Read up to what is available, it would end with the last updates buffered (.flush_signals).
                signals = os.path.join(directory, "flush-signals")
                frame = frame.unionByName(flush_signal_rows(self.spark, node, signals))
                self.flush_signal_dirs.append(signals)
            return self._distinct_positions(frame, self._sources - 1)
        if isinstance(node, Project):
            child = self._translate(node.input)
            if calls_current_watermark([e for _, e in node.exprs]):
                child = stamped(self, node.input, child)
            types = node.input.type_map()
            cols = [compile_expr(e, types).alias(n) for n, e in node.exprs]
            return child.select(*cols, KIND, SEQ, SUB, *carried(child))
        if isinstance(node, Filter):
            child = self._translate(node.input)
            watermarked = calls_current_watermark([node.predicate])
            if watermarked:
                child = stamped(self, node.input, child)
            predicate = compile_expr(node.predicate, node.input.type_map())
            kept = child.where(predicate | (F.col(KIND) >= CONTROL) if self.control else predicate)
            return kept.drop(CURRENT_WATERMARK_COLUMN) if watermarked else kept
        if isinstance(node, Aggregate):
            return self._aggregate(node)
        if isinstance(node, (WatermarkAssigner, WindowTableFunction, WindowAggregate)):
            return self._event_time(node)
        if isinstance(node, OverAggregate):
            from changeflow.runtime.spark.over import over_aggregate_stream
            return over_aggregate_stream(self, node)
        if isinstance(node, TableAggregate):
            from changeflow.runtime.spark.user_aggregates import table_aggregate_stream
            return table_aggregate_stream(self, node)
        if isinstance(node, Union):
            names = [n for n, _ in node.schema]
            # Columns match by position: every input has the union's arity (the planner checks).
            renamed = [self._translate(child).select(
                *[F.col(f"`{old}`").alias(new) for old, new in zip(child.field_names, names, strict=True)],
                KIND, SEQ, SUB) for child in node.inputs]
            return functools.reduce(DataFrame.unionAll, renamed)
        if isinstance(node, Replicate):
            from changeflow.runtime.spark.replicate import replicate_stream
            return replicate_stream(self._translate(node.input), node, self.control, [KIND, SEQ, SUB])
        if isinstance(node, Join):
            from changeflow.runtime.spark.join import join_stream
            return join_stream(self, node)
        if isinstance(node, (WindowRank, WindowDeduplicate)):
            from changeflow.runtime.spark.window_ops import window_rank_stream
            return window_rank_stream(self, node)
        if isinstance(node, (Deduplicate, Rank, ChangelogNormalize)):
            from changeflow.runtime.spark.rank import rank_stream
            return rank_stream(self, node)
        if isinstance(node, UpsertMaterialize):
            from changeflow.runtime.spark.materializer import upsert_materialize_stream
            return upsert_materialize_stream(self, node)
        if isinstance(node, Sink):
            return self._translate(node.input)  # the job writes the changes (runtime/spark/jobs.py)
        if isinstance(node, Correlate):
            from changeflow.runtime.spark.correlate import correlate_stream
            return correlate_stream(self, node)
        raise TypeError(f"no streaming translation for {type(node).__name__}")

    def _event_time(self, node: PlanNode) -> DataFrame:
        from changeflow.runtime.spark import event_time

        if isinstance(node, WatermarkAssigner):
            child = self._translate(node.input)
            if not self.control:  # no operator of the query acts on watermarks (signal_use)
                return child
            if id(node) in self.inline_assigners:   # its window aggregation's packing stage runs it
                self.watermark_scans.number(node)
                return assigned(child, node)
            return event_time.watermark_stream(child, node, self.watermark_scans.number(node),
                                               self.settings.watermark_interval_ms)
        if isinstance(node, WindowTableFunction):
            if not node.window.aligned:
                return event_time.session_stream(self, node)
            child = self._translate(node.input)
            return event_time.window_frame(child, node, [KIND, SEQ, SUB, *carried(child)])
        assert isinstance(node, WindowAggregate)
        return event_time.window_aggregate_stream(self, node)

    def _distinct_positions(self, frame: DataFrame, index: int) -> DataFrame:
        """Give the rows of the ``index``-th source scan positions no other scan of the query uses.

        Every source numbers its rows from 0; where several feed one operator (a
        join, a union, a self-join's two scans) equal ``_seq`` stamps would make
        the order of their changes undefined. Within micro-batch ``b`` (rows
        ``b*R .. b*R+R-1`` of every changeflow source, ``R`` rows per batch) scan
        ``i`` takes the block ``i*R ..`` after the blocks of scans ``0..i-1``: a
        micro-batch of several sources is seen source by source, as Flink sees
        bounded sources that each emit their rows at once, and positions still
        grow from one micro-batch to the next.
        """
        n = self._source_count
        if n <= 1:
            return frame
        r = self.settings.rows_per_batch
        seq = F.col(SEQ)
        stamped = F.floor(seq / r).cast("long") * (r * n) + index * r + F.pmod(seq, F.lit(r))
        # Signals (end of input, flush) carry negative marker stamps: keep them. A watermark row's
        # position is a stamp of its source like a data row's, and moves with them.
        return frame.withColumn(SEQ, F.when(F.col(KIND) == CONTROL, seq).otherwise(stamped).cast("long"))

    def changelog_struct(self, out_schema) -> T.StructType:
        """The Spark schema of a stateful operator's output: ``out_schema`` plus the bookkeeping columns."""
        fields = struct(out_schema).fields
        if self.control:  # control rows hold nulls in every column
            fields = [T.StructField(f.name, f.dataType, True) for f in fields]
        return T.StructType(fields + _BOOKKEEPING_FIELDS)

    def stateful(self, child: DataFrame, kernel, key_columns: list[str], dtypes: dict[str, str],
                 out_schema, local=None, *, idempotent_output: str | None = None, flush: FlushPolicy | None = None,
                 sources: frozenset = frozenset(), rows_per_page: int | None = None,
                 watermarks: frozenset = frozenset(), pages: int | None = None,
                 assigner: int | None = None, output_struct: T.StructType | None = None,
                 emit_columns: list[str] | None = None,
                 inline_watermarks: tuple[int, int | None] | None = None) -> DataFrame:
        """Run ``kernel`` (``process(batch, state) -> changes``) keyed by ``key_columns`` over ``child``.

        ``child`` holds exactly the columns the kernel reads plus the bookkeeping
        columns; ``dtypes`` gives the pandas dtype of each (:func:`kernel_input_dtype`);
        ``out_schema`` is the kernel output's plan schema (bookkeeping is appended).

        ``idempotent_output`` declares the kernel's output idempotent per key
        (``"changelog"`` for a changelog keyed by ``key_columns``, ``"append"`` for
        insert-only records whose latest per key supersedes the earlier ones);
        ``flush`` is the policy of an operator the planner marks as buffering: its
        output is then buffered and flushed (:mod:`.flush`). ``sources`` are the
        ids (:func:`source_id`) of the sources upstream, whose end of input ends the operator's input;
        ``watermarks`` the ids of the watermark assigners upstream of an event-time kernel. ``rows_per_page``
        lets the state's page count grow with its rows (:class:`PagedKeyedState`),
        from ``pages`` per bucket (default: the settings'). ``assigner`` makes ``local`` a local window phase
        reading that watermark assigner's watermarks (:class:`Packer`). ``output_struct`` is the
        Spark schema of what goes out when it is not ``out_schema`` plus bookkeeping,
        and ``emit_columns`` its columns among the processor's (DataStream records:
        ``out_schema`` is then the kernel's output columns, types unused). ``inline_watermarks``, the
        number of the watermark assigner whose watermark values ``child`` carries and the shift to add to
        them (:func:`.event_time.watermark_column`), runs that assigner in the packing stage
        (:mod:`.inline_watermarks`).
        """
        flush = flush if idempotent_output is not None else None
        sweep = self.ttl_sweep(kernel)
        if flush is not None and sweep:
            # The bucket's one timer either flushes its buffer or sweeps; both are not implemented.
            raise NotImplementedError(
                f"a state TTL (table.exec.state.ttl or a STATE_TTL hint) on an operator that buffers its output "
                f"for execution.max-flush-interval (keyed by {', '.join(key_columns)}) is not supported in an "
                f"unbounded query")
        packer = Packer(list(key_columns), self.settings.buckets, child.columns, dtypes, local, assigner)
        if self.control:
            packer = ControlFanOut(packer, child.columns, self.settings.buckets,
                                   ticks=flushes_from_timers(flush))
        if inline_watermarks is not None:
            number, shift = inline_watermarks
            packer = InlineWatermarks(packer, child.columns, number, self.settings.watermark_interval_ms, shift)
        packed = child.mapInPandas(packer, PACKED)
        names = [n for n, _ in out_schema]
        processor = KernelProcessor(kernel, list(key_columns), pages or self.settings.pages, names, flush, sources,
                                    changelog=idempotent_output != "append", control=self.control,
                                    rows_per_page=rows_per_page, sweep=sweep, watermarks=watermarks,
                                    mini_batch_intervals=self.mini_batch_intervals, emit_columns=emit_columns)
        return packed.groupBy(BUCKET).transformWithStateInPandas(
            statefulProcessor=DeferredProcessor(processor),
            outputStructType=output_struct if output_struct is not None else self.changelog_struct(out_schema),
            outputMode="Append",
            timeMode=processor.time_mode,
        )

    def ttl_sweep(self, kernel) -> bool:
        """Decide whether ``kernel``'s state TTL sweep (``sweep_interval_ms``) runs from timers; return it.

        It does where timers cannot keep the query from ending; the query then
        asks for no-data micro-batches, so an idle query sweeps too. With no-data
        micro-batches on (Spark's default; changeflow's session turns them off), a
        processing-time transformWithState asks for another batch forever, so a
        query over bounded input (``availableNow``) would never end: its operators
        then run without the sweep (a key's expired state is still dropped when the
        key is next accessed, and the kernel reads the wall clock). A query started
        by hand (``to_spark()``) needs ``spark.sql.streaming.noDataMicroBatches.enabled``
        true for its sweeps to run while it is idle. Spark refuses to change an
        operator's time mode on restart, so a TTL checkpoint written without the
        sweep cannot be resumed with it (``STATE_STORE_INVALID_CONFIG_AFTER_RESTART``).
        """
        if kernel.sweep_interval_ms is None:
            return False
        from changeflow.runtime.spark.connectors.connector_sources import trigger_interval_ms

        setting = self.spark.conf.get("spark.sql.streaming.noDataMicroBatches.enabled", "true")
        no_data = (setting or "true").strip().lower()   # typed Optional; unset gives the default
        unbounded = self.root is not None and trigger_interval_ms(self.root) is not None
        if no_data == "true" and not unbounded:
            return False
        self.wants_no_data_batches = True
        return True

    def _aggregate(self, node: Aggregate) -> DataFrame:
        child = self._translate(node.input)
        traits = node.traits
        kernel = group_kernel(node)
        local = LocalGroupAggregate(list(node.keys), list(node.calls)) if traits.two_phase else None
        types = node.input.type_map()
        # Ship only what the kernels read: every column crosses into Python.
        needed = list(dict.fromkeys(list(node.keys) + [a for c in node.calls for a in c.arg_columns]))
        child = child.select(*[F.col(f"`{n}`") for n in needed], KIND, SEQ, SUB)
        return self.stateful(child, kernel, list(node.keys), {n: kernel_input_dtype(types[n]) for n in needed},
                             node.schema, local, idempotent_output="changelog",
                             flush=traits.flush if traits.buffers else None, sources=upstream_sources(node))


def upstream_sources(node: PlanNode) -> frozenset:
    """The ids (:func:`source_id`) of the sources below ``node``."""
    if isinstance(node, Source):
        if node.kind == "datastream":  # ends when every source of its graph has ended
            from changeflow.runtime.spark.bridge import datastream_source_ids
            return datastream_source_ids(node)
        return frozenset({source_id(node.name)})
    return frozenset().union(*[upstream_sources(child) for child in node.inputs])


def _count_sources(node: PlanNode) -> int:
    """Source scans the translation makes: a source reached by two paths is scanned twice."""
    return 1 if isinstance(node, Source) else sum(_count_sources(c) for c in node.inputs)
