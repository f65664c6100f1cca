"""The schema of a table declared with ``CREATE TABLE``: columns, watermark, primary key.

A declared schema is richer than a plan schema: a column is *physical* (read
from the connector), *computed* (``c AS a + 1``) or a processing-time
attribute (``pt AS PROCTIME()``); one column may carry a watermark, which
makes it the table's event-time (*rowtime*) attribute. ``DESCRIBE`` prints all
of it as Flink does; the plan sees the columns with the engine's types.

>>> from changeflow.common.types import DataTypes
>>> schema = DeclaredSchema((DeclaredColumn("id", DataTypes.INT(False), "INT"),
...                          DeclaredColumn("pt", PROCTIME_TYPE, "TIMESTAMP_LTZ(3)", proctime=True)),
...                         primary_key=("id",))
>>> [c.name for c in schema.physical_columns()], schema.describe_rows()[1][1]
(['id'], 'TIMESTAMP_LTZ(3) *PROCTIME*')
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.common.types import DataType
from changeflow.plan.type_inference import proctime_type

# Flink types PROCTIME() as TIMESTAMP_LTZ(3) NOT NULL, marked as a processing-time attribute
# (the SQL planner recognises it, e.g. for deduplication ordered by it).
PROCTIME_TYPE = proctime_type()


@dataclass(frozen=True)
class DeclaredColumn:
    """One column as declared: its engine type and Flink's spelling of it.

    ``expression`` is the SQL of a computed column (``None`` for a physical
    one); ``display_expression`` is how Flink prints it (identifiers quoted).
    """

    name: str
    data_type: DataType
    type_text: str
    expression: str | None = None
    display_expression: str | None = None
    proctime: bool = False
    metadata: str | None = None  # ``METADATA [FROM 'key']``: the connector's metadata key it reads
    virtual: bool = False  # ``METADATA ... VIRTUAL``: read only, never written by a sink
    comment: str | None = None  # ``COMMENT '...'`` (SHOW CREATE TABLE prints it)

    @property
    def is_physical(self) -> bool:
        """Given by the connector: a physical or a metadata column (not computed, not PROCTIME())."""
        return self.expression is None and not self.proctime


@dataclass(frozen=True)
class Watermark:
    """``WATERMARK FOR column AS expression``: the planner puts a watermark assigner on the table's rows."""

    column: str
    expression: str
    display_expression: str


@dataclass(frozen=True)
class DeclaredSchema:
    columns: tuple[DeclaredColumn, ...]
    primary_key: tuple[str, ...] = ()
    watermark: Watermark | None = None

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> DeclaredColumn:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def physical_columns(self) -> list[DeclaredColumn]:
        return [c for c in self.columns if c.is_physical]

    def plan_schema(self) -> tuple[tuple[str, DataType], ...]:
        """Every column with its engine type (computed columns included)."""
        return tuple((c.name, c.data_type) for c in self.columns)

    def type_string(self, column: DeclaredColumn) -> str:
        """The type as ``DESCRIBE`` prints it: ``TIMESTAMP(3) *ROWTIME*``, ``... *PROCTIME*``."""
        if column.proctime:
            return f"{column.type_text} *PROCTIME*"
        if self.watermark is not None and self.watermark.column == column.name:
            return f"{column.type_text} *ROWTIME*"
        return column.type_text

    def describe_rows(self) -> list[tuple]:
        """Flink's ``DESCRIBE`` rows: name, type, null, key, extras, watermark."""
        key = f"PRI({', '.join(self.primary_key)})" if self.primary_key else None
        rows = []
        for c in self.columns:
            in_key = c.name in self.primary_key
            extras = f"AS {c.display_expression}" if c.display_expression is not None else None
            if c.metadata is not None:
                extras = f"METADATA FROM '{c.metadata}'" + (" VIRTUAL" if c.virtual else "")
            watermark = (self.watermark.display_expression
                         if self.watermark is not None and self.watermark.column == c.name else None)
            rows.append((c.name, self.type_string(c), c.data_type.nullable and not in_key,
                         key if in_key else None, extras, watermark))
        return rows
