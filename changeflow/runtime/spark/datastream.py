"""Runs DataStream jobs on Spark: one Structured Streaming query (streaming mode) or Spark batch.

Records cross Spark as two binary columns, the pickled record ``_value`` and
its order stamp ``_ord`` (:mod:`changeflow.kernels.keyed.records`); typed
columns would need every user function's output type, which PyFlink does not
require. Every Python call handles a whole partition or hash bucket of a
micro-batch:

- consecutive stateless operators (and the key selector of a following keyed
  operator) run fused in one ``mapInPandas`` (:class:`~changeflow.datastream.chain.ChainRunner`);
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
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from changeflow.common.row import Row
from changeflow.datastream import graph
from changeflow.datastream.chain import ChainRunner, Op
from changeflow.kernels.keyed.process import KeyedProcess
from changeflow.kernels.keyed.records import KEY, ORD, VALUE, dumps, loads, source_stamp
from changeflow.kernels.keyed.reduce import KeyedReduce
from changeflow.runtime.spark.packing import BUCKET, PAYLOAD, Packer
from changeflow.runtime.spark.processor import KernelProcessor

SINK = "_sink"
_RECORDS = T.StructType([T.StructField(VALUE, T.BinaryType(), False), T.StructField(ORD, T.BinaryType(), False)])
_KEYED = T.StructType([T.StructField(KEY, T.BinaryType(), False)] + _RECORDS.fields)
_PACKED = T.StructType([T.StructField(BUCKET, T.LongType(), False), T.StructField(PAYLOAD, T.BinaryType(), False)])
_OBJECT = {KEY: "object", VALUE: "object", ORD: "object"}


@dataclass(frozen=True)
class DataStreamSettings:
    streaming: bool
    rows_per_batch: int   # source records per micro-batch (streaming)
    buckets: int          # hash buckets per keyed operator
    pages: int = 64       # state pages per bucket
    checkpoint_root: str | None = None


class DataStreamJob:
    """Translates the graph under a job's sinks and runs it."""

    def __init__(self, spark: SparkSession, settings: DataStreamSettings) -> None:
        self.spark = spark
        self.settings = settings
        self._source_numbers: dict[int, int] = {}
        self._frames: dict[int, DataFrame] = {}

    def run(self, outputs: list[tuple[graph.Node, Any]]) -> None:
        """Runs the job whose sinks are ``outputs`` (node, sink with ``write(records)``)."""
        if not outputs:
            raise RuntimeError("No operators defined in streaming topology. Cannot execute.")
        for node, _ in outputs:
            for source in graph.sources(node):
                self._source_numbers.setdefault(source.id, len(self._source_numbers))
        self.workdir = tempfile.mkdtemp(prefix="changeflow-ds-", dir=self.settings.checkpoint_root)
        try:
            frames = [self.translate(node).select(VALUE, ORD, F.lit(i).alias(SINK))
                      for i, (node, _) in enumerate(outputs)]
            frame = frames[0]
            for other in frames[1:]:
                frame = frame.unionAll(other)
            sinks = [sink for _, sink in outputs]
            if self.settings.streaming:
                self._run_streaming(frame, sinks)
            else:
                _deliver(frame.toArrow(), sinks)
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def _run_streaming(self, frame: DataFrame, sinks: list[Any]) -> None:
        batches: dict[int, pa.Table] = {}

        def collect(batch: DataFrame, batch_id: int) -> None:
            batches[batch_id] = batch.toArrow()

        query = (frame.writeStream.foreachBatch(collect)
                 .option("checkpointLocation", os.path.join(self.workdir, "checkpoint"))
                 .trigger(availableNow=True).start())
        query.awaitTermination()  # raises the query's error (a user function's, named) if it failed
        for batch_id in sorted(batches):
            _deliver(batches[batch_id], sinks)

    # --- translation --------------------------------------------------------------------
    def translate(self, node: graph.Node) -> DataFrame:
        """A DataFrame of ``(_value, _ord)`` records for ``node``."""
        if node.id not in self._frames:
            self._frames[node.id] = self._translate(node)
        return self._frames[node.id]

    def _translate(self, node: graph.Node) -> DataFrame:
        if isinstance(node, graph.SourceNode):
            return self._source(node)
        if isinstance(node, graph.Stateless):
            base, ops = _chain(node)
            return self.translate(base).mapInPandas(ChainRunner(ops), _RECORDS)
        if isinstance(node, graph.UnionNode):
            frames = [self.translate(s) for s in node.streams]
            out = frames[0]
            for f in frames[1:]:
                out = out.unionAll(f)
            return out
        if isinstance(node, (graph.KeyedReduceNode, graph.KeyedProcessNode)):
            return self._keyed(node)
        raise TypeError(f"no Spark translation for {type(node).__name__}")

    def _keyed(self, node: graph.Node) -> DataFrame:
        base, ops = _chain(node.input)
        runner = ChainRunner(ops + [Op("key", node.key_selector, f"KeySelector of {node.name}")])
        if isinstance(node, graph.KeyedReduceNode):
            kernel = KeyedReduce(node.function, node.name)
        else:
            kernel = KeyedProcess(node.function, node.name)
        child = self.translate(base)
        if not self.settings.streaming:
            keyed = child.mapInPandas(runner, _KEYED).repartition(F.col(KEY))
            return keyed.mapInPandas(_BatchKeyed(kernel), _RECORDS)
        packer = Packer([KEY], self.settings.buckets, child.columns, _OBJECT, local=runner)
        packed = child.mapInPandas(packer, _PACKED)
        if isinstance(kernel, KeyedProcess):
            processor, time_mode = TimerKernelProcessor(kernel, [KEY], self.settings.pages), "ProcessingTime"
        else:
            processor, time_mode = KernelProcessor(kernel, [KEY], self.settings.pages), "None"
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
                return df.mapInPandas(_RowEncoder(df.columns, number, ordered=False), _RECORDS)
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
        directory = os.path.join(self.workdir, f"source-{node.id}")
        records.orderBy(ORD).write.mode("overwrite").option(
            "maxRecordsPerFile", self.settings.rows_per_batch).parquet(directory)
        return self._file_stream(directory)

    def _bounded(self, table: pa.Table, node: graph.SourceNode) -> DataFrame:
        if not self.settings.streaming:
            if table.num_rows == 0:
                return self.spark.createDataFrame([], _RECORDS)
            return self.spark.createDataFrame(table.to_pandas(), schema=_RECORDS)
        directory = os.path.join(self.workdir, f"source-{node.id}")
        os.makedirs(directory, exist_ok=True)
        rows = self.settings.rows_per_batch
        for i, start in enumerate(range(0, max(table.num_rows, 1), rows)):
            pq.write_table(table.slice(start, rows), os.path.join(directory, f"part-{i:08d}.parquet"))
        return self._file_stream(directory)

    def _file_stream(self, directory: str) -> DataFrame:
        # The file source takes files oldest first: give them increasing times in name order so
        # micro-batches are prefixes of the input.
        names = sorted(n for n in os.listdir(directory) if n.endswith(".parquet"))
        for i, name in enumerate(names):
            os.utime(os.path.join(directory, name), (1_000_000_000 + i, 1_000_000_000 + i))
        return self.spark.readStream.schema(_RECORDS).option("maxFilesPerTrigger", 1).parquet(directory)


