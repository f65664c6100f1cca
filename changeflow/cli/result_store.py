"""What the SQL client's full-screen views read: a query's result materialized, or its latest changes.

Flink's client collects a query's changes on a thread of their own while its view
shows them; :class:`ResultFeed` is that collector. In ``TABLE`` mode it keeps the
table the changelog builds, as Flink's ``MaterializedCollectStreamResult`` does:
rows in the order they arrived, a ``+I``/``+U`` appends its row, a ``-U``/``-D``
removes the newest equal row (the one nearest the end, so a page of an updating
aggregate changes least), and past ``sql-client.execution.max-table-result.rows``
the oldest row is dropped. In ``CHANGELOG`` mode it hands the view the changes that
arrived since it last asked.

>>> from changeflow.common.change import Change
>>> from changeflow.common.row_kind import RowKind
>>> rows = MaterializedRows()
>>> for kind, values in [("+I", ("a", 1)), ("+I", ("b", 1)), ("-U", ("a", 1)), ("+U", ("a", 2))]:
...     rows.apply(Change(RowKind.from_short_string(kind), values))
>>> rows.rows()
[('b', 1), ('a', 2)]
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind

#: Flink's default of ``sql-client.execution.max-table-result.rows``.
DEFAULT_MAX_TABLE_ROWS = 1_000_000


class MaterializedRows:
    """A changelog applied to an empty table, rows kept in arrival order (Flink's materialized result)."""

    def __init__(self, max_rows: int = DEFAULT_MAX_TABLE_ROWS) -> None:
        self.max_rows = max_rows if max_rows > 0 else None  # Flink: 0 or less is no limit
        self._rows: list[tuple] = []
        # The position a row was last appended at: a retraction searches back from there, as Flink's
        # row position cache does (rows removed before it only move the row closer to the start).
        self._positions: dict[object, int] = {}

    def apply(self, change: Change) -> None:
        """Apply one change: ``+I``/``+U`` appends its row, ``-U``/``-D`` removes the newest equal row."""
        values = tuple(change.values)
        key = _key(values)
        if not change.kind.is_retraction():
            if self.max_rows is not None and len(self._rows) >= self.max_rows:
                self._drop_oldest()
            self._rows.append(values)
            self._positions[key] = len(self._rows) - 1
            return
        start = min(self._positions.get(key, len(self._rows) - 1), len(self._rows) - 1)
        for i in range(start, -1, -1):
            if _key(self._rows[i]) == key:
                del self._rows[i]
                self._positions.pop(key, None)
                return
        # A retraction of a row the table does not hold (dropped past max_rows) is ignored, as in Flink.

    def _drop_oldest(self) -> None:
        # Positions are left as they are: a row only ever moves towards the start, so its cached
        # position stays at or after it and the backward search still finds it.
        del self._rows[0]

    def rows(self) -> list[tuple]:
        """The table's rows, oldest first."""
        return list(self._rows)


def _key(values: tuple) -> object:
    """The row's values as a dictionary key: values of MAP, ARRAY or MULTISET columns are unhashable."""
    try:
        hash(values)
    except TypeError:
        return repr(values)
    return values


class ResultFeed:
    """A query's changes collected on a thread of their own for a full-screen view to show.

    :meth:`consume` runs on that thread; :meth:`snapshot` (``TABLE``) and :meth:`drain`
    (``CHANGELOG``) are the view's reads. A failure of the query is raised by the read
    after it, as Flink's view closes with the query's error.
    """

    def __init__(self, materialize: bool, max_rows: int = DEFAULT_MAX_TABLE_ROWS) -> None:
        self._lock = threading.Lock()
        self._table = MaterializedRows(max_rows) if materialize else None
        self._pending: list[Change] = []
        self._finished = False
        self._last_snapshot = False
        self._stopped = False
        self._error: BaseException | None = None

    def consume(self, changes: Iterable[Change]) -> None:
        """Collect ``changes`` until they end, the query fails or :meth:`stop` is called.

        A ``-U`` is applied together with the change after it (its ``+U``): a snapshot taken
        between the two would miss the updated row. Flink's view can show that gap; changeflow
        delivers a micro-batch's changes in a burst, where a snapshot would often fall in one.
        """
        held: Change | None = None
        try:
            for change in changes:
                if self._stopped:
                    break
                if change.kind is RowKind.UPDATE_BEFORE and held is None:
                    held = change
                    continue
                self.add(*([held, change] if held is not None else [change]))
                held = None
        except BaseException as e:  # the query's failure: the view reports it
            with self._lock:
                self._error = e
        finally:
            with self._lock:
                if held is not None:
                    self._apply(held)
                self._finished = True

    def add(self, *changes: Change) -> None:
        """Add changes (applied at once: a snapshot sees all of them or none)."""
        with self._lock:
            for change in changes:
                self._apply(change)

    def _apply(self, change: Change) -> None:
        if self._table is not None:
            self._table.apply(change)
        else:
            self._pending.append(change)

    def finish(self) -> None:
        """Mark the end of the changes (:meth:`consume` does so itself)."""
        with self._lock:
            self._finished = True

    def stop(self) -> None:
        """Ask :meth:`consume` to stop at the next change (the view was left)."""
        self._stopped = True

    def snapshot(self) -> list[tuple] | None:
        """The materialized table now; ``None`` once the last snapshot after the end was taken (Flink's EOS)."""
        assert self._table is not None, "snapshot() is the TABLE mode's read"
        with self._lock:
            self._raise()
            if self._finished:
                if self._last_snapshot:
                    return None
                self._last_snapshot = True
            return self._table.rows()

    def drain(self) -> list[Change] | None:
        """The changes that arrived since the last call; ``None`` when there are none and none will come."""
        with self._lock:
            self._raise()
            changes, self._pending = self._pending, []
            if not changes and self._finished:
                return None
            return changes

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error
