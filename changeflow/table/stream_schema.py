"""A DataStream's type as a table's columns, and a table's columns as a DataStream's type (Flink's rules).

``from_data_stream`` derives the columns from the stream's ``TypeInformation``:
a Row type gives one column per field (named as the Row's fields, ``f0, f1, ...``
for ``Types.ROW``), a Tuple type ``f0, f1, ...``, any other (atomic) type one
column ``f0``. A Schema then picks and orders derived columns by name; field
expressions rename them by position, or pick them by name when they reference
the stream's fields (``col("n"), col("w").alias("word")``), as Flink does.

A stream without a type (``PICKLED_BYTE_ARRAY``) has no columns to derive:
changeflow refuses it and asks for an ``output_type`` (Flink makes such a stream
one ``RAW`` column holding the Python object, which only comes back out whole).
"""

from __future__ import annotations


from changeflow.catalog import DeclaredSchema
from changeflow.common.typeinfo import (BasicArrayTypeInfo, BasicTypeInfo, ListTypeInfo, PickledBytesTypeInfo,
                                        PrimitiveArrayTypeInfo, RowTypeInfo, TupleTypeInfo, TypeInformation, Types)
from changeflow.common.types import DataType, DataTypes
from changeflow.expressions import Alias, Column
from changeflow.kernels.bridge import RecordShape

_TO_TABLE = {
    "STRING": DataTypes.STRING, "BYTE": DataTypes.TINYINT, "BOOLEAN": DataTypes.BOOLEAN,
    "SHORT": DataTypes.SMALLINT, "INT": DataTypes.INT, "LONG": DataTypes.BIGINT, "FLOAT": DataTypes.FLOAT,
    "DOUBLE": DataTypes.DOUBLE, "SQL_DATE": DataTypes.DATE,
}
_TO_STREAM = {"STRING": "STRING", "VARCHAR": "STRING", "CHAR": "STRING", "TINYINT": "BYTE", "BOOLEAN": "BOOLEAN",
              "SMALLINT": "SHORT", "INT": "INT", "BIGINT": "LONG", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE",
              "DATE": "SQL_DATE"}

Columns = tuple[tuple[str, DataType], ...]


def table_type(info: TypeInformation, where: str) -> DataType:
    """The table type of a field of type ``info`` (``where`` names it for errors)."""
    if isinstance(info, BasicTypeInfo):
        if info.name in _TO_TABLE:
            return _TO_TABLE[info.name]()
        if info.name == "BIG_DEC":
            return DataTypes.DECIMAL(38, 18)
        if info.name == "SQL_TIMESTAMP":
            return DataTypes.TIMESTAMP(3)
        if info.name == "INSTANT":  # Flink's column for an Instant; Spark holds it to the microsecond
            return DataTypes.TIMESTAMP_LTZ(9)
    if isinstance(info, (BasicArrayTypeInfo, PrimitiveArrayTypeInfo, ListTypeInfo)):
        return DataTypes.ARRAY(table_type(info.element_type, where))
    raise NotImplementedError(f"{where}: a DataStream field of type {info!r} as a table column "
                              "(supported: the basic numeric, STRING, BOOLEAN, SQL_DATE, SQL_TIMESTAMP, "
                              "INSTANT, BIG_DEC and array types)")


def stream_type(t: DataType) -> TypeInformation:
    """The DataStream type of a table column of type ``t`` (``PICKLED_BYTE_ARRAY`` where there is none)."""
    if t.root in _TO_STREAM:
        return getattr(Types, _TO_STREAM[t.root])()
    if t.root == "DECIMAL":
        return Types.BIG_DEC()
    if t.root == "TIMESTAMP":
        return Types.SQL_TIMESTAMP()
    if t.root == "ARRAY":
        return Types.BASIC_ARRAY(stream_type(t.element_type))
    return Types.PICKLED_BYTE_ARRAY()


def row_type(columns: Columns) -> RowTypeInfo:
    """The Row type of a table's rows as a DataStream (``to_data_stream``)."""
    return Types.ROW_NAMED([n for n, _ in columns], [stream_type(t) for _, t in columns])


