"""``Table.cache()`` in batch mode: the DataStream cache's semantics (FLIP-205) for the Table API.

Beyond PyFlink (FLIP-36 proposed ``Table.cache()``; Flink never shipped it)::

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    cleaned = t_env.from_path("events").where(col("v") > 0).cache()
    cleaned.group_by(col("k")).select(col("k"), col("v").sum).execute()   # computes and caches `cleaned`
    cleaned.select(col("v").max).execute()                                # reads the cache
    cleaned.invalidate_cache()                                            # or t_env.close()

The cached table's rows are the query's batch result persisted in Spark's
cache, exactly as a DataStream cache (:mod:`changeflow.runtime.spark.stream_cache`):
created by the first job that computes them, immutable, read by every later
job, recomputed from the query's plan if blocks are lost. The cached table
is a new source over those rows, so a query over it plans from there.
Streaming mode raises: a cache holds a bounded
job's complete result.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from changeflow.plan.nodes import Source
from changeflow.table.table import Table

if TYPE_CHECKING:
    from changeflow.runtime.spark.stream_cache import SparkCache

__all__ = ["CachedTable", "cache_table"]

_ids = itertools.count()


class CachedTable(Table):
    """A :class:`Table` whose rows are cached by the first job computing them (see the module docs)."""

    def __init__(self, plan: Source, t_env, handle: "SparkCache") -> None:
        super().__init__(plan, t_env)
        self._handle = handle

    def invalidate_cache(self) -> None:
        """Releases the cached rows; a later job over this table recomputes and caches them again."""
        self._handle.release()
        # Registered again at once, but empty: as for a new cache, the next job computing the rows keeps them.
        self._handle.register()

    def cache(self) -> "CachedTable":
        """Already cached: this table itself."""
        return self


def cache_table(table: Table) -> CachedTable:
    """``table.cache()``: persists the query's batch result lazily and returns a table reading it."""
    from pyspark.sql import functions as F

    from changeflow.runtime.spark.stream_cache import SparkCache

    t_env = table._t_env
    if t_env.streaming:
        raise RuntimeError(
            "Table.cache() is supported in batch mode only (EnvironmentSettings.in_batch_mode()): a cache holds "
            "the complete result of a bounded query for later jobs to read, and a streaming query's result "
            "is never complete")
    plan = table.plan
    # Nothing runs here: Spark persists lazily, when the first job computes these rows.
    handle = SparkCache(t_env._spark_jobs().batch_frame(plan))
    persisted = handle.register()
    t_env._table_caches.append(handle)
    # The reading source numbers its rows anew, in the order Spark reads the cache: as the seed says,
    # a reader must not assume how the cache is partitioned (a sort here would compute it twice).
    rows = persisted.select(*[F.col(f"`{n}`") for n in plan.field_names])
    return CachedTable(Source(f"cached_{next(_ids)}", plan.schema, "spark", rows), t_env, handle)
