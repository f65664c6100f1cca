"""Starting changeflow's streaming queries, one at a time, with the no-data micro-batch setting each needs
and changeflow's checkpoint settings (:data:`CHECKPOINT_SETTINGS`); a transiently failed query runs again.

Spark copies the session's SQL configuration into a streaming query when it
starts. changeflow's session turns no-data micro-batches off
(``spark.sql.streaming.noDataMicroBatches.enabled``): with them, a query whose
operators have processing-time timers (flush buffers, TTL sweeps) asks for
another micro-batch forever, so an ``availableNow`` query over bounded input
would never end. An unbounded query with such timers needs them on, or idle
flushes and sweeps never run. So the setting is switched on just for the start
of such a query, and every changeflow query starts behind one lock: a bounded
query started by another thread at the same moment (an ``INSERT`` job runs in
a thread of its own) cannot pick the switched setting up.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable

from pyspark.sql import SparkSession

from changeflow.runtime.spark.errors import FAULTHANDLER_CONFS

NO_DATA_BATCHES = "spark.sql.streaming.noDataMicroBatches.enabled"
# Checkpoint settings every changeflow query starts with, unless the session sets the key itself
# (benchmarks/checkpoint_size.py measures them; README "Checkpoint size"). A changeflow operator keeps
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
_starting = threading.Lock()


def start_query(writer: Any, spark: SparkSession | None = None, no_data_batches: bool = False) -> Any:
    """``writer.start()``, behind the start lock, with :data:`CHECKPOINT_SETTINGS` the session does not set
    itself and, with ``no_data_batches``, no-data micro-batches on: for this query only (Spark copies the
    session's SQL configuration into a query as it starts; the session is left as it was)."""
    spark = spark if spark is not None else getattr(writer, "_spark", None)  # the writer's session
    with _starting:
        if spark is None:
            return writer.start()
        # The Python workers' fault-handler log lets a dead worker's error name its function (.errors), also
        # in a session the user passed in (changeflow's own turns it on for its batch jobs too).
        wanted = {**CHECKPOINT_SETTINGS, FAULTHANDLER_CONFS[1]: "true"}
        settings = {key: value for key, value in wanted.items() if spark.conf.get(key, None) is None}
        if no_data_batches:
            settings[NO_DATA_BATCHES] = "true"
        before = {key: spark.conf.get(key, None) for key in settings}
        for key, value in settings.items():
            spark.conf.set(key, value)
        try:
            return writer.start()
        finally:
            for key, value in before.items():
                if value is None:
                    spark.conf.unset(key)
                else:
                    spark.conf.set(key, value)


# --- transient failures --------------------------------------------------------------------------
# A Python worker that cannot connect back to its executor in time (Spark's "Python worker failed to
# connect back", seen on a loaded machine while many workers fork at once) fails the query although
# nothing is wrong with the job. Started again, the query resumes from its checkpoint: the failed
# micro-batch was not committed, and its foreachBatch sink was not called (the sink runs after every
# Python worker of the batch has finished), so the rerun is the same run.
TRANSIENT_FAILURES = ("Python worker failed to connect back",)
TRANSIENT_RETRIES = 2
_log = logging.getLogger(__name__)


def transient(error: BaseException) -> bool:
    """True for a query failure that running the query again from its checkpoint can cure."""
    text = str(error)
    return any(marker.lower() in text.lower() for marker in TRANSIENT_FAILURES)


def await_query(query: Any, restart: Callable[[], Any], retries: int = TRANSIENT_RETRIES,
                pause_s: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> None:
    """``query.awaitTermination()``; a query failing transiently is started again (``restart()``), at most ``retries`` times.

    ``restart`` returns the new query, or None when the job was cancelled meanwhile.
    Any other failure, or one more transient failure than allowed, is raised.
    """
    attempt = 0
    while query is not None:
        try:
            query.awaitTermination()
            return
        except Exception as error:
            if attempt >= retries or not transient(error):
                raise
            attempt += 1
            _log.warning("changeflow: streaming query failed transiently (%s); restarting it from its checkpoint "
                         "(retry %d of %d)", TRANSIENT_FAILURES[0], attempt, retries)
            sleep(pause_s * attempt)
            query = restart()
