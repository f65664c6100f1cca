"""The SparkSession changeflow runs on: the user's, or a local one set up for state.

changeflow's own session is built with the SQL settings its queries need
(:data:`.query_settings.CHANGEFLOW_SESSION_SETTINGS`); a user's session is left
as it is, and changeflow sets those settings per job and per query instead
(:mod:`.query_settings`).
"""

from __future__ import annotations

import os
import sys
import threading

from pyspark import SparkContext
from pyspark.sql import SparkSession

from changeflow.runtime.spark import console_log, shipping, temp_root, warm_python, worker_python
from changeflow.runtime.spark.connectors.kafka_source import spark_jars as kafka_jars
from changeflow.runtime.spark.errors import FAULTHANDLER_CONFS, quiet_failure_logs
from changeflow.runtime.spark.query_settings import (
    CHANGEFLOW_SESSION_SETTINGS,
    SessionSettingError,
)

_lock = threading.Lock()
# HotSpot's quick (C1) JIT compiler alone, for a local session's JVM (``changeflow.spark.quick-jit``). Every
# query makes Spark generate and load new classes, and the optimising (C2) compiler's work on them is rarely
# earned back in a local job: Nexmark q5 over 30,000 events took about 52 CPU seconds with C2 (19.5 of them
# compiling) and 36 with C1 alone (4.2 compiling), its executor tasks no slower (docs/benchmarks.md,
# "Where a Nexmark query's CPU seconds go").
QUICK_JIT = "-XX:TieredStopAtLevel=1"
# The PYSPARK_PYTHON this process's changeflow set, to tell it from one the user set (a later session
# of this process sees it in the environment and must not take it for the user's choice).
_ours: str | None = None


