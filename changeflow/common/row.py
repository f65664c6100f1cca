"""``Row``: a tuple of field values with a row kind, as PyFlink's ``Row``."""

from __future__ import annotations

from typing import Any, Iterable

from changeflow.common.row_kind import RowKind


class Row(tuple):
    """A row of values, optionally with field names, carrying a :class:`RowKind`.

    Positional rows compare like tuples; the row kind is not part of equality,
    as in PyFlink.

    >>> r = Row(1, "a")
    >>> r.get_row_kind()
    RowKind.INSERT
    >>> r.set_row_kind(RowKind.DELETE); str(r.get_row_kind())
    '-D'
    >>> Row(id=1, name="a").name
    'a'
    >>> Row(1, "a"), Row(id=1)
    (<Row(1, 'a')>, Row(id=1))
    """

    _fields: tuple[str, ...] | None
    _row_kind: RowKind

    def __new__(cls, *values: Any, **named: Any) -> "Row":
        if values and named:
            raise TypeError("Row takes either positional values or named values, not both")
        if named:
            row = super().__new__(cls, tuple(named.values()))
            row._fields = tuple(named.keys())
        else:
            row = super().__new__(cls, values)
            row._fields = None
        row._row_kind = RowKind.INSERT
        return row

    @classmethod
    def of(cls, kind: RowKind, values: Iterable[Any], names: Iterable[str] | None = None) -> "Row":
        """Build a row from values, a kind and optional field names in one call."""
        values = tuple(values)
        if names is None:
            row = cls(*values)
        else:
            row = cls(**dict(zip(names, values, strict=True)))
            if len(row) != len(values):
                raise ValueError(f"duplicate field names in {list(names)}")
        row._row_kind = kind
        return row

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> "Row":
        """A row of ``args`` (or named ``kwargs``) with ``row_kind``, as PyFlink's ``Row.of_kind``.

        >>> str(Row.of_kind(RowKind.DELETE, "a", 1).get_row_kind())
        '-D'
        """
        row = Row(*args, **kwargs)
        row._row_kind = row_kind
        return row

    def get_row_kind(self) -> RowKind:
        return self._row_kind

    def set_row_kind(self, kind: RowKind) -> None:
        self._row_kind = kind

    def get_fields_by_names(self, names: Iterable[str]) -> list[Any]:
        return [getattr(self, n) for n in names]

    def as_dict(self) -> dict[str, Any]:
        if self._fields is None:
            raise TypeError("a positional Row has no field names")
        return dict(zip(self._fields, self, strict=True))

    def __getattr__(self, name: str) -> Any:
        fields = object.__getattribute__(self, "_fields")
        if fields is not None and name in fields:
            return self[fields.index(name)]
        raise AttributeError(name)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, str):
            return self.__getattr__(item)
        return super().__getitem__(item)

    def __repr__(self) -> str:
        if self._fields is not None:
            inner = ", ".join(f"{n}={v!r}" for n, v in zip(self._fields, self, strict=True))
            return f"Row({inner})"
        # PyFlink writes a positional row in angle brackets.
        return f"<Row({', '.join(repr(v) for v in self)})>"

    def __reduce__(self):
        return (Row.of, (self._row_kind, tuple(self), self._fields))
