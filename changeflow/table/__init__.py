"""The Table API, with PyFlink's names: a Flink program ports by changing imports."""

from changeflow.common.types import DataTypes
from changeflow.table.conflict import InsertConflictStrategy
from changeflow.table.descriptor import FormatDescriptor, Schema, TableDescriptor
from changeflow.table.environment import TableEnvironment
from changeflow.table.result import CloseableIterator, ResultKind, TableResult
from changeflow.table.settings import EnvironmentSettings, TableConfig
from changeflow.table.table import GroupedTable, Table, TableSchema

__all__ = [
    "CloseableIterator", "DataTypes", "EnvironmentSettings", "FormatDescriptor", "GroupedTable",
    "InsertConflictStrategy", "ResultKind", "Schema", "Table", "TableConfig", "TableDescriptor",
    "TableEnvironment", "TableResult", "TableSchema",
]
