"""What the sources that generate their rows (``datagen``, ``nexmark``) share: bounded or not, and how many rows.

A generated source makes row ``i`` from ``i`` alone, so Spark's executors can
generate any range of rows; the runtime asks ``bounded`` and ``total_rows`` to cut
a bounded source into ranges, and streams an unbounded one range by range.
"""

from __future__ import annotations

from changeflow.catalog import CatalogTable


class GeneratedRows:
    """A source whose ``row_count`` is its number of rows, ``None`` when it is unbounded."""

    connector = "generated"  # the connector's name, for messages
    row_count: int | None
    table: CatalogTable

    @property
    def bounded(self) -> bool:
        return self.row_count is not None

    @property
    def total_rows(self) -> int:
        """``row_count`` of a bounded source (an unbounded one has no total: an error)."""
        if self.row_count is None:
            raise ValueError(f"the {self.connector} source '{self.table.name}' is unbounded: it has no total row count")
        return self.row_count
