"""Public test helpers: Flink-style record builders and a harness that plays a kernel's host.

>>> from changeflow.testing import KernelHarness, insert_record, materialize
"""

from changeflow.testing.changelog import (
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
from changeflow.testing.harness import KernelHarness, Snapshot

__all__ = [
    "KernelHarness",
    "Snapshot",
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
