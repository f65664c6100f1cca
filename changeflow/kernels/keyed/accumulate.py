"""The reduce functions behind ``KeyedStream.sum/min/max/min_by/max_by``, with PyFlink 2.3's semantics.

PyFlink implements these five as a ``reduce`` (``KeyedStream._accumulate``);
the value they give, field by field:

- ``sum``: the first record with the field replaced by the running sum;
- ``min`` / ``max``: the *first* record of the key with only the field replaced
  by the running minimum / maximum (the other fields are never updated);
- ``min_by`` / ``max_by``: the whole record holding the minimum / maximum; on a
  tie the earlier record stays.

The field is a position, or a name for a named :class:`Row`. A basic value
(not a tuple, list or Row) is its own field 0; another position on it fails.
"""

from __future__ import annotations

from typing import Any

from changeflow.common.row import Row
from changeflow.datastream.functions import ReduceFunction

KINDS = ("sum", "min", "max", "min_by", "max_by")


class AccumulateReduce(ReduceFunction):
    """The reduce function of ``KeyedStream.<kind>(position)``.

    >>> f = AccumulateReduce("min", 1)
    >>> f.reduce(("a", 5, "x"), ("b", 3, "y"))
    ('a', 3, 'x')
    >>> AccumulateReduce("max_by", 1).reduce(("a", 5), ("b", 5))
    ('a', 5)
    >>> AccumulateReduce("sum", 0).reduce(2, 3)
    5
    """

    def __init__(self, kind: str, position: int | str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown accumulation {kind!r}; expected one of {', '.join(KINDS)}")
        if isinstance(position, bool) or not isinstance(position, (int, str)):
            raise TypeError("The field position must be of int or str type to locate the value to calculate "
                            f"for min, max, min_by, max_by and sum. The given type is: {type(position)}")
        self.kind = kind
        self.position = position

    def is_output_idempotent(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"{self.kind}({self.position!r})"

    def reduce(self, value1: Any, value2: Any) -> Any:
        composite = isinstance(value2, (tuple, list))  # Row is a tuple
        if not composite and self.position != 0:
            raise TypeError(f"The {self.position} field selected on a basic type. A field expression on a basic "
                            "type can only select the 0th field (which means selecting the entire basic type).")
        a = self._field(value1) if composite else value1
        b = self._field(value2) if composite else value2
        if self.kind == "min_by":
            return value2 if b < a else value1
        if self.kind == "max_by":
            return value2 if b > a else value1
        if self.kind == "min":
            new = b if b < a else a
        elif self.kind == "max":
            new = b if b > a else a
        else:
            new = a + b
        return self._replace(value1, new) if composite else new

    def _index(self, value: Any) -> int:
        if isinstance(self.position, int):
            return self.position
        fields = value._fields if isinstance(value, Row) else None
        if fields is None or self.position not in fields:
            raise KeyError(f"field {self.position!r} is not a field of record {value!r}: a field name needs a "
                           "named Row (Types.ROW_NAMED)")
        return fields.index(self.position)

    def _field(self, value: Any) -> Any:
        return value[self._index(value)]

    def _replace(self, value: Any, new: Any) -> Any:
        i = self._index(value)
        values = list(value)
        values[i] = new
        if isinstance(value, Row):
            return Row.of(value.get_row_kind(), values, value._fields)
        return tuple(values) if isinstance(value, tuple) else values
