"""Runs a planned query on Spark and returns its changes.

Streaming: one Structured Streaming query per ``execute()``, run with the
``availableNow`` trigger so that bounded input ends the query once consumed.
Batch: Spark batch operations; the result is the final table as ``+I`` rows.

``INSERT INTO`` runs as a :class:`InsertJob` in a background thread, as Flink
submits the job and returns: the streaming query hands every committed
micro-batch's changes, in changelog order, to the sink connector
(``foreachBatch``); a batch job hands it the final rows. ``wait()`` joins the
job and raises its error.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Iterator

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from changeflow.common.row_kind import RowKind
from changeflow.runtime.changes import Change
from changeflow.runtime.insert_job import InsertJob
from changeflow.runtime.sink_not_null import enforce
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.kernels.keyed.records import VALUE, decode
from changeflow.plan.stream_bridge import with_table_settings
from changeflow.plan.stream_nodes import SourceNode, StreamJob, TableNode
from changeflow.plan.stream_walks import all_nodes
from changeflow.plan.rules.buffering import micro_batch_interval_ms
from changeflow.plan.nodes import PlanNode, Sink
from changeflow.plan.optimizer import PlannerSettings, optimize, planned
from changeflow.runtime.spark.batch import BatchTranslator
from changeflow.runtime.spark.combined_frames import value_columns
from changeflow.runtime.spark.control_rows import SinkWatermark
from changeflow.runtime.spark.discarding_sink import discards_on_executors, run_discarding
from changeflow.runtime.spark.errors import readable_errors
from changeflow.runtime.spark.flush_signals import run_to_end
from changeflow.connectors.sink_job import SinkJob
from changeflow.runtime.spark.job_directory import (committed_batches, job_directory, remove_directory,
                                                    temporary_directory)
from changeflow.runtime.spark.query_settings import check_user_query, for_job
from changeflow.runtime.spark.query_start import start_query
from changeflow.runtime.spark.state_metrics import read_state_metrics
from changeflow.runtime.spark.stream_graph import SINK, GraphTranslation
from changeflow.runtime.spark.streaming import StreamingSettings, StreamingTranslator, physical_plan

_KINDS = list(RowKind)


class SparkJobs:
    """Executes plans on one SparkSession; every streaming job gets its own checkpoint."""

    def __init__(self, spark: SparkSession, checkpoint_root: str | None = None) -> None:
        self.spark = spark
        self.checkpoint_root = checkpoint_root

    # --- streaming ------------------------------------------------------------------
    def streaming_frame(self, plan: PlanNode, settings: StreamingSettings, workdir: str) -> DataFrame:
        with for_job(self.spark):  # the user starts this query (to_spark()): translated for the session's settings
            frame = StreamingTranslator(self.spark, settings, workdir).translate(plan)
        check_user_query(self.spark, frame)
        return frame

    def _translate(self, plan: PlanNode, settings: StreamingSettings, workdir: str,
                   keep_watermarks: bool = False) -> tuple[DataFrame, StreamingTranslator]:
        """The query's frame, and its translator, which says whether the query wants no-data
        micro-batches (timers: idle flushes, TTL sweeps) and where its flush signals go (:mod:`.flush_signals`).
        ``plan`` is physical (a logical plan is planned here, once)."""
        with for_job(self.spark, starts_queries=True):  # changeflow's settings on a user's session (.query_settings)
            translator = StreamingTranslator(self.spark, settings, workdir)
            translator.keep_watermarks = keep_watermarks
            frame = translator.translate(plan)
        return frame, translator

    def run_streaming(self, plan: PlanNode, settings: StreamingSettings) -> list[Change]:
        # A failure in Spark is raised as the changeflow error inside it (.errors), here and below.
        with job_directory(self.checkpoint_root, None) as workdir, readable_errors():  # interactive: never resumes
            frame, translator = self._translate(plan, settings, workdir)
            batches: dict[int, pa.Table] = {}  # by id: a batch run again (a query restarted) replaces its first run
            lock = threading.Lock()

            def collect(batch: DataFrame, batch_id: int) -> None:
                table = batch.toArrow()
                with lock:
                    batches[batch_id] = table

            _run_available_now(frame, workdir, collect, translator.flush_signal_dirs)
            names = value_columns(frame)
            changes: list[Change] = []
            for _, table in sorted(batches.items()):
                changes.extend(_changes(table, names))
            return changes

    def run_streaming_into(self, plan: Sink, settings: StreamingSettings, job: "InsertJob",
                           job_name: str | None = None, not_null_enforcer: str = "ERROR") -> None:
        """Run a streaming INSERT: each micro-batch's changes go to the sink in changelog order.

        With a checkpoint root the job keeps its checkpoint under ``job_name`` and
        a later run of it resumes there (:mod:`.job_directory`); a micro-batch
        written but not yet committed when the job stopped runs again with its
        batch id and is skipped (the job's directory records the last batch its
        sink received); the filesystem sink replaces its earlier file of that
        batch. NULLs in the sink's NOT NULL columns fail the job or are dropped
        (``not_null_enforcer``, :mod:`..sink_not_null`).
        """
        sink = plan.connector
        plan = physical_plan(plan, settings)
        try:
            with job_directory(self.checkpoint_root, job_name) as workdir, readable_errors():
                wants_watermark = getattr(sink, "wants_watermark", False)
                frame, translator = self._translate(plan, settings, workdir, wants_watermark)
                names = value_columns(frame)
                job.checkpoint = f"{workdir}/checkpoint"  # for get_state_metrics()
                sink_job = _sink_job(workdir)
                sink.open(sink_job)
                watermarks = SinkWatermark(translator.watermark_scans.count)
                discarding = not wants_watermark and discards_on_executors(sink, plan.schema, not_null_enforcer)

                def write(batch: DataFrame, batch_id: int) -> None:
                    if discarding:  # a blackhole: the micro-batch runs in full, its rows stay on the executors
                        run_discarding(batch)
                        sink_job.deliver_once(batch_id, lambda: None)
                        return
                    table = batch.toArrow()
                    if wants_watermark:  # the watermark rows kept for the sink: its watermark after this batch
                        table = watermarks.take(table)
                        if watermarks.current is not None:
                            sink.advance_watermark(watermarks.current)
                    sink_job.deliver_once(batch_id, lambda: sink.write(
                        enforce(_changes(table, names), plan.schema, not_null_enforcer, plan.table), batch_id))

                interval = micro_batch_interval(plan, settings)

                def start():
                    if job.cancelled:
                        return None
                    query = _start(frame, frame.writeStream.foreachBatch(write)
                                   .option("checkpointLocation", f"{workdir}/checkpoint"), interval,
                                   translator.wants_no_data_batches)
                    job.query = query
                    if job.cancelled:  # cancel() came before the query existed
                        query.stop()
                    return query

                # An availableNow query over an unbounded Spark stream ends with a flush run.
                run_to_end(start, translator.flush_signal_dirs if interval is None else [], lambda: job.cancelled)
                if interval is None and not job.cancelled and hasattr(sink, "finish"):
                    sink.finish()  # bounded input ended: the sink's end of input (partition commit)
        finally:
            sink.close()

    def start_live(self, plan: PlanNode, settings: StreamingSettings) -> "LiveQuery":
        """Start an unbounded query whose changes are read while it runs."""
        workdir = temporary_directory(self.checkpoint_root)  # removed by LiveQuery.stop()
        plan = physical_plan(plan, settings)
        frame, translator = self._translate(plan, settings, workdir)
        return LiveQuery(frame, workdir, micro_batch_interval(plan, settings), translator.wants_no_data_batches)

    def submit_streaming_insert(self, plan: Sink, settings: StreamingSettings,
                                job_name: str | None = None, not_null_enforcer: str = "ERROR") -> "InsertJob":
        return InsertJob(lambda job: self.run_streaming_into(plan, settings, job, job_name, not_null_enforcer),
                         lambda checkpoint: [m.as_dict() for m in read_state_metrics(self.spark, checkpoint)])

    def submit_batch_insert(self, plan: Sink, settings: PlannerSettings,
                            not_null_enforcer: str = "ERROR") -> "InsertJob":
        def run(job: "InsertJob") -> None:
            try:
                plan.connector.open(SinkJob.fresh())
                plan.connector.write(enforce(self.run_batch(plan, settings), plan.schema, not_null_enforcer,
                                             plan.table))
                if hasattr(plan.connector, "finish"):
                    plan.connector.finish()  # the result is written: the end of input (partition commit)
            finally:
                plan.connector.close()

        return InsertJob(run)

    # --- DataStream programs ----------------------------------------------------------
    def run_datastream(self, outputs: list[tuple[Any, Any]], settings: StreamingSettings | None,
                       job_name: str | None = None, caches: Any = None, runtime_context: Any = None,
                       table_settings: Callable[[], StreamingSettings] | None = None,
                       table_batch: PlannerSettings | None = None) -> None:
        """Run the DataStream job whose sinks are ``outputs`` (graph node, sink with ``write(records)``).

        ``settings`` None runs in batch mode. The job is planned once (a
        :class:`~changeflow.plan.stream_nodes.StreamJob`; a streaming job the planner found may run as
        batch, :mod:`changeflow.plan.rules.runs_as_batch`, runs in batch mode). Every sink is one branch of
        a single query (``_sink``), translated by the translators' graph family and run by the driver
        loop of Table queries. A Table plan converted inside the job is planned with the Table runtime's
        settings: ``table_settings()`` in streaming mode, ``table_batch`` in batch mode. A named streaming
        job with a checkpoint root resumes from its checkpoint when run again (:mod:`.job_directory`).
        """
        if not outputs:
            raise RuntimeError("No operators defined in streaming topology. Cannot execute.")
        sinks = [sink for _, sink in outputs]
        logical = StreamJob(tuple(node for node, _ in outputs))
        # One planning pass for the whole program: a Table plan read as a stream is planned in it with the
        # Table environment's settings (plan/stream_bridge.py), the job's own nodes with these.
        job = optimize(with_table_settings(logical, _table_planner(settings, table_settings, table_batch)),
                       settings.planner() if settings is not None else PlannerSettings(streaming=False))
        if not job.traits.streaming:
            if settings is not None and any(isinstance(n, TableNode) for n in all_nodes(list(job.outputs))):
                # The job runs as batch (rules/runs_as_batch.py), so its Table plans run in batch too: planned
                # for batch, from the logical program (the streaming plan is not planned again).
                job = optimize(with_table_settings(logical, table_batch or PlannerSettings(streaming=False)),
                               PlannerSettings(streaming=False))
            settings = None
        roots = list(job.outputs)
        # A failure in Spark is raised as the changeflow error inside it (.errors), naming the operators.
        with job_directory(self.checkpoint_root, job_name if settings is not None else None,
                           prefix="changeflow-ds-") as workdir, \
                readable_errors(lambda: [n.name for n in all_nodes(roots) if not isinstance(n, SourceNode)]):
            host = StreamingTranslator(self.spark, settings, workdir) if settings is not None \
                else BatchTranslator(self.spark)
            graph = GraphTranslation(host, runtime_context, caches, table_settings)
            try:
                with for_job(self.spark, starts_queries=True):  # changeflow's settings on a user's session
                    frame = graph.frame(roots)
                    table = None if settings is not None else frame.toArrow()
                if table is not None:
                    _deliver(table, sinks)
                else:
                    delivered = _sink_job(workdir)
                    for sink in sinks:  # a sink that makes a repeated micro-batch replace its first write (FileSink)
                        if callable(getattr(sink, "open_job", None)):
                            sink.open_job(delivered)

                    def deliver(batch: DataFrame, batch_id: int) -> None:
                        # Each micro-batch reaches the sinks before Spark commits it; a resumed job's
                        # repeated micro-batch is skipped when the sinks had it (.sink_job).
                        delivered.deliver_once(batch_id, lambda: _deliver(batch.toArrow(), sinks, batch_id))

                    _run_available_now(frame, workdir, deliver, graph.flush_signal_dirs)
                graph.caches.commit()
            except BaseException:
                graph.caches.abandon()
                raise

    # --- batch ----------------------------------------------------------------------
    def batch_frame(self, plan: PlanNode, settings: PlannerSettings) -> DataFrame:
        """``plan``'s rows (and ``_seq``) as a Spark batch DataFrame; a logical plan is planned with ``settings``."""
        with for_job(self.spark):  # changeflow's settings on a user's session (.query_settings)
            return BatchTranslator(self.spark).translate(planned(plan, settings))

    def run_batch(self, plan: PlanNode, settings: PlannerSettings) -> list[Change]:
        with for_job(self.spark):  # the translation and the action
            frame = self.batch_frame(plan, settings).orderBy(SEQ)
            names = [n for n in frame.columns if n != SEQ]
            with readable_errors():
                table = frame.select(*[F.col(f"`{n}`") for n in names]).toArrow()
        return [Change(RowKind.INSERT, values) for values in _rows(table, names)]


