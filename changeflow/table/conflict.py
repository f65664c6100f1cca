"""``InsertConflictStrategy``: the Table API's ``ON CONFLICT`` (Flink 2.3's Java class, not in PyFlink).

``table.execute_insert("snk", conflict_strategy=InsertConflictStrategy.deduplicate())``
plans as ``INSERT INTO snk ... ON CONFLICT DO DEDUPLICATE``. PyFlink 2.3 has no
such argument: there, an ``execute_insert`` that needs the sink upsert
materializer fails under ``table.exec.sink.require-on-conflict`` (as it does in
changeflow without the argument).

>>> InsertConflictStrategy.nothing().get_behavior()
'NOTHING'
"""

from __future__ import annotations


class InsertConflictStrategy:
    """How an INSERT resolves rows of different upsert keys that share a primary key."""

    def __init__(self, behavior: str) -> None:
        self._behavior = behavior

    @staticmethod
    def deduplicate() -> "InsertConflictStrategy":
        """Keep every row's history per key and show the latest (``ON CONFLICT DO DEDUPLICATE``)."""
        return InsertConflictStrategy("DEDUPLICATE")

    @staticmethod
    def nothing() -> "InsertConflictStrategy":
        """Keep the first row per key (``ON CONFLICT DO NOTHING``)."""
        return InsertConflictStrategy("NOTHING")

    @staticmethod
    def error() -> "InsertConflictStrategy":
        """Fail when two rows share a key (``ON CONFLICT DO ERROR``)."""
        return InsertConflictStrategy("ERROR")

    def get_behavior(self) -> str:
        return self._behavior

    def __repr__(self) -> str:
        return self._behavior

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InsertConflictStrategy) and other._behavior == self._behavior

    def __hash__(self) -> int:
        return hash(self._behavior)
