"""``TableDescriptor``, ``FormatDescriptor`` and ``Schema``: a connector table declared in code, as PyFlink's.

``t_env.create_temporary_table(path, descriptor)`` registers the same catalog
table that ``CREATE TEMPORARY TABLE path (...) WITH (...)`` declares: physical
columns, computed columns (``column_by_expression``, typed when the table is
planned, as DDL's), a primary key and a watermark (kept as DDL's ``WATERMARK``).

>>> from changeflow.common.types import DataTypes
>>> descriptor = (TableDescriptor.for_connector("filesystem")
...               .schema(Schema.new_builder().column("id", DataTypes.INT()).column("name", "STRING").build())
...               .option("path", "/tmp/x")
...               .format(FormatDescriptor.for_format("csv").option("field-delimiter", ";").build())
...               .build())
>>> descriptor.get_options()
{'connector': 'filesystem', 'path': '/tmp/x', 'format': 'csv', 'csv.field-delimiter': ';'}
>>> print(descriptor.get_schema())
(
  `id` INT,
  `name` STRING
)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from changeflow.catalog import CatalogTable, DeclaredColumn, DeclaredSchema
from changeflow.catalog.schema import Watermark
from changeflow.common.types import DataType
from changeflow.plan.type_inference import PlanError
from changeflow.sql.ddl import display_expression, parse_type


@dataclass(frozen=True)
class _Column:
    """One column of a Schema being built: physical (``data_type``), computed or metadata."""

    name: str
    data_type: DataType | None = None
    type_text: str = ""
    expression: str | None = None
    metadata_key: str | None = None
    virtual: bool = False


def _option_value(value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _key(key) -> str:
    """An option key: a string, or a ConfigOption-like object with ``key()``."""
    return key if isinstance(key, str) else str(key.key())


class Schema:
    """Columns, watermark and primary key of a descriptor's table (PyFlink's ``Schema``)."""

    def __init__(self, columns: tuple[_Column, ...], primary_key: tuple[str, ...],
                 watermark: tuple[str, str] | None = None, constraint_name: str | None = None) -> None:
        self._columns = columns
        self._primary_key = primary_key
        self._watermark = watermark
        self._constraint_name = constraint_name

    @staticmethod
    def new_builder() -> "Schema.Builder":
        return Schema.Builder()

    def __str__(self) -> str:
        """As Flink's ``Schema.toString``: one line per column, watermark and key."""
        lines = []
        for c in self._columns:
            if c.expression is not None:
                lines.append(f"`{c.name}` AS {c.expression}")
            elif c.metadata_key is not None or c.virtual:
                key = f" FROM '{c.metadata_key}'" if c.metadata_key else ""
                lines.append(f"`{c.name}` {c.type_text} METADATA{key}{' VIRTUAL' if c.virtual else ''}")
            else:
                not_null = " NOT NULL" if c.data_type is not None and not c.data_type.nullable else ""
                lines.append(f"`{c.name}` {c.type_text}{not_null}")
        if self._watermark is not None:
            lines.append(f"WATERMARK FOR `{self._watermark[0]}` AS {self._watermark[1]}")
        if self._primary_key:
            name = self._constraint_name or "PK_" + "_".join(self._primary_key)
            lines.append(f"CONSTRAINT `{name}` PRIMARY KEY ({', '.join(f'`{k}`' for k in self._primary_key)}) "
                         "NOT ENFORCED")
        return "(\n" + ",\n".join(f"  {line}" for line in lines) + "\n)"

    def declared(self, connector: str = "?") -> DeclaredSchema:
        """The catalog's schema of this Schema (what DDL declares); refuses what DDL refuses."""
        names = [c.name for c in self._columns]
        for c in self._columns:
            if c.data_type is None and c.expression is None:
                raise PlanError(f"column {c.name!r} is a METADATA column (column_by_metadata): connector "
                                f"'{connector}' has no metadata columns in changeflow")
        for key in self._primary_key:
            if key not in names:
                raise PlanError(f"Primary key column '{key}' is not defined in the schema; columns: {names}")
        watermark = None
        if self._watermark is not None:
            column, expression = self._watermark
            if column not in names:
                raise PlanError(f"The rowtime attribute field '{column}' is not defined in the table schema. "
                                f"Available fields: {names}")
            rowtime = self._columns[names.index(column)].data_type
            if rowtime is not None and rowtime.root not in ("TIMESTAMP", "TIMESTAMP_LTZ"):
                raise PlanError(f"Invalid data type of time field for watermark definition. The field must be of "
                                f"type TIMESTAMP(p) or TIMESTAMP_LTZ(p), but the time field type is {rowtime}")
            watermark = Watermark(column, expression, display_expression(expression))
        columns = []
        for c in self._columns:
            if c.expression is not None:
                # The type is the expression's, known once the table is planned (as DDL's computed columns).
                columns.append(DeclaredColumn(c.name, DataType("STRING"), "", c.expression,
                                              display_expression(c.expression)))
            else:
                assert c.data_type is not None
                t = c.data_type.with_nullable(False) if c.name in self._primary_key else c.data_type
                columns.append(DeclaredColumn(c.name, t, c.type_text))
        return DeclaredSchema(tuple(columns), self._primary_key, watermark)

    class Builder:
        """Builds a :class:`Schema`; each method returns the builder (PyFlink's ``Schema.Builder``)."""

        def __init__(self) -> None:
            self._columns: list[_Column] = []
            self._primary_key: tuple[str, ...] = ()
            self._constraint_name: str | None = None
            self._watermark: tuple[str, str] | None = None

        def _add(self, column: _Column) -> "Schema.Builder":
            if any(c.name == column.name for c in self._columns):
                raise PlanError(f"Column '{column.name}' already exists in the schema")
            self._columns.append(column)
            return self

        def from_schema(self, unresolved_schema: "Schema") -> "Schema.Builder":
            """Adopt every column, the watermark and the primary key of another Schema."""
            for c in unresolved_schema._columns:
                self._add(c)
            if unresolved_schema._watermark is not None:
                self._watermark = unresolved_schema._watermark
            if unresolved_schema._primary_key:
                self._primary_key = unresolved_schema._primary_key
                self._constraint_name = unresolved_schema._constraint_name
            return self

        def from_row_data_type(self, data_type: DataType) -> "Schema.Builder":
            """Adopt the fields of a ROW type as physical columns."""
            for name, t in zip(data_type.field_names(), data_type.field_types(), strict=True):
                self.column(name, t)
            return self

        def from_fields(self, field_names: list[str], field_data_types: list[DataType]) -> "Schema.Builder":
            for name, t in zip(field_names, field_data_types, strict=True):
                self.column(name, t)
            return self

        def column(self, column_name: str, data_type: DataType | str) -> "Schema.Builder":
            """A physical column: a DataType or a type string such as ``'BIGINT'`` or ``'ARRAY<INT>'``."""
            if isinstance(data_type, str):
                match = re.fullmatch(r"(.*?)\s+NOT\s+NULL\s*", data_type, re.IGNORECASE | re.DOTALL)
                parsed, display = parse_type(match.group(1) if match else data_type, column_name)
                return self._add(_Column(column_name, parsed.with_nullable(match is None), display))
            if not isinstance(data_type, DataType):
                raise TypeError(f"column {column_name!r}: expected a DataType (DataTypes.INT()...) or a type "
                                f"string, got {data_type!r}")
            return self._add(_Column(column_name, data_type, str(data_type.with_nullable(True))))

        def column_by_expression(self, column_name: str, expr: str) -> "Schema.Builder":
            """A computed column: a SQL expression over the other columns (``'CAST(f0 AS TIMESTAMP_LTZ(3))'``)."""
            if not isinstance(expr, str):
                raise TypeError(f"column {column_name!r}: column_by_expression takes the expression as SQL "
                                f"text in changeflow, got {expr!r}")
            return self._add(_Column(column_name, expression=expr))

        def column_by_metadata(self, column_name: str, data_type: DataType | str, metadata_key: str | None = None,
                               is_virtual: bool = False) -> "Schema.Builder":
            """A metadata column: accepted here, refused when the table is created (no connector has metadata)."""
            text = data_type if isinstance(data_type, str) else str(data_type)
            return self._add(_Column(column_name, None, text, metadata_key=metadata_key or column_name,
                                     virtual=is_virtual))

        def watermark(self, column_name: str, watermark_expr: str) -> "Schema.Builder":
            """``WATERMARK FOR column AS expr``, stored as DDL stores it."""
            if not isinstance(watermark_expr, str):
                raise TypeError(f"watermark of {column_name!r}: changeflow takes the expression as SQL text, "
                                f"got {watermark_expr!r}")
            if self._watermark is not None:
                raise PlanError("Multiple watermark definitions are not supported yet.")
            self._watermark = (column_name, watermark_expr)
            return self

        def primary_key(self, *column_names: str) -> "Schema.Builder":
            return self.primary_key_named("PK_" + "_".join(column_names), *column_names)

        def primary_key_named(self, constraint_name: str, *column_names: str) -> "Schema.Builder":
            if self._primary_key:
                raise PlanError("Multiple primary keys are not supported.")
            if not column_names:
                raise PlanError("Primary key constraint must be defined for at least a single column.")
            self._primary_key = tuple(column_names)
            self._constraint_name = constraint_name
            return self

        def build(self) -> "Schema":
            return Schema(tuple(self._columns), self._primary_key, self._watermark, self._constraint_name)


