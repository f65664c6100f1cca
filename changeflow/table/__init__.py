"""The Table API, with PyFlink's names: a Flink program ports by changing imports."""

from changeflow.common.types import DataTypes
from changeflow.table.changelog_mode import ChangelogMode
from changeflow.table.conflict import InsertConflictStrategy
from changeflow.table.descriptor import FormatDescriptor, Schema, TableDescriptor
from changeflow.table.environment import TableEnvironment
from changeflow.table.explain_detail import ExplainDetail
from changeflow.table.result import CloseableIterator, ResultKind, TableResult
from changeflow.table.settings import EnvironmentSettings, TableConfig
from changeflow.table.stream_table_environment import StreamTableEnvironment
from changeflow.table.table import (GroupedTable, GroupWindowedTable, OverWindowedTable, Table, TableSchema,
                                    WindowGroupedTable)

__all__ = [
    "ChangelogMode", "CloseableIterator", "DataTypes", "EnvironmentSettings", "ExplainDetail", "FormatDescriptor",
    "GroupedTable", "GroupWindowedTable", "InsertConflictStrategy", "OverWindowedTable", "ResultKind", "Schema",
    "StreamTableEnvironment", "Table", "TableConfig", "TableDescriptor", "TableEnvironment", "TableResult",
    "TableSchema", "WindowGroupedTable",
]
