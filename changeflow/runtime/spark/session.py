"""The SparkSession changeflow runs on: the user's, or a local one set up for state."""

from __future__ import annotations

import os
import sys
import threading

from pyspark.sql import SparkSession

from changeflow.runtime.spark import shipping, temp_root
from changeflow.runtime.spark.errors import FAULTHANDLER_CONFS, quiet_failure_logs
from changeflow.runtime.spark.query_start import CHECKPOINT_SETTINGS

_ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_lock = threading.Lock()


def get_or_create(master: str = "local[*]", extra: dict[str, str] | None = None,
                  ship_package: bool = True) -> SparkSession:
    """A SparkSession able to run changeflow's stateful operators.

    transformWithStateInPandas needs the RocksDB state store provider and the Python
    workers must run this interpreter (it has pandas, pyarrow and protobuf), so both
    are set before the JVM starts. An active session is reused and checked instead.
    A local session keeps its temp files under changeflow's temp root (:mod:`.temp_root`).
    """
    with _lock:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        active = SparkSession.getActiveSession()
        if active is not None:
            check(active, ship_package)
            return active
        builder = (
            SparkSession.builder.master(master)
            .appName("changeflow")
            .config("spark.sql.streaming.stateStore.providerClass", _ROCKSDB)
            .config("spark.sql.shuffle.partitions", str(max(2, os.cpu_count() or 2)))
            .config("spark.ui.enabled", "false")
            # The progress bar would interleave with changelogs printed to the console.
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
            # Stateful operators take their input through mapInPandas (runtime/spark/packing.py);
            # Arrow batches of 10k rows (Spark's default) cost ~0.5 s per 2M-row partition in
            # per-batch overhead, 100k rows about a tenth of that.
            .config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
            # A worker that dies leaves a log Spark puts into its error; changeflow writes there which
            # user function ran (runtime/spark/errors.py), so the error names it.
            .config(FAULTHANDLER_CONFS[0], "true")
            .config(FAULTHANDLER_CONFS[1], "true")
        )
        # Checkpoint settings also for queries changeflow does not start (a user's writeStream over to_spark()).
        extra = {**CHECKPOINT_SETTINGS, **(extra or {})}
        if master.startswith("local") and "spark.local.dir" not in extra:
            # The JVM's and Spark's temp files go under one changeflow root, cleaned of crashed runs' (.temp_root).
            temp_root.clean_dead()
            extra.update(temp_root.session_settings(extra.get("spark.driver.extraJavaOptions")))
        for key, value in extra.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        shipping.prepare(session, ship_package)  # off local[...]: changeflow to the executors (.shipping)
        quiet_failure_logs(session)  # the job's error says it; Spark's trace only on request (.errors)
        return session


def check(session: SparkSession, ship_package: bool = True) -> None:
    shipping.prepare(session, ship_package)  # off local[...]: changeflow to the executors (.shipping)
    provider = session.conf.get("spark.sql.streaming.stateStore.providerClass", "")
    if provider != _ROCKSDB:
        # The provider is a runtime SQL conf: set it for this session rather than fail.
        session.conf.set("spark.sql.streaming.stateStore.providerClass", _ROCKSDB)
