"""Starting changeflow's streaming queries, one at a time, each with the settings it needs
(:func:`.query_settings.for_query`); a transiently failed query runs again.

Spark copies the session's SQL configuration into a streaming query when it
starts, so each query's settings are set on the session for its start only,
behind one lock (:data:`.query_settings.LOCK`): a query started by another thread
at the same moment (an ``INSERT`` job runs in a thread of its own) cannot pick up
settings meant for this one, and the session is left as it was. The setting that
differs between queries is ``spark.sql.streaming.noDataMicroBatches.enabled``:
off for a query over bounded input (``availableNow``; with no-data micro-batches a
query whose operators have processing-time timers, flush buffers or TTL sweeps,
asks for another micro-batch forever and never ends), on for an unbounded query
whose timers must fire while its input is idle.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

from changeflow.runtime.spark import progress
from changeflow.runtime.spark.query_settings import (
    CHECKPOINT_SETTINGS,
    LOCK,
    NO_DATA_BATCHES,
    applied,
    for_query,
)

__all__ = ["CHECKPOINT_SETTINGS", "NO_DATA_BATCHES", "await_query", "start_query", "transient"]


def start_query(writer: Any, spark: SparkSession | None = None, no_data_batches: bool = False) -> Any:
    """``writer.start()``, behind the start lock, with the settings the query needs
    (:func:`.query_settings.for_query`): no-data micro-batches on with ``no_data_batches``, else off.

    They hold for this query only: Spark copies the session's SQL configuration into
    a query as it starts, and the session's values are restored right after.
    """
    spark = spark if spark is not None else getattr(writer, "_spark", None)  # the writer's session
    with LOCK:
        if spark is None:
            return writer.start()
        with applied(spark, for_query(spark, no_data_batches)):
            return writer.start()


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
    """``query.awaitTermination()``; a query failing transiently is started again (``restart()``),
    at most ``retries`` times.

    ``restart`` returns the new query, or None when the job was cancelled meanwhile.
    Any other failure, or one more transient failure than allowed, is raised.
    """
    attempt = 0
    while query is not None:
        try:
            with progress.shown(query):  # a line on a terminal while the program waits (.progress)
                query.awaitTermination()
            return
        except KeyboardInterrupt:
            query.stop()  # Ctrl-C ends the query it interrupted, not only the wait for it
            raise
        except Exception as error:
            if attempt >= retries or not transient(error):
                raise
            attempt += 1
            _log.warning("changeflow: streaming query failed transiently (%s); restarting it from its checkpoint "
                         "(retry %d of %d)", TRANSIENT_FAILURES[0], attempt, retries)
            sleep(pause_s * attempt)
            query = restart()
