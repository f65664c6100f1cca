"""A statement set: several INSERTs as one job.

Streaming: the sinks' changelog frames are translated each by its own
translator (its own source directories under the job's) and unioned into ONE
Structured Streaming query: every row carries the number of its sink and its
columns packed in that sink's struct column (the others NULL), so frames of
different schemas union. Each micro-batch is split by sink number and handed to
every sink, in changelog order, before Spark commits it; one checkpoint covers
all sinks, and a micro-batch run again after a restart is skipped for all of them
at once (:class:`~changeflow.connectors.sink_job.SinkJob`). Batch: one job
writing each sink's final rows in turn.
"""

from __future__ import annotations

import functools
import os

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from changeflow.connectors.sink_job import SinkJob
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan.nodes import Sink
from changeflow.runtime.insert_job import InsertJob
from changeflow.runtime.sink_not_null import enforce
from changeflow.runtime.spark.errors import readable_errors
from changeflow.runtime.spark.flush_signals import run_to_end
from changeflow.runtime.spark.job_directory import committed_batches, job_directory
from changeflow.runtime.spark.jobs import SparkJobs, _changes, _start, micro_batch_interval
from changeflow.runtime.spark.query_settings import for_job
from changeflow.runtime.spark.state_metrics import read_state_metrics
from changeflow.runtime.spark.streaming import StreamingSettings, StreamingTranslator, physical_plan

_SINK = "__sink"


def submit_streaming_inserts(jobs: SparkJobs, plans: list[Sink], settings: StreamingSettings,
                             job_name: str | None, not_null_enforcer: str = "ERROR") -> InsertJob:
    return InsertJob(lambda job: _run_streaming(jobs, plans, settings, job, job_name, not_null_enforcer),
                     lambda checkpoint: [m.as_dict() for m in read_state_metrics(jobs.spark, checkpoint)])


def submit_batch_inserts(jobs: SparkJobs, plans: list[Sink], not_null_enforcer: str = "ERROR") -> InsertJob:
    def run(job: InsertJob) -> None:
        opened = []
        try:
            for plan in plans:
                plan.connector.open(SinkJob.fresh())
                opened.append(plan.connector)
            for plan in plans:
                plan.connector.write(enforce(jobs.run_batch(plan), plan.schema, not_null_enforcer, plan.table))
        finally:
            for connector in opened:
                connector.close()

    return InsertJob(run)


def _run_streaming(jobs: SparkJobs, plans: list[Sink], settings: StreamingSettings, job: InsertJob,
                   job_name: str | None, not_null_enforcer: str) -> None:
    plans = [physical_plan(p, settings) for p in plans]
    opened = []
    try:
        with job_directory(jobs.checkpoint_root, job_name) as workdir, readable_errors():
            with for_job(jobs.spark, starts_queries=True):
                translators = [StreamingTranslator(jobs.spark, settings, os.path.join(workdir, f"sink-{i}"))
                               for i in range(len(plans))]
                frames = [t.translate(p) for t, p in zip(translators, plans, strict=True)]
            combined, names = _combine(frames)
            job.checkpoint = f"{workdir}/checkpoint"
            sink_job = SinkJob.in_directory(workdir, resumed=bool(committed_batches(workdir)))
            for plan in plans:
                plan.connector.open(sink_job)
                opened.append(plan.connector)

            def write(batch: DataFrame, batch_id: int) -> None:
                table = batch.toArrow()

                def deliver() -> None:
                    for i, plan in enumerate(plans):
                        changes = _changes(_sink_rows(table, i, names[i]), names[i])
                        plan.connector.write(enforce(changes, plan.schema, not_null_enforcer, plan.table), batch_id)

                sink_job.deliver_once(batch_id, deliver)

            intervals = [v for v in (micro_batch_interval(p, settings) for p in plans) if v is not None]
            interval = min(intervals) if intervals else None
            no_data_batches = any(t.wants_no_data_batches for t in translators)
            signal_dirs = [d for t in translators for d in t.flush_signal_dirs]

            def start():
                if job.cancelled:
                    return None
                query = _start(combined, combined.writeStream.foreachBatch(write)
                               .option("checkpointLocation", f"{workdir}/checkpoint"), interval, no_data_batches)
                job.query = query
                if job.cancelled:
                    query.stop()
                return query

            run_to_end(start, signal_dirs if interval is None else [], lambda: job.cancelled)
    finally:
        for connector in opened:
            connector.close()


def _combine(frames: list[DataFrame]) -> tuple[DataFrame, list[list[str]]]:
    """One frame of every sink's changes: ``__sink``, the bookkeeping columns, a struct column per sink."""
    names = [[n for n in f.columns if n not in (KIND, SEQ, SUB)] for f in frames]
    structs = [F.struct(*[F.col(f"`{n}`") for n in cols]) for cols in names]
    types = [f.select(s.alias("s")).schema["s"].dataType for f, s in zip(frames, structs, strict=True)]
    parts = []
    for i, frame in enumerate(frames):
        packed = [structs[j].alias(f"_row{j}") if j == i else F.lit(None).cast(types[j]).alias(f"_row{j}")
                  for j in range(len(frames))]
        parts.append(frame.select(F.lit(i).alias(_SINK), KIND, SEQ, SUB, *packed))
    return functools.reduce(DataFrame.unionAll, parts), names


def _sink_rows(table: pa.Table, index: int, names: list[str]) -> pa.Table:
    """The rows of sink ``index`` with its columns unpacked, and the bookkeeping columns."""
    rows = table.filter(pa.array(table.column(_SINK).to_numpy() == index))
    packed = rows.column(f"_row{index}").combine_chunks()
    columns = {n: packed.field(k) for k, n in enumerate(names)}  # type: ignore[attr-defined]
    columns.update({c: rows.column(c) for c in (KIND, SEQ, SUB)})
    return pa.table(columns)
