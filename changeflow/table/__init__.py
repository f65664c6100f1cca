"""The Table API, with PyFlink's names: a Flink program ports by changing imports."""

from changeflow.table.environment import EnvironmentSettings, TableConfig, TableEnvironment
from changeflow.table.result import CloseableIterator, TableResult
from changeflow.table.table import GroupedTable, Table, TableSchema

__all__ = sorted([
    "CloseableIterator", "EnvironmentSettings", "GroupedTable", "Table", "TableConfig",
    "TableEnvironment", "TableResult", "TableSchema",
])
