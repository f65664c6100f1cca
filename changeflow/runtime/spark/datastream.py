"""Runs DataStream jobs on Spark: one Structured Streaming query (streaming mode) or Spark batch.

Records cross Spark as two binary columns, the pickled record ``_value`` and
its order stamp ``_ord`` (:mod:`changeflow.kernels.keyed.records`); typed
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

**Flush interval (FLIP-365).** With ``execution.max-flush-interval`` set, a
streaming job carries control records (an empty ``_value``, the signal in
``_ord``: :mod:`changeflow.kernels.keyed.records`): every bounded source ends
with an end-of-input control record in a micro-batch of its own, stateless
chains pass them through, every keyed operator's packing stage fans them out to
all its buckets (:class:`RecordControlFanOut`), and they are dropped before the
sinks. A keyed operator whose output is idempotent (``node.attributes()``: keyed
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
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.common.row import Row
from changeflow.kernels.chain import ChainRunner
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.keyed.buffered import KEY_COLUMNS, OUTPUT_COLUMNS, ChangelogRecords
from changeflow.kernels.keyed.process import KeyedProcess
from changeflow.kernels.keyed.records import (CONTROL_VALUE, KEY, ORD, VALUE, control_mask, control_stamp, dumps, loads,
                                              parse_control_stamp, source_stamp)
from changeflow.kernels.keyed.reduce import KeyedReduce
from changeflow.plan.streams import nodes as graph
from changeflow.plan.streams.cache import CacheNode, CacheRegistry
from changeflow.plan.streams.nodes import SideOutputNode, all_nodes, chain_under, key_op, side_output_ops
from changeflow.plan.streams.rules import buffer_reason, check_end_of_stream_inputs, runs_as_batch, runs_at_end_of_stream
from changeflow.runtime.spark import end_of_stream
from changeflow.runtime.spark.stream_cache import JobCaches
from changeflow.runtime.spark.control_rows import CONTROL, END_OF_INPUT, FLUSH, ControlFanOut, control_of
from changeflow.runtime.spark.errors import readable_errors, worker_note
from changeflow.runtime.spark.flush import BucketBuffer, BucketFlusher, FlushPolicy, MemoryFlusher, flushes_from_timers
from changeflow.runtime.spark.flush_signals import run_to_end, signal_stream
from changeflow.connectors import filestore
from changeflow.connectors.sink_job import SinkJob
from changeflow.runtime.spark.job_directory import already_written, committed_batches, job_directory, require_shared
from changeflow.runtime.spark.packing import BUCKET, PACKED, Packer
from changeflow.runtime.spark.processor import KernelProcessor, operator_name
from changeflow.runtime.spark.query_start import start_query

SINK = "_sink"
_RECORDS = T.StructType([T.StructField(VALUE, T.BinaryType(), False), T.StructField(ORD, T.BinaryType(), False)])
_KEYED = T.StructType([T.StructField(KEY, T.BinaryType(), False)] + _RECORDS.fields)
_OBJECT = {KEY: "object", VALUE: "object", ORD: "object"}


@dataclass(frozen=True)
class DataStreamSettings:
    streaming: bool
    rows_per_batch: int   # source records per micro-batch (streaming)
    buckets: int          # hash buckets per keyed operator
    pages: int = 64       # state pages per bucket
    checkpoint_root: str | None = None
    flush: FlushPolicy | None = None  # execution.max-flush-interval & co (streaming only)


class DataStreamJob:
    """Translates the graph under a job's sinks and runs it."""

    def __init__(self, spark: SparkSession, settings: DataStreamSettings, caches: CacheRegistry | None = None) -> None:
        self.spark = spark
        self.settings = settings
        self.caches = JobCaches(caches)  # DataStream.cache(): see .stream_cache
        self._source_numbers: dict[int, int] = {}
        self._frames: dict[int, DataFrame] = {}
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
                frame = self.frame([node for node, _ in outputs], workdir)
                sinks = [sink for _, sink in outputs]
                if self.settings.streaming:
                    self._run_streaming(frame, sinks)
                else:
                    _deliver(frame.toArrow(), sinks)
                self.caches.commit()
            except BaseException:
                self.caches.abandon()
                raise

    def frame(self, nodes: list[graph.Node], workdir: str) -> DataFrame:
        """The job's records for the sinks over ``nodes``: ``(_value, _ord, _sink)``, ``_sink`` the node's index.

        Bounded sources read as streams are written under ``workdir``; in
        streaming mode the result is a streaming DataFrame the caller may run
        with any trigger (:meth:`run` uses ``availableNow``).
        """
        self.workdir = workdir
        check_end_of_stream_inputs(nodes)
        for node in nodes:
            for source in graph.sources(node):
                self._source_numbers.setdefault(source.id, len(self._source_numbers))
        # Control records flow through the query only when some operator buffers its output.
        self.control = self.settings.streaming and any(
            buffering(n, self.settings.flush) is not None for n in all_nodes(nodes))
        self.flush_signal_dirs: list[str] = []  # of unbounded Spark streams (.flush_signals)
        frames = [self._records(self.translate(node)).select(VALUE, ORD, F.lit(i).alias(SINK))
                  for i, node in enumerate(nodes)]
        frame = frames[0]
        for other in frames[1:]:
            frame = frame.unionAll(other)
        return frame

    def _records(self, frame: DataFrame) -> DataFrame:
        """``frame`` without control records (they never reach a sink)."""
        return frame.where(F.length(VALUE) > 0) if self.control else frame

    def _run_streaming(self, frame: DataFrame, sinks: list[Any]) -> None:
        delivered = SinkJob.in_directory(self.workdir, resumed=bool(committed_batches(self.workdir)))

        def deliver(batch: DataFrame, batch_id: int) -> None:
            # Each micro-batch reaches the sinks before Spark commits it. A resumed job runs its
            # uncommitted micro-batch again: skipped when the sinks had it (recorded after
            # delivery), so only a job killed between delivering and recording repeats one.
            delivered.deliver_once(batch_id, lambda: _deliver(batch.toArrow(), sinks))

        # Raises the query's error (a user function's, named) if it failed; an unbounded Spark
        # stream read up to what is available ends with a flush run (.flush_signals).
        run_to_end(lambda: start_query(frame.writeStream.foreachBatch(deliver)
                                       .option("checkpointLocation", os.path.join(self.workdir, "checkpoint"))
                                       .trigger(availableNow=True)), self.flush_signal_dirs)

    # --- translation --------------------------------------------------------------------
    def translate(self, node: graph.Node) -> DataFrame:
        """A DataFrame of ``(_value, _ord)`` records for ``node``."""
        if node.id not in self._frames:
            self._frames[node.id] = self._translate(node)
        return self._frames[node.id]

    def _translate(self, node: graph.Node) -> DataFrame:
        if runs_at_end_of_stream(node):  # FLIP-331: batch algorithms, also in streaming jobs
            return end_of_stream.translate(self, node)
        if isinstance(node, graph.SourceNode):
            return self._source(node)
        if isinstance(node, graph.Stateless):
            base, ops = chain_under(node)
            return self.translate(base).mapInPandas(ChainRunner(ops, worker_note), _RECORDS)
        if isinstance(node, graph.UnionNode):
            frames = [self.translate(s) for s in node.streams]
            out = frames[0]
            for f in frames[1:]:
                out = out.unionAll(f)
            return out
        if isinstance(node, graph.KeyedNode):
            return self._keyed(node)
        if isinstance(node, SideOutputNode):
            base, ops = chain_under(node.input)
            return self.translate(base).mapInPandas(ChainRunner(side_output_ops(ops, node.tag), worker_note), _RECORDS)
        if isinstance(node, CacheNode):
            if self.settings.streaming:
                raise RuntimeError(f"{node.name}: DataStream.cache() is supported in batch mode only")
            return self.caches.translate(node, lambda: self.translate(node.input))
        raise TypeError(f"no Spark translation for {type(node).__name__}")

    def _keyed(self, node: graph.Node) -> DataFrame:
        base, ops = chain_under(node.input)
        runner = ChainRunner(ops + [key_op(node.key_selector, node.name)], worker_note)
        control = self.control
        kernel_type = KeyedReduce if isinstance(node, graph.KeyedReduceNode) else KeyedProcess
        kernel = kernel_type(node.function, node.name, with_keys=control)
        child = self.translate(base)
        if not self.settings.streaming:
            keyed = child.mapInPandas(runner, _KEYED).repartition(F.col(KEY))
            return keyed.mapInPandas(_BatchKeyed(kernel), _RECORDS)
        packer = Packer([KEY], self.settings.buckets, child.columns, _OBJECT, local=runner)
        flush = buffering(node, self.settings.flush) if control else None
        if control:
            packer = RecordControlFanOut(packer, self.settings.buckets,
                                         ticks=flushes_from_timers(flush))
            kernel = ChangelogRecords(kernel)
        packed = child.mapInPandas(packer, PACKED)
        sources = frozenset(self._source_numbers[s.id] for s in graph.sources(node))
        processor_type = TimerKernelProcessor if kernel_type is KeyedProcess else RecordKernelProcessor
        processor = processor_type(kernel, KEY_COLUMNS, self.settings.pages, OUTPUT_COLUMNS, flush, sources,
                                   changelog=False, control=control)
        time_mode = "ProcessingTime" if kernel_type is KeyedProcess else processor.time_mode
        return packed.groupBy(BUCKET).transformWithStateInPandas(
            statefulProcessor=processor, outputStructType=_RECORDS, outputMode="Append", timeMode=time_mode)

    # --- sources ------------------------------------------------------------------------
    def _source(self, node: graph.SourceNode) -> DataFrame:
        number = self._source_numbers[node.id]
        if node.kind == "collection":
            values = [dumps(v) for v in node.payload]
            frame = pd.DataFrame({VALUE: np.asarray(values, dtype=object),
                                  ORD: np.asarray([source_stamp(i, number) for i in range(len(values))],
                                                  dtype=object)})
            return self._bounded(pa.Table.from_pandas(frame, schema=pa.schema(
                [(VALUE, pa.binary()), (ORD, pa.binary())]), preserve_index=False), node)
        if node.kind == "text":
            df = self.spark.read.text(node.payload)
            return self._bounded_spark(df.select(F.col("value").alias("line")), node, _LineEncoder(number))
        if node.kind == "dataframe":
            df = node.payload
            if df.isStreaming:
                if not self.settings.streaming:
                    raise ValueError(f"source {node.name} is an unbounded (streaming) DataFrame: it needs "
                                     "RuntimeExecutionMode.STREAMING")
                records = df.mapInPandas(_RowEncoder(df.columns, number, ordered=False), _RECORDS)
                if self.control and flushes_from_timers(self.settings.flush):
                    # Read up to what is available, it would end with the last records buffered.
                    signals = os.path.join(self.workdir, f"flush-signals-{number}")
                    records = records.unionByName(signal_stream(self.spark, signals).select(
                        F.lit(CONTROL_VALUE).cast("binary").alias(VALUE),
                        F.lit(bytearray(control_stamp(FLUSH, 0))).alias(ORD)))
                    self.flush_signal_dirs.append(signals)
                return records
            return self._bounded_spark(df, node, _RowEncoder(df.columns, number, ordered=True))
        raise TypeError(f"unknown source kind {node.kind}")

    def _bounded_spark(self, df: DataFrame, node: graph.SourceNode, encoder: Any) -> DataFrame:
        """A bounded Spark DataFrame as records, positioned in the DataFrame's order."""
        # monotonically_increasing_id grows with the partition index and within a partition:
        # the DataFrame's (and a text file's line) order.
        positioned = df.withColumn("__position", F.monotonically_increasing_id())
        records = positioned.mapInPandas(encoder, _RECORDS)
        if not self.settings.streaming:
            return records
        directory = self._source_directory(node)
        require_shared(self.spark.sparkContext.master, directory, f"source {node.name}")
        if not already_written(directory):  # a resumed job reads the files its first run wrote
            records.orderBy(ORD).write.mode("overwrite").option(
                "maxRecordsPerFile", self.settings.rows_per_batch).parquet(directory)
            self._end_of_input(directory, node)
        return self._file_stream(directory)

    def _bounded(self, table: pa.Table, node: graph.SourceNode) -> DataFrame:
        if not self.settings.streaming:
            if table.num_rows == 0:
                return self.spark.createDataFrame([], _RECORDS)
            return self.spark.createDataFrame(table.to_pandas(), schema=_RECORDS)
        directory = self._source_directory(node)
        require_shared(self.spark.sparkContext.master, directory, f"source {node.name}")
        if not already_written(directory):  # a local path or a Hadoop URI (connectors/filestore.py)
            filestore.store_for(directory).makedirs(directory)
            rows = self.settings.rows_per_batch
            for i, start in enumerate(range(0, max(table.num_rows, 1), rows)):
                filestore.write_parquet(filestore.join(directory, f"part-{i:08d}.parquet"), table.slice(start, rows))
            self._end_of_input(directory, node)
        return self._file_stream(directory)

    def _source_directory(self, node: graph.SourceNode) -> str:
        # Named by the source's position in the job, not its node id: a resumed job is the same
        # program built again, whose nodes may have other ids.
        return os.path.join(self.workdir, f"source-{self._source_numbers[node.id]}")

    def _end_of_input(self, directory: str, node: graph.SourceNode) -> None:
        """With control records, a bounded source ends with a file (a micro-batch) holding its end-of-input record."""
        if not self.control:
            return
        marker = pa.table({VALUE: pa.array([CONTROL_VALUE], pa.binary()),
                           ORD: pa.array([control_stamp(END_OF_INPUT, self._source_numbers[node.id])], pa.binary())})
        # The name sorts after every data file: the file source reads it last (see _file_stream).
        filestore.write_parquet(filestore.join(directory, "zz-end-of-input.parquet"), marker)

    def _file_stream(self, directory: str) -> DataFrame:
        # The file source takes files oldest first: give them increasing times in name order so
        # micro-batches are prefixes of the input.
        store = filestore.store_for(directory)
        names = sorted(n for n, _ in store.entries(directory) if n.endswith(".parquet"))
        for i, name in enumerate(names):
            store.set_modified_ms(filestore.join(directory, name), (1_000_000_000 + i) * 1000)
        return self.spark.readStream.schema(_RECORDS).option("maxFilesPerTrigger", 1).parquet(directory)


