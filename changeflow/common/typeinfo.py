"""PyFlink's ``Types``: the type information of DataStream records.

A DataStream record is a Python value. Its ``TypeInformation`` says what shape
the value has and how a source converts what the user gave it:
``Types.ROW([...])`` turns tuples, lists and dicts into :class:`Row`,
``Types.TUPLE([...])`` turns lists into tuples, and a basic type checks the
value (an ``INT`` must be an ``int`` in 32-bit range) so that a bad record
fails at the source with the record named, not deep inside a job.
``Types.PICKLED_BYTE_ARRAY()`` (the default when no type is given) accepts any
picklable value unchanged, as in PyFlink.

changeflow records travel between Spark stages pickled whatever their type
(see :mod:`changeflow.runtime.spark.stream_graph`), so type information here is
about conversion and checking, not serialisation.

>>> Types.ROW_NAMED(["word", "n"], [Types.STRING(), Types.INT()]).from_value(("a", 1))
Row(word='a', n=1)
>>> Types.TUPLE([Types.STRING(), Types.INT()]).from_value(["a", 1])
('a', 1)
>>> Types.INT().from_value(2**40)
Traceback (most recent call last):
...
ValueError: value 1099511627776 does not fit Types.INT(): out of range [-2147483648, 2147483647]
"""

from __future__ import annotations

import datetime
import decimal
import struct
from typing import Any, Callable, List

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.common.time import Instant

__all__ = ["BasicArrayTypeInfo", "BasicTypeInfo", "ListTypeInfo", "MapTypeInfo", "PickledBytesTypeInfo",
           "PrimitiveArrayTypeInfo", "RowTypeInfo", "TupleTypeInfo", "TypeInformation", "Types", "conform"]


class TypeInformation:
    """The type of a DataStream's records."""

    def from_value(self, value: Any) -> Any:
        """``value`` converted to this type's Python form; ``ValueError`` when it does not fit."""
        return value

    def converter(self) -> Callable[[Any], Any]:
        """A function doing what :meth:`from_value` does, faster for values that already conform.

        Operators call it once per value they check (declared output types, typed state), so
        the common case (an ``int`` for ``LONG``, a ``str`` for ``STRING``, a tuple of those for
        ``TUPLE``) is a type identity test and no conversion; anything else goes through
        :meth:`from_value`, which converts or raises.
        """
        return self.from_value

    def is_declared(self) -> bool:
        """False for ``PICKLED_BYTE_ARRAY`` (any value), True for a type values are checked against."""
        return True

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(repr(self))


def _fail(value: Any, t: TypeInformation, why: str) -> ValueError:
    return ValueError(f"value {value!r} does not fit {t!r}: {why}")


_INT_RANGES = {"BYTE": 8, "SHORT": 16, "INT": 32, "LONG": 64}
_PYTHON_CLASSES = {
    "STRING": (str,), "CHAR": (str,), "BOOLEAN": (bool,), "FLOAT": (float, int), "DOUBLE": (float, int),
    "BIG_INT": (int,), "BIG_DEC": (decimal.Decimal,), "INSTANT": (Instant, datetime.datetime),
    "SQL_DATE": (datetime.date,), "SQL_TIME": (datetime.time,), "SQL_TIMESTAMP": (datetime.datetime,),
}


def to_float32(value: float) -> float:
    """``value`` as Flink's ``FLOAT`` (a Java float) holds it: rounded to single precision (``1e39`` is ``inf``).

    >>> to_float32(110.1), to_float32(0.5)
    (110.0999984741211, 0.5)
    """
    if value != value or value in (float("inf"), float("-inf")):
        return value
    try:
        return _FLOAT32.unpack(_FLOAT32.pack(value))[0]
    except OverflowError:  # beyond the largest float: Java's (float) cast gives infinity
        return float("inf") if value > 0 else float("-inf")


_FLOAT32 = struct.Struct("<f")


