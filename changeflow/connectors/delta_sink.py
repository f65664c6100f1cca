"""The ``delta`` sink: appends, or merges each micro-batch by the primary key, exactly once across restarts.

Without a primary key the sink appends and takes insert-only input only: an
updating query fails at planning, as Flink's sinks without a key do. With
``PRIMARY KEY (k) NOT ENFORCED`` each micro-batch is folded per key (the last
change of a key wins: ``+I``/``+U`` upsert the row, ``-D`` deletes it, ``-U`` is
skipped, as for any upsert sink) and merged into the table in one Delta commit
(delta-rs's ``MERGE``: matched keys updated or deleted, new keys inserted).

Exactly once: the commit of a streaming micro-batch also records the
application transaction ``(changeflow-<writer>, batch id)`` in the Delta log
(``txn`` actions, delta-rs's ``CommitProperties(app_transactions=...)``); the
writer id is the job's, kept in its checkpoint
(:class:`~changeflow.connectors.sink_job.SinkJob`). A micro-batch that a
restarted job runs again finds its batch id recorded
(``DeltaTable.transaction_version``) and writes nothing. A batch job's result is
one commit.

The sink creates a missing table with the declared columns and the ``delta.*`` options as table properties (for instance
``'delta.enableChangeDataFeed' = 'true'``); an existing table must have exactly
the declared columns, with matching types. The columns it creates are nullable in
Delta whatever their declared nullability: changeflow enforces ``NOT NULL`` before the
sink (``table.exec.sink.not-null-enforcer``), and delta-rs 1.6 fails a merge into a
table with a change data feed and a ``NOT NULL`` column when a deleted key is not in
the table (it writes an all-null change row). It writes from the process that
receives the committed micro-batch (the driver, in ``foreachBatch``), through
delta-rs's object store: ``table-path`` must be reachable from there.
"""

from __future__ import annotations

import operator
from typing import Any

from changeflow.catalog import CatalogTable
from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind
from changeflow.connectors.delta import TABLE_PROPERTY_PREFIX, DeltaError, Location, check_options
from changeflow.connectors.sink_job import SinkJob

