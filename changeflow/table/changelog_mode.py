"""PyFlink's ``ChangelogMode``: the kinds of change a converted changelog stream holds."""

from __future__ import annotations

__all__ = ["ChangelogMode"]


class ChangelogMode:
    """The set of changes in a changelog: ``insert_only()``, ``upsert()`` or ``all()``.

    >>> str(ChangelogMode.all()), str(ChangelogMode.insert_only()), str(ChangelogMode.upsert())
    ('[I,UB,UA,D]', '[I]', '[I,UA,D]')
    """

    def __init__(self, kinds: tuple[str, ...]) -> None:
        self._kinds = kinds

    @staticmethod
    def insert_only() -> "ChangelogMode":
        return ChangelogMode(("I",))

    @staticmethod
    def upsert() -> "ChangelogMode":
        """Updates without ``-U`` rows, keyed by the schema's primary key."""
        return ChangelogMode(("I", "UA", "D"))

    @staticmethod
    def all() -> "ChangelogMode":
        return ChangelogMode(("I", "UB", "UA", "D"))

    @property
    def is_insert_only(self) -> bool:
        return self._kinds == ("I",)

    @property
    def is_upsert(self) -> bool:
        return "UA" in self._kinds and "UB" not in self._kinds

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChangelogMode) and self._kinds == other._kinds

    def __hash__(self) -> int:
        return hash(self._kinds)

    def __str__(self) -> str:
        return "[" + ",".join(self._kinds) + "]"

    __repr__ = __str__