def buffering(node: graph.Node, policy: FlushPolicy | None) -> FlushPolicy | None:
    """The flush policy ``node`` runs with: ``policy`` if the operator is keyed and its output idempotent."""
    return policy if policy is not None and buffer_reason(node) is not None else None


def to_records(frame: pd.DataFrame) -> pd.DataFrame:
    """A processor's output as ``(_value, _ord)`` records; control rows become control records.

    >>> from changeflow.runtime.spark.control_rows import Control, control_rows
    >>> rows = control_rows([KEY, VALUE, ORD], Control(frozenset({3})))
    >>> [parse_control_stamp(s) for s in to_records(rows)[ORD]], to_records(rows)[VALUE].tolist()
    ([(-1, 3)], [b''])
    """
    if KIND not in frame.columns:
        return frame[[VALUE, ORD]]
    control = frame[KIND].to_numpy() == CONTROL
    values = frame[VALUE].to_numpy(dtype=object).copy()
    stamps = frame[ORD].to_numpy(dtype=object).copy()
    seqs, subs = frame[SEQ].to_numpy(), frame[SUB].to_numpy()
    for i in np.flatnonzero(control):
        values[i] = CONTROL_VALUE
        stamps[i] = control_stamp(int(seqs[i]), int(subs[i]))
    return pd.DataFrame({VALUE: values, ORD: stamps})


