"""``TableResult``: the outcome of ``execute()``, with PyFlink's collect and print."""

from __future__ import annotations

from changeflow.common.row import Row
from changeflow.common.types import DataType
from changeflow.runtime.changes import Change


class CloseableIterator:
    """Iterator over result rows, usable as a context manager as in PyFlink."""

    def __init__(self, rows: list[Row]) -> None:
        self._rows = iter(rows)

    def __iter__(self) -> "CloseableIterator":
        return self

    def __next__(self) -> Row:
        return next(self._rows)

    def close(self) -> None:
        self._rows = iter(())

    def __enter__(self) -> "CloseableIterator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class TableResult:
    """Result of a query: its changes (streaming) or final rows (batch, all ``+I``)."""

    def __init__(self, schema, changes: list[Change], streaming: bool) -> None:
        self._schema = tuple(schema)
        self._changes = changes
        self._streaming = streaming

    def collect(self) -> CloseableIterator:
        """The rows, each with its row kind (``get_row_kind()``)."""
        return CloseableIterator([Row.of(c.kind, c.values) for c in self._changes])

    def wait(self, timeout_ms: int | None = None) -> None:
        """Jobs of bounded input have finished when ``execute()`` returns."""

    def get_table_schema(self):
        from changeflow.table.table import TableSchema

        return TableSchema(self._schema)

    def print(self) -> None:
        """Print the changes as Flink's tableau: an ``op`` column, then the columns."""
        print(format_tableau(self._schema, self._changes, self._streaming))


# Flink sizes tableau columns from their types (PrintStyle's type-inferred widths).
_WIDTHS = {"BOOLEAN": 7, "TINYINT": 4, "SMALLINT": 6, "INT": 11, "BIGINT": 20, "FLOAT": 20,
           "DOUBLE": 22, "DATE": 10}
_MAX_WIDTH = 30


def column_width(name: str, data_type: DataType) -> int:
    width = _WIDTHS.get(data_type.root, _MAX_WIDTH)
    return max(width, len(name))


def format_value(value) -> str:
    if value is None:
        return "<NULL>"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={v}" for k, v in value.items()) + "}"
    return str(value)


def format_tableau(schema, changes: list[Change], streaming: bool) -> str:
    if not changes:
        return "Empty set"
    names = ["op"] + [n for n, _ in schema] if streaming else [n for n, _ in schema]
    widths = ([2] if streaming else []) + [column_width(n, t) for n, t in schema]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(_fit(c, w) for c, w in zip(cells, widths)) + " |"

    out = [rule, line(names), rule]
    for c in changes:
        cells = [format_value(v) for v in c.values]
        out.append(line(([str(c.kind)] if streaming else []) + cells))
    out.append(rule)
    out.append(f"{len(changes)} row{'s' if len(changes) != 1 else ''} in set")
    return "\n".join(out)


def _fit(text: str, width: int) -> str:
    if len(text) > width:
        text = text[: width - 3] + "..."
    return text.rjust(width)
