"""Runs DataStream jobs on Spark: one Structured Streaming query (streaming mode) or Spark batch.

Records cross Spark as the pickled record ``_value`` and the Table path's
bookkeeping ``_kind``, ``_seq``, ``_sub`` (:mod:`changeflow.kernels.keyed.records`); typed
columns would need every user function's output type, which PyFlink does not
require. Every Python call handles a whole partition or hash bucket of a
micro-batch:

- consecutive stateless operators (and the key selector of a following keyed
  operator) run fused in one ``mapInPandas`` (:class:`~changeflow.kernels.chain.ChainRunner`);
- a keyed operator in streaming mode runs its kernel through the engine's
  stateful path: the fused chain runs as the ``local`` step of
  :class:`~.packing.Packer` before the shuffle, then
  ``transformWithStateInPandas`` by hash bucket with paged state
  (:class:`~.processor.KernelProcessor`);
- in batch mode a keyed operator shuffles by key (``repartition``) and folds
  each partition's keys in one ``mapInPandas`` with in-memory state: the
  kernel sees all of a key's input at once and a reduce emits only its final
  value, as Flink's batch execution does.

Every sink of a job is one branch of a single query, told apart by a
``_sink`` column; the driver sorts each micro-batch's records by stamp and
hands them to the sinks in order.

A cache node (``DataStream.cache()``, batch mode) is the persisted records of
its input, or, once an earlier job of the environment created it, those
records read back (:mod:`.stream_cache`).

Sources become records in :mod:`.record_sources`; keyed operators run in the
processors of :mod:`.record_processor`; operators that output only after end
of input (FLIP-331) in :mod:`.end_of_stream`.

**Flush interval (FLIP-365).** With ``execution.max-flush-interval`` set, a
streaming job carries control rows, as the Table runtime's do
(:mod:`.control_rows`): every bounded source ends
with an end-of-input control row in a micro-batch of its own, stateless
chains pass them through, every keyed operator's packing stage fans them out to
all its buckets (the same :class:`~.control_rows.ControlFanOut` as a Table
job's), and they are dropped before the sinks. A keyed operator whose output is idempotent (``node.attributes()``: keyed
``reduce``/``sum``/``min``/``max``/``min_by``/``max_by``, a function whose
``is_output_idempotent()`` is True) runs its kernel through
:class:`~changeflow.kernels.keyed.buffered.ChangelogRecords` with the engine's
flush policy: the latest record per key is buffered and emitted on an interval
boundary, on idle input, at end of input or when an upstream buffer flushed,
exactly as the Table API's group aggregation (:mod:`.flush`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from changeflow.connectors.sink_job import SinkJob
from changeflow.kernels.chain import ChainRunner
from changeflow.kernels.keyed.buffered import KEY_COLUMNS, OUTPUT_COLUMNS, ChangelogRecords
from changeflow.kernels.keyed.process import KeyedProcess
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.keyed.records import KEY, RECORD_COLUMNS, VALUE, loads
from changeflow.kernels.keyed.reduce import KeyedReduce
from changeflow.kernels.keyed.timestamps import TimestampAssigning
from changeflow.kernels.window.processing_time import window_kernel
from changeflow.plan.streams import nodes as graph
from changeflow.plan.streams.cache import CacheNode, CacheRegistry
from changeflow.plan.streams.nodes import (EventWindowNode, LateDataNode, SideOutputNode, TimestampsNode, all_nodes,
                                           chain_under, key_op, side_output_ops, timestamp_assigners,
                                           unassigned_paths)
from changeflow.plan.streams.rules import (buffering, check_end_of_stream_inputs, runs_as_batch,
                                           runs_at_end_of_stream)
from changeflow.runtime.spark import end_of_stream
from changeflow.runtime.spark.deferred_processor import DeferredProcessor
from changeflow.runtime.spark.control_rows import MAX_ASSIGNERS, WATERMARK, ControlFanOut, is_control, without_control
from changeflow.runtime.spark.errors import readable_errors, worker_note
from changeflow.plan.flush_policy import FlushPolicy, flushes_from_timers
from changeflow.runtime.spark.flush_signals import run_to_end
from changeflow.runtime.spark.job_directory import committed_batches, job_directory
from changeflow.runtime.spark.packing import BUCKET, PACKED, Packer
from changeflow.runtime.spark.query_settings import for_job
from changeflow.runtime.spark.query_start import start_query
from changeflow.runtime.spark.record_processor import BatchKeyed, RecordKernelProcessor
from changeflow.runtime.spark.record_sources import KEYED, RECORDS, source_records
from changeflow.runtime.spark.stream_cache import JobCaches

SINK = "_sink"
_OBJECT = {KEY: "object", VALUE: "object", KIND: "int8", SEQ: "int64", SUB: "int64"}


@dataclass(frozen=True)
class DataStreamSettings:
    streaming: bool
    rows_per_batch: int   # source records per micro-batch (streaming)
    buckets: int          # hash buckets per keyed operator
    pages: int = 64       # state pages per bucket
    checkpoint_root: str | None = None
    flush: FlushPolicy | None = None  # execution.max-flush-interval & co (streaming only)
    # Builds the context user functions' open() gets: the API's RuntimeContext, given by the front end.
    runtime_context: Any = None
    # The Table runtime's StreamingSettings (a callable) for Table plans converted inside the job (.bridge).
    table_settings: Any = None


class DataStreamJob:
    """Translates the graph under a job's sinks and runs it."""

    def __init__(self, spark: SparkSession, settings: DataStreamSettings, caches: CacheRegistry | None = None) -> None:
        self.spark = spark
        self.settings = settings
        self.caches = JobCaches(caches)  # DataStream.cache(): see .stream_cache
        self._source_numbers: dict[int, int] = {}
        self._frames: dict[int, DataFrame] = {}
        self._keyed_frames: dict[int, DataFrame] = {}  # keyed operators' outputs (an event-time window's is read twice)
        self.control = False

    def run(self, outputs: list[tuple[graph.Node, Any]], job_name: str | None = None) -> None:
        """Runs the job whose sinks are ``outputs`` (node, sink with ``write(records)``).

        A streaming job with a ``job_name`` and a checkpoint root keeps its
        checkpoint there and resumes from it when run again (:mod:`.job_directory`).
        """
        if not outputs:
            raise RuntimeError("No operators defined in streaming topology. Cannot execute.")
        if self.settings.streaming and runs_as_batch([node for node, _ in outputs]):
            self.settings = replace(self.settings, streaming=False, flush=None)
        resumable = job_name if self.settings.streaming else None
        roots = [node for node, _ in outputs]
        # A failure in Spark is raised as the changeflow error inside it (.errors).
        with job_directory(self.settings.checkpoint_root, resumable, prefix="changeflow-ds-") as workdir, \
                readable_errors(lambda: [n.name for n in all_nodes(roots) if not isinstance(n, graph.SourceNode)]):
            try:
                with for_job(self.spark, starts_queries=True):  # changeflow's settings on a user's session
                    frame = self.frame([node for node, _ in outputs], workdir)
                    table = None if self.settings.streaming else frame.toArrow()
                sinks = [sink for _, sink in outputs]
                if table is None:
                    self._run_streaming(frame, sinks)
                else:
                    _deliver(table, sinks)
                self.caches.commit()
            except BaseException:
                self.caches.abandon()
                raise

    def frame(self, nodes: list[graph.Node], workdir: str) -> DataFrame:
        """The job's records for the sinks over ``nodes``: ``(_value, _kind, _seq, _sub, _sink)``, ``_sink`` the
        node's index.

        Bounded sources read as streams are written under ``workdir``; in
        streaming mode the result is a streaming DataFrame the caller may run
        with any trigger (:meth:`run` uses ``availableNow``).
        """
        self.workdir = workdir
        check_end_of_stream_inputs(nodes)
        for node in nodes:
            for source in graph.sources(node):
                self._source_numbers.setdefault(source.id, len(self._source_numbers))
        # Control records flow through the query only when some operator buffers its output or
        # event time is used (watermarks, and the end of input that fires every event-time window).
        self.control = self.settings.streaming and any(
            buffering(n, self.settings.flush) is not None or isinstance(n, (TimestampsNode, EventWindowNode))
            for n in all_nodes(nodes))
        # Each assign_timestamps_and_watermarks's number, by its place in the graph (stable on resume), and
        # one more for the paths without one (.control_rows: a watermark record's _kind holds the number).
        assigners = sorted((n for n in all_nodes(nodes) if isinstance(n, TimestampsNode)), key=lambda n: n.id)
        if len(assigners) >= MAX_ASSIGNERS:
            raise NotImplementedError(f"a job with more than {MAX_ASSIGNERS - 1} assign_timestamps_and_watermarks "
                                      f"({len(assigners)}) is not supported")
        self._assigner_ids = {n.id: i for i, n in enumerate(assigners)}
        self._no_assigner = len(assigners)
        self.flush_signal_dirs: list[str] = []  # of unbounded Spark streams (.flush_signals)
        frames = [self._records(self.translate(node)).select(*RECORD_COLUMNS, F.lit(i).alias(SINK))
                  for i, node in enumerate(nodes)]
        frame = frames[0]
        for other in frames[1:]:
            frame = frame.unionAll(other)
        return frame

    def _records(self, frame: DataFrame) -> DataFrame:
        """``frame`` without control rows (they never reach a sink)."""
        return without_control(frame) if self.control else frame

    def _run_streaming(self, frame: DataFrame, sinks: list[Any]) -> None:
        delivered = SinkJob.in_directory(self.workdir, resumed=bool(committed_batches(self.workdir)))
        for sink in sinks:  # a sink that makes a repeated micro-batch replace its first write (FileSink)
            if callable(getattr(sink, "open_job", None)):
                sink.open_job(delivered)

        def deliver(batch: DataFrame, batch_id: int) -> None:
            # Each micro-batch reaches the sinks before Spark commits it. A resumed job runs its
            # uncommitted micro-batch again: skipped when the sinks had it (recorded after
            # delivery), so only a job killed between delivering and recording repeats one.
            delivered.deliver_once(batch_id, lambda: _deliver(batch.toArrow(), sinks, batch_id))

        # Raises the query's error (a user function's, named) if it failed; an unbounded Spark
        # stream read up to what is available ends with a flush run (.flush_signals).
        run_to_end(lambda: start_query(frame.writeStream.foreachBatch(deliver)
                                       .option("checkpointLocation", os.path.join(self.workdir, "checkpoint"))
                                       .trigger(availableNow=True)), self.flush_signal_dirs)

    # --- translation --------------------------------------------------------------------
    def translate(self, node: graph.Node) -> DataFrame:
        """A DataFrame of ``(_value, _kind, _seq, _sub)`` records for ``node``."""
        if node.id not in self._frames:
            self._frames[node.id] = self._translate(node)
        return self._frames[node.id]

    def _translate(self, node: graph.Node) -> DataFrame:
        if runs_at_end_of_stream(node):  # FLIP-331: batch algorithms, also in streaming jobs
            return end_of_stream.translate(self, node)
        if isinstance(node, graph.SourceNode):
            return source_records(self, node)
        if isinstance(node, graph.Stateless):
            base, ops = chain_under(node)
            return self.translate(base).mapInPandas(ChainRunner(ops, worker_note), RECORDS)
        if isinstance(node, graph.UnionNode):
            frames = [self.translate(s) for s in node.streams]
            out = frames[0]
            for f in frames[1:]:
                out = out.unionAll(f)
            return out
        if isinstance(node, TimestampsNode):
            base, ops = chain_under(node.input)
            kind = WATERMARK + self._assigner_ids[node.id] if self.control else None  # batch: no control rows
            runner = TimestampAssigning(node.strategy, kind,
                                        ChainRunner(ops, worker_note) if ops else None, node.name,
                                        self.settings.runtime_context)
            return self.translate(base).mapInPandas(runner, RECORDS)
        if isinstance(node, EventWindowNode):  # its main output: the late records go to LateDataNode
            return self._keyed(node).where(is_control(F.col(KIND)) | ~_late())  # a control row's _value is null
        if isinstance(node, LateDataNode):
            assert isinstance(node.input, EventWindowNode)  # side_output_late_data's window (datastream.side_output)
            raw = self._keyed(node.input)
            late = _late()
            restored = F.when(late, F.col(VALUE).substr(F.lit(2), F.lit(2**31 - 1))).otherwise(F.col(VALUE))
            return raw.where(late | is_control(F.col(KIND))).select(restored.alias(VALUE), KIND, SEQ, SUB)
        if isinstance(node, graph.KeyedNode):
            return self._keyed(node)
        if isinstance(node, SideOutputNode):
            base, ops = chain_under(node.input)
            return self.translate(base).mapInPandas(ChainRunner(side_output_ops(ops, node.tag), worker_note), RECORDS)
        if isinstance(node, CacheNode):
            if self.settings.streaming:
                raise RuntimeError(f"{node.name}: DataStream.cache() is supported in batch mode only")
            return self.caches.translate(node, lambda: self.translate(node.input))
        raise TypeError(f"no Spark translation for {type(node).__name__}")

    def _keyed(self, node: graph.KeyedNode) -> DataFrame:
        if node.id not in self._keyed_frames:
            self._keyed_frames[node.id] = self._keyed_frame(node)
        return self._keyed_frames[node.id]

    def _keyed_frame(self, node: graph.KeyedNode) -> DataFrame:
        base, ops = chain_under(node.input)
        runner = ChainRunner(ops + [key_op(node.key_selector, node.name, self.settings.runtime_context)], worker_note)
        control = self.control
        context = self.settings.runtime_context
        if isinstance(node, EventWindowNode):
            kernel: Any = window_kernel(node.spec, node.windows, node.name, make_window=node.make_window,
                                        lateness=node.lateness, late_tag=node.late_tag and node.late_tag.tag_id,
                                        trigger=node.trigger, runtime_context=context)
        else:
            kernel_type = KeyedReduce if isinstance(node, graph.KeyedReduceNode) else KeyedProcess
            kernel = kernel_type(node.function, node.name, with_keys=control, runtime_context=context)
        child = self.translate(base)
        if not self.settings.streaming:
            keyed = child.mapInPandas(runner, KEYED).repartition(F.col(KEY))
            return keyed.mapInPandas(BatchKeyed(kernel), RECORDS)
        packer = Packer([KEY], self.settings.buckets, child.columns, _OBJECT, local=runner)
        flush = buffering(node, self.settings.flush) if control else None
        if control:
            packer = ControlFanOut(packer, child.columns, self.settings.buckets, ticks=flushes_from_timers(flush))
            if not isinstance(node, EventWindowNode):  # a window's records are not buffered: no changelog
                kernel = ChangelogRecords(kernel)
        packed = child.mapInPandas(packer, PACKED)
        sources = frozenset(self._source_numbers[s.id] for s in graph.sources(node))
        processor = RecordKernelProcessor(kernel, KEY_COLUMNS, self.settings.pages, OUTPUT_COLUMNS, flush, sources,
                                          changelog=False, control=control, watermarks=self._watermarks(node))
        return packed.groupBy(BUCKET).transformWithStateInPandas(
            statefulProcessor=DeferredProcessor(processor), outputStructType=RECORDS, outputMode="Append",
            timeMode=processor.time_mode)


    def _watermarks(self, node: graph.Node) -> frozenset:
        """The watermark ids a keyed operator waits for: the nearest assigner on every path below it, and,
        when a path has none, one that never comes (its watermark stays Long.MIN_VALUE until the end of input)."""
        ids = {self._assigner_ids[a.id] for a in timestamp_assigners(node)}
        if ids and unassigned_paths(node):
            ids.add(self._no_assigner)
        return frozenset(ids)


def _late() -> Any:
    """Whether a record of an event-time window's output is a late record bound for the side output."""
    from changeflow.kernels.window.event_time import LATE

    return F.hex(F.col(VALUE).substr(F.lit(1), F.lit(1))) == F.lit(LATE.hex().upper())


def _deliver(table: pa.Table, sinks: list[Any], batch_id: int | None = None) -> None:
    """Hands one micro-batch's records to each sink, in stamp order (with its id to a sink having write_batch)."""
    if table.num_rows == 0:
        return
    table = table.sort_by([(SINK, "ascending"), (SEQ, "ascending"), (SUB, "ascending")])
    sink_ids = table.column(SINK).to_numpy()
    values = table.column(VALUE).to_pylist()
    for i, sink in enumerate(sinks):
        chosen = np.flatnonzero(sink_ids == i)
        if len(chosen):
            records = [loads(values[j]) for j in chosen]
            if callable(getattr(sink, "write_batch", None)):
                sink.write_batch(records, batch_id)
            else:
                sink.write(records)