class RecordControlFanOut(ControlFanOut):
    """:class:`ControlFanOut` over record frames: control records are those with an empty ``_value``."""

    def __init__(self, packer: Any, buckets: int, ticks: bool) -> None:
        self.packer = packer
        self.buckets = buckets
        self.ticks = ticks

    def split(self, frame: pd.DataFrame):
        # Columns by position (_value, _ord): Spark may rename columns starting with "_".
        mask = control_mask(frame.iloc[:, 0].to_numpy())
        if not mask.any():
            return mask, control_of(np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0, np.int64))[1]
        pairs = [parse_control_stamp(s) for s in frame.iloc[:, 1].to_numpy()[mask]]
        seqs = np.asarray([p[0] for p in pairs], dtype=np.int64)
        subs = np.asarray([p[1] for p in pairs], dtype=np.int64)
        return mask, control_of(np.full(len(pairs), CONTROL, dtype=np.int8), seqs, subs)[1]


class RecordKernelProcessor(KernelProcessor):
    """A :class:`KernelProcessor` whose output goes out as records (flushed records, control records)."""

    def handleInputRows(self, key, rows, timerValues):
        for frame in super().handleInputRows(key, rows, timerValues):
            yield to_records(frame)

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        for frame in super().handleExpiredTimer(key, timerValues, expiredTimerInfo):
            yield to_records(frame)