def _chain(node: graph.Node) -> tuple[graph.Node, list[Op]]:
    """The first non-stateless node under ``node`` and the stateless ops above it, bottom up."""
    ops: list[Op] = []
    while isinstance(node, graph.Stateless):
        ops.append(node.op)
        node = node.input
    return node, ops[::-1]


class TimerKernelProcessor(KernelProcessor):
    """A :class:`KernelProcessor` whose kernel has processing-time timers (:class:`KeyedProcess`).

    The kernel keeps its bucket's timers in its own state; this processor keeps
    one Spark timer per bucket at the earliest of them, and on expiry lets the
    kernel fire every due timer. Spark fires a timer in the first micro-batch
    whose processing time has reached it (micro-batches run only when input
    arrives, ``spark.sql.streaming.noDataMicroBatches.enabled`` being off).
    """

    def init(self, handle) -> None:
        super().init(handle)
        self.handle = handle

    def handleInputRows(self, key, rows, timerValues):
        yield from super().handleInputRows(key, rows, timerValues)
        self._schedule()

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo):
        from changeflow.state.paged import PagedKeyedState

        state = PagedKeyedState(self.page_store, self.key_columns, self.pages)
        out = self.kernel.fire(timerValues.getCurrentProcessingTimeInMs(), state)
        state.commit()
        self._schedule()
        if len(out):
            yield out

    def _schedule(self) -> None:
        from changeflow.state.paged import PagedKeyedState

        wanted = self.kernel.next_timer(PagedKeyedState(self.page_store, self.key_columns, self.pages))
        for t in list(self.handle.listTimers()):
            if t != wanted:
                self.handle.deleteTimer(t)
        if wanted is not None:
            self.handle.registerTimer(wanted)


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
