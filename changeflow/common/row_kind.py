"""The kind of change a row carries in a changelog, as in Flink's ``RowKind``."""

from __future__ import annotations

import enum


class RowKind(enum.Enum):
    """Kind of a change: insert, the two halves of an update, or a delete.

    ``str(kind)`` gives Flink's short form, so printed changelogs read as Flink's do.

    >>> str(RowKind.UPDATE_AFTER)
    '+U'
    >>> RowKind.from_short_string("-D") is RowKind.DELETE
    True
    """

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def short_string(self) -> str:
        return _SHORT[self]

    def is_retraction(self) -> bool:
        """True for ``-U`` and ``-D``: the change takes a row away."""
        return self in (RowKind.UPDATE_BEFORE, RowKind.DELETE)

    @staticmethod
    def from_short_string(text: str) -> "RowKind":
        try:
            return _FROM_SHORT[text]
        except KeyError:
            raise ValueError(f"unknown row kind {text!r}; expected one of +I, -U, +U, -D") from None

    def __str__(self) -> str:
        return _SHORT[self]

    def __repr__(self) -> str:
        return f"RowKind.{self.name}"


_SHORT = {
    RowKind.INSERT: "+I",
    RowKind.UPDATE_BEFORE: "-U",
    RowKind.UPDATE_AFTER: "+U",
    RowKind.DELETE: "-D",
}
_FROM_SHORT = {v: k for k, v in _SHORT.items()}
