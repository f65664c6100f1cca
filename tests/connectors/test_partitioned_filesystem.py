"""``PARTITIONED BY`` filesystem tables without Spark: Flink 2.3's layout, success files and reads.

The sink is driven directly as the runtime drives it (open, a write per micro-batch,
finish at the end of input) and its directory compared with what Flink 2.3 wrote for
the same rows (``conformance/goldens/partitions``: directories, records modulo file
names, success files); a partitioned source reads the directory back. The Spark path
(a streaming INSERT stopped and resumed) is in ``test_partitioned_filesystem_spark.py``.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from changeflow.catalog import CatalogTable
from changeflow.common.row_kind import RowKind
from changeflow.connectors import ConnectorError, create_sink, create_source
from changeflow.connectors.partitions import partition_time_ms, commit_options
from changeflow.connectors.sink_job import SinkJob
from changeflow.runtime.changes import Change
from changeflow.sql.ddl import DdlError, parse_create_table
from conformance.partition_cases import PARTITION_CASES, ROWS, snapshot, sink_ddl

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "conformance" / "goldens" / "partitions"


def _job(tmp_path, resumed: bool) -> SinkJob:
    """A resumable job's identity, kept in its directory (the runtime's job directory)."""
    (tmp_path / "job").mkdir(exist_ok=True)
    return SinkJob.in_directory(str(tmp_path / "job"), resumed=resumed)


def _table(ddl: str) -> CatalogTable:
    return parse_create_table(ddl)[0]


def _rows(case) -> list[tuple]:
    return [r for r in ROWS if "WHERE dt IS NOT NULL" not in case.query or r[2] is not None]


@pytest.mark.parametrize("name", sorted(PARTITION_CASES))
def test_layout_and_success_files_match_flink(name, tmp_path):
    case = PARTITION_CASES[name]
    golden = json.loads((GOLDENS / f"{name}.json").read_text(encoding="utf-8"))
    out = tmp_path / "out"
    table = _table(sink_ddl(case, str(out)))
    sink = create_sink(table, case.mode == "streaming")
    rows = [Change(RowKind.INSERT, r) for r in _rows(case)]
    if case.mode == "streaming":  # two micro-batches of a resumable job, then the end of input
        sink.open(_job(tmp_path, False))
        sink.write(rows[:3], 0)
        sink.write(rows[3:], 1)
    else:
        sink.open(SinkJob.fresh())
        sink.write(rows)
    sink.finish()
    assert snapshot(str(out)) == golden["directories"]
    for mode in ("streaming", "batch"):
        if f"read_{mode}" in golden:
            read = create_source(_table(sink_ddl(case, str(out), "back")), mode == "streaming").rows()
            assert sorted(str(list(r)) for r in read) == golden[f"read_{mode}"]


def test_a_default_partition_reads_back_as_null(tmp_path):
    """Flink 2.3 fails to read a table with a default partition (its listing); changeflow reads NULL."""
    case = PARTITION_CASES["json_streaming_no_policy"]
    table = _table(sink_ddl(case, str(tmp_path)))
    sink = create_sink(table, True)
    sink.write([Change(RowKind.INSERT, r) for r in ROWS])
    read = create_source(table, False).rows()
    assert sorted(read, key=lambda r: r[0]) == ROWS


def _sink(tmp_path, **options):
    rendered = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    return create_sink(_table(f"CREATE TABLE t (id INT, dt STRING, hm STRING) PARTITIONED BY (dt, hm) WITH ("
                              f"'connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'csv'"
                              f"{', ' + rendered if rendered else ''})"), True)


def _marked(tmp_path) -> list[str]:
    return sorted(str(p.parent.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("_SUCCESS"))


def test_partition_time_commits_when_the_watermark_passes_the_partition_time_and_delay(tmp_path):
    sink = _sink(tmp_path, **{"sink.partition-commit.trigger": "partition-time", "sink.partition-commit.delay": "1 min",
                              "sink.partition-commit.policy.kind": "success-file",
                              "partition.time-extractor.timestamp-pattern": "$dt $hm:00"})
    sink.open(_job(tmp_path, False))
    assert sink.wants_watermark
    ten = 1704103200000  # 2024-01-01 10:00:00 UTC
    sink.write([Change(RowKind.INSERT, (1, "2024-01-01", "10:00")), Change(RowKind.INSERT, (2, "2024-01-01", "10:01"))],
               0)
    assert _marked(tmp_path) == []  # no watermark yet
    sink.advance_watermark(ten + 60_000)  # not past 10:00 + 1 min (Flink: watermark > time + delay)
    sink.write([], 1)
    assert _marked(tmp_path) == []
    sink.advance_watermark(ten + 60_001)
    sink.write([], 2)
    assert _marked(tmp_path) == ["dt=2024-01-01/hm=10%3A00"]
    # A resumed job keeps the pending partition (the job's directory) and commits it at the end of input.
    resumed = _sink(tmp_path, **{"sink.partition-commit.trigger": "partition-time",
                                 "sink.partition-commit.policy.kind": "success-file",
                                 "partition.time-extractor.timestamp-pattern": "$dt $hm:00"})
    resumed.open(_job(tmp_path, True))
    assert resumed.partitions is not None and list(resumed.partitions.pending) == ["dt=2024-01-01/hm=10%3A01"]
    resumed.finish()
    assert _marked(tmp_path) == ["dt=2024-01-01/hm=10%3A00", "dt=2024-01-01/hm=10%3A01"]


def test_process_time_commits_after_the_delay(tmp_path):
    sink = _sink(tmp_path, **{"sink.partition-commit.delay": "10 s",
                              "sink.partition-commit.policy.kind": "success-file"})
    sink.open(SinkJob.fresh())
    now = [1000.0]
    assert sink.partitions is not None
    sink.partitions.clock = lambda: now[0]
    sink.write([Change(RowKind.INSERT, (1, "d", "h"))], 0)
    now[0] += 10
    sink.write([Change(RowKind.INSERT, (2, "d", "h"))], 1)  # created at 1000 s: 1010 s is not past 1000 + 10
    assert _marked(tmp_path) == []
    now[0] += 0.001
    sink.write([], 2)
    assert _marked(tmp_path) == ["dt=d/hm=h"]
    files = sorted(p.name for p in (tmp_path / "out" / "dt=d" / "hm=h").iterdir() if not p.name.startswith("_"))
    assert len(files) == 2 and [f.split("-")[1] for f in files] == ["00000000000000000000", "00000000000000000001"]


def test_a_rerun_batch_replaces_its_files_and_removes_partitions_it_no_longer_writes(tmp_path):
    sink = _sink(tmp_path)
    sink.open(_job(tmp_path, False))
    sink.write([Change(RowKind.INSERT, (1, "a", "x"))], 0)
    sink.write([Change(RowKind.INSERT, (2, "a", "x")), Change(RowKind.INSERT, (3, "b", "y"))], 1)
    # The job stopped before batch 1 was committed: it runs again, now with rows for one partition only.
    again = _sink(tmp_path)
    again.open(_job(tmp_path, True))
    again.write([Change(RowKind.INSERT, (2, "a", "x"))], 1)
    read = create_source(_table(f"CREATE TABLE t (id INT, dt STRING, hm STRING) PARTITIONED BY (dt, hm) WITH ("
                                f"'connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'csv')"),
                         False).rows()
    assert sorted(read) == [(1, "a", "x"), (2, "a", "x")]


@pytest.mark.parametrize("options, message", [
    ({"sink.partition-commit.policy.kind": "metastore"}, "'metastore' is not supported: .*no metastore"),
    ({"sink.partition-commit.policy.kind": "success-file,custom"}, "'custom' is not supported"),
    ({"sink.partition-commit.policy.kind": "nope"}, "value 'nope' for key 'sink.partition-commit.policy.kind'"),
    ({"sink.partition-commit.trigger": "watermark"}, "value 'watermark' for key 'sink.partition-commit.trigger'"),
    ({"sink.partition-commit.delay": "soon"}, "value 'soon' for key 'sink.partition-commit.delay'"),
    ({"sink.rolling-policy.file-size": "big"}, "value 'big' for key 'sink.rolling-policy.file-size'"),
    ({"sink.rolling-policy.rollover-interval": "x"}, "key 'sink.rolling-policy.rollover-interval'"),
    ({"partition.time-extractor.kind": "custom"}, "'partition.time-extractor.kind' = 'custom' is not supported"),
    ({"partition.time-extractor.class": "a.B"}, "'partition.time-extractor.class' is not supported"),
    ({"partition.time-extractor.timestamp-formatter": "yyyyMMdd QQ"}, "pattern letter 'Q'"),
    ({"sink.partition-commit.watermark-time-zone": "Mars/Base"}, "'sink.partition-commit.watermark-time-zone'"),
    ({"sink.shuffle-by-partition.enable": "maybe"}, "value 'maybe' for key 'sink.shuffle-by-partition.enable'"),
    ({"sink.partition-commit.success-file.name": "a/b"}, "key 'sink.partition-commit.success-file.name'"),
])
def test_bad_partition_options_name_the_option(tmp_path, options, message):
    with pytest.raises(ConnectorError, match=message):
        _sink(tmp_path, **options)


def test_partitioned_by_checks_columns_and_connectors(tmp_path):
    with pytest.raises(DdlError, match="Partition column 'x' not defined in the table schema"):
        _table("CREATE TABLE t (id INT) PARTITIONED BY (x) WITH ('connector' = 'filesystem')")
    table = _table("CREATE TABLE t (id INT, v STRING) PARTITIONED BY (v) WITH ('connector' = 'print')")
    assert table.partition_keys == ("v",)
    with pytest.raises(ConnectorError, match="partitioned table .*connector 'print' does not support partitions"):
        create_sink(table, True)
    with pytest.raises(ConnectorError, match="Partition column 'v' has type DOUBLE"):
        create_sink(_table(f"CREATE TABLE t (id INT, v DOUBLE) PARTITIONED BY (v) WITH ('connector' = "
                           f"'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')"), True)


def test_partition_time_extraction_follows_flink_default_extractor():
    table = _table("CREATE TABLE t (id INT, dt STRING, hr STRING) PARTITIONED BY (dt, hr) WITH ("
                   "'connector' = 'filesystem', 'path' = 'p', 'format' = 'csv', "
                   "'partition.time-extractor.timestamp-pattern' = '$dt $hr:00:00', "
                   "'sink.partition-commit.watermark-time-zone' = 'Asia/Shanghai')")
    options = commit_options(table)
    assert partition_time_ms(table, options, ["2024-01-01", "8"]) == 1704067200000  # 08:00 +08:00 = 00:00 UTC
    plain = _table("CREATE TABLE t (id INT, d STRING) PARTITIONED BY (d) WITH ('connector' = 'filesystem', "
                   "'path' = 'p', 'format' = 'csv', 'partition.time-extractor.timestamp-formatter' = 'yyyyMMdd')")
    assert partition_time_ms(plain, commit_options(plain), ["20240101"]) == 1704067200000
    default = _table("CREATE TABLE t (id INT, d STRING) PARTITIONED BY (d) WITH ('connector' = 'filesystem', "
                     "'path' = 'p', 'format' = 'csv')")
    assert partition_time_ms(default, commit_options(default), ["2024-1-1"]) == 1704067200000


def test_a_partitioned_parquet_table_is_read_by_rows_which_take_the_partition_values(tmp_path):
    # Read column by column, a partitioned table's partition columns were NULL (they are in no file).
    import pyarrow as pa
    import pyarrow.parquet as pq

    from changeflow.connectors.filesystem import FileSystemSource

    (tmp_path / "k=7").mkdir()
    pq.write_table(pa.table({"v": pa.array(["a", "b"])}), tmp_path / "k=7" / "part-0.parquet")
    table, _ = parse_create_table(f"CREATE TABLE p (v STRING, k INT) PARTITIONED BY (k) WITH ("
                                  f"'connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'parquet')")
    source = FileSystemSource(table, streaming=True)
    assert source.arrow_rows() is None
    assert source.rows() == [("a", 7), ("b", 7)]