class BasicTypeInfo(TypeInformation):
    """A scalar type: ``STRING``, ``BOOLEAN``, ``BYTE``, ``SHORT``, ``INT``, ``LONG``, ``FLOAT``, ``DOUBLE``..."""

    def __init__(self, name: str) -> None:
        self.name = name

    def from_value(self, value: Any) -> Any:
        if value is None:
            return None
        if self.name in _INT_RANGES:
            if isinstance(value, bool) or not isinstance(value, int):
                raise _fail(value, self, f"expected an int, got {type(value).__name__}")
            bits = _INT_RANGES[self.name]
            low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            if not low <= value <= high:
                raise _fail(value, self, f"out of range [{low}, {high}]")
            return value
        classes = _PYTHON_CLASSES[self.name]
        if isinstance(value, bool) and bool not in classes or not isinstance(value, classes):
            raise _fail(value, self, f"expected {' or '.join(c.__name__ for c in classes)}, "
                                     f"got {type(value).__name__}")
        if self.name == "FLOAT":
            return to_float32(float(value))
        if self.name == "DOUBLE":
            return float(value)
        if self.name == "CHAR" and isinstance(value, str) and len(value) != 1:
            raise _fail(value, self, "expected a single character")
        return value

    def converter(self) -> Callable[[Any], Any]:
        slow = self.from_value
        if self.name in _INT_RANGES:
            bits = _INT_RANGES[self.name]
            low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

            def to_int(value: Any) -> Any:
                if type(value) is int and low <= value <= high:
                    return value
                return slow(value)
            return to_int
        exact = {"STRING": str, "DOUBLE": float, "BIG_INT": int, "BOOLEAN": bool}.get(self.name)
        if exact is None:
            return slow

        def to_exact(value: Any) -> Any:
            return value if type(value) is exact else slow(value)
        return to_exact

    def __repr__(self) -> str:
        return f"Types.{self.name}()"


def _exact_type(t: TypeInformation) -> tuple[type, int | None, int | None] | None:
    """For a basic type whose conforming values are exactly one Python type: (type, low, high)."""
    if not isinstance(t, BasicTypeInfo):
        return None
    if t.name in _INT_RANGES:
        bits = _INT_RANGES[t.name]
        return int, -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    exact = {"STRING": str, "DOUBLE": float, "BIG_INT": int, "BOOLEAN": bool}.get(t.name)  # FLOAT rounds
    return (exact, None, None) if exact is not None else None


