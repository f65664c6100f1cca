"""The ``delta`` connector without Spark: options, the sink's commits and exactly-once record, the change feed.

Against real Delta tables written by delta-rs in a temporary directory.
"""

from __future__ import annotations

import datetime
import decimal

import pytest

from changeflow.common.change import Change
from changeflow.common.row_kind import RowKind
from changeflow.connectors import ConnectorError, create_sink, create_source
from changeflow.connectors.delta import DeltaError
from changeflow.connectors.sink_job import SinkJob
from changeflow.sql.ddl import parse_create_table

deltalake = pytest.importorskip("deltalake")
pa = pytest.importorskip("pyarrow")

I, UB, UA, D = RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE


def table(columns: str, path, **options):
    opts = {"connector": "delta", "table-path": str(path), **options}
    listed = ", ".join(f"'{k}' = '{v}'" for k, v in opts.items())
    return parse_create_table(f"CREATE TABLE t ({columns}) WITH ({listed})")[0]


def rows_of(path) -> list[tuple]:
    return sorted(tuple(r.values()) for r in deltalake.DeltaTable(str(path)).to_pyarrow_table().to_pylist())


def test_upsert_sink_merges_each_batch_by_key_in_one_commit_and_a_replayed_batch_writes_nothing(tmp_path):
    path = tmp_path / "totals"
    sink = create_sink(table("k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED", path,
                             **{"delta.enableChangeDataFeed": "true"}), True)
    job = SinkJob.fresh()
    sink.open(job)  # creates the table, with the delta.* options as its properties
    sink.write([Change(I, ("a", 1)), Change(I, ("b", 1)), Change(UB, ("a", 1)), Change(UA, ("a", 2))], 0)
    sink.write([Change(D, ("b", 1)), Change(I, ("c", 5)), Change(UB, ("a", 2)), Change(UA, ("a", 3))], 1)
    sink.close()
    delta_table = deltalake.DeltaTable(str(path))
    assert rows_of(path) == [("a", 3), ("c", 5)]
    assert delta_table.version() == 2  # create, then one commit per micro-batch
    assert delta_table.metadata().configuration["delta.enableChangeDataFeed"] == "true"

    # A restarted job (same writer, from its checkpoint) runs batch 1 again, then batch 2: 1 is skipped.
    again = create_sink(table("k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED", path), True)
    again.open(SinkJob(job.writer, resumed=True))
    again.write([Change(D, ("a", 3))], 1)  # different content on purpose: only a skip leaves a in place
    again.write([Change(I, ("d", 7)), Change(I, ("e", 1)), Change(D, ("e", 1))], 2)
    again.close()
    assert rows_of(path) == [("a", 3), ("c", 5), ("d", 7)]
    assert deltalake.DeltaTable(str(path)).transaction_version(f"changeflow-{job.writer}") == 2


def test_append_sink_appends_once_per_batch_with_the_declared_types(tmp_path):
    path = tmp_path / "events"
    columns = "id INT NOT NULL, name STRING, amount DECIMAL(10, 2), at TIMESTAMP(3)"
    sink = create_sink(table(columns, path), True)
    assert sink.accepts_updates is False  # no primary key: an updating query fails at planning (Flink's rule)
    sink.open(SinkJob.fresh())
    at = datetime.datetime(2024, 1, 2, 3, 4, 5)
    rows = [(1, "x", decimal.Decimal("1.50"), at), (2, None, None, None)]
    sink.write([Change(I, r) for r in rows], 0)
    sink.write([Change(I, r) for r in rows], 0)  # the same batch again (a replay): nothing more
    sink.write([Change(I, (3, "y", decimal.Decimal("2"), at))], None)  # a batch job's result: no record
    with pytest.raises(DeltaError, match="no PRIMARY KEY, so it only appends, but received a -D change"):
        sink.write([Change(D, (3, "y", decimal.Decimal("2"), at))], 5)
    sink.close()
    assert rows_of(path) == [*rows, (3, "y", decimal.Decimal("2.00"), at)]
    schema = pa.schema(deltalake.DeltaTable(str(path)).schema().to_arrow())
    assert [(f.name, str(f.type), f.nullable) for f in schema][:3] == [
        ("id", "int32", True), ("name", "string", True), ("amount", "decimal128(10, 2)", True)]


def test_a_sink_into_a_table_of_other_columns_fails_naming_the_column(tmp_path):
    path = tmp_path / "other"
    deltalake.write_deltalake(str(path), pa.table({"k": pa.array([1], pa.int64()), "v": ["x"]}))
    sink = create_sink(table("k INT, v STRING", path), True)
    with pytest.raises(DeltaError, match="column 'k' is declared INT but the Delta table's column is int64"):
        sink.open(SinkJob.fresh())
    sink = create_sink(table("k BIGINT, w STRING", path), True)
    with pytest.raises(DeltaError, match=r"declared columns \(k, w\) are not the Delta table's columns \(k, v\)"):
        sink.open(SinkJob.fresh())


