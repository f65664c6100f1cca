"""State metrics of a streaming job: keys and bytes per stateful operator, read from its checkpoint.

Spark reports a ``transformWithStateInPandas`` operator's state rows, which
are changeflow's pages (a few hundred keys each, :mod:`changeflow.state.paged`),
so its numbers do not grow with the keys. These metrics read each operator's
pages from the job's checkpoint (the last committed micro-batch) with Spark's
state data source reader and count the keys in them
(:func:`changeflow.state.metrics.summarize`). The pages are read on the driver:
a call costs about what the operator's state weighs, so sample it, do not poll it.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from changeflow.connectors.filestore import join, store_for
from changeflow.state.metrics import OperatorStateMetrics, summarize


def operator_ids(checkpoint: str) -> list[int]:
    """The stateful operators' ids in a checkpoint (directories of ``state/``)."""
    store = store_for(checkpoint)
    state = join(checkpoint, "state")
    if not store.is_dir(state):
        return []
    return sorted(int(name) for name, is_dir in store.entries(state) if is_dir and name.isdigit())


def read_state_metrics(spark: SparkSession, checkpoint: str) -> list[OperatorStateMetrics]:
    """Keys, bytes, pages and rows per table of every changeflow operator in ``checkpoint``."""
    found = []
    for operator_id in operator_ids(checkpoint):
        pages = (spark.read.format("statestore").option("path", checkpoint).option("operatorId", operator_id)
                 .option("stateVarName", "pages").load().select("user_map_key.page", "user_map_value.blob"))
        found.append(summarize(((row[0], bytes(row[1])) for row in pages.toLocalIterator()), operator_id))
    return found
