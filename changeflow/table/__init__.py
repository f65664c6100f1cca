"""The Table API, with PyFlink's names: a Flink program ports by changing imports."""

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.common.types import DataTypes
from changeflow.expressions import Expression
from changeflow.table.changelog_mode import ChangelogMode
from changeflow.table.conflict import InsertConflictStrategy
from changeflow.table.descriptor import FormatDescriptor, Schema, TableDescriptor
from changeflow.table.environment import TableEnvironment
from changeflow.table.explain_detail import ExplainDetail
from changeflow.table.result import CloseableIterator, ResultKind, TableResult
from changeflow.table.settings import EnvironmentSettings, SqlDialect, TableConfig
from changeflow.table.statement_set import StatementSet
from changeflow.table.stream_table_environment import StreamTableEnvironment
from changeflow.table.table_pipeline import TablePipeline
from changeflow.table.udf import (AggregateFunction, FunctionContext, ScalarFunction, TableAggregateFunction,
                                  TableFunction)
from changeflow.table.table import (GroupedTable, GroupWindowedTable, OverWindowedTable, Table, TableSchema,
                                    WindowGroupedTable)

__all__ = [
    "AggregateFunction", "Expression", "FunctionContext", "Row", "RowKind", "ScalarFunction", "SqlDialect",
    "StatementSet", "TableAggregateFunction", "TableFunction", "TablePipeline",
    "ChangelogMode", "CloseableIterator", "DataTypes", "EnvironmentSettings", "ExplainDetail", "FormatDescriptor",
    "GroupedTable", "GroupWindowedTable", "InsertConflictStrategy", "OverWindowedTable", "ResultKind", "Schema",
    "StreamTableEnvironment", "Table", "TableConfig", "TableDescriptor", "TableEnvironment", "TableResult",
    "TableSchema", "WindowGroupedTable",
]


# PyFlink names changeflow does not have: importing one fails naming it (not a bare ImportError).
_UNSUPPORTED = {
    "AsyncScalarFunction": "async scalar functions are not implemented",
    "CompiledPlan": "compiled plans are Flink's JSON plans of Java operators",
    "PlanReference": "compiled plans are Flink's JSON plans of Java operators",
    "Module": "changeflow has only the core module", "ModuleEntry": "changeflow has only the core module",
    "UserDefinedType": "user-defined (structured Java) types are not implemented",
    "DataView": "data views of aggregate accumulators are not implemented; keep a list or dict in the accumulator",
    "ListView": "data views of aggregate accumulators are not implemented; keep a list in the accumulator",
    "MapView": "data views of aggregate accumulators are not implemented; keep a dict in the accumulator",
}


def __getattr__(name: str):
    if name in _UNSUPPORTED:
        raise NotImplementedError(f"pyflink.table.{name} is not supported by changeflow: {_UNSUPPORTED[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
