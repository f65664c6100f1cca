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

import threading
from typing import Any

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
