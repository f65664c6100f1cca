"""Flink logical types <-> Spark SQL types."""

from __future__ import annotations

from pyspark.sql import types as T

from changeflow.common.types import DataType, DataTypes

_TO_SPARK = {
    "BOOLEAN": T.BooleanType, "TINYINT": T.ByteType, "SMALLINT": T.ShortType, "INT": T.IntegerType,
    "BIGINT": T.LongType, "FLOAT": T.FloatType, "DOUBLE": T.DoubleType, "STRING": T.StringType,
    "VARCHAR": T.StringType, "CHAR": T.StringType, "DATE": T.DateType,
    "TIMESTAMP": T.TimestampNTZType,
    # An instant (PROCTIME(), CURRENT_TIMESTAMP): Spark's TIMESTAMP is one, shown in the
    # session time zone, which changeflow sets to UTC.
    "TIMESTAMP_LTZ": T.TimestampType,
    "BYTES": T.BinaryType,  # e.g. a Python aggregate's pickled partial accumulator (two-phase)
}


def to_spark(t: DataType) -> T.DataType:
    if t.root in _TO_SPARK:
        return _TO_SPARK[t.root]()
    if t.root == "DECIMAL":
        return T.DecimalType(*t.params)
    if t.root == "ARRAY":
        return T.ArrayType(to_spark(t.element_type))
    if t.root == "MULTISET":
        # Flink represents MULTISET<T> as MAP<T, INT NOT NULL>: element -> multiplicity.
        return T.MapType(to_spark(t.element_type), T.IntegerType(), valueContainsNull=False)
    raise TypeError(f"type {t} has no Spark equivalent")


def from_spark(t: T.DataType, nullable: bool = True) -> DataType:
    for root, cls in _TO_SPARK.items():
        if type(t) is cls and root not in ("VARCHAR", "CHAR", "TIMESTAMP_LTZ"):
            return DataType(root, nullable) if root != "TIMESTAMP" else DataTypes.TIMESTAMP(6, nullable)
    if isinstance(t, T.TimestampType):
        return DataTypes.TIMESTAMP(6, nullable)
    if isinstance(t, T.DecimalType):
        return DataTypes.DECIMAL(t.precision, t.scale, nullable)
    if isinstance(t, T.ArrayType):
        return DataTypes.ARRAY(from_spark(t.elementType), nullable)
    raise TypeError(f"Spark type {t.simpleString()} is not supported")


def struct(schema) -> T.StructType:
    """A Spark StructType for a plan schema of ``(name, DataType)`` pairs."""
    return T.StructType([T.StructField(n, to_spark(t), t.nullable) for n, t in schema])
