"""Conformance cases for the ``filesystem`` connector's ``PARTITIONED BY``: layout, success files, reading back.

Each case inserts a small ``VALUES`` list into a partitioned ``filesystem`` table, run
unchanged by PyFlink 2.3 (``record_flink_partitions.py`` records
``goldens/partitions/<case>.json``) and by changeflow's tests
(``tests/connectors/test_partitioned_filesystem*.py``). A golden holds, for every
directory below the table's path (relative, ``/``-separated), the data records of its
files sorted (file names differ between the engines and runs: only contents count) and
the names of its hidden files that are not in-progress files (the success files); then
the rows a partitioned source table over the same path reads back, sorted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional

__all__ = ["PARTITION_CASES", "PartitionCase", "sink_ddl", "snapshot", "INSERT_SQL", "COLUMNS"]

COLUMNS = "id INT, name STRING, dt STRING, hm STRING"
# Partition values that need escaping (':' in hm, '/' and '=' and a space in dt) and a NULL one.
ROWS = [(1, "a", "2024-01-01", "10:15"), (2, "b", "2024-01-01", "10:15"), (3, "c", "2024-01-01", "10:16"),
        (4, "d", "2024-01-02", "00:00"), (5, "e", None, "10:15"), (6, None, "x/y=z w", "10:15")]


def _literal(v) -> str:
    if v is None:
        return "CAST(NULL AS STRING)"
    return str(v) if isinstance(v, int) else "'" + v + "'"


INSERT_SQL = ("SELECT * FROM (VALUES " + ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in ROWS)
              + ") AS T(id, name, dt, hm)")


@dataclass(frozen=True)
class PartitionCase:
    name: str
    mode: str  # streaming or batch
    format: str
    partition_by: str
    options: Dict[str, str] = field(default_factory=dict)
    columns: str = COLUMNS
    query: str = INSERT_SQL


PARTITION_CASES: Dict[str, PartitionCase] = {}


def _case(name: str, mode: str, fmt: str, partition_by: str = "dt, hm",
          options: Optional[Dict[str, str]] = None, columns: str = COLUMNS, query: str = INSERT_SQL) -> None:
    PARTITION_CASES[name] = PartitionCase(name, mode, fmt, partition_by, dict(options or {}), columns, query)


_PARTITION_TIME = {"sink.partition-commit.trigger": "partition-time", "sink.partition-commit.delay": "1 min",
                   "sink.partition-commit.policy.kind": "success-file",
                   "partition.time-extractor.timestamp-pattern": "$dt $hm:00"}
_PROCESS_TIME = {"sink.partition-commit.trigger": "process-time", "sink.partition-commit.delay": "1 h",
                 "sink.partition-commit.policy.kind": "success-file"}

_case("csv_streaming_partition_time", "streaming", "csv", options=_PARTITION_TIME)
_case("json_streaming_partition_time", "streaming", "json", options=_PARTITION_TIME)
_case("csv_streaming_process_time_delay", "streaming", "csv", options=_PROCESS_TIME)
_case("json_streaming_no_policy", "streaming", "json")
_case("csv_batch_success_file", "batch", "csv", options=_PROCESS_TIME)
_case("json_batch_no_policy", "batch", "json")
_case("csv_batch_custom_success_name", "batch", "csv", partition_by="dt",
      options={"sink.partition-commit.policy.kind": "success-file",
               "sink.partition-commit.success-file.name": "_DONE",
               "partition.default-name": "none"})
_case("json_streaming_int_partition", "streaming", "json", partition_by="id",
      options={"sink.partition-commit.policy.kind": "success-file"})


def sink_ddl(c: PartitionCase, path: str, name: str = "snk") -> str:
    options = {"connector": "filesystem", "path": path, "format": c.format, **c.options}
    rendered = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    return f"CREATE TABLE {name} ({c.columns}) PARTITIONED BY ({c.partition_by}) WITH ({rendered})"


def snapshot(path: str) -> dict:
    """Every directory below ``path`` that holds files: its data records (sorted) and its marker files."""
    import os

    found: dict = {}
    for directory, _dirs, files in os.walk(path):
        data = [f for f in files if not f.startswith((".", "_"))]
        marks = sorted(f for f in files if f.startswith((".", "_")) and not f.endswith((".inprogress", ".tmp"))
                       and not f.endswith(".crc"))
        if not data and not marks:
            continue
        records: list = []
        for f in data:
            with open(os.path.join(directory, f), encoding="utf-8") as fh:
                records += fh.read().splitlines()
        found[os.path.relpath(directory, path).replace(os.sep, "/")] = {"records": sorted(records), "marks": marks}
    return dict(sorted(found.items()))


# Flink 2.3 cannot read a table back that has a default partition (a NULL partition value): its partition
# listing fails ("Path should not be null or empty"). These cases have none, so their goldens hold what it reads.
_NO_NULL = INSERT_SQL + " WHERE dt IS NOT NULL"
_case("csv_streaming_read_back", "streaming", "csv", options=_PARTITION_TIME, query=_NO_NULL)
_case("json_batch_read_back", "batch", "json", partition_by="dt", query=_NO_NULL)
_case("csv_int_partition_read_back", "batch", "csv", partition_by="id", query=_NO_NULL)