class TimerKernelProcessor(RecordKernelProcessor):
    """A processor whose kernel has processing-time timers (:class:`KeyedProcess`).

    The kernel keeps its bucket's timers in its own state; this processor keeps
    one Spark timer per bucket at the earliest of them, and on expiry lets the
    kernel fire every due timer. Spark fires a timer in the first micro-batch
    whose processing time has reached it (micro-batches run only when input
    arrives, ``spark.sql.streaming.noDataMicroBatches.enabled`` being off).

    With a flush buffer (an idempotent function under a flush interval) the
    bucket also keeps the buffer's timer (:mod:`.flush`); what ``on_timer``
    emits is buffered like the function's other output.
    """

    def handleInputRows(self, key, rows, timerValues):
        yield from super().handleInputRows(key, rows, timerValues)
        self._schedule()

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        from changeflow.runtime.spark.control_rows import Control, control_rows
        from changeflow.state.paged import PagedKeyedState

        now = timerValues.getCurrentProcessingTimeInMs()
        state = PagedKeyedState(self.page_store, self.key_columns, self.pages,
                                operator=operator_name(self.kernel))
        out = self.kernel.fire(now, state)
        state.commit()
        out = out if len(out) else None
        flushed_signal = False
        if isinstance(self.flusher, BucketFlusher):
            bucket = BucketBuffer.load(_blob(self.buffer_state))
            flushed = self.flusher.on_input(bucket, out, now, had_input=False, force=False)
            if bucket.timer_ms is not None and bucket.timer_ms <= now:  # the buffer's own timer is due
                later = self.flusher.on_timer(bucket, now)
                flushed = later if flushed is None else flushed if later is None else pd.concat([flushed, later])
            self._arm_timer(bucket, now)
            self.buffer_state.update((bucket.dump(),))
            out, flushed_signal = flushed, flushed is not None
        elif isinstance(self.flusher, MemoryFlusher) and out is not None:
            out = self.flusher.run(out)
        self._schedule()
        if out is not None and len(out):
            yield to_records(out)
        if flushed_signal:
            yield to_records(control_rows(self.output_columns, Control(flush=True)))

    def _schedule(self) -> None:
        from changeflow.state.paged import PagedKeyedState

        wanted = set()
        kernel_timer = self.kernel.next_timer(PagedKeyedState(self.page_store, self.key_columns, self.pages))
        if kernel_timer is not None:
            wanted.add(kernel_timer)
        if isinstance(self.flusher, BucketFlusher):
            buffer_timer = BucketBuffer.load(_blob(self.buffer_state)).timer_ms
            if buffer_timer is not None:
                wanted.add(buffer_timer)
        registered = set(self.handle.listTimers())
        for t in registered - wanted:
            self.handle.deleteTimer(t)
        for t in wanted - registered:
            self.handle.registerTimer(t)


