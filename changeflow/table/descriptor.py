"""``TableDescriptor`` and ``Schema``: the Table API's way to declare a connector table, as PyFlink's.

``t_env.create_temporary_table(path, descriptor)`` registers the same catalog
table that ``CREATE TEMPORARY TABLE path (...) WITH (...)`` declares.

>>> from changeflow.common.types import DataTypes
>>> descriptor = (TableDescriptor.for_connector("datagen")
...               .schema(Schema.new_builder().column("id", DataTypes.INT()).build())
...               .option("number-of-rows", "3").build())
>>> descriptor.get_options()
{'connector': 'datagen', 'number-of-rows': '3'}
"""

from __future__ import annotations

from changeflow.catalog import CatalogTable, DeclaredColumn, DeclaredSchema
from changeflow.common.types import DataType
from changeflow.plan.type_inference import PlanError


class Schema:
    """Columns and primary key of a descriptor's table (PyFlink's ``Schema``)."""

    def __init__(self, columns: tuple[tuple[str, DataType], ...], primary_key: tuple[str, ...]) -> None:
        self._columns = columns
        self._primary_key = primary_key

    @staticmethod
    def new_builder() -> "Schema.Builder":
        return Schema.Builder()

    def declared(self) -> DeclaredSchema:
        names = [n for n, _ in self._columns]
        for key in self._primary_key:
            if key not in names:
                raise PlanError(f"Primary key column '{key}' is not defined in the schema; columns: {names}")
        return DeclaredSchema(tuple(DeclaredColumn(n, t.with_nullable(False) if n in self._primary_key else t,
                                                   str(t.with_nullable(True)))
                                    for n, t in self._columns), self._primary_key)

    class Builder:
        def __init__(self) -> None:
            self._columns: list[tuple[str, DataType]] = []
            self._primary_key: tuple[str, ...] = ()

        def column(self, column_name: str, data_type: DataType) -> "Schema.Builder":
            if not isinstance(data_type, DataType):
                raise TypeError(f"column {column_name!r}: expected a DataType (DataTypes.INT()...), got {data_type!r}")
            self._columns.append((column_name, data_type))
            return self

        def primary_key(self, *column_names: str) -> "Schema.Builder":
            self._primary_key = tuple(column_names)
            return self

        def build(self) -> "Schema":
            return Schema(tuple(self._columns), self._primary_key)


class TableDescriptor:
    """A connector table described in code (PyFlink's ``TableDescriptor``)."""

    def __init__(self, schema: Schema | None, options: dict[str, str], comment: str | None) -> None:
        self._schema = schema
        self._options = options
        self._comment = comment

    @staticmethod
    def for_connector(connector: str) -> "TableDescriptor.Builder":
        return TableDescriptor.Builder(connector)

    def get_options(self) -> dict[str, str]:
        return dict(self._options)

    def get_schema(self) -> Schema | None:
        return self._schema

    def catalog_table(self, name: str, temporary: bool) -> CatalogTable:
        if self._schema is None:
            raise PlanError(f"table {name!r}: the descriptor has no schema; call .schema(Schema...) before .build()")
        return CatalogTable(name, self._schema.declared(), dict(self._options), temporary, self._comment)

    class Builder:
        def __init__(self, connector: str) -> None:
            self._options = {"connector": connector}
            self._schema: Schema | None = None
            self._comment: str | None = None

        def schema(self, schema: Schema) -> "TableDescriptor.Builder":
            self._schema = schema
            return self

        def option(self, key: str, value) -> "TableDescriptor.Builder":
            self._options[key] = str(value).lower() if isinstance(value, bool) else str(value)
            return self

        def format(self, format: str) -> "TableDescriptor.Builder":
            return self.option("format", format)

        def comment(self, comment: str) -> "TableDescriptor.Builder":
            self._comment = comment
            return self

        def build(self) -> "TableDescriptor":
            return TableDescriptor(self._schema, dict(self._options), self._comment)
