"""The ``materialized`` connector: a table kept in memory that a job writes and a user reads back.

For tests and notebooks: ``INSERT INTO`` a ``'connector' = 'materialized'`` table
applies the query's changes to an in-memory table, and reading the table
(``t_env.from_path(name)``, ``SELECT ... FROM name``) gives its current rows as
a bounded source. With a ``PRIMARY KEY`` the changes are applied as an upsert
stream by that key (``+I``/``+U`` replace the key's row, ``-U``/``-D`` remove it),
which is how a database or key-value store receives the output of the sink
upsert materializer; without one, as a changelog over a multiset of rows
(a retraction removes one equal row and fails when there is none).

The rows live in the driver's memory for as long as the table is registered
(a new environment, or ``DROP TABLE`` and ``CREATE TABLE`` again, starts empty),
in the environment that declared it. They are not durable: they are lost with
the process. A job resumed from its checkpoint (``changeflow.checkpoint-dir``)
may write into the table only if its earlier runs wrote into it in this process;
otherwise the table would hold only the changes after the restart, so the job
is refused. A micro-batch the resumed job runs again is applied once. Not a
Flink connector.

>>> from changeflow.catalog import CatalogTable
>>> from changeflow.catalog.schema import DeclaredColumn, DeclaredSchema
>>> from changeflow.common.types import DataTypes
>>> from changeflow.common.change import Change
>>> from changeflow.common.row_kind import RowKind
>>> schema = DeclaredSchema((DeclaredColumn("id", DataTypes.BIGINT(), "BIGINT"),
...                          DeclaredColumn("v", DataTypes.STRING(), "STRING")), ("id",))
>>> table = CatalogTable("users", schema, {"connector": "materialized"})
>>> sink = MaterializedSink(table)
>>> sink.write([Change(RowKind.INSERT, (1, "a")), Change(RowKind.UPDATE_AFTER, (1, "b")),
...             Change(RowKind.INSERT, (2, "c")), Change(RowKind.DELETE, (2, "c"))])
>>> MaterializedSource(table, streaming=True).rows()
[(1, 'b')]
"""

from __future__ import annotations

import weakref

from changeflow.catalog import CatalogTable
from changeflow.connectors.options import check_keys
from changeflow.connectors.sink_job import SinkJob
from changeflow.common.change import Change

_OPTIONS = {"connector", "property-version"}

# id(table) -> rows, dropped when the catalog's table object is garbage collected.
_TABLES: dict[int, "MaterializedRows"] = {}


class MaterializedRows:
    """The current rows of one materialized table: by primary key, or a multiset without one."""

    def __init__(self, names: list[str], primary_key: tuple[str, ...]) -> None:
        self.names = names
        self.key_positions = [names.index(k) for k in primary_key]
        self.by_key: dict[tuple, tuple] = {}
        self.multiset: dict[tuple, int] = {}
        self.applied: dict[str, int] = {}  # writer id of each job that wrote here -> its last batch id

    def apply(self, change: Change) -> None:
        values = tuple(change.values)
        retracts = change.kind.is_retraction()
        if self.key_positions:
            key = tuple(values[i] for i in self.key_positions)
            if retracts:
                self.by_key.pop(key, None)
            else:
                self.by_key[key] = values
            return
        if retracts:
            held = self.multiset.get(values, 0)
            if not held:
                raise ValueError(f"materialized table: {change.kind}{list(values)} retracts a row the table does "
                                 f"not hold")
            if held == 1:
                del self.multiset[values]
            else:
                self.multiset[values] = held - 1
        else:
            self.multiset[values] = self.multiset.get(values, 0) + 1

    def rows(self) -> list[tuple]:
        """The rows, by primary key order (nulls first) or, without one, in first-insertion order."""
        if self.key_positions:
            return [self.by_key[k] for k in sorted(self.by_key, key=_null_first)]
        return [row for row, n in self.multiset.items() for _ in range(n)]


def _null_first(key: tuple) -> tuple:
    return tuple((v is not None, v) for v in key)


def rows_of(table: CatalogTable) -> MaterializedRows:
    """The rows held for ``table`` (empty at first)."""
    held = _TABLES.get(id(table))
    if held is None:
        names = [c.name for c in table.schema.physical_columns()]
        held = _TABLES[id(table)] = MaterializedRows(names, tuple(table.schema.primary_key))
        weakref.finalize(table, _TABLES.pop, id(table), None)
    return held


class MaterializedSink:
    """Applies each committed batch of changes to the table's rows."""

    accepts_updates = True

    def __init__(self, table: CatalogTable) -> None:
        check_keys(table, True, "materialized", _OPTIONS)
        self.name = table.name
        self.rows = rows_of(table)
        self._writer: str | None = None

    def open(self, job: SinkJob) -> None:
        """Refuse a resumed job whose earlier output this process's table never received."""
        if job.resumed and job.writer not in self.rows.applied:
            raise ValueError(
                f"Table '{self.name}' (connector 'materialized') is held in this process's memory and does not "
                f"survive a restart, but the job writing it resumes from a checkpoint whose earlier output the "
                f"table never received: it would hold only the changes after the restart. Write to a durable "
                f"sink (e.g. 'connector' = 'filesystem' with 'sink.changelog-mode' = 'upsert'), or delete the "
                f"job's checkpoint directory to start afresh.")
        self._writer = job.writer

    def write(self, changes: list[Change], batch_id: int | None = None) -> None:
        applied = self.rows.applied
        if self._writer is not None and batch_id is not None:
            if batch_id <= applied.get(self._writer, -1):
                return  # a micro-batch run again after a restart: this process applied it already
            applied[self._writer] = batch_id
        for change in changes:
            self.rows.apply(change)

    def close(self) -> None:
        pass


class MaterializedSource:
    """Reads the table's current rows (bounded)."""

    bounded = True

    def __init__(self, table: CatalogTable, streaming: bool) -> None:
        check_keys(table, False, "materialized", _OPTIONS)
        self.table = table
        self._rows = rows_of(table)

    def rows(self) -> list[tuple]:
        return self._rows.rows()