def test_options_are_flinks_delta_options_and_others_are_refused_by_name(tmp_path):
    with pytest.raises(ConnectorError, match="Missing required options are:\n\ntable-path"):
        create_source(parse_create_table("CREATE TABLE t (k INT) WITH ('connector' = 'delta')")[0], True)
    with pytest.raises(ConnectorError, match="Unsupported options:\n\nscan.startup.mode"):
        create_source(table("k INT", tmp_path, **{"scan.startup.mode": "x"}), True)
    with pytest.raises(ConnectorError, match="ignoreChanges: Flink's continuous append read"):
        create_source(table("k INT", tmp_path, ignoreChanges="true"), True)
    with pytest.raises(ConnectorError, match="Unsupported options:\n\nversionAsOf"):
        create_sink(table("k INT", tmp_path, versionAsOf="1"), True)
    with pytest.raises(ConnectorError, match="'versionAsOf' and 'timestampAsOf' shouldn't be set together"):
        create_source(table("k INT", tmp_path, versionAsOf="1", timestampAsOf="2024-01-01"), True)
    with pytest.raises(ConnectorError, match="'startingVersion' is for 'mode' = 'streaming'"):
        create_source(table("k INT", tmp_path, startingVersion="1"), True)
    with pytest.raises(ConnectorError, match="Could not parse value 'sometimes' for key 'mode'"):
        create_source(table("k INT", tmp_path, mode="sometimes"), True)
    with pytest.raises(ConnectorError, match="only possible for INSERT-only table sources"):
        create_source(table("k INT", tmp_path, mode="streaming"), False)
    source = create_source(table("k INT", tmp_path, mode="streaming", updateCheckIntervalMillis="250",
                                 **{"storage-options.AWS_REGION": "x"}), True)
    assert (source.bounded, source.changelog, source.monitor_interval_ms) == (False, True, 250)
    assert source.location.storage_options() == {"AWS_REGION": "x"}


def test_the_snapshot_reads_a_version_and_a_missing_table_fails_naming_the_path(tmp_path):
    path = tmp_path / "snap"
    deltalake.write_deltalake(str(path), pa.table({"k": pa.array([1, 2], pa.int32()), "v": ["a", "b"]}))
    deltalake.write_deltalake(str(path), pa.table({"k": pa.array([3], pa.int32()), "v": ["c"]}), mode="append")
    assert sorted(create_source(table("k INT, v STRING", path), True).rows()) == [(1, "a"), (2, "b"), (3, "c")]
    assert sorted(create_source(table("k INT, v STRING", path, versionAsOf="0"), True).rows()) == [(1, "a"), (2, "b")]
    with pytest.raises(DeltaError, match=r"'table-path' = '.*nowhere'\): no Delta table at option 'table-path'"):
        create_source(table("k INT, v STRING", tmp_path / "nowhere"), True).rows()


def test_the_change_feed_reads_versions_as_changes_in_commit_order(tmp_path):
    from changeflow.connectors.delta_changes import read_changes

    path = tmp_path / "feed"
    sink = create_sink(table("k STRING, n BIGINT, PRIMARY KEY (k) NOT ENFORCED", path,
                             **{"delta.enableChangeDataFeed": "true"}), True)
    sink.open(SinkJob.fresh())
    sink.write([Change(I, ("a", 1)), Change(I, ("b", 2))], 0)  # version 1
    sink.write([Change(UA, ("a", 5)), Change(D, ("b", 2)), Change(I, ("c", 3))], 1)  # version 2
    sink.close()
    source = create_source(table("k STRING, n BIGINT", path, mode="streaming"), True)

    def changes(start, end, snapshot):
        t = read_changes(source.location, start, end, snapshot)
        return [(r["_kind"], r["k"], r["n"]) for r in t.to_pylist()], t.column("_seq").to_pylist()

    got, seqs = changes(0, 2, False)  # versions 1 and 2: inserts, then an update's pair, a delete, an insert
    assert sorted(got[:2]) == [(0, "a", 1), (0, "b", 2)]
    assert got[2:] == [(3, "b", 2), (1, "a", 1), (2, "a", 5), (0, "c", 3)]
    assert seqs == sorted(seqs) and seqs[2] == 2 << 32
    snapshot, _ = changes(-1, 1, True)  # no startingVersion: the first micro-batch is version 1's snapshot
    assert sorted(snapshot) == [(0, "a", 1), (0, "b", 2)]
    with pytest.raises(DeltaError, match="does not have the property 'delta.enableChangeDataFeed' = 'true'"):
        plain = tmp_path / "plain"
        deltalake.write_deltalake(str(plain), pa.table({"k": ["x"], "n": pa.array([1], pa.int64())}))
        deltalake.write_deltalake(str(plain), pa.table({"k": ["y"], "n": pa.array([2], pa.int64())}), mode="append")
        read_changes(create_source(table("k STRING, n BIGINT", plain, mode="streaming"), True).location, 0, 1, False)
