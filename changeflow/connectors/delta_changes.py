"""A ``delta`` table's changes between two versions, as change rows (``+I``/``-U``/``+U``/``-D``).

The streaming read of a ``delta`` table (``'mode' = 'streaming'``) takes table versions as
offsets: a micro-batch covers the versions after ``start`` up to and including ``end``.
:func:`read_changes` gives its rows: the snapshot of version ``end`` as ``+I`` rows for
the first micro-batch of a read without ``startingVersion`` (``start`` = -1), otherwise
the change data feed of those versions. Rows are ordered by commit version, and within
a version a key's ``delete`` and ``update_preimage`` come before its ``update_postimage``
and ``insert``; ``_seq`` numbers them in that order (version x 2^32 + position). Plain
Arrow, no Spark: an executor runs it for its micro-batch's partition.
"""

from __future__ import annotations

from typing import Any

from changeflow.connectors.delta import CHANGE_KINDS, DeltaError, Location, cast_to_declared

KIND, SEQ, SUB = "_kind", "_seq", "_sub"  # changeflow's change-row columns (changeflow.kernels.changelog)
_SHIFT = 1 << 32


def latest_version(location: Location) -> int:
    return int(location.open().version())


def check_change_feed(location: Location, delta_table: Any) -> None:
    """Fail naming the table property unless the table records its change data feed."""
    if (delta_table.metadata().configuration or {}).get("delta.enableChangeDataFeed", "").lower() != "true":
        raise DeltaError(f"{location.where()}: 'mode' = 'streaming' reads the table's change data feed, but the table "
                         f"does not have the property 'delta.enableChangeDataFeed' = 'true'")


def read_changes(location: Location, start: int, end: int, snapshot: bool) -> Any:
    """The change rows of versions ``(start, end]`` (with ``snapshot`` and ``start`` = -1, version ``end``'s rows)."""
    import pyarrow as pa

    if snapshot and start < 0:
        delta_table = location.open(end)
        location.check_schema(delta_table)
        table = cast_to_declared(pa.table(delta_table.to_pyarrow_table()), location)
        n = table.num_rows
        return _with_bookkeeping(table, pa.array([0] * n, pa.int8()),
                                 pa.array([end * _SHIFT + i for i in range(n)], pa.int64()))
    delta_table = location.open()
    location.check_schema(delta_table)
    check_change_feed(location, delta_table)
    try:
        changes = pa.table(delta_table.load_cdf(starting_version=start + 1, ending_version=end))
    except Exception as e:  # noqa: BLE001 - delta-rs raises several types; the message says which
        raise DeltaError(f"{location.where()}: cannot read the change data feed of versions {start + 1} to {end} "
                         f"(the table needs the property 'delta.enableChangeDataFeed' = 'true' from the first "
                         f"version read on): {e}") from None
    kinds = changes.column("_change_type").to_pylist()
    unknown = sorted({k for k in kinds if k not in CHANGE_KINDS})
    if unknown:
        raise DeltaError(f"{location.where()}: unknown _change_type {unknown} in the change data feed")
    versions = changes.column("_commit_version").to_pylist()
    order = sorted(range(len(kinds)), key=lambda i: (versions[i], _rank(kinds[i]), i))
    table = cast_to_declared(changes, location).take(pa.array(order, pa.int64()))  # (string views have no take)
    kind = pa.array([CHANGE_KINDS[kinds[i]] for i in order], pa.int8())
    position = [0] * len(order)
    for j in range(1, len(order)):  # the position within the row's version
        position[j] = position[j - 1] + 1 if versions[order[j]] == versions[order[j - 1]] else 0
    seq = pa.array([versions[i] * _SHIFT + p for i, p in zip(order, position, strict=True)], pa.int64())
    return _with_bookkeeping(table, kind, seq)


def _rank(change_type: str) -> int:
    return ("delete", "update_preimage", "update_postimage", "insert").index(change_type)


def _with_bookkeeping(table: Any, kind: Any, seq: Any) -> Any:
    import pyarrow as pa

    table = table.append_column(KIND, kind).append_column(SEQ, seq)
    return table.append_column(SUB, pa.array([0] * table.num_rows, pa.int64()))