def _table_planner(settings: StreamingSettings | None, table_settings: Callable[[], StreamingSettings] | None,
                   table_batch: PlannerSettings | None) -> PlannerSettings | None:
    """What a DataStream job's Table plans are planned with: the Table runtime's settings (streaming), its
    batch settings (batch; both carry its session time zone)."""
    if settings is None:
        return table_batch or PlannerSettings(streaming=False)
    return table_settings().planner() if table_settings is not None else None


def micro_batch_interval(plan: PlanNode, settings: StreamingSettings) -> int | None:
    """How often ``plan``'s query runs a micro-batch, in ms; None for bounded input.

    The unbounded sources' pace (their monitor interval), or once per flush
    interval when every row reaching the sink passes a flush buffer (the
    planner's ``output_buffered``; :mod:`changeflow.plan.rules.buffering` says
    why that costs no latency).
    """
    from changeflow.runtime.spark.connectors.connector_sources import trigger_interval_ms

    plan = physical_plan(plan, settings)
    flush = plan.traits.flush
    return micro_batch_interval_ms(plan, trigger_interval_ms(plan), flush.interval_ms if flush else None,
                                   memory_only=bool(flush and flush.memory_only))


def _sink_job(workdir: str) -> SinkJob:
    """The record of what a job's sinks received, in its directory (resumed when the checkpoint has batches)."""
    return SinkJob.in_directory(workdir, resumed=bool(committed_batches(workdir)))


