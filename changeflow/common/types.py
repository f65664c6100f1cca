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


@dataclass(frozen=True)
class DataType:
    """A Flink logical type. ``root`` is the type name without parameters."""

    root: str
    nullable: bool = True
    params: tuple = ()
    element: "DataType | None" = None  # ARRAY / MULTISET element type

    @property
    def element_type(self) -> "DataType":
        """The element type of an ARRAY or MULTISET (an error for any other type)."""
        if self.element is None:
            raise ValueError(f"{self} has no element type")
        return self.element

    def __str__(self) -> str:
        """The type as Flink prints it: ``VARCHAR(5) NOT NULL``, ``TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*``.

        >>> str(DataType("CHAR", False, (3,))), str(DataType("TIMESTAMP_LTZ", False, (3, "*PROCTIME*")))
        ('CHAR(3) NOT NULL', 'TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*')
        """
        text = self.root
        if self.root == "DECIMAL":
            text = f"DECIMAL({self.params[0]}, {self.params[1]})"
        elif self.root == "TIMESTAMP":
            text = f"TIMESTAMP({self.params[0] if self.params else 6})"
        elif self.root in ("CHAR", "VARCHAR", "TIMESTAMP_LTZ") and self.params:
            text = f"{self.root}({self.params[0]})"
        elif self.root in ("ARRAY", "MULTISET"):
            text = f"{self.root}<{self.element}>"
        elif self.root == "ROW":
            text = "ROW<" + ", ".join(f"`{n}` {t}" for n, t in self.params) + ">"
        text = text if self.nullable else f"{text} NOT NULL"
        # A time attribute's kind follows the nullability, as Flink's asSummaryString.
        kind = next((p for p in self.params[1:] if isinstance(p, str) and p.startswith("*")), None)
        return f"{text} {kind}" if kind and self.root == "TIMESTAMP_LTZ" else text

    def with_nullable(self, nullable: bool) -> "DataType":
        return DataType(self.root, nullable, self.params, self.element)

    @property
    def is_integral(self) -> bool:
        return self.root in INTEGRAL

    @property
    def is_numeric(self) -> bool:
        return self.root in NUMERIC

    @property
    def is_string(self) -> bool:
        return self.root in ("STRING", "VARCHAR", "CHAR")


class DataTypes:
    """Factory of types, spelled as PyFlink's ``DataTypes``."""

    @staticmethod
    def BOOLEAN(nullable: bool = True) -> DataType:
        return DataType("BOOLEAN", nullable)

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
        return DataType("DECIMAL", nullable, (precision, scale))

    @staticmethod
    def STRING(nullable: bool = True) -> DataType:
        return DataType("STRING", nullable)

    @staticmethod
    def DATE(nullable: bool = True) -> DataType:
        return DataType("DATE", nullable)

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> DataType:
        return DataType("TIMESTAMP", nullable, (precision,))

    @staticmethod
    def ARRAY(element: DataType, nullable: bool = True) -> DataType:
        return DataType("ARRAY", nullable, (), element)

    @staticmethod
    def MULTISET(element: DataType, nullable: bool = True) -> DataType:
        return DataType("MULTISET", nullable, (), element)

    @staticmethod
    def FIELD(name: str, data_type: DataType) -> tuple[str, DataType]:
        return (name, data_type)

    @staticmethod
    def ROW(fields: list[tuple[str, DataType]], nullable: bool = True) -> DataType:
        """A row type; its ``params`` are the ``(name, type)`` fields."""
        return DataType("ROW", nullable, tuple(fields))


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
