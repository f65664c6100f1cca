"""The Spark SQL settings a changeflow query needs, applied per job and per query so a user's own session works.

changeflow's own session (:mod:`.session`) is built with these settings. A session
the user passes in (``spark_session=``, or an active session changeflow finds) is
left as it is: changeflow sets what its work needs on it for the time that work
needs it and restores the session's values after.

- **Per job** (:func:`for_job`): while a job's plan is translated into DataFrames
  and while a batch job's Spark action runs. Spark fixes some settings into a
  DataFrame when it is built (a time-zone-aware expression takes the session time
  zone at analysis), others when an action runs (the Python workers' time zone).
- **Per query** (:func:`for_query`, used by :func:`.query_start.start_query`):
  while a streaming query starts. Spark copies the session's SQL configuration into
  a streaming query as it starts, so the settings hold for that query's life (and
  its restarts from the checkpoint) and no longer than the start on the session.

What each setting is for (the audit of every setting :func:`.session.get_or_create` makes):

================================================  =======  ==========================================
setting                                           applied  why
================================================  =======  ==========================================
``spark.sql.session.timeZone`` = UTC              job      semantics: TIMESTAMP_LTZ values (PROCTIME(),
                                                           CURRENT_TIMESTAMP) and time functions
                                                           (FROM_UNIXTIME, DATE_FORMAT, ...) are UTC, and
                                                           the kernels see timestamps as naive UTC
                                                           values (naive local times repeat an hour when
                                                           daylight saving ends)
``spark.sql.execution.arrow.pyspark.enabled``     job      staged sources (``createDataFrame`` of pandas)
                                                           convert through Arrow, as the kernels do
``spark.sql.execution.pyspark.udf.faulthandler``  job      a dead Python worker's error names the user
                                                           function it ran (:mod:`.errors`)
``spark.sql.execution.arrow.maxRecordsPerBatch``  job      performance only (100k-row Arrow batches): the
                                                           session's own value wins
``spark.sql.execution.arrow.maxBytesPerBatch``    job      performance only (no byte limit, as before Spark
                                                           4.0; batches stay bounded by the row count): the
                                                           session's own value wins
``spark.sql.streaming.stateStore.providerClass``  query    transformWithState needs RocksDB
``spark.sql.streaming.noDataMicroBatches...``     query    each query's own need (:func:`for_query`)
checkpoint settings (:data:`CHECKPOINT_SETTINGS`) query    checkpoint size; the session's own value wins
================================================  =======  ==========================================

Left as the session has them: ``spark.sql.shuffle.partitions`` (performance only: a
stateful operator's parallelism is ``changeflow.state.buckets``), ``spark.ui.*`` and
the console progress bar (cosmetic), ``spark.local.dir`` and the temp root
(housekeeping), the JVM's options, the fault handler of non-SQL Python workers and
the executors' Python (static: fixed when the SparkContext starts; the SQL
fault-handler setting above covers changeflow's workers). A setting the session
refuses to change at runtime fails the job with :class:`SessionSettingError`
naming it.

All changes to a session's settings happen under one lock (:data:`LOCK`); jobs
running at once on one session share the job settings (the first sets them, the
last restores the session's values). While a changeflow job translates or a batch
job runs, other work on the same session sees the job settings.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from changeflow.runtime.spark.errors import FAULTHANDLER_CONFS

TIME_ZONE = "spark.sql.session.timeZone"
ARROW = "spark.sql.execution.arrow.pyspark.enabled"
ARROW_BATCH_ROWS = "spark.sql.execution.arrow.maxRecordsPerBatch"
ARROW_BATCH_BYTES = "spark.sql.execution.arrow.maxBytesPerBatch"
UDF_FAULTHANDLER = FAULTHANDLER_CONFS[1]  # the SQL one: settable at runtime, unlike FAULTHANDLER_CONFS[0]
STATE_STORE_PROVIDER = "spark.sql.streaming.stateStore.providerClass"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
NO_DATA_BATCHES = "spark.sql.streaming.noDataMicroBatches.enabled"

# Checkpoint settings every changeflow query starts with, unless the session sets the key itself
# (benchmarks/checkpoint_size.py measures them; docs/benchmarks.md "Checkpoint size"). A changeflow operator keeps
# its state in pages (runtime/spark/processor.py), so a micro-batch that touches keys across the
# key space rewrites about all of it: every retained micro-batch costs about the live state's size.
# Spark retains 100 micro-batches, and deletes older ones only in its state maintenance, every 60 s
# (more micro-batches than that may pile up in between): a GROUP BY's checkpoint grew to 30-120x its
# live state. A restart needs only the last committed micro-batch (Flink keeps one completed
# checkpoint by default); changeflow keeps 5 and runs maintenance every 10 s. RocksDB's changelog
# checkpointing stays off: with pages a micro-batch's changelog is about a snapshot's size, and a
# restart would replay the changelogs since the last snapshot. Maintenance runs per executor: the
# interval of the first stateful query an executor runs holds there.
CHECKPOINT_SETTINGS = {
    "spark.sql.streaming.minBatchesToRetain": "5",
    "spark.sql.streaming.stateStore.maintenanceInterval": "10s",
}
# What changeflow's work needs, whatever the session says.
JOB_SETTINGS = {TIME_ZONE: "UTC", ARROW: "true", UDF_FAULTHANDLER: "true"}
# What changeflow prefers where the session does not set the key itself (performance). Below its largest
# value (2^31 - 1, "no limit") Spark measures the Arrow batch it builds for a Python worker after every row
# (ArrowWriter.sizeInBytes, a walk over the batch's vectors): a tenth of the JVM CPU of the event-time
# window benchmark's packing stage (docs/benchmarks.md). Spark 3.5 had no byte limit; the row limit stays.
JOB_DEFAULTS = {ARROW_BATCH_ROWS: "100000", ARROW_BATCH_BYTES: str(2**31 - 1)}
QUERY_SETTINGS = {STATE_STORE_PROVIDER: ROCKSDB}
QUERY_DEFAULTS = CHECKPOINT_SETTINGS
# The SQL settings changeflow's own session is built with (:func:`.session.get_or_create`): no-data
# micro-batches off, the value every query over bounded input needs.
CHANGEFLOW_SESSION_SETTINGS = {**JOB_SETTINGS, **JOB_DEFAULTS, **QUERY_SETTINGS, **QUERY_DEFAULTS,
                               NO_DATA_BATCHES: "false"}

LOCK = threading.RLock()
# (session, key) -> [jobs holding the key, the session's value before the first of them (None: unset)]
_held: dict[tuple[Any, str], list] = {}


class SessionSettingError(RuntimeError):
    """A setting changeflow needs for its queries cannot be set on the session at runtime."""


def for_query(spark: Any, no_data_batches: bool) -> dict[str, str]:
    """The settings a streaming query starts with: the job's, RocksDB, the checkpoint settings the
    session does not set itself, and no-data micro-batches on or off as the query needs.

    ``no_data_batches`` False is what every query over bounded input (``availableNow``) needs: with
    no-data micro-batches, a query whose operators have processing-time timers (flush buffers, TTL
    sweeps) asks for another micro-batch forever and never ends. An unbounded query whose timers must
    fire while its input is idle (idle flushes, sweeps) needs True.
    """
    settings = {**_job_values(spark), **QUERY_SETTINGS, **_defaults(spark, QUERY_DEFAULTS)}
    settings[NO_DATA_BATCHES] = "true" if no_data_batches else "false"
    return settings


@contextmanager
def applied(spark: Any, settings: dict[str, str]) -> Iterator[None]:
    """``settings`` set on ``spark`` inside the block, the session's values restored after (under :data:`LOCK`)."""
    with LOCK:
        before = {key: spark.conf.get(key, None) for key in settings}
        try:
            for key, value in settings.items():
                _set(spark, key, value)
            yield
        finally:
            for key, value in before.items():
                _restore(spark, key, value)


