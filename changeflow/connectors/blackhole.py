"""The ``blackhole`` connector: a sink that discards every change (for benchmarks and tests)."""

from __future__ import annotations

from changeflow.catalog import CatalogTable
from changeflow.connectors.options import check_keys
from changeflow.runtime.changes import Change


class BlackholeSink:
    accepts_updates = True

    def __init__(self, table: CatalogTable) -> None:
        check_keys(table, True, "blackhole", {"connector", "property-version"})

    def write(self, changes: list[Change]) -> None:
        pass

    def close(self) -> None:
        pass
