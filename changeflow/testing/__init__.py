"""Public test helpers: Flink-style record builders and a kernel harness.

>>> from changeflow.testing import KernelHarness, insert_record, materialize
"""

from changeflow.testing.harness import (
    KernelHarness,
    assert_changelog,
    delete_record,
    format_change,
    format_changes,
    insert_record,
    materialize,
    materialize_table,
    row_of_kind,
    rows_of,
    update_after_record,
    update_before_record,
)

__all__ = [
    "KernelHarness",
    "assert_changelog",
    "delete_record",
    "format_change",
    "format_changes",
    "insert_record",
    "materialize",
    "materialize_table",
    "row_of_kind",
    "rows_of",
    "update_after_record",
    "update_before_record",
]