@contextmanager
def for_job(spark: Any, starts_queries: bool = False) -> Iterator[None]:
    """The job settings on ``spark`` while the block runs (a job's translation, a batch job's action).

    With ``starts_queries`` (changeflow starts the job's streaming queries), the translation also sees
    no-data micro-batches off, as those queries will start over bounded input (an operator decides
    from it whether its TTL sweep may run from timers); a frame the user starts (``to_spark()``) is
    translated for the session's own setting.
    """
    settings = _job_values(spark)
    if starts_queries:
        settings[NO_DATA_BATCHES] = "false"
    taken: list[str] = []
    with LOCK:
        try:
            for key, value in settings.items():
                hold = _held.get((spark, key))
                if hold is None:
                    hold = _held[(spark, key)] = [0, spark.conf.get(key, None)]
                hold[0] += 1
                taken.append(key)
                _set(spark, key, value)
        except BaseException:
            for key in taken:
                _release(spark, key)
            raise
    try:
        yield
    finally:
        with LOCK:
            for key in settings:
                _release(spark, key)


def _release(spark: Any, key: str) -> None:
    hold = _held[(spark, key)]
    hold[0] -= 1
    if hold[0] == 0:
        del _held[(spark, key)]
        _restore(spark, key, hold[1])


def _job_values(spark: Any) -> dict[str, str]:
    return {**JOB_SETTINGS, **_defaults(spark, JOB_DEFAULTS)}


def _defaults(spark: Any, defaults: dict[str, str]) -> dict[str, str]:
    """The entries of ``defaults`` the session does not set itself (before any job changed it)."""
    with LOCK:
        return {key: value for key, value in defaults.items() if _session_value(spark, key) is None}


def _session_value(spark: Any, key: str) -> str | None:
    hold = _held.get((spark, key))
    return hold[1] if hold is not None else spark.conf.get(key, None)


def _set(spark: Any, key: str, value: str) -> None:
    try:
        spark.conf.set(key, value)
    except Exception as error:
        raise SessionSettingError(
            f"changeflow needs the Spark setting {key} = {value} for its queries, and this session does not let "
            f"it be changed at runtime ({str(error).splitlines()[0] if str(error) else type(error).__name__}); "
            f"set it when the session is built") from error


def _restore(spark: Any, key: str, value: str | None) -> None:
    if value is None:
        spark.conf.unset(key)
    else:
        spark.conf.set(key, value)


def check_user_query(spark: Any, frame: Any) -> None:
    """Fail naming the setting when a frame the user will start (``to_spark()``) has stateful operators and
    ``spark`` does not run them on RocksDB (transformWithState needs it; changeflow does not start that query,
    so it cannot set it for the query)."""
    provider = spark.conf.get(STATE_STORE_PROVIDER, None)
    if provider == ROCKSDB:
        return
    if "TransformWithState" not in frame._jdf.queryExecution().logical().toString():
        return
    shown = provider or "none set (Spark's default, HDFS-backed)"
    raise SessionSettingError(
        f"to_spark() gives a streaming query with stateful operators, which need "
        f"{STATE_STORE_PROVIDER} = {ROCKSDB}; this session has {shown}: set it "
        f"on the session before starting the query (changeflow sets it itself for the queries it starts)")