_FLAG = "__changeflow_upsert"  # the merge source's column: true to upsert the key's row, false to delete it
# The (table path, writer) of the sinks open in this process: two sinks of one job writing one Delta table would
# share its transaction record, so the second's writes would be skipped as replays; such a job is refused.
_OPEN: set[tuple[str, str]] = set()


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class DeltaSink:
    """Writes a table's committed changes to a Delta table (see the module's docstring)."""

    def __init__(self, table: CatalogTable) -> None:
        check_options(table, True)
        self.location = Location.of(table)
        self.key = tuple(table.schema.primary_key)
        self.accepts_updates = bool(self.key)  # Flink: an updating query needs the sink's primary key
        self.properties = {k: v for k, v in table.options.items() if k.startswith(TABLE_PROPERTY_PREFIX)}
        names = [n for n, _ in self.location.columns]
        self._key_index = [names.index(k) for k in self.key]
        self.app_id: str | None = None
        self._table: Any = None  # the open DeltaTable, brought up to date before each write

    # --- the job's life ---------------------------------------------------------------
    def open(self, job: SinkJob) -> None:
        """Create the table if missing, else check its columns; take the job's transaction id."""
        app_id = f"changeflow-{job.writer}"
        if (self.location.path, app_id) in _OPEN:
            raise DeltaError(f"{self.location.where()}: two sinks of one job write this Delta table; its exactly-once "
                             f"record (application transaction, batch id) would be shared. Write it from one INSERT.")
        if not self.location.exists():
            self._create()
        self._table = self.location.open()
        self.location.check_schema(self._table)
        self.app_id = app_id
        _OPEN.add((self.location.path, app_id))

    def close(self) -> None:
        if self.app_id is not None:
            _OPEN.discard((self.location.path, self.app_id))
            self.app_id = None
        self._table = None

    def _create(self) -> None:
        from deltalake import DeltaTable

        try:
            DeltaTable.create(self.location.path, self.arrow_schema(), mode="ignore",
                              configuration=self.properties or None,
                              storage_options=self.location.storage_options())
        except Exception as e:  # noqa: BLE001 - delta-rs raises several types; the message says which
            raise DeltaError(f"{self.location.where()}: cannot create the table: {e}") from None

    def arrow_schema(self) -> Any:
        import pyarrow as pa

        from changeflow.common.type_values import arrow_type

        return pa.schema([pa.field(n, arrow_type(t), True) for n, t in self.location.columns])

    # --- writing ----------------------------------------------------------------------
    def write(self, changes: list[Change], batch_id: int | None = None) -> None:
        """Write ``changes`` in one Delta commit; with a ``batch_id``, once only for this job's writer."""
        if self.app_id is None:
            raise DeltaError(f"{self.location.where()}: the sink was not opened")
        if not changes:
            return  # no commit: a replay of an empty micro-batch writes nothing either
        delta_table = self._table
        try:
            delta_table.update_incremental()  # the commits since the last write (another writer's too)
        except Exception as e:  # noqa: BLE001 - delta-rs raises several types; the message says which
            raise DeltaError(f"{self.location.where()}: cannot read the table's log: {e}") from None
        if batch_id is not None:
            done = delta_table.transaction_version(self.app_id)
            if done is not None and done >= batch_id:
                return  # a micro-batch run again after a restart: its commit is in the table already
        from deltalake import CommitProperties, Transaction

        commit = (CommitProperties(app_transactions=[Transaction(self.app_id, batch_id)])
                  if batch_id is not None else None)
        try:
            if self.key:
                self._merge(delta_table, changes, commit)
            else:
                self._append(delta_table, changes, commit)
        except DeltaError:
            raise
        except Exception as e:  # noqa: BLE001 - delta-rs raises several types; the message says which
            raise DeltaError(f"{self.location.where()}: writing failed: {e}") from None

    def _arrow(self, rows: list[tuple], flags: list[bool] | None = None) -> Any:
        import pyarrow as pa

        schema = self.arrow_schema()
        columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
        arrays = [pa.array(list(c), type=f.type) for c, f in zip(columns, schema, strict=True)]
        if flags is None:
            return pa.Table.from_arrays(arrays, schema=schema)
        return pa.Table.from_arrays(arrays + [pa.array(flags, pa.bool_())],
                                    schema=schema.append(pa.field(_FLAG, pa.bool_(), False)))

    def _append(self, delta_table: Any, changes: list[Change], commit: Any) -> None:
        from deltalake import write_deltalake

        rows = []
        for change in changes:
            if change.kind != RowKind.INSERT:
                raise DeltaError(f"{self.location.where()}: the table has no PRIMARY KEY, so it only appends, but "
                                 f"received a {change.kind} change")
            rows.append(change.values)
        write_deltalake(delta_table, self._arrow(rows), mode="append", commit_properties=commit)

    def _merge(self, delta_table: Any, changes: list[Change], commit: Any) -> None:
        # The last change of each key wins (one dict store per change: this loop is the sink's own cost).
        key_of = operator.itemgetter(*self._key_index)
        skip, delete = RowKind.UPDATE_BEFORE, RowKind.DELETE
        buffer: dict[Any, tuple[bool, tuple]] = {}
        for change in changes:
            kind = change.kind
            if kind is not skip:
                values = change.values
                buffer[key_of(values)] = (kind is not delete, values)
        if not buffer:
            return
        flags = [upsert for upsert, _ in buffer.values()]
        source = self._arrow([values for _, values in buffer.values()], flags)
        merge_into(delta_table, source, self.key, [n for n, _ in self.location.columns], commit, all(flags))


def merge_into(delta_table: Any, source: Any, key: tuple[str, ...], names: list[str], commit: Any,
               upserts_only: bool = False) -> Any:
    """One MERGE of ``source`` (the columns ``names`` and the flag column) into ``delta_table`` on ``key``.

    With ``upserts_only`` (no row of ``source`` deletes) the clauses need no condition on the flag.
    """
    on = " AND ".join(f"t.{_quoted(k)} = s.{_quoted(k)}" for k in key)
    upsert: str | None = None if upserts_only else f"s.{_quoted(_FLAG)}"
    rest = [n for n in names if n not in key]
    merger = delta_table.merge(source, predicate=on, source_alias="s", target_alias="t", commit_properties=commit)
    if not upserts_only:
        merger = merger.when_matched_delete(predicate=f"NOT s.{_quoted(_FLAG)}")
    if rest:
        merger = merger.when_matched_update(updates={_quoted(n): f"s.{_quoted(n)}" for n in rest}, predicate=upsert)
    merger = merger.when_not_matched_insert(updates={_quoted(n): f"s.{_quoted(n)}" for n in names}, predicate=upsert)
    return merger.execute()
