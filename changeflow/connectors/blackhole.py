"""The ``blackhole`` connector: a sink that discards every change (for benchmarks and tests)."""

from __future__ import annotations

from changeflow.catalog import CatalogTable
from changeflow.connectors.options import check_keys
from changeflow.connectors.sink_job import SinkJob
from changeflow.common.change import Change


class BlackholeSink:
    accepts_updates = True
    takes_upserts = True  # Flink's blackhole drops -U rows: plan/rules/normalize_consumers.py
    # Nothing is kept, so a streaming job runs its micro-batches on the executors without
    # bringing their rows to the driver (runtime/spark/discarding_sink.py); write() gets none then.
    discards_changes = True

    def __init__(self, table: CatalogTable) -> None:
        check_keys(table, True, "blackhole", {"connector", "property-version"})

    def open(self, job: SinkJob) -> None:
        """Nothing to restore: a repeated micro-batch is written again (at least once)."""

    def write(self, changes: list[Change], batch_id: int | None = None) -> None:
        pass

    def close(self) -> None:
        pass
