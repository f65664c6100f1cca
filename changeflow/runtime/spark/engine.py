"""The Spark implementation of :class:`changeflow.runtime.engine.Engine`: what the front ends run jobs through.

One :class:`SparkEngine` per environment. It owns the environment's
SparkSession (the user's ``spark_session=``, else one created at the first
job) and turns the environment's configuration into the runtime's settings
when a job runs, so the front ends never see a Spark object or a runtime
setting.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from changeflow.common.configuration import Configuration
from changeflow.common.row_kind import RowKind
from changeflow.common.types import DataType
from changeflow.config import to_millis, validate_mini_batch
from changeflow.plan.flush_policy import flush_policy
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan.nodes import PlanNode, Sink
from changeflow.plan.optimizer import PlannerSettings
from changeflow.runtime.zone_values import shown_in_zone
from changeflow.runtime.changes import QueryRun
from changeflow.runtime.spark import session
from changeflow.runtime.spark.stream_cache import SparkCache
from changeflow.runtime.spark.connectors.connector_sources import trigger_interval_ms
from changeflow.runtime.spark.job_directory import temporary_directory
from changeflow.runtime.spark.jobs import InsertJob, SparkJobs
from changeflow.runtime.spark.spark_types import from_spark
from changeflow.runtime.spark.streaming import StreamingSettings
from changeflow.runtime.spark.python_udf import job_parameters

__all__ = ["SparkEngine"]


class SparkEngine:
    """Runs the jobs of one environment on Spark (see :class:`changeflow.runtime.engine.Engine`)."""

    def __init__(self, configuration: Configuration, spark_session: SparkSession | None = None) -> None:
        self._conf = configuration  # the environment's own, live: read when a job runs
        self._spark = spark_session
        self._jobs: SparkJobs | None = None

    # --- the session and the runtime's settings ----------------------------------------
    def session(self) -> SparkSession:
        """The environment's SparkSession: the user's (checked), or one created now with changeflow's settings."""
        ship = self._conf.get("changeflow.ship-package")
        if self._spark is None:
            self._spark = session.get_or_create(self._conf.get("changeflow.spark.master"), ship_package=ship,
                                                log=self._conf.get("changeflow.spark.log"),
                                                ui=bool(self._conf.get("changeflow.spark.ui")),
                                                warm=bool(self._conf.get("changeflow.spark.warm-python")),
                                                quick_jit=bool(self._conf.get("changeflow.spark.quick-jit")))
        else:
            session.check(self._spark, ship)
        return self._spark

    @property
    def jobs(self) -> SparkJobs:
        """The Table API's job runner on this engine's session (created, with the session, when first needed)."""
        if self._jobs is None:
            self._jobs = SparkJobs(self.session(), self._conf.get("changeflow.checkpoint-dir"))
        return self._jobs

    def streaming_settings(self) -> StreamingSettings:
        """A Table API streaming job's settings, from the configuration as it is now."""
        enabled = bool(self._conf.get("table.exec.mini-batch.enabled"))
        if enabled:
            validate_mini_batch(self._conf)  # as Flink's planner: latency and size must be set together
        rows = int(self._conf.get("table.exec.mini-batch.size")) if enabled else \
            int(self._conf.get("changeflow.source.rows-per-batch"))
        return StreamingSettings(mini_batch=enabled, rows_per_batch=rows,
                                 buckets=int(self._conf.get("changeflow.state.buckets")), pages=64,
                                 agg_phase_strategy=str(self._conf.get("table.optimizer.agg-phase-strategy")),
                                 flush=flush_policy(self._conf),
                                 state_ttl_ms=to_millis(self._conf.get("table.exec.state.ttl")),
                                 distinct_agg_split=bool(self._conf.get("table.optimizer.distinct-agg.split.enabled")),
                                 distinct_agg_split_buckets=int(
                                     self._conf.get("table.optimizer.distinct-agg.split.bucket-num")),
                                 watermark_interval_ms=to_millis(self._conf.get("pipeline.auto-watermark-interval")),
                                 mini_batch_latency_ms=to_millis(self._conf.get("table.exec.mini-batch.allow-latency"))
                                 if enabled else 0,
                                 mini_batch_size=rows if enabled else -1,
                                 cdc_events_duplicate=bool(self._conf.get("table.exec.source.cdc-events-duplicate")),
                                 time_zone=self._time_zone())

    def batch_settings(self) -> PlannerSettings:
        """What a Table API batch job is planned with, from the configuration as it is now."""
        return PlannerSettings(streaming=False, time_zone=self._time_zone())

    def _time_zone(self) -> str | None:
        # The planner computes in it (plan/rules/session_time_zone.py); results are shown in it (zone_values.py).
        return self._conf.get("table.local-time-zone")

    # --- Table API and SQL --------------------------------------------------------------
    def run_query(self, plan: PlanNode, streaming: bool) -> QueryRun:
        zone = self._time_zone()
        with job_parameters(self._conf):  # what Python functions' FunctionContext reads (python_udf.py)
            run = self._run_query(plan, streaming)
        return shown_in_zone(run, plan.schema, zone)

    def _run_query(self, plan: PlanNode, streaming: bool) -> QueryRun:
        jobs = self.jobs
        if not streaming:
            return QueryRun(jobs.run_batch(plan, self.batch_settings()))
        if trigger_interval_ms(plan) is not None:  # unbounded input: read the changes while it runs
            return QueryRun(live=jobs.start_live(plan, self.streaming_settings()))
        return QueryRun(jobs.run_streaming(plan, self.streaming_settings()))

    def submit_insert(self, plan: Sink, streaming: bool, job_name: str | None) -> InsertJob:
        with job_parameters(self._conf):
            return self._submit_insert(plan, streaming, job_name)

    def _submit_insert(self, plan: Sink, streaming: bool, job_name: str | None) -> InsertJob:
        jobs = self.jobs
        enforcer = self._conf.get("table.exec.sink.not-null-enforcer")
        if streaming:
            return jobs.submit_streaming_insert(plan, self.streaming_settings(), job_name, enforcer)
        return jobs.submit_batch_insert(plan, self.batch_settings(), enforcer)

    def submit_inserts(self, plans: list[Sink], streaming: bool, job_name: str | None) -> InsertJob:
        from changeflow.runtime.spark.multi_sink import submit_batch_inserts, submit_streaming_inserts

        enforcer = self._conf.get("table.exec.sink.not-null-enforcer")
        if streaming:
            return submit_streaming_inserts(self.jobs, plans, self.streaming_settings(), job_name, enforcer)
        return submit_batch_inserts(self.jobs, plans, self.batch_settings(), enforcer)

    def to_frame(self, plan: PlanNode, streaming: bool) -> DataFrame:
        with job_parameters(self._conf):
            return self._to_frame(plan, streaming)

    def _to_frame(self, plan: PlanNode, streaming: bool) -> DataFrame:
        jobs = self.jobs
        names = [F.col(f"`{n}`") for n in plan.field_names]
        if not streaming:
            return jobs.batch_frame(plan, self.batch_settings()).select(*names)
        workdir = temporary_directory(self._conf.get("changeflow.checkpoint-dir"))
        frame = jobs.streaming_frame(plan, self.streaming_settings(), workdir)
        # _kind holds RowKind values 0..3; element_at counts from 1.
        op = F.element_at(F.array(*[F.lit(str(kind)) for kind in RowKind]), F.col(KIND).cast("int") + 1)
        return frame.select(op.alias("op"), *names, SEQ, SUB)

    def cache_table(self, plan: PlanNode) -> tuple[SparkCache, DataFrame]:
        # Nothing runs here: Spark persists lazily, when the first job computes these rows.
        handle = SparkCache(self.jobs.batch_frame(plan, self.batch_settings()))
        persisted = handle.register()
        # The reader numbers its rows anew, in the order Spark reads the cache: as FLIP-205 says, a reader
        # must not assume how the cache is partitioned (a sort here would compute it twice).
        return handle, persisted.select(*[F.col(f"`{n}`") for n in plan.field_names])

    def frame_schema(self, frame: Any) -> tuple[tuple[str, DataType], ...]:
        self.check_frame(frame, "from_spark()")
        return tuple((f.name, from_spark(f.dataType, f.nullable)) for f in frame.schema.fields)

    # --- DataStream API -----------------------------------------------------------------
    def check_frame(self, frame: Any, what: str) -> None:
        if not isinstance(frame, DataFrame):
            raise TypeError(f"{what} takes a Spark DataFrame here, got {type(frame).__name__}")

    def run_datastream(self, outputs: list[tuple[Any, Any]], streaming: bool, job_name: str | None,
                       caches: Any, runtime_context: Any) -> None:
        # A DataStream job's own operators read only these settings; a Table plan converted inside it
        # is translated with the Table API's (streaming_settings, read when the job meets one).
        rows = int(self._conf.get("changeflow.source.rows-per-batch"))
        settings = StreamingSettings(mini_batch=False, rows_per_batch=rows,
                                     buckets=int(self._conf.get("changeflow.state.buckets")), pages=64,
                                     flush=flush_policy(self._conf)) if streaming else None
        self.jobs.run_datastream(outputs, settings, job_name, caches, runtime_context, self.streaming_settings,
                                 None if streaming else self.batch_settings())
