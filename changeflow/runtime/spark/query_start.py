"""Starting changeflow's streaming queries, one at a time, with the no-data micro-batch setting each needs.

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

NO_DATA_BATCHES = "spark.sql.streaming.noDataMicroBatches.enabled"
_starting = threading.Lock()


def start_query(writer: Any, spark: SparkSession | None = None, no_data_batches: bool = False) -> Any:
    """``writer.start()``, behind the start lock; with ``no_data_batches`` (and the ``spark`` session it
    reads), with no-data micro-batches on for this query only."""
    with _starting:
        if not no_data_batches:
            return writer.start()
        before = spark.conf.get(NO_DATA_BATCHES, None)
        spark.conf.set(NO_DATA_BATCHES, "true")
        try:
            return writer.start()
        finally:
            if before is None:
                spark.conf.unset(NO_DATA_BATCHES)
            else:
                spark.conf.set(NO_DATA_BATCHES, before)


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
