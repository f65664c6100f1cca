"""``TableResult``: the outcome of ``execute()`` and ``execute_sql()``, with PyFlink's collect and print.

Three shapes, as in PyFlink:

- a query's result: its changes (streaming) or final rows (batch), printed as a
  tableau whose column widths follow the types;
- a statement's content (``SHOW TABLES``, ``DESCRIBE``, ``SET``): rows printed as a
  tableau sized by the content, or ``OK`` for a statement without content;
- an ``INSERT``'s job: ``wait()`` waits for it, ``collect()`` gives PyFlink's one
  row of ``-1`` (the affected row count is unknown) per sink table.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator

from changeflow.common.change import Change
from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.table.type_text import column_width as type_column_width
from changeflow.table.type_text import tableau_text
from changeflow.common.type_values import to_python
from changeflow.common.types import DataType, DataTypes
from changeflow.runtime.engine import JobClient, LiveChanges
from changeflow.table.table import TableSchema

_INSERT = list(RowKind)[0]


class CloseableIterator:
    """Iterator over result rows, usable as a context manager as in PyFlink.

    Over an unbounded query it yields rows as the query produces them; ``close()``
    stops the query.
    """

    def __init__(self, rows, on_close=None) -> None:
        self._rows = iter(rows)
        self._on_close = on_close

    def __iter__(self) -> "CloseableIterator":
        return self

    def __next__(self) -> Row:
        return next(self._rows)

    def close(self) -> None:
        self._rows = iter(())
        if self._on_close is not None:
            self._on_close()
            self._on_close = None

    def __enter__(self) -> "CloseableIterator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ResultKind(enum.Enum):
    """PyFlink's ``ResultKind``: whether a result has content beyond ``OK``."""

    SUCCESS = 0
    SUCCESS_WITH_CONTENT = 1


class TableResult:
    """Result of a query: its changes (streaming) or final rows (batch, all ``+I``).

    >>> from changeflow.common.types import DataTypes
    >>> TableResult.of_rows((("table name", DataTypes.STRING()),), [("orders",), ("t",)]).print()
    +------------+
    | table name |
    +------------+
    |     orders |
    |          t |
    +------------+
    2 rows in set
    >>> TableResult.ok().print()
    OK
    """

    def __init__(self, schema, changes: list[Change], streaming: bool, *,
                 result_kind: ResultKind = ResultKind.SUCCESS_WITH_CONTENT, content_widths: bool = False,
                 job: JobClient | None = None, live: LiveChanges | None = None) -> None:
        self._schema = tuple(schema)
        self._changes = changes
        self._streaming = streaming
        self._result_kind = result_kind
        self._content_widths = content_widths  # statement results size columns by content
        self._job = job
        self._raw = False  # print the single value as it is (EXPLAIN)
        self._live = live  # a running query over unbounded input (the engine's QueryRun.live)

    @staticmethod
    def ok() -> "TableResult":
        """The result of a statement without content (DDL, SET): prints ``OK``."""
        return TableResult((("result", DataTypes.STRING()),), [Change(_INSERT, ("OK",))], False,
                           result_kind=ResultKind.SUCCESS)

    @staticmethod
    def of_rows(schema, rows: list[tuple]) -> "TableResult":
        """A statement's content (SHOW, DESCRIBE, SET): rows printed as a tableau sized by content."""
        return TableResult(schema, [Change(_INSERT, tuple(r)) for r in rows], False, content_widths=True)

    @staticmethod
    def of_text(text: str) -> "TableResult":
        """A one-value result printed as raw text (``EXPLAIN``'s plan), as PyFlink prints it."""
        result = TableResult((("result", DataTypes.STRING()),), [Change(_INSERT, (text,))], False)
        result._raw = True
        return result

    @staticmethod
    def of_job(job: JobClient, sink_tables: list[str]) -> "TableResult":
        """The result of ``INSERT INTO``: a running (or finished) job writing ``sink_tables``."""
        schema = tuple((name, DataTypes.BIGINT(False)) for name in sink_tables)
        return TableResult(schema, [Change(_INSERT, tuple(-1 for _ in sink_tables))], False, job=job)

    def get_result_kind(self) -> ResultKind:
        return self._result_kind

    def get_job_client(self):
        """The job of an ``INSERT`` (``cancel()``, ``get_job_status()``); ``None`` for other statements."""
        return self._job

    def collect(self) -> CloseableIterator:
        """The rows, each with its row kind (``get_row_kind()``); over unbounded input, as they arrive."""
        if self._live is not None:
            return CloseableIterator((Row.of(c.kind, self._python(c.values)) for c in self._live.changes()),
                                     self._live.stop)
        self.wait()
        return CloseableIterator([Row.of(c.kind, self._python(c.values)) for c in self._changes])

    def _python(self, values: tuple) -> tuple:
        """A result row's values as PyFlink gives them (Row for ROW, dict for MAP, time for TIME...)."""
        if len(values) != len(self._schema):
            return values
        return tuple(to_python(v, t) for v, (_, t) in zip(values, self._schema, strict=True))

    def wait(self, timeout_ms: int | None = None) -> None:
        """Wait for the job of an ``INSERT`` to finish (raising its error); queries have finished already."""
        if self._job is not None:
            self._job.wait(None if timeout_ms is None else timeout_ms / 1000)

    def get_table_schema(self) -> TableSchema:
        return TableSchema(self._schema)

    def get_resolved_schema(self) -> TableSchema:
        """The result's columns and types (PyFlink's ``ResolvedSchema``; same as :meth:`get_table_schema`)."""
        return TableSchema(self._schema)

    def print(self) -> None:
        """Print as PyFlink: ``OK``, a tableau of the rows, or an ``INSERT``'s ``-1`` once its job ends."""
        if self._result_kind is ResultKind.SUCCESS:
            print("OK")
        elif self._raw:
            print(self._changes[0].values[0])
        elif self._job is not None:
            self.wait()
            print("\n".join(" ".join(str(v) for v in c.values) for c in self._changes))
        elif self._live is not None:
            self._print_live(self._live)
        elif self._content_widths:
            print(format_content_tableau([n for n, _ in self._schema], [c.values for c in self._changes]))
        else:
            print(format_tableau(self._schema, self._changes, self._streaming))


    def _print_live(self, live: LiveChanges) -> None:
        """Print an unbounded query's changes as they arrive (until it stops), as Flink's streaming tableau."""
        lines = 0
        for text in _op_table(self._schema, live.changes()):
            print(text, flush=True)
            lines += 1
        count = lines - 4  # two rules, the header and the closing rule around the rows
        print(f"{count} row{'s' if count != 1 else ''} in set")


