"""Logical data types with Flink's names (``BIGINT``, ``STRING``, ``DOUBLE``...).

The planner derives a result type for every column the way Flink does, because
results must match Flink's: ``AVG`` of a ``BIGINT`` column is a ``BIGINT``.
Types are immutable values compared by name and nullability.
"""

from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass

INTEGRAL = ("TINYINT", "SMALLINT", "INT", "BIGINT")
APPROXIMATE = ("FLOAT", "DOUBLE")
NUMERIC = INTEGRAL + APPROXIMATE + ("DECIMAL",)


# Flink's maximum length: VARCHAR(2147483647) is STRING, VARBINARY(2147483647) is BYTES.
MAX_LENGTH = 2147483647

# Type names that carry one integer parameter and print it: ``CHAR(3)``, ``TIME(0)``.
_LENGTHED = ("CHAR", "VARCHAR", "BINARY", "VARBINARY", "TIME", "TIMESTAMP_LTZ")


@dataclass(frozen=True)
class DataType:
    """A Flink logical type. ``root`` is the type name without parameters.

    ``params`` holds the parameters: ``(precision, scale)`` of a DECIMAL, ``(length,)``
    of a CHAR/VARCHAR/BINARY/VARBINARY, ``(precision,)`` of a TIME/TIMESTAMP, the
    ``(name, type)`` fields of a ROW, ``(key type, value type)`` of a MAP and the
    resolutions of an INTERVAL. ``element`` is the element type of an ARRAY or MULTISET.
    ``descriptions`` are a ROW's field descriptions (``None`` for a field without one).
    """

    root: str
    nullable: bool = True
    params: tuple = ()
    element: "DataType | None" = None  # ARRAY / MULTISET element type
    descriptions: tuple = ()

    @property
    def element_type(self) -> "DataType":
        """The element type of an ARRAY or MULTISET (an error for any other type)."""
        if self.element is None:
            raise ValueError(f"{self} has no element type")
        return self.element

    @property
    def key_type(self) -> "DataType":
        """The key type of a MAP (PyFlink's ``MapType.key_type``)."""
        if self.root != "MAP":
            raise ValueError(f"{self} has no key type")
        return self.params[0]

    @property
    def value_type(self) -> "DataType":
        """The value type of a MAP (PyFlink's ``MapType.value_type``)."""
        if self.root != "MAP":
            raise ValueError(f"{self} has no value type")
        return self.params[1]

    def field_names(self) -> list[str]:
        """The field names of a ROW (PyFlink's ``RowType.field_names()``)."""
        if self.root != "ROW":
            raise ValueError(f"{self} is not a ROW type")
        return [n for n, _ in self.params]

    def field_types(self) -> list["DataType"]:
        """The field types of a ROW (PyFlink's ``RowType.field_types()``)."""
        if self.root != "ROW":
            raise ValueError(f"{self} is not a ROW type")
        return [t for _, t in self.params]

    def not_null(self) -> "DataType":
        """This type without NULL (PyFlink's ``DataType.not_null()``)."""
        return self.with_nullable(False)

    def __str__(self) -> str:
        """The type as Flink prints it: ``VARCHAR(5) NOT NULL``, ``TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*``.

        >>> str(DataType("CHAR", False, (3,))), str(DataType("TIMESTAMP_LTZ", False, (3, "*PROCTIME*")))
        ('CHAR(3) NOT NULL', 'TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*')
        >>> str(DataTypes.MAP(DataTypes.STRING(), DataTypes.INT())), str(DataTypes.TIME())
        ('MAP<STRING, INT>', 'TIME(0)')
        """
        text = self.root
        if self.root == "DECIMAL":
            text = f"DECIMAL({self.params[0]}, {self.params[1]})"
        elif self.root == "TIMESTAMP":
            text = f"TIMESTAMP({self.params[0] if self.params else 6})"
        elif self.root in _LENGTHED and self.params:
            text = f"{self.root}({self.params[0]})"
        elif self.root in ("ARRAY", "MULTISET"):
            text = f"{self.root}<{self.element}>"
        elif self.root == "MAP":
            text = f"MAP<{self.params[0]}, {self.params[1]}>"
        elif self.root == "ROW":
            described = self.descriptions or (None,) * len(self.params)
            text = "ROW<" + ", ".join(f"`{n}` {t}" + (f" '{d}'" if d else "")
                                      for (n, t), d in zip(self.params, described, strict=True)) + ">"
        elif self.root == "INTERVAL":
            text = "INTERVAL " + " TO ".join(_resolution_text(r) for r in self.params)
        text = text if self.nullable else f"{text} NOT NULL"
        # A time attribute's kind follows the nullability, as Flink's asSummaryString.
        kind = next((p for p in self.params[1:] if isinstance(p, str) and p.startswith("*")), None)
        return f"{text} {kind}" if kind and self.root in ("TIMESTAMP", "TIMESTAMP_LTZ") else text

    def with_nullable(self, nullable: bool) -> "DataType":
        return DataType(self.root, nullable, self.params, self.element, self.descriptions)

    @property
    def is_integral(self) -> bool:
        return self.root in INTEGRAL

    @property
    def is_numeric(self) -> bool:
        return self.root in NUMERIC

    @property
    def is_string(self) -> bool:
        return self.root in ("STRING", "VARCHAR", "CHAR")

    @property
    def is_binary(self) -> bool:
        return self.root in ("BYTES", "VARBINARY", "BINARY")