def _run_available_now(frame: DataFrame, workdir: str, on_batch: Callable[[DataFrame, int], None],
                       signal_dirs: list[str]) -> None:
    """Run ``frame``'s query over bounded input to its end, each micro-batch to ``on_batch``.

    Raises the query's error (a user function's, named) if it failed; an unbounded
    Spark stream read up to what is available ends with a flush run (:mod:`.flush_signals`).
    """
    run_to_end(lambda: start_query(frame.writeStream.foreachBatch(on_batch)
                                   .option("checkpointLocation", f"{workdir}/checkpoint")
                                   .trigger(availableNow=True)), signal_dirs)


def _deliver(table: pa.Table, sinks: list[Any], batch_id: int | None = None) -> None:
    """Hands one micro-batch's records to each DataStream sink, in stamp order (with its id to a sink having
    ``write_batch``)."""
    if table.num_rows == 0:
        return
    table = table.sort_by([(SINK, "ascending"), (SEQ, "ascending"), (SUB, "ascending")])
    sink_ids = table.column(SINK).to_numpy()
    values = table.column(VALUE).to_pylist()
    kinds = table.column(KIND).to_pylist()
    for i, sink in enumerate(sinks):
        chosen = np.flatnonzero(sink_ids == i)
        if len(chosen):
            records = [decode(values[j], kinds[j]) for j in chosen]  # a Row's kind is its record's _kind
            if callable(getattr(sink, "write_batch", None)):
                sink.write_batch(records, batch_id)
            else:
                sink.write(records)


