"""A sink that discards its changes (``blackhole``), run on the executors.

Every other streaming sink gets each micro-batch's changes on the driver
(``batch.toArrow()`` in the ``foreachBatch`` of :mod:`.jobs`), as Python
changes in changelog order. A sink that keeps nothing needs none of that: the
micro-batch still has to run in full (its stateful operators update and commit
their state, a bad record or a failing function still fails the job), but its
output rows can be dropped where they are made. So such a sink's micro-batch is
written to Spark's ``noop`` format, which runs every task to its end and
returns nothing to the driver, as Spark's own benchmarks write. The job keeps
its record of delivered micro-batches, its end of input and its failures as
before.

One guarantee needs the rows: the NOT NULL enforcer in its ``ERROR`` mode
fails the job naming the first offending change in changelog order
(:mod:`changeflow.runtime.sink_not_null`). A sink table with NOT NULL columns
under that mode therefore keeps the driver path; under ``DROP`` a dropped
change and a discarded one are the same.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame

from changeflow.runtime.sink_not_null import not_null_columns


def discards_on_executors(sink: Any, schema, not_null_enforcer: str) -> bool:
    """Whether ``sink``'s micro-batches can run without their rows reaching the driver (see the module)."""
    return bool(getattr(sink, "discards_changes", False)) and (
        not_null_enforcer == "DROP" or not not_null_columns(schema))


def run_discarding(batch: DataFrame) -> None:
    """Run one micro-batch of the query to its end on the executors; its rows go nowhere."""
    batch.write.format("noop").mode("overwrite").save()
