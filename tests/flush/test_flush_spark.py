"""The flush interval end to end on Spark: end of input, idle input, chains, restart."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time

import pandas as pd
import pytest

from changeflow.common.row import Row
from changeflow.common.row_kind import RowKind
from changeflow.plan.flush_policy import flush_policy
from changeflow.table.expressions import col
from changeflow.testing.harness import materialize

pytestmark = pytest.mark.spark

# Far longer than a test runs: no interval boundary falls inside it, so every
# flush seen is an idle-input, upstream or end-of-input flush.
LONG = "2400 h"


def settings_with_flush(t_env, interval: str = LONG):
    # The environment passes the flush policy once its configuration is wired
    # (StreamingSettings.flush); the tests build the settings directly.
    t_env.get_config().set("execution.max-flush-interval", interval)
    policy = flush_policy(t_env.get_config().get_configuration())
    return dataclasses.replace(t_env._engine().streaming_settings(), flush=policy)


def sum_per_key(table):
    return table.group_by(col("k")).select(col("k"), col("v").sum.alias("s"))


def count_per_parity(per_key):
    parity = per_key.add_columns((col("s") % 2).alias("p"))
    return parity.group_by(col("p")).select(col("p"), col("k").count.alias("n"))


def rows_of(changes) -> list[Row]:
    return [Row.of(c.kind, c.values) for c in changes]


def final(changes) -> list[str]:
    return sorted(map(repr, materialize(rows_of(changes))))


ROWS = [("a", 1), ("b", 2), ("a", 3), ("c", 5), ("b", 1), ("d", 4), ("a", 2), ("c", 2), ("d", 1), ("e", 7)]


def test_bounded_chain_with_a_long_interval_emits_one_final_record_per_key(stream_env):
    stream_env.get_config().set("changeflow.source.rows-per-batch", "5")  # two micro-batches
    plan = count_per_parity(sum_per_key(stream_env.from_elements(ROWS, ["k", "v"])))._plan
    jobs = stream_env._engine().jobs
    unbuffered = jobs.run_streaming(plan, stream_env._engine().streaming_settings())
    buffered = jobs.run_streaming(plan, settings_with_flush(stream_env))
    # a=6, b=3, c=7, d=5, e=7: one even sum, four odd ones.
    assert [(c.kind, c.values) for c in sorted(buffered, key=lambda c: c.values)] == [
        (RowKind.INSERT, (0, 1)), (RowKind.INSERT, (1, 4))]
    assert final(buffered) == final(unbuffered)
    assert len(unbuffered) > len(buffered)


def test_a_join_passes_end_of_input_and_flushes_on_to_the_buffering_aggregations(stream_env):
    # sum per key (buffered) -> LEFT JOIN (not buffering) -> count per region (buffered):
    # the last aggregation only sees every key's final value if the join forwards
    # the sources' end of input and the first aggregation's flushes.
    stream_env.get_config().set("changeflow.source.rows-per-batch", "5")  # two micro-batches
    per_key = sum_per_key(stream_env.from_elements(ROWS, ["k", "v"]))
    regions = stream_env.from_elements([("a", "eu"), ("b", "us"), ("c", "eu"), ("z", "us")], ["rk", "region"])
    joined = per_key.left_outer_join(regions, col("k") == col("rk"))
    plan = joined.group_by(col("region")).select(col("region"), col("s").sum.alias("total"))._plan
    jobs = stream_env._engine().jobs
    unbuffered = jobs.run_streaming(plan, stream_env._engine().streaming_settings())
    buffered = jobs.run_streaming(plan, settings_with_flush(stream_env))
    # a=6 and c=7 in eu, b=3 in us, d=5 and e=7 without a region.
    expected = sorted(map(repr, [Row("eu", 13), Row("us", 3), Row(None, 12)]))
    assert final(buffered) == final(unbuffered) == expected
    assert len(unbuffered) > len(buffered)


def test_input_arriving_over_time_flushes_on_idle_input_through_a_chain(spark, stream_env):
    workdir = tempfile.mkdtemp(prefix="flush-test-")
    inbox = os.path.join(workdir, "inbox")
    os.makedirs(inbox)
    source = spark.readStream.schema("k string, v bigint").option("maxFilesPerTrigger", 1).parquet(inbox)
    plan = count_per_parity(sum_per_key(stream_env.from_spark(source)))._plan
    frame = stream_env._engine().jobs.streaming_frame(plan, settings_with_flush(stream_env), workdir)
    outputs: list[tuple[int, list[tuple]]] = []

    def collect(batch, batch_id):
        pdf = batch.toPandas()
        if len(pdf):
            outputs.append((batch_id, list(pdf.itertuples(index=False, name=None))))

    saved = {k: spark.conf.get(k) for k in ("spark.sql.streaming.noDataMicroBatches.enabled",
                                             "spark.sql.streaming.numRecentProgressUpdates")}
    # Idle input is seen in a micro-batch without data (runtime/spark/flush.py).
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "true")
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", "1000")
    query = (frame.writeStream.foreachBatch(collect).option("checkpointLocation", os.path.join(workdir, "cp"))
             .trigger(processingTime="500 milliseconds").start())
    try:
        for i, rows in enumerate([ROWS[:6], ROWS[6:]]):
            seen = len(outputs)
            pd.DataFrame(rows, columns=["k", "v"]).to_parquet(os.path.join(inbox, f"part-{i}.parquet"))
            wait_for(lambda seen=seen: len(outputs) > seen, query)
        # A micro-batch's progress is posted after its sink ran.
        wait_for(lambda: outputs[-1][0] in {p["batchId"] for p in query.recentProgress}, query)
        progress = {p["batchId"]: p["numInputRows"] for p in query.recentProgress}
    finally:
        query.stop()
        for key, value in saved.items():
            spark.conf.set(key, value)
        shutil.rmtree(workdir, ignore_errors=True)
    data_batches = sorted(b for b, n in progress.items() if n > 0)
    assert len(data_batches) == 2
    # Each file's updates are buffered by both aggregations and flushed, through the
    # chain, in the very next micro-batch, which brought no input: idle input.
    assert [b for b, _ in outputs] == [b + 1 for b in data_batches]
    assert all(progress[b] == 0 for b, _ in outputs)
    changes = [Row.of(RowKind(r[2]), r[:2]) for _, rs in outputs for r in rs]
    # After the first file: a=4, b=3, c=5, d=4 (2 even, 2 odd); at the end 1 even, 4 odd.
    first = [Row.of(RowKind(r[2]), r[:2]) for r in outputs[0][1]]
    assert sorted(map(repr, materialize(first))) == ["<Row(0, 2)>", "<Row(1, 2)>"]
    assert sorted(map(repr, materialize(changes))) == ["<Row(0, 1)>", "<Row(1, 4)>"]


def test_a_query_reading_an_unbounded_spark_stream_up_to_now_flushes_what_it_buffered(spark, stream_env, tmp_path):
    pd.DataFrame(ROWS, columns=["k", "v"]).to_parquet(tmp_path / "part-0.parquet")
    source = spark.readStream.schema("k string, v bigint").option("maxFilesPerTrigger", 1).parquet(str(tmp_path))
    stream_env.get_config().set("execution.max-flush-interval", LONG)
    with count_per_parity(sum_per_key(stream_env.from_spark(source))).execute().collect() as rows:
        changes = [(str(r.get_row_kind()), tuple(r)) for r in rows]
    # No end of input follows the stream and no interval boundary falls in the test: only
    # the query's flush run after the input it read (runtime/spark/flush_signals.py) emits,
    # each key once. Sums a=6 b=3 c=7 d=5 e=7: one even, four odd.
    assert sorted(changes) == [("+I", (0, 1)), ("+I", (1, 4))]


def test_restart_from_a_checkpoint_loses_no_buffered_update(stream_env):
    stream_env.get_config().set("changeflow.source.rows-per-batch", "2")
    rows = [("x", 1), ("y", 1), ("x", 5), ("y", 2), ("z", 1), ("y", 3), ("z", 4), ("w", 1)]
    plan = sum_per_key(stream_env.from_elements(rows, ["k", "v"]))._plan
    workdir = tempfile.mkdtemp(prefix="flush-test-")
    frame = stream_env._engine().jobs.streaming_frame(plan, settings_with_flush(stream_env), workdir)
    outputs: list[tuple] = []
    runs = {"n": 0}

    def collect(batch, batch_id):
        if runs["n"] == 0 and batch_id == 2:
            # Fail before batch 2 runs: x's buffered update of batch 1 is only in state.
            raise RuntimeError("injected failure")
        outputs.extend(batch.toPandas().itertuples(index=False, name=None))

    def run():
        query = (frame.writeStream.foreachBatch(collect)
                 .option("checkpointLocation", os.path.join(workdir, "cp")).trigger(availableNow=True).start())
        query.awaitTermination()

    try:
        with pytest.raises(Exception, match="injected failure"):
            run()
        assert outputs == []  # batches 0 and 1 were buffered, not emitted
        runs["n"] = 1
        run()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    assert sorted((RowKind(r[2]), r[0], r[1]) for r in outputs) == [
        (RowKind.INSERT, "w", 1), (RowKind.INSERT, "x", 6), (RowKind.INSERT, "y", 6), (RowKind.INSERT, "z", 5)]


def wait_for(condition, query, limit_s: float = 300.0) -> None:
    """Wait until ``condition()`` holds (a liveness bound for a busy machine, not a timing assertion)."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if query.exception() is not None:
            raise query.exception()
        if time.monotonic() > deadline:
            raise AssertionError("the streaming query produced no output in time")
        time.sleep(0.2)
