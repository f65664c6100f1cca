"""table.exec.state.ttl on Structured Streaming: a GROUP BY's idle keys are swept by processing-time timers.

The query runs twice on one checkpoint, the second run after the TTL has passed:
a key that gets a record again is expired on access (its count starts over: +I),
a new key starts as usual, and the keys that see no more records are removed by
the bucket's sweep timer, which the state read back with Spark's state data
source reader shows. A SQL query shows the TTL in EXPLAIN and runs end to end.
"""

from __future__ import annotations

import os
import pickle
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from changeflow.common import DataTypes
from changeflow.kernels.aggregate import AggCall
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan.nodes import Aggregate, Source
from changeflow.runtime.spark.streaming import StreamingSettings, StreamingTranslator

pytestmark = pytest.mark.spark

KINDS = ["+I", "-U", "+U", "-D"]


class _FedTranslator(StreamingTranslator):
    """Translates the plan's sources as the given streams of change rows (one frame, or frames by source name)."""

    def __init__(self, spark, settings, workdir, frame) -> None:
        super().__init__(spark, settings, workdir)
        self.frame = frame

    def _translate(self, node):
        if isinstance(node, Source):
            return self.frame[node.name] if isinstance(self.frame, dict) else self.frame
        return super()._translate(node)


def key_stream(spark, directory: str, keys: list[int], first: int, column: str | None = None, values=None):
    """``keys`` (and a string ``column`` of ``values``) as +I change rows, one Parquet file per run.

    ``first``: the run's first position.
    """
    from pyspark.sql import types as T

    os.makedirs(directory, exist_ok=True)
    data = {"k": pa.array(keys, pa.int64())}
    fields = [T.StructField("k", T.LongType())]
    if column is not None:
        data[column] = pa.array(values, pa.string())
        fields.append(T.StructField(column, T.StringType()))
    data.update({KIND: pa.array([0] * len(keys), pa.int8()), SEQ: pa.array(range(first, first + len(keys)), pa.int64()),
                 SUB: pa.array([0] * len(keys), pa.int64())})
    pq.write_table(pa.table(data), os.path.join(directory, f"part-{first:06d}.parquet"))
    schema = T.StructType(fields + [T.StructField(KIND, T.ByteType()), T.StructField(SEQ, T.LongType()),
                                    T.StructField(SUB, T.LongType())])
    return spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(directory)


def count_per_key(spark, tmp_path, keys: list[int], first: int, ttl_ms: int) -> list[tuple]:
    """One availableNow run of ``SELECT k, COUNT(*) FROM s GROUP BY k`` over the new ``keys``."""
    scan = Source("s", (("k", DataTypes.BIGINT()),), "elements", [])
    node = Aggregate(scan, ("k",), (AggCall("count_star", None, DataTypes.BIGINT(), "n"),),
                     (("k", DataTypes.BIGINT()), ("n", DataTypes.BIGINT())))
    settings = StreamingSettings(mini_batch=False, rows_per_batch=100, buckets=2, pages=2, state_ttl_ms=ttl_ms)
    frame = key_stream(spark, str(tmp_path / "input"), keys, first)
    translator = _FedTranslator(spark, settings, str(tmp_path), frame)
    out = translator.translate(node)
    assert translator.wants_no_data_batches  # an unbounded query would sweep while idle
    return sorted((r["k"], r["n"], KINDS[r[KIND]]) for r in run_available(out, tmp_path))


