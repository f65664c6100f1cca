"""DataStream caches (FLIP-205) on Spark: a cached stream's records are a persisted DataFrame.

Storage. A cache node's records (the ``(_value, _seq, _sub)`` DataFrame of its
input) are persisted with Spark's cache manager at storage level
``MEMORY_AND_DISK`` when the first job translating the node is built. Spark
caches lazily: the blocks are written while that job computes them, so the
cache is created by the first job that computes it, as the seed asks, with
no extra pass. Every later job of the environment starts from the same
persisted DataFrame, and Spark reads the blocks instead of running the plan
under it (the user functions above the cache do not run again).

Failover. The persisted DataFrame keeps its lineage (the plan that computed
it), so a lost block (an executor died, the block manager evicted or dropped
it) is recomputed from that plan by the task that needs it and stored again:
the job succeeds with the same records, transparently, as the seed's Failover
section requires (Flink resubmits the original job; Spark recomputes only
the lost partitions). If the cache manager forgot the DataFrame altogether
(``spark.catalog.clearCache()`` by other code on the session), the next job
persists it again and recomputes it once. Spark's ``localCheckpoint`` and
files written to a temp directory were the alternatives: the first truncates
the lineage (a lost block fails the job), the second needs a directory every
executor shares and an extra pass to write and read the files.

Immutability holds while the blocks live; a recompute reruns the original
plan, so a source that changed since (a text file rewritten) or a
non-deterministic function can give different records, as in Flink.

Only batch jobs cache (``changeflow.datastream.cache.check_batch``): a
cache needs a bounded job's complete result.
"""

from __future__ import annotations

from typing import Callable

from pyspark import StorageLevel
from pyspark.sql import DataFrame

from changeflow.plan.stream_caches import CacheNode, CacheRegistry

__all__ = ["JobCaches", "SparkCache"]

# Memory first, spilling to local disk rather than dropping blocks under memory pressure.
STORAGE_LEVEL = StorageLevel.MEMORY_AND_DISK


class SparkCache:
    """The handle a :class:`~changeflow.plan.stream_caches.CacheRegistry` keeps: the persisted records."""

    def __init__(self, frame: DataFrame) -> None:
        self.frame = frame

    def registered(self) -> bool:
        """Whether Spark's cache manager still holds the DataFrame (its blocks may still be lost, see above)."""
        level = self.frame.storageLevel
        return level.useMemory or level.useDisk

    def release(self) -> None:
        # Non-blocking: the blocks are removed in the background; the DataFrame stops being cached at once.
        self.frame.unpersist(blocking=False)

    def register(self) -> DataFrame:
        """Registers the DataFrame with Spark's cache manager (again); the next job computing it keeps its blocks.

        Registering is lazy and cheap: nothing is computed until a job reads the frame.
        """
        return self.frame.persist(STORAGE_LEVEL)


class JobCaches:
    """The caches one job reads or creates; created ones enter the registry only if the job succeeds."""

    def __init__(self, registry: CacheRegistry | None) -> None:
        self.registry = registry if registry is not None else CacheRegistry()
        self.created: list[tuple[CacheNode, SparkCache]] = []

    def translate(self, node: CacheNode, compute: Callable[[], DataFrame]) -> DataFrame:
        """The records of ``node``: its cache, or ``compute()`` persisted to become the cache."""
        cached = self.registry.get(node)
        if cached is not None:
            if not cached.registered():
                cached.register()  # forgotten by Spark: this job computes it again
            return cached.frame
        cache = SparkCache(compute())
        self.created.append((node, cache))
        return cache.register()

    def commit(self) -> None:
        """The job succeeded: its caches exist now, for later jobs."""
        for node, cache in self.created:
            self.registry.put(node, cache)
        self.created = []

    def abandon(self) -> None:
        """The job failed: what it had started to cache is released (a later job tries again)."""
        for _, cache in self.created:
            cache.release()
        self.created = []