def sql_client_tableau(result: TableResult) -> Iterator[str]:
    """A query's result as Flink's SQL client prints it in TABLEAU mode, line by line as rows arrive.

    A streaming query prints an ``op`` column and columns as wide as their types, each row as it
    arrives, and ends with ``Received a total of N rows``; a batch query's columns are as wide as
    their content, ending with ``N rows in set`` (``Empty set`` when there is none). The last line
    is that footer (the client adds the time it took).
    """
    if not result._streaming and result._live is None:
        rows = [c.values for c in result._changes]
        cells = [[format_value(v, t) for v, (_, t) in zip(row, result._schema, strict=True)] for row in rows]
        table = format_content_tableau([n for n, _ in result._schema], rows, cells)
        yield from table.split("\n")
        return
    live = result._live
    lines = 0
    try:
        for text in _op_table(result._schema, live.changes() if live is not None else iter(result._changes)):
            yield text
            lines += 1
    finally:  # also when the reader stops early (Ctrl-C in the SQL client): the running query ends with it
        if live is not None:
            live.stop()
    count = lines - 4
    yield f"Received a total of {count} row{'s' if count != 1 else ''}"


def query_changes(result: TableResult) -> CloseableIterator:
    """A query's changes, as they arrive, with the engine's values (as :func:`format_value` takes them).

    What the SQL client's full-screen views read; ``close()`` stops a query that is still running.
    """
    live = result._live
    if live is not None:
        return CloseableIterator(live.changes(), live.stop)
    return CloseableIterator(list(result._changes))


def _op_table(schema, changes: Iterable[Change]) -> Iterator[str]:
    """The lines of a streaming tableau: an ``op`` column, columns as wide as their types, rows as they come."""
    widths = [2] + [column_width(n, t) for n, t in schema]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(_fit(c, w) for c, w in zip(cells, widths, strict=True)) + " |"

    yield rule
    yield line(["op"] + [n for n, _ in schema])
    yield rule
    for c in changes:
        yield line([str(c.kind)] + [format_value(v, t) for v, (_, t) in zip(c.values, schema, strict=True)])
    yield rule


def column_width(name: str, data_type: DataType) -> int:
    """A column's width as Flink sizes it from the type (:func:`changeflow.table.type_text.column_width`)."""
    return type_column_width(name, data_type)


def format_value(value, data_type: DataType | None = None) -> str:
    """A value as Flink's tableau shows it: ``<NULL>``, ``TRUE``, ``1.0E10``, a timestamp to its precision.

    ``value`` is a result's value as the engine holds it (:mod:`changeflow.common.type_values`).

    >>> import datetime, decimal
    >>> from changeflow.common.types import DataTypes
    >>> format_value(datetime.datetime(2024, 1, 2, 3, 4, 5, 100000), DataTypes.TIMESTAMP(3))
    '2024-01-02 03:04:05.100'
    >>> format_value(1e10, DataTypes.DOUBLE()), format_value(decimal.Decimal("1.5"), DataTypes.DECIMAL(10, 3))
    ('1.0E10', '1.500')
    """
    if data_type is not None:
        return tableau_text(to_python(value, data_type), data_type)
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
        return "| " + " | ".join(_fit(c, w) for c, w in zip(cells, widths, strict=True)) + " |"

    out = [rule, line(names), rule]
    for c in changes:
        cells = [format_value(v, t) for v, (_, t) in zip(c.values, schema, strict=True)]
        out.append(line(([str(c.kind)] if streaming else []) + cells))
    out.append(rule)
    out.append(f"{len(changes)} row{'s' if len(changes) != 1 else ''} in set")
    return "\n".join(out)


def format_content_tableau(names: list[str], rows: list[tuple], cells: list[list[str]] | None = None) -> str:
    """A statement's rows as Flink prints them: columns as wide as their content, NULL blank.

    ``cells``, when given, are the rows' texts already (a query's values, NULL as ``<NULL>``).
    """
    if not rows:
        return "Empty set"
    cells = cells if cells is not None else [[_content(v) for v in row] for row in rows]
    widths = [max([len(n)] + [len(line) for row in cells for line in row[i].split("\n")])
              for i, n in enumerate(names)]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.rjust(w) for v, w in zip(values, widths, strict=True)) + " |"

    out = [rule, line(names), rule] + [line(row) for row in cells] + [rule]
    out.append(f"{len(rows)} row{'s' if len(rows) != 1 else ''} in set")
    return "\n".join(out)


def _content(value) -> str:
    if value is None:
        return ""
    return format_value(value)


def _fit(text: str, width: int) -> str:
    if len(text) > width:
        text = text[: width - 3] + "..."
    return text.rjust(width)
