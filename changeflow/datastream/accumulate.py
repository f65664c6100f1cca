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

``sum`` adds numbers only, as Flink's ``SumAggregator`` (which refuses a field that is
not numeric): a string field would otherwise be concatenated and a bool counted. A field
declared non-numeric is refused when the job is built (:func:`check_sum_field`); for
records without declared types the field of every record, a key's first one included, is
checked when it is summed (:meth:`AccumulateReduce.accept_first`).
"""

from __future__ import annotations

import numbers
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

    def __init__(self, kind: str, position: int | str, field_type: Any = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown accumulation {kind!r}; expected one of {', '.join(KINDS)}")
        if isinstance(position, bool) or not isinstance(position, (int, str)):
            raise TypeError("The field position must be of int or str type to locate the value to calculate "
                            f"for min, max, min_by, max_by and sum. The given type is: {type(position)}")
        self.kind = kind
        self.position = position
        # The summed field's declared type (from check_sum_field): a sum must still fit it (an
        # INT sum may leave INT's range). min/max/min_by/max_by only pick input values.
        self.field_type = field_type

    def is_output_idempotent(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"{self.kind}({self.position!r})"

    def accept_first(self, record: Any) -> Any:
        """Checks a key's first record, which ``reduce`` never sees; returns it unchanged."""
        if self.kind == "sum":
            self._number(record)
        return record

    def reduce(self, value1: Any, value2: Any) -> Any:
        composite = isinstance(value2, (tuple, list))  # Row is a tuple
        if not composite and self.position != 0:
            raise TypeError(f"The {self.position} field selected on a basic type. A field expression on a basic "
                            "type can only select the 0th field (which means selecting the entire basic type).")
        if self.kind == "sum":
            b = self._number(value2)
            a = self._field(value1) if composite else value1
            total = a + b if self.field_type is None else self._fit(a + b)
            return self._replace(value1, total) if composite else total
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

    def _fit(self, total: Any) -> Any:
        convert = self.__dict__.get("_convert")
        if convert is None:
            convert = self._convert = self.field_type.converter()
        try:
            return convert(total)
        except ValueError:
            from changeflow.common.typeinfo import conform

            return conform(self.field_type, total, f"the sum of field {self.position!r}", convert)  # raises

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_convert", None)  # a closure; rebuilt where the function runs
        return state

    def _number(self, record: Any) -> Any:
        """The summed field of ``record``; TypeError naming the field and value when it is not a number."""
        composite = isinstance(record, (tuple, list))
        if not composite and self.position != 0:
            raise TypeError(f"The {self.position} field selected on a basic type. A field expression on a basic "
                            "type can only select the 0th field (which means selecting the entire basic type).")
        value = self._field(record) if composite else record
        if not is_number(value):
            where = f"field {self.position!r}" if composite else "the record (a basic value, field 0)"
            raise TypeError(f"sum({self.position!r}) adds numbers only, but {where} is {value!r} "
                            f"({type(value).__name__}); Flink's sum refuses a non-numeric field")
        return value

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


def is_number(value: Any) -> bool:
    """Whether ``sum`` may add ``value``: an int, float, Decimal or numpy number, not a bool.

    >>> [is_number(v) for v in (1, 2.5, True, "1", None)]
    [True, True, False, False, False]
    """
    return isinstance(value, numbers.Number) and not isinstance(value, (bool, complex))


_NUMERIC_TYPES = ("BYTE", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "BIG_INT", "BIG_DEC")


def check_sum_field(type_info: Any, position: int | str) -> Any:
    """Refuses, when the job is built, a ``sum`` over a field whose declared type is not numeric.

    ``type_info`` is the stream's TypeInformation; an undeclared (pickled) type is checked per
    record instead. Also refuses a position outside a declared tuple or row, or a name that is
    not one of its fields, as Flink does when the job is built. Returns the field's declared
    type, or None when the stream's type does not declare it.

    >>> from changeflow.common.typeinfo import Types
    >>> check_sum_field(Types.TUPLE([Types.STRING(), Types.LONG()]), 1)
    Types.LONG()
    >>> check_sum_field(Types.TUPLE([Types.STRING(), Types.LONG()]), 0)  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    TypeError: sum(0): field 0 of the stream's records is declared Types.STRING(), not a number
    (stream type Types.TUPLE([Types.STRING(), Types.LONG()])); sum adds numbers only, as Flink's sum
    """
    from changeflow.common.typeinfo import BasicTypeInfo, RowTypeInfo, TupleTypeInfo

    if isinstance(type_info, (RowTypeInfo, TupleTypeInfo)):
        fields = type_info.get_field_types()
        if isinstance(position, str):
            names = type_info.get_field_names() if isinstance(type_info, RowTypeInfo) else []
            if position not in names:
                raise KeyError(f"sum({position!r}): no field named {position!r} in the stream's records "
                               f"({type_info!r})")
            index = names.index(position)
        else:
            if not 0 <= position < len(fields):
                raise IndexError(f"sum({position!r}): field position out of range for the stream's records "
                                 f"({type_info!r}, {len(fields)} fields)")
            index = position
        field = fields[index]
        what = f"field {position!r} of the stream's records"
    elif isinstance(type_info, BasicTypeInfo):
        if position != 0:
            raise TypeError(f"The {position} field selected on a basic type. A field expression on a basic "
                            "type can only select the 0th field (which means selecting the entire basic type).")
        field, what = type_info, "the stream's records"
    else:
        return None  # undeclared or another shape: checked on each record
    if not (isinstance(field, BasicTypeInfo) and field.name in _NUMERIC_TYPES):
        raise TypeError(f"sum({position!r}): {what} is declared {field!r}, not a number (stream type "
                        f"{type_info!r}); sum adds numbers only, as Flink's sum")
    return field