class FormatDescriptor:
    """A format and its options (PyFlink's ``FormatDescriptor``): ``csv`` with ``field-delimiter``..."""

    def __init__(self, format: str, options: dict[str, str]) -> None:
        self._format = format
        self._options = options

    @staticmethod
    def for_format(format: str) -> "FormatDescriptor.Builder":
        return FormatDescriptor.Builder(format)

    def get_format(self) -> str:
        return self._format

    def get_options(self) -> dict[str, str]:
        return dict(self._options)

    def __str__(self) -> str:
        return f"{self._format}[{', '.join(f'{k}={v}' for k, v in self._options.items())}]"

    class Builder:
        def __init__(self, format: str) -> None:
            self._format = format
            self._options: dict[str, str] = {}

        def option(self, key, value) -> "FormatDescriptor.Builder":
            """A format option without the format prefix (``'field-delimiter'``, not ``'csv.field-delimiter'``)."""
            self._options[_key(key)] = _option_value(value)
            return self

        def build(self) -> "FormatDescriptor":
            return FormatDescriptor(self._format, dict(self._options))


class TableDescriptor:
    """A connector table described in code (PyFlink's ``TableDescriptor``)."""

    def __init__(self, schema: Schema | None, options: dict[str, str], comment: str | None,
                 partition_keys: tuple[str, ...] = ()) -> None:
        self._schema = schema
        self._options = options
        self._comment = comment
        self._partition_keys = partition_keys

    @staticmethod
    def for_connector(connector: str) -> "TableDescriptor.Builder":
        return TableDescriptor.Builder(connector)

    def get_options(self) -> dict[str, str]:
        return dict(self._options)

    def get_schema(self) -> Schema | None:
        return self._schema

    def get_partition_keys(self) -> list[str]:
        return list(self._partition_keys)

    def get_comment(self) -> str | None:
        return self._comment

    def catalog_table(self, name: str, temporary: bool) -> CatalogTable:
        if self._schema is None:
            raise PlanError(f"table {name!r}: the descriptor has no schema; call .schema(Schema...) before .build()")
        declared = self._schema.declared(self._options.get("connector", "?"))
        physical = [c.name for c in declared.physical_columns()]
        for key in self._partition_keys:
            if key not in physical:
                raise PlanError(f"Partition column '{key}' not defined in the table schema. Available columns: "
                                f"[{', '.join(repr(n) for n in physical)}]")
        return CatalogTable(name, declared, dict(self._options), temporary, self._comment,
                            partition_keys=tuple(self._partition_keys))

    class Builder:
        def __init__(self, connector: str) -> None:
            self._options = {"connector": connector}
            self._schema: Schema | None = None
            self._comment: str | None = None
            self._partition_keys: tuple[str, ...] = ()

        def schema(self, schema: Schema) -> "TableDescriptor.Builder":
            self._schema = schema
            return self

        def option(self, key, value) -> "TableDescriptor.Builder":
            self._options[_key(key)] = _option_value(value)
            return self

        def format(self, format: "str | FormatDescriptor", format_option=None) -> "TableDescriptor.Builder":
            """The format: a name, or a FormatDescriptor whose options get the format's prefix.

            ``format_option`` names the option holding the format (``'key.format'`` for a
            Kafka key); its options are then prefixed ``key.<format>.`` as in Flink.
            """
            option = "format" if format_option is None else _key(format_option)
            prefix = option[: -len("format")] if option.endswith("format") else f"{option}."
            if isinstance(format, FormatDescriptor):
                self._options[option] = format.get_format()
                for key, value in format.get_options().items():
                    self._options[f"{prefix}{format.get_format()}.{key}"] = value
            else:
                self._options[option] = str(format)
            return self

        def partitioned_by(self, *partition_keys: str) -> "TableDescriptor.Builder":
            self._partition_keys = tuple(partition_keys)
            return self

        def comment(self, comment: str) -> "TableDescriptor.Builder":
            self._comment = comment
            return self

        def build(self) -> "TableDescriptor":
            return TableDescriptor(self._schema, dict(self._options), self._comment, self._partition_keys)
