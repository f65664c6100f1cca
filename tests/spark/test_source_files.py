"""The files a bounded input is staged in for a streaming query: its end-of-input rows ride in its last file."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from changeflow.runtime.spark.control_rows import END_OF_INPUT
from changeflow.runtime.spark.source_files import MIN_ROWS_PER_SPLIT, files_per_batch, split_count, write_table_files


def _marker() -> pa.Table:
    return pa.table({"ts": pa.nulls(1, pa.timestamp("ms")), "_seq": pa.array([END_OF_INPUT], pa.int64())})


def _files(directory) -> list[pa.Table]:
    return [pq.read_table(f) for f in sorted(directory.glob("*.parquet"))]


@pytest.mark.parametrize("rows, sizes", [(5, [2, 2, 2]), (6, [2, 2, 3]), (0, [1])])
def test_end_of_input_rows_go_at_the_end_of_the_last_file_even_a_full_one(tmp_path, rows, sizes):
    ts = [dt.datetime(2024, 1, 1, second=i) for i in range(rows)]
    table = pa.table({"ts": pa.array(ts, pa.timestamp("ms")),
                      "k": pa.array([f"k{i}" for i in range(rows)], pa.string()),
                      "_seq": pa.array(range(rows), pa.int64())},
                     schema=pa.schema([pa.field("ts", pa.timestamp("ms"), nullable=False),
                                       pa.field("k", pa.string()), pa.field("_seq", pa.int64())]))
    write_table_files(str(tmp_path), table, 2, _marker())
    files = _files(tmp_path)
    assert [f.num_rows for f in files] == sizes
    # The rows keep their order and types; the marker, last, is null where it has no value (k included).
    # (Only the last file's columns are nullable: Spark reads every file with the source's schema.)
    assert pa.concat_tables([f.cast(files[-1].schema) for f in files]).to_pydict() == {
        "ts": ts + [None], "k": [f"k{i}" for i in range(rows)] + [None], "_seq": list(range(rows)) + [END_OF_INPUT]}
    assert files[-1].schema.field("ts").type == pa.timestamp("ms")


def test_without_end_of_input_rows_the_files_hold_the_rows_only(tmp_path):
    write_table_files(str(tmp_path), pa.table({"_seq": pa.array(range(4), pa.int64())}), 2)
    assert [f.column("_seq").to_pylist() for f in _files(tmp_path)] == [[0, 1], [2, 3]]


def test_a_split_micro_batch_is_files_of_consecutive_rows_read_together(tmp_path):
    # 5 rows, 4 a micro-batch, each micro-batch two files: [0, 1] [2, 3] | [4] [] then the marker.
    write_table_files(str(tmp_path), pa.table({"_seq": pa.array(range(5), pa.int64())}), 4, _marker().select(["_seq"]),
                      splits=2)
    names = sorted(f.name for f in tmp_path.glob("*.parquet"))
    assert names == ["part-00000000-000.parquet", "part-00000000-001.parquet",
                     "part-00000001-000.parquet", "part-00000001-001.parquet"]
    assert [f.column("_seq").to_pylist() for f in _files(tmp_path)] == [[0, 1], [2, 3], [4], [END_OF_INPUT]]
    assert files_per_batch(names) == 2


def test_micro_batches_are_split_one_file_per_core_when_large_enough():
    assert [split_count(rows, 2) for rows in (0, MIN_ROWS_PER_SPLIT, 2 * MIN_ROWS_PER_SPLIT, 10**7)] == [1, 1, 2, 2]
    assert split_count(10**7, 1) == 1