def _start(frame: DataFrame, writer, interval: int | None, no_data_batches: bool):
    """Start ``writer``'s query of ``frame``: ``availableNow`` for bounded input (``interval`` None: it ends
    once read), else a micro-batch every ``interval`` ms (:func:`micro_batch_interval`), with no-data
    micro-batches if its timers need them (:mod:`.query_start`)."""
    if interval is None:
        return start_query(writer.trigger(availableNow=True))
    return start_query(writer.trigger(processingTime=f"{interval} milliseconds"), frame.sparkSession,
                       no_data_batches)


class LiveQuery:
    """A running streaming query over unbounded input; ``changes()`` yields its changes as batches commit."""

    def __init__(self, frame: DataFrame, workdir: str, interval: int | None, no_data_batches: bool = False) -> None:
        self._queue: queue.Queue = queue.Queue()
        self._workdir = workdir
        names = value_columns(frame)

        def collect(batch: DataFrame, batch_id: int) -> None:
            self._queue.put(list(_changes(batch.toArrow(), names)))

        self.query = _start(frame, frame.writeStream.foreachBatch(collect)
                            .option("checkpointLocation", f"{workdir}/checkpoint"), interval, no_data_batches)

    def changes(self) -> Iterator[Change]:
        """The changes, in order, until the query stops (``stop()``) or fails (raised here)."""
        while True:
            try:
                batch = self._queue.get(timeout=0.2)
            except queue.Empty:
                error = self.query.exception()
                if error is not None:
                    with readable_errors():
                        raise error from None   # the query's failure: the empty queue is no part of it
                if not self.query.isActive:
                    return
                continue
            yield from batch

    def stop(self) -> None:
        self.query.stop()
        remove_directory(self._workdir)


def _changes(table: pa.Table, names: list[str]) -> Iterator[Change]:
    table = table.sort_by([(SEQ, "ascending"), (SUB, "ascending")])
    kinds = table.column(KIND).to_pylist()
    for kind, values in zip(kinds, _rows(table, names), strict=True):   # a plan has columns: a row per kind
        yield Change(_KINDS[kind], values)


def _rows(table: pa.Table, names: list[str]) -> Iterator[tuple]:
    columns = [_python_values(table.column(n)) for n in names]
    return iter(list(zip(*columns, strict=True)) if columns else [])


def _python_values(column: pa.ChunkedArray) -> list[Any]:
    values = column.to_pylist()
    if pa.types.is_map(column.type):
        # A MULTISET is a Spark map; Arrow gives (element, count) pairs, PyFlink a dict.
        return [None if v is None else dict(v) for v in values]
    return values
