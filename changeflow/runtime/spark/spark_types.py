"""Flink logical types <-> Spark SQL types.

Every type of :class:`~changeflow.common.types.DataTypes` that changeflow carries has a
Spark type here, used alike by the streaming and the batch runtime. Two are not Spark's
own: a TIME is a LONG of microseconds of the day (Spark's TIME type cannot be stored in
Parquet, which bounded sources stream from), and a MULTISET is a MAP of element to count
(Flink's own representation). INTERVAL types and NULL-typed columns are refused, naming
the column's type.
"""

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
    "BINARY": T.BinaryType, "VARBINARY": T.BinaryType, "BYTES": T.BinaryType,
    "TIME": T.LongType,  # microseconds of the day (module docstring)
}


def to_spark(t: DataType) -> T.DataType:
    """The Spark type that carries values of Flink type ``t`` (a TypeError naming ``t`` if none does)."""
    if t.root in _TO_SPARK:
        return _TO_SPARK[t.root]()
    if t.root == "DECIMAL":
        return T.DecimalType(*t.params)
    if t.root == "ARRAY":
        # Nested values are nullable on Spark whatever the Flink type says: the Spark type only
        # carries values (Flink's nullability is checked where values enter).
        return T.ArrayType(to_spark(t.element_type))
    if t.root == "MAP":
        return T.MapType(to_spark(t.key_type), to_spark(t.value_type))
    if t.root == "MULTISET":
        # Flink represents MULTISET<T> as MAP<T, INT NOT NULL>: element -> multiplicity.
        return T.MapType(to_spark(t.element_type), T.IntegerType(), valueContainsNull=False)
    if t.root == "ROW":
        return T.StructType([T.StructField(n, to_spark(ft), True) for n, ft in t.params])
    raise TypeError(f"type {t} is not supported by changeflow on Spark (supported: the types of DataTypes "
                    "except INTERVAL and NULL columns)")


def from_spark(t: T.DataType, nullable: bool = True) -> DataType:
    """The Flink type of a Spark column (a Spark DataFrame given to ``from_spark``)."""
    for root, cls in _TO_SPARK.items():
        if type(t) is cls and root in ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE",
                                       "STRING", "DATE", "BYTES"):
            return DataType(root, nullable)
    if isinstance(t, (T.TimestampType, T.TimestampNTZType)):
        return DataTypes.TIMESTAMP(6, nullable)
    if isinstance(t, T.DecimalType):
        return DataTypes.DECIMAL(t.precision, t.scale, nullable)
    if isinstance(t, T.ArrayType):
        return DataTypes.ARRAY(from_spark(t.elementType, t.containsNull), nullable)
    if isinstance(t, T.MapType):
        return DataTypes.MAP(from_spark(t.keyType, False), from_spark(t.valueType, t.valueContainsNull), nullable)
    if isinstance(t, T.StructType):
        return DataTypes.ROW([DataTypes.FIELD(f.name, from_spark(f.dataType, f.nullable)) for f in t.fields],
                             nullable)
    raise TypeError(f"Spark type {t.simpleString()} is not supported")


def struct(schema) -> T.StructType:
    """A Spark StructType for a plan schema of ``(name, DataType)`` pairs."""
    return T.StructType([T.StructField(n, to_spark(t), t.nullable) for n, t in schema])
