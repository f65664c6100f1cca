"""The ``print`` connector: every change on standard output (or error), as Flink prints it.

Each change is one line, ``+I[1, a]``, ``-U[a, 1]``, prefixed by
``print-identifier> `` when that option is set. Values follow Flink's
``Row.toString`` (:func:`~changeflow.connectors.values.flink_string`). Flink
running with parallelism above one also prefixes the subtask (``2> ``); changeflow
writes one ordered changelog, as Flink does at parallelism 1.
"""

from __future__ import annotations

import sys

from changeflow.catalog import CatalogTable
from changeflow.connectors.options import boolean, check_keys
from changeflow.connectors.values import flink_string
from changeflow.connectors.sink_job import SinkJob
from changeflow.common.change import Change

_OPTIONS = {"connector", "print-identifier", "standard-error", "sink.parallelism", "property-version"}


class PrintSink:
    accepts_updates = True

    def __init__(self, table: CatalogTable) -> None:
        check_keys(table, True, "print", _OPTIONS)
        self.identifier = table.options.get("print-identifier")
        self.standard_error = boolean(table, True, "standard-error")
        self.types = [c.data_type for c in table.schema.physical_columns()]

    def format(self, change: Change) -> str:
        values = ", ".join(flink_string(v, t) for v, t in zip(change.values, self.types, strict=True))
        line = f"{change.kind}[{values}]"
        return f"{self.identifier}> {line}" if self.identifier else line

    def open(self, job: SinkJob) -> None:
        """Nothing to restore: a repeated micro-batch is written again (at least once)."""

    def write(self, changes: list[Change], batch_id: int | None = None) -> None:
        # Looked up per write so that a redirected stream (a test's capture) receives the lines.
        stream = sys.stderr if self.standard_error else sys.stdout
        for change in changes:
            print(self.format(change), file=stream)
        stream.flush()

    def close(self) -> None:
        pass
