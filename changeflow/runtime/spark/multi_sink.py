"""A statement set: several INSERTs as one job.

Streaming: the sinks' changelog frames are translated each by its own
translator (its own source directories under the job's) and run as ONE
Structured Streaming query (:mod:`.combined_frames`). Each micro-batch is
split by sink and handed to every sink, in changelog order, before Spark
commits it; one checkpoint covers all sinks, and a micro-batch run again after a restart is skipped for all of them
at once (:class:`~changeflow.connectors.sink_job.SinkJob`). Batch: one job
writing each sink's final rows in turn.
"""

from __future__ import annotations

import os

from pyspark.sql import DataFrame

from changeflow.connectors.sink_job import SinkJob
from changeflow.plan.nodes import Sink
from changeflow.plan.optimizer import PlannerSettings
from changeflow.runtime.insert_job import InsertJob
from changeflow.runtime.sink_not_null import enforce
from changeflow.runtime.spark.combined_frames import combine, frame_rows
from changeflow.runtime.spark.errors import readable_errors
from changeflow.runtime.spark.flush_signals import run_to_end
from changeflow.runtime.spark.job_directory import committed_batches, job_directory
from changeflow.runtime.spark.jobs import SparkJobs, _changes, _start, micro_batch_interval
from changeflow.runtime.spark.query_settings import for_job
from changeflow.runtime.spark.state_metrics import read_state_metrics
from changeflow.runtime.spark.streaming import StreamingSettings, StreamingTranslator, physical_plan


def submit_streaming_inserts(jobs: SparkJobs, plans: list[Sink], settings: StreamingSettings,
                             job_name: str | None, not_null_enforcer: str = "ERROR") -> InsertJob:
    return InsertJob(lambda job: _run_streaming(jobs, plans, settings, job, job_name, not_null_enforcer),
                     lambda checkpoint: [m.as_dict() for m in read_state_metrics(jobs.spark, checkpoint)])


def submit_batch_inserts(jobs: SparkJobs, plans: list[Sink], settings: PlannerSettings,
                         not_null_enforcer: str = "ERROR") -> InsertJob:
    def run(job: InsertJob) -> None:
        opened = []
        try:
            for plan in plans:
                plan.connector.open(SinkJob.fresh())
                opened.append(plan.connector)
            for plan in plans:
                rows = jobs.run_batch(plan, settings)
                plan.connector.write(enforce(rows, plan.schema, not_null_enforcer, plan.table))
            for plan in plans:
                if hasattr(plan.connector, "finish"):
                    plan.connector.finish()  # every result is written: the end of input (partition commit)
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
            combined, names = combine(frames)
            job.checkpoint = f"{workdir}/checkpoint"
            sink_job = SinkJob.in_directory(workdir, resumed=bool(committed_batches(workdir)))
            for plan in plans:
                plan.connector.open(sink_job)
                opened.append(plan.connector)

            def write(batch: DataFrame, batch_id: int) -> None:
                table = batch.toArrow()

                def deliver() -> None:
                    for i, plan in enumerate(plans):
                        changes = _changes(frame_rows(table, i, names[i]), names[i])
                        plan.connector.write(enforce(changes, plan.schema, not_null_enforcer, plan.table), batch_id)

                sink_job.deliver_once(batch_id, deliver)

            intervals = [v for v in (micro_batch_interval(p, settings) for p in plans) if v is not None]
            interval = min(intervals) if intervals else None
            watermarked = [p.table for p in plans if getattr(p.connector, "wants_watermark", False)]
            if watermarked and interval is not None:
                raise ValueError(f"Table {watermarked[0]}: 'sink.partition-commit.trigger' = 'partition-time' is not "
                                 f"supported in a statement set over unbounded input (its sinks get no watermark); "
                                 f"run the INSERT on its own or use the 'process-time' trigger.")
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
            if interval is None and not job.cancelled:
                for plan in plans:
                    if hasattr(plan.connector, "finish"):
                        plan.connector.finish()  # bounded input ended: the sinks' end of input (partition commit)
    finally:
        for connector in opened:
            connector.close()