def derived_columns(info: TypeInformation, where: str) -> tuple[Columns, RecordShape]:
    """The columns Flink derives from a stream of ``info`` records, and how a record gives them."""
    if info is None or isinstance(info, PickledBytesTypeInfo):
        raise NotImplementedError(
            f"{where}: a DataStream without a declared type (PICKLED_BYTE_ARRAY) as a table; give the stream "
            "an output type, e.g. map(..., output_type=Types.ROW_NAMED([...], [...]))")
    if isinstance(info, RowTypeInfo):
        names, types = info.get_field_names(), info.get_field_types()
    elif isinstance(info, TupleTypeInfo):
        types = info.get_field_types()
        names = [f"f{i}" for i in range(len(types))]
    else:
        return (("f0", table_type(info, f"{where}, field f0")),), RecordShape("atomic")
    columns = tuple((n, table_type(t, f"{where}, field {n}")) for n, t in zip(names, types, strict=True))
    return columns, RecordShape("fields", tuple(range(len(columns))))


def select_by_schema(columns: Columns, shape: RecordShape, declared: DeclaredSchema,
                     where: str) -> tuple[Columns, RecordShape]:
    """The derived columns a ``Schema`` declares (``declared``), by name and in its order; declared types must
    match. A primary key is the caller's (from_changelog_stream keeps it)."""
    names = [n for n, _ in columns]
    chosen, positions = [], []
    for column in declared.columns:
        if column.name not in names:
            raise ValueError(f"{where}: Unable to find a field named '{column.name}' in the physical data type "
                             f"derived from the given type information for schema declaration. Currently "
                             f"available fields are: {names}")
        i = names.index(column.name)
        derived = columns[i][1]
        if column.data_type.with_nullable(True) != derived.with_nullable(True):
            raise ValueError(f"{where}: column '{column.name}' is declared {column.data_type} but the stream's "
                             f"field is {derived}; changeflow does not convert it (Flink fails at run time)")
        chosen.append((column.name, derived))
        positions.append(_position(shape, i))
    return tuple(chosen), _reshaped(shape, positions)


def select_by_fields(columns: Columns, shape: RecordShape, fields: tuple, where: str) -> tuple[Columns, RecordShape]:
    """The columns of ``from_data_stream(ds, col("a"), col("b").alias("c"), ...)``: by name when the
    expressions reference the stream's fields, else a rename by position."""
    names = [n for n, _ in columns]
    refs = []
    for f in fields:
        if isinstance(f, str):
            refs.extend((n.strip(), None) for n in f.split(",") if n.strip())
        elif isinstance(f, Column):
            refs.append((f.name, None))
        elif isinstance(f, Alias) and isinstance(f.child, Column):
            refs.append((f.child.name, f.name))
        else:
            raise NotImplementedError(f"{where}: the field expression {f} (only field names and aliases "
                                      "of field names are supported; no time attributes)")
    if all(ref in names for ref, _ in refs):
        picked = [(alias or ref, columns[names.index(ref)][1]) for ref, alias in refs]
        return tuple(picked), _reshaped(shape, [_position(shape, names.index(ref)) for ref, _ in refs])
    if any(alias is not None for _, alias in refs):
        missing = [ref for ref, _ in refs if ref not in names]
        raise ValueError(f"{where}: the fields {missing} are not fields of the stream {names}")
    if shape.kind == "atomic" and len(refs) > 1:
        raise ValueError(f"{where}: Too many fields referenced from an atomic type.")
    if len(refs) > len(columns):
        raise ValueError(f"{where}: {len(refs)} field names for a stream of {len(columns)} fields {names}")
    renamed = [(ref, columns[i][1]) for i, (ref, _) in enumerate(refs)]
    return tuple(renamed), _reshaped(shape, [_position(shape, i) for i in range(len(refs))])


def _position(shape: RecordShape, i: int) -> int:
    return shape.positions[i] if shape.kind == "fields" else i


def _reshaped(shape: RecordShape, positions: list[int]) -> RecordShape:
    if shape.kind == "atomic":
        if positions != [0]:
            raise ValueError("an atomic stream has the one field f0")
        return shape
    return RecordShape("fields", tuple(positions))