@dataclass(frozen=True)
class Resolution:
    """An INTERVAL's unit and precision (PyFlink's ``DataTypes.SECOND(3)``, ``DataTypes.DAY()``...)."""

    unit: str
    precision: int = -1


def _resolution_text(r: Resolution) -> str:
    """Flink's spelling: ``DAY(2)``, ``SECOND(3)``, ``YEAR(2)``; MINUTE, HOUR and MONTH take none."""
    return f"{r.unit}({r.precision})" if r.precision >= 0 else r.unit


def _length(name: str, length: int) -> int:
    if not isinstance(length, int) or not 1 <= length <= MAX_LENGTH:
        raise ValueError(f"{name} length must be between 1 and {MAX_LENGTH}, got {length!r}")
    return length


def _precision(name: str, precision: int) -> int:
    if not isinstance(precision, int) or not 0 <= precision <= 9:
        raise ValueError(f"{name} precision must be between 0 and 9, got {precision!r}")
    return precision


class DataTypes:
    """Factory of types, spelled as PyFlink's ``DataTypes``."""

    @staticmethod
    def NULL() -> DataType:
        return DataType("NULL", True)

    @staticmethod
    def CHAR(length: int, nullable: bool = True) -> DataType:
        return DataType("CHAR", nullable, (_length("CHAR", length),))

    @staticmethod
    def VARCHAR(length: int, nullable: bool = True) -> DataType:
        if length == MAX_LENGTH:
            return DataTypes.STRING(nullable)
        return DataType("VARCHAR", nullable, (_length("VARCHAR", length),))

    @staticmethod
    def STRING(nullable: bool = True) -> DataType:
        return DataType("STRING", nullable)

    @staticmethod
    def BOOLEAN(nullable: bool = True) -> DataType:
        return DataType("BOOLEAN", nullable)

    @staticmethod
    def BINARY(length: int, nullable: bool = True) -> DataType:
        return DataType("BINARY", nullable, (_length("BINARY", length),))

    @staticmethod
    def VARBINARY(length: int, nullable: bool = True) -> DataType:
        if length == MAX_LENGTH:
            return DataTypes.BYTES(nullable)
        return DataType("VARBINARY", nullable, (_length("VARBINARY", length),))

    @staticmethod
    def BYTES(nullable: bool = True) -> DataType:
        return DataType("BYTES", nullable)

    @staticmethod
    def TINYINT(nullable: bool = True) -> DataType:
        return DataType("TINYINT", nullable)

    @staticmethod
    def SMALLINT(nullable: bool = True) -> DataType:
        return DataType("SMALLINT", nullable)

    @staticmethod
    def INT(nullable: bool = True) -> DataType:
        return DataType("INT", nullable)

    @staticmethod
    def BIGINT(nullable: bool = True) -> DataType:
        return DataType("BIGINT", nullable)

    @staticmethod
    def FLOAT(nullable: bool = True) -> DataType:
        return DataType("FLOAT", nullable)

    @staticmethod
    def DOUBLE(nullable: bool = True) -> DataType:
        return DataType("DOUBLE", nullable)

    @staticmethod
    def DECIMAL(precision: int, scale: int, nullable: bool = True) -> DataType:
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise ValueError(f"DECIMAL precision must be between 1 and 38 and scale between 0 and the "
                             f"precision, got DECIMAL({precision}, {scale})")
        return DataType("DECIMAL", nullable, (precision, scale))

    @staticmethod
    def DATE(nullable: bool = True) -> DataType:
        return DataType("DATE", nullable)

    @staticmethod
    def TIME(precision: int = 0, nullable: bool = True) -> DataType:
        return DataType("TIME", nullable, (_precision("TIME", precision),))

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> DataType:
        return DataType("TIMESTAMP", nullable, (_precision("TIMESTAMP", precision),))

    @staticmethod
    def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> DataType:
        """An instant (``TIMESTAMP WITH LOCAL TIME ZONE``)."""
        return DataType("TIMESTAMP_LTZ", nullable, (_precision("TIMESTAMP_LTZ", precision),))

    TIMESTAMP_WITH_LOCAL_TIME_ZONE = TIMESTAMP_LTZ
    LOCAL_ZONED_TIMESTAMP = TIMESTAMP_LTZ

    @staticmethod
    def ARRAY(element_type: DataType, nullable: bool = True) -> DataType:
        return DataType("ARRAY", nullable, (), _checked(element_type, "ARRAY element"))

    @staticmethod
    def MAP(key_type: DataType, value_type: DataType, nullable: bool = True) -> DataType:
        return DataType("MAP", nullable, (_checked(key_type, "MAP key"), _checked(value_type, "MAP value")))

    @staticmethod
    def MULTISET(element_type: DataType, nullable: bool = True) -> DataType:
        return DataType("MULTISET", nullable, (), _checked(element_type, "MULTISET element"))

    @staticmethod
    def FIELD(name: str, data_type: DataType, description: str | None = None) -> tuple:
        """A ROW field: ``(name, type)``, or ``(name, type, description)`` when described."""
        _checked(data_type, f"field {name!r}")
        return (name, data_type) if description is None else (name, data_type, description)

    @staticmethod
    def ROW(row_fields: list | tuple = (), nullable: bool = True) -> DataType:
        """A row type; its ``params`` are the ``(name, type)`` fields."""
        fields = [tuple(f) for f in row_fields]
        for f in fields:
            if len(f) not in (2, 3) or not isinstance(f[0], str):
                raise TypeError(f"a ROW field must be DataTypes.FIELD(name, type), got {f!r}")
            _checked(f[1], f"field {f[0]!r}")
        descriptions = tuple(f[2] if len(f) == 3 else None for f in fields)
        return DataType("ROW", nullable, tuple((f[0], f[1]) for f in fields), None,
                        descriptions if any(d is not None for d in descriptions) else ())

    @staticmethod
    def SECOND(precision: int = 6) -> Resolution:
        return Resolution("SECOND", precision)

    @staticmethod
    def MINUTE() -> Resolution:
        return Resolution("MINUTE")

    @staticmethod
    def HOUR() -> Resolution:
        return Resolution("HOUR")

    @staticmethod
    def DAY(precision: int = 2) -> Resolution:
        return Resolution("DAY", precision)

    @staticmethod
    def MONTH() -> Resolution:
        return Resolution("MONTH")

    @staticmethod
    def YEAR(precision: int = 2) -> Resolution:
        return Resolution("YEAR", precision)

    @staticmethod
    def INTERVAL(upper_resolution: Resolution, lower_resolution: Resolution | None = None) -> DataType:
        """An interval type (``INTERVAL DAY(2) TO SECOND(3)``): declared and printed; columns refuse it."""
        resolutions = (upper_resolution,) if lower_resolution is None else (upper_resolution, lower_resolution)
        return DataType("INTERVAL", True, resolutions)


def _checked(t: object, what: str) -> DataType:
    if not isinstance(t, DataType):
        raise TypeError(f"{what}: expected a DataType (DataTypes.INT()...), got {t!r}")
    return t


def infer_type(value: object) -> DataType:
    """The type PyFlink's ``from_elements`` infers for a Python value."""
    # bool before int: bool is a subclass of int in Python.
    if isinstance(value, bool):
        return DataTypes.BOOLEAN()
    if isinstance(value, int):
        return DataTypes.BIGINT()
    if isinstance(value, float):
        return DataTypes.DOUBLE()
    if isinstance(value, str):
        return DataTypes.STRING()
    if isinstance(value, decimal.Decimal):
        return DataTypes.DECIMAL(38, 18)
    if isinstance(value, datetime.datetime):
        return DataTypes.TIMESTAMP(6)
    if isinstance(value, datetime.date):
        return DataTypes.DATE()
    raise TypeError(f"cannot infer a column type for value {value!r} of Python type {type(value).__name__}")