class _BatchKeyed:
    """Batch mode: a partition holds every record of its keys; fold them with fresh in-memory state."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    def __call__(self, frames):
        parts = [f for f in frames if len(f)]
        if not parts:
            return
        batch = pd.concat(parts, ignore_index=True)
        batch.columns = [KEY, VALUE, ORD]
        if isinstance(self.kernel, KeyedReduce):
            yield self.kernel.final(batch)
        else:
            yield self.kernel.process_bounded(batch)


class _LineEncoder:
    """Text lines (with their position) to records."""

    def __init__(self, number: int) -> None:
        self.number = number

    def __call__(self, frames):
        for f in frames:
            if len(f):
                yield pd.DataFrame({
                    VALUE: np.asarray([dumps(v) for v in f.iloc[:, 0]], dtype=object),
                    ORD: np.asarray([source_stamp(int(p), self.number) for p in f.iloc[:, 1]], dtype=object)})


class _RowEncoder:
    """Spark rows to named :class:`Row` records."""

    def __init__(self, columns: list[str], number: int, ordered: bool) -> None:
        self.columns = list(columns)
        self.number = number
        self.ordered = ordered

    def __call__(self, frames):
        n = len(self.columns)
        for f in frames:
            if not len(f):
                continue
            data = f.iloc[:, :n].astype(object).where(f.iloc[:, :n].notna(), None)
            values = [dumps(Row(**dict(zip(self.columns, r)))) for r in data.itertuples(index=False, name=None)]
            positions = f.iloc[:, n] if self.ordered else [0] * len(f)
            yield pd.DataFrame({VALUE: np.asarray(values, dtype=object),
                                ORD: np.asarray([source_stamp(int(p), self.number) for p in positions],
                                                dtype=object)})


def _blob(value_state: Any) -> bytes | None:
    """The bytes a ``ValueState`` of one binary column holds, or None."""
    value = value_state.get()
    return None if value is None else value[0]


def _deliver(table: pa.Table, sinks: list[Any]) -> None:
    """Hands one micro-batch's records to each sink, in stamp order."""
    if table.num_rows == 0:
        return
    table = table.sort_by([(SINK, "ascending"), (ORD, "ascending")])
    sink_ids = table.column(SINK).to_numpy()
    values = table.column(VALUE).to_pylist()
    for i, sink in enumerate(sinks):
        chosen = np.flatnonzero(sink_ids == i)
        if len(chosen):
            sink.write([loads(values[j]) for j in chosen])