def run_available(out, tmp_path) -> list[dict]:
    """Run ``out`` over what its sources hold now (availableNow) on the test's checkpoint; its rows."""
    rows: list[dict] = []
    lock = threading.Lock()

    def collect(batch, _):
        with lock:
            rows.extend(batch.toArrow().to_pylist())

    query = (out.writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    if not query.awaitTermination(300):
        query.stop()
        raise AssertionError("the availableNow query did not end")
    return rows


def stored_keys(spark, checkpoint: str, table: str, column: str = "k") -> set:
    """The keys holding rows of ``table`` in the aggregation's state, read with Spark's state data source."""
    pages = (spark.read.format("statestore").option("path", checkpoint).option("operatorId", 0)
             .option("stateVarName", "pages").load())
    keys = set()
    for row in pages.collect():
        frame = pickle.loads(row.user_map_value.blob).get(table)
        if frame is not None:
            keys |= {int(k) for k in frame[column]}
    return keys


def test_group_by_with_state_ttl_sweeps_idle_keys(spark, tmp_path):
    assert count_per_key(spark, tmp_path, [0, 1, 2, 3, 1], 0, ttl_ms=1000) == [
        (0, 1, "+I"), (1, 1, "+I"), (1, 1, "-U"), (1, 2, "+U"), (2, 1, "+I"), (3, 1, "+I")]
    checkpoint = str(tmp_path / "checkpoint")
    assert stored_keys(spark, checkpoint, "acc") == {0, 1, 2, 3}
    assert stored_keys(spark, checkpoint, "_ttl") == {0, 1, 2, 3}
    time.sleep(2.5)  # past the TTL and the buckets' sweep timers (a TTL after the first micro-batch)
    # Key 1 expired: its count starts over (+I[1, 1]; not -U[1, 2] +U[1, 3]). Keys 0, 2, 3 are idle:
    # only the sweep removes them.
    assert count_per_key(spark, tmp_path, [1, 9], 5, ttl_ms=1000) == [(1, 1, "+I"), (9, 1, "+I")]
    assert stored_keys(spark, checkpoint, "acc") == {1, 9}
    assert stored_keys(spark, checkpoint, "_ttl") == {1, 9}


def joined(spark, tmp_path, left: list[tuple], right: list[tuple], first: int) -> list[tuple]:
    """One availableNow run of ``l JOIN r ON l.k = r.k`` with a 1 s state TTL on the left, 10 min on the right."""
    from changeflow.plan.nodes import Join

    big, text = DataTypes.BIGINT(), DataTypes.STRING()
    l_scan = Source("l", (("k", big), ("a", text)), "elements", [])
    r_scan = Source("r", (("k", big), ("b", text)), "elements", [])
    node = Join(l_scan, r_scan, "INNER", ("k",), ("k",), None, (("k", big), ("a", text), ("k0", big), ("b", text)),
                left_ttl_ms=1000, right_ttl_ms=600_000)
    frames = {"l": key_stream(spark, str(tmp_path / "l"), [k for k, _ in left], first, "a", [v for _, v in left]),
              "r": key_stream(spark, str(tmp_path / "r"), [k for k, _ in right], first + len(left), "b",
                              [v for _, v in right])}
    settings = StreamingSettings(mini_batch=False, rows_per_batch=100, buckets=2, pages=2)
    translator = _FedTranslator(spark, settings, str(tmp_path), frames)
    out = translator.translate(node)
    assert translator.wants_no_data_batches
    return sorted((r["k"], r["a"], r["k0"], r["b"], KINDS[r[KIND]]) for r in run_available(out, tmp_path))


def test_join_sides_expire_on_their_own_and_are_swept(spark, tmp_path):
    assert joined(spark, tmp_path, [(1, "a"), (2, "b")], [(1, "x"), (3, "z")], 0) == [(1, "a", 1, "x", "+I")]
    checkpoint = str(tmp_path / "checkpoint")
    assert stored_keys(spark, checkpoint, "left", "_jk0") == {1, 2}
    assert stored_keys(spark, checkpoint, "right", "_jk0") == {1, 3}
    time.sleep(1.5)  # past the left TTL (1 s), not the right one (a query starts in 5-15 s here)
    # Left (2, b) expired: a right row for key 2 matches nothing. Left (1, c) meets right (1, x), which lives.
    assert joined(spark, tmp_path, [(1, "c")], [(2, "y")], 10) == [(1, "c", 1, "x", "+I")]
    time.sleep(2.5)  # past the left TTL and the buckets' sweep timers
    joined(spark, tmp_path, [(9, "n")], [], 20)  # a run whose timers sweep the idle keys
    assert stored_keys(spark, checkpoint, "left", "_jk0") == {9}  # left (1, c) swept
    assert stored_keys(spark, checkpoint, "right", "_jk0") == {1, 2, 3}  # the right side lives on


def test_sql_group_by_with_state_ttl_and_a_hint(stream_env):
    stream_env.get_config().set("table.exec.state.ttl", "1 h")
    stream_env.create_temporary_view("orders", stream_env.from_elements(
        [(1, 10), (2, 5), (1, 7)], DataTypes.ROW([DataTypes.FIELD("k", DataTypes.BIGINT()),
                                                  DataTypes.FIELD("v", DataTypes.BIGINT())])))
    plain = "SELECT k, SUM(v) AS total FROM orders GROUP BY k"
    assert "stateTtl=[3600000ms]" in stream_env.explain_sql(plain)
    hinted = "SELECT /*+ STATE_TTL('orders' = '1d') */ k, SUM(v) AS total FROM orders GROUP BY k"
    assert "stateTtl=[86400000ms]" in stream_env.explain_sql(hinted)
    with stream_env.sql_query(hinted).execute().collect() as rows:
        changes = [(str(r.get_row_kind()), tuple(r)) for r in rows]
    assert changes == [("+I", (1, 10)), ("+I", (2, 5)), ("-U", (1, 10)), ("+U", (1, 17))]


def test_sql_top_n_and_deduplication_run_with_a_state_ttl(stream_env):
    """A TTL far longer than the query: Top-N and deduplication emit what they emit without one."""
    stream_env.get_config().set("table.exec.state.ttl", "1 h")
    stream_env.create_temporary_view("s", stream_env.from_elements(
        [(1, 5), (1, 9), (2, 4), (1, 7)], DataTypes.ROW([DataTypes.FIELD("k", DataTypes.BIGINT()),
                                                         DataTypes.FIELD("v", DataTypes.BIGINT())])))
    top = "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM s) WHERE rn = 1"
    assert "stateTtl=[3600000ms]" in stream_env.explain_sql(top)
    with stream_env.sql_query(top).execute().collect() as rows:
        assert [(str(r.get_row_kind()), tuple(r)) for r in rows] == [
            ("+I", (1, 5)), ("-U", (1, 5)), ("+U", (1, 9)), ("+I", (2, 4))]
    dedup = ("SELECT k, v FROM (SELECT k, v, pt, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt ASC) AS rn "
             "FROM (SELECT k, v, PROCTIME() AS pt FROM s)) WHERE rn = 1")
    with stream_env.sql_query(dedup).execute().collect() as rows:
        assert [(str(r.get_row_kind()), tuple(r)) for r in rows] == [("+I", (1, 5)), ("+I", (2, 4))]