def get_or_create(master: str = "local[*]", extra: dict[str, str] | None = None,
                  ship_package: bool = True, log: str | None = None, ui: bool = False,
                  warm: bool = True, quick_jit: bool = True) -> SparkSession:
    """A SparkSession able to run changeflow's stateful operators.

    transformWithStateInPandas needs the RocksDB state store provider and the Python
    workers must run this interpreter (it has pandas, pyarrow and protobuf), so both
    are set before the JVM starts. An active session is reused and checked instead.
    A local session keeps its temp files under changeflow's temp root (:mod:`.temp_root`).
    ``log`` is ``changeflow.spark.log``: where the JVM's console output goes (:mod:`.console_log`);
    ``ui`` is ``changeflow.spark.ui``: serve Spark's web UI and print its address.
    ``warm`` is ``changeflow.spark.warm-python``: on a ``local[...]`` master, Spark's Python processes are
    forked from an interpreter that has imported pyspark and pandas already (:mod:`.warm_python`).
    ``quick_jit`` is ``changeflow.spark.quick-jit``: a ``local[...]`` session's JVM compiles with HotSpot's
    C1 compiler only (:data:`QUICK_JIT`), unless the JVM options given already choose a JIT level.
    """
    global _ours
    with _lock:
        users_python = os.environ.get("PYSPARK_PYTHON")   # the warm server runs this interpreter only
        if users_python is not None and users_python == _ours:
            users_python = None   # set by an earlier session of this process: ours, not the user's
        if "PYSPARK_PYTHON" not in os.environ:
            # A local session's workers import pyspark's compiled package, not its zip (.worker_python):
            # compiling the zip made the driver-side worker of a stateful query miss Spark's 10 s start limit.
            _ours = worker_python.launcher() if master.startswith("local") else sys.executable
            os.environ["PYSPARK_PYTHON"] = _ours
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        active = SparkSession.getActiveSession()
        if active is not None:
            check(active, ship_package)
            return active
        builder = (
            SparkSession.builder.master(master)
            .appName("changeflow")
            .config("spark.ui.enabled", "true" if ui else "false")
            # The progress bar would interleave with changelogs printed to the console.
            .config("spark.ui.showConsoleProgress", "false")
            # Performance only (a stateful operator's parallelism is changeflow.state.buckets):
            # not set on a user's session.
            .config("spark.sql.shuffle.partitions", str(max(2, os.cpu_count() or 2)))
            # A worker that dies leaves a log Spark puts into its error; changeflow writes there which
            # user function ran (runtime/spark/errors.py), so the error names it. This one is static (the
            # SQL one, which falls back to it, is set per job on a user's session).
            .config(FAULTHANDLER_CONFS[0], "true")
            # A Python worker started on a busy machine (a 2-core one running other Spark work) took longer
            # than Spark's 15 s to connect back and the query failed ("Python worker failed to connect back");
            # a worker that starts slowly is not an error. Static: only a session changeflow creates.
            .config("spark.python.authenticate.socketTimeout", "180s")
        )
        # The settings changeflow's queries need, in the session itself: also for queries changeflow does not
        # start (a user's writeStream over to_spark()). Stateful operators take their input through mapInPandas
        # (runtime/spark/packing.py); Arrow batches of 10k rows (Spark's default) cost ~0.5 s per 2M-row
        # partition in per-batch overhead, 100k rows about a tenth of that (.query_settings lists the rest).
        extra = {**CHANGEFLOW_SESSION_SETTINGS, **(extra or {})}
        jars = kafka_jars()  # Spark's Kafka source, if ./setup.sh fetched it (the 'kafka' connector)
        if jars and "spark.jars" not in extra:
            extra["spark.jars"] = ",".join(jars)
        if quick_jit and master.startswith("local"):
            extra.update(jit_options(extra.get("spark.driver.extraJavaOptions"), os.environ.get("SPARK_SUBMIT_OPTS")))
        if master.startswith("local") and "spark.local.dir" not in extra:
            # The JVM's and Spark's temp files go under one changeflow root, cleaned of crashed runs' (.temp_root).
            temp_root.clean_dead()
            extra.update(temp_root.session_settings(extra.get("spark.driver.extraJavaOptions")))
        for key, value in extra.items():
            builder = builder.config(key, value)
        # Only a JVM started now can be given other output streams; one already running keeps its own.
        jvm_starts = SparkContext._gateway is None
        # Started before the JVM, the fork server imports while the JVM starts (.warm_python).
        launcher = None
        if warm and SparkContext._active_spark_context is None and warm_python.enabled(master, users_python):
            launcher = warm_python.start(temp_root.process_dir())
        with console_log.jvm_output_to(console_log.target(log) if jvm_starts else None):
            session = builder.getOrCreate()
        if launcher is not None:
            # The Python executable every Python function of this context names (Spark runs it as
            # `<exec> -m <module>`); read from PYSPARK_PYTHON when the context starts, set on it here so
            # that the environment of the process (and of what it starts) is not changed.
            session.sparkContext.pythonExec = launcher
        session.sparkContext.setLogLevel("ERROR")
        if ui:
            print(f"changeflow: Spark UI at {session.sparkContext.uiWebUrl}", file=sys.stderr, flush=True)
        shipping.prepare(session, ship_package)  # off local[...]: changeflow to the executors (.shipping)
        quiet_failure_logs(session)  # the job's error says it; Spark's trace only on request (.errors)
        return session


def jit_options(java_options: str | None, submit_options: str | None) -> dict[str, str]:
    """The driver JVM options of a local session with :data:`QUICK_JIT` added; none when the options given
    (``spark.driver.extraJavaOptions``, ``SPARK_SUBMIT_OPTS``) choose a JIT level themselves.

    >>> jit_options(None, None)
    {'spark.driver.extraJavaOptions': '-XX:TieredStopAtLevel=1'}
    >>> jit_options("-Xss4m", "-XX:TieredStopAtLevel=4")
    {}
    """
    if any("TieredStopAtLevel" in (o or "") for o in (java_options, submit_options)):
        return {}
    return {"spark.driver.extraJavaOptions": f"{java_options} {QUICK_JIT}" if java_options else QUICK_JIT}


def check(session: SparkSession, ship_package: bool = True) -> None:
    """Prepare a session changeflow did not create (the user's) for changeflow's jobs, without changing its settings.

    The SQL settings changeflow's queries need are set per job and per query
    (:mod:`.query_settings`), not here: the user's session keeps its own.
    """
    if getattr(session, "_jsparkSession", None) is None:
        raise SessionSettingError(
            f"changeflow runs on a classic SparkSession (it reads state and files through the session's JVM); "
            f"got {type(session).__module__}.{type(session).__name__} (a Spark Connect session is not supported)")
    shipping.prepare(session, ship_package)  # off local[...]: changeflow to the executors (.shipping)