class PickledBytesTypeInfo(TypeInformation):
    """Any picklable Python value (PyFlink's default record type)."""

    def is_declared(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "Types.PICKLED_BYTE_ARRAY()"


class RowTypeInfo(TypeInformation):
    """Records are :class:`Row` with the given field types (and names: ``f0, f1, ...`` when not given)."""

    def __init__(self, field_types: List[TypeInformation], field_names: List[str] | None = None) -> None:
        if field_names is not None and len(field_names) != len(field_types):
            raise ValueError(f"{len(field_names)} field names for {len(field_types)} field types")
        self.field_types = list(field_types)
        self.field_names = list(field_names) if field_names is not None else None

    def get_field_names(self) -> list[str]:
        return list(self.field_names) if self.field_names is not None else [f"f{i}" for i in
                                                                            range(len(self.field_types))]

    def get_field_index(self, field_name: str) -> int:
        names = self.get_field_names()
        return names.index(field_name) if field_name in names else -1

    def get_field_types(self) -> list[TypeInformation]:
        return list(self.field_types)

    def from_value(self, value: Any) -> Any:
        if value is None:
            return None
        names = self.get_field_names()
        if isinstance(value, dict):
            values = [value.get(n) for n in names]
        elif isinstance(value, Row) and value._fields is not None:
            values = [value[n] for n in names]
        elif isinstance(value, (tuple, list)):
            values = list(value)
        else:
            raise _fail(value, self, f"expected a Row, tuple, list or dict, got {type(value).__name__}")
        if len(values) != len(self.field_types):
            raise _fail(value, self, f"{len(values)} fields for {len(self.field_types)} field types")
        converted = [t.from_value(v) for t, v in zip(self.field_types, values, strict=True)]
        kind = value.get_row_kind() if isinstance(value, Row) else RowKind.INSERT
        return Row.of(kind, converted, names)

    def __repr__(self) -> str:
        if self.field_names is None:
            return f"Types.ROW([{', '.join(map(repr, self.field_types))}])"
        return f"Types.ROW_NAMED({self.field_names!r}, [{', '.join(map(repr, self.field_types))}])"


class TupleTypeInfo(TypeInformation):
    """Records are tuples with the given field types."""

    def __init__(self, field_types: List[TypeInformation]) -> None:
        self.field_types = list(field_types)

    def get_field_types(self) -> list[TypeInformation]:
        return list(self.field_types)

    def from_value(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, (tuple, list)):
            raise _fail(value, self, f"expected a tuple or list, got {type(value).__name__}")
        if len(value) != len(self.field_types):
            raise _fail(value, self, f"{len(value)} fields for {len(self.field_types)} field types")
        return tuple(t.from_value(v) for t, v in zip(self.field_types, value, strict=True))

    def converter(self) -> Callable[[Any], Any]:
        slow = self.from_value
        found = [_exact_type(t) for t in self.field_types]
        exact = [e for e in found if e is not None]
        if len(exact) == len(found):
            # Every field has one Python type that needs no conversion: a value whose field
            # types are exactly those (and whose ints are in range) is returned as it is.
            types = tuple(e[0] for e in exact)
            ranges = [(i, e[1], e[2]) for i, e in enumerate(exact) if e[1] is not None]

            def to_exact_tuple(value: Any) -> Any:
                if type(value) is tuple and tuple(map(type, value)) == types:
                    for i, low, high in ranges:
                        if not low <= value[i] <= high:
                            return slow(value)
                    return value
                return slow(value)
            return to_exact_tuple
        fields = [t.converter() for t in self.field_types]
        size = len(fields)

        def to_tuple(value: Any) -> Any:
            if type(value) is tuple and len(value) == size:
                try:
                    return tuple([convert(v) for convert, v in zip(fields, value, strict=True)])
                except ValueError:
                    pass  # from_value names the field that does not fit
            return slow(value)
        return to_tuple

    def __repr__(self) -> str:
        return f"Types.TUPLE([{', '.join(map(repr, self.field_types))}])"


class _ElementsTypeInfo(TypeInformation):
    _label = ""

    def __init__(self, element_type: TypeInformation) -> None:
        self.element_type = element_type

    def from_value(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, (list, tuple)):
            raise _fail(value, self, f"expected a list, got {type(value).__name__}")
        return [self.element_type.from_value(v) for v in value]

    def __repr__(self) -> str:
        return f"Types.{self._label}({self.element_type!r})"


class BasicArrayTypeInfo(_ElementsTypeInfo):
    """An array of a basic type (nulls allowed), as a Python list."""
    _label = "BASIC_ARRAY"


class PrimitiveArrayTypeInfo(_ElementsTypeInfo):
    """An array of a primitive type (no nulls), as a Python list."""
    _label = "PRIMITIVE_ARRAY"

    def from_value(self, value: Any) -> Any:
        values = super().from_value(value)
        if values is not None and any(v is None for v in values):
            raise _fail(value, self, "a primitive array cannot hold null")
        return values


class ListTypeInfo(_ElementsTypeInfo):
    """A list of elements of one type."""
    _label = "LIST"


class MapTypeInfo(TypeInformation):
    """A dict with keys and values of the given types."""

    def __init__(self, key_type: TypeInformation, value_type: TypeInformation) -> None:
        self.key_type = key_type
        self.value_type = value_type

    def from_value(self, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise _fail(value, self, f"expected a dict, got {type(value).__name__}")
        return {self.key_type.from_value(k): self.value_type.from_value(v) for k, v in value.items()}

    def __repr__(self) -> str:
        return f"Types.MAP({self.key_type!r}, {self.value_type!r})"


class Types:
    """PyFlink's factory of type information (``Types.STRING()``, ``Types.ROW([...])``, ...)."""

    @staticmethod
    def STRING() -> TypeInformation:
        return BasicTypeInfo("STRING")

    @staticmethod
    def BYTE() -> TypeInformation:
        return BasicTypeInfo("BYTE")

    @staticmethod
    def BOOLEAN() -> TypeInformation:
        return BasicTypeInfo("BOOLEAN")

    @staticmethod
    def SHORT() -> TypeInformation:
        return BasicTypeInfo("SHORT")

    @staticmethod
    def INT() -> TypeInformation:
        return BasicTypeInfo("INT")

    @staticmethod
    def LONG() -> TypeInformation:
        return BasicTypeInfo("LONG")

    @staticmethod
    def FLOAT() -> TypeInformation:
        return BasicTypeInfo("FLOAT")

    @staticmethod
    def DOUBLE() -> TypeInformation:
        return BasicTypeInfo("DOUBLE")

    @staticmethod
    def CHAR() -> TypeInformation:
        return BasicTypeInfo("CHAR")

    @staticmethod
    def BIG_INT() -> TypeInformation:
        return BasicTypeInfo("BIG_INT")

    @staticmethod
    def BIG_DEC() -> TypeInformation:
        return BasicTypeInfo("BIG_DEC")

    @staticmethod
    def INSTANT() -> TypeInformation:
        return BasicTypeInfo("INSTANT")

    @staticmethod
    def SQL_DATE() -> TypeInformation:
        return BasicTypeInfo("SQL_DATE")

    @staticmethod
    def SQL_TIME() -> TypeInformation:
        return BasicTypeInfo("SQL_TIME")

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:
        return BasicTypeInfo("SQL_TIMESTAMP")

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:
        return PickledBytesTypeInfo()

    @staticmethod
    def ROW(field_types: List[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types)

    @staticmethod
    def ROW_NAMED(field_names: List[str], field_types: List[TypeInformation]) -> RowTypeInfo:
        return RowTypeInfo(field_types, field_names)

    @staticmethod
    def TUPLE(field_types: List[TypeInformation]) -> TupleTypeInfo:
        return TupleTypeInfo(field_types)

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return PrimitiveArrayTypeInfo(element_type)

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return BasicArrayTypeInfo(element_type)

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation) -> TypeInformation:
        return BasicArrayTypeInfo(element_type)

    @staticmethod
    def MAP(key_type_info: TypeInformation, value_type_info: TypeInformation) -> TypeInformation:
        return MapTypeInfo(key_type_info, value_type_info)

    @staticmethod
    def LIST(element_type_info: TypeInformation) -> TypeInformation:
        return ListTypeInfo(element_type_info)


def conform(type_info: Any, value: Any, where: str, convert: Callable[[Any], Any] | None = None) -> Any:
    """``value`` converted to the declared ``type_info``, or a ``ValueError`` saying ``where``.

    ``where`` names what declared the type (``"state 'count' of KeyedProcess(Count)"``); the
    error names it, the declared type and the value. ``convert`` is ``type_info.converter()``
    when the caller checks many values.

    >>> conform(Types.LONG(), 3, "state 'n' of Count")
    3
    >>> conform(Types.LONG(), "3", "state 'n' of Count")
    Traceback (most recent call last):
    ...
    ValueError: state 'n' of Count is declared Types.LONG(), but the value '3' (str) does not fit it: value '3' does
    not fit Types.LONG(): expected an int, got str
    """
    try:
        return (convert or type_info.from_value)(value)
    except ValueError as error:
        raise ValueError(f"{where} is declared {type_info!r}, but the value {value!r} ({type(value).__name__}) "
                         f"does not fit it: {error}") from None
