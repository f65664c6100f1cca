"""The sink upsert materializer on Structured Streaming: every strategy's output equals the reference model.

The invariant: for a random changelog whose changes for one primary key arrive
out of order (additions and retractions of rows anywhere in the key's history,
null keys included), in several micro-batches, the streaming output is exactly
the changelog the reference model (``tests/kernels/materializer_reference.py``)
emits, and so materializes to the same table. Every strategy runs as a branch
of one query (one Spark job, two micro-batches) over the same changelog stream,
half of them with an upsert key (the kernel tests cover every strategy both
ways); ADAPTIVE gets low thresholds so keys cross both.
"""

from __future__ import annotations

import os
import random
import sys
import threading

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from changeflow.common import DataTypes
from changeflow.kernels.changelog import KIND, SEQ, SUB
from changeflow.plan.nodes import Source, UpsertMaterialize
from changeflow.runtime.spark.materializer import materialize_changes
from changeflow.runtime.spark.streaming import StreamingSettings, StreamingTranslator

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kernels"))
from materializer_reference import reference_changes, upsert_materialize  # noqa: E402

pytestmark = pytest.mark.spark

KINDS = ["+I", "-U", "+U", "-D"]
COLUMNS = (("tag", DataTypes.BIGINT()), ("pk", DataTypes.BIGINT()), ("uk", DataTypes.BIGINT()),
           ("v", DataTypes.STRING()))
# (strategy, with upsert key): the multiset layouts both ways, the list layouts one way each.
VARIANTS = [("LEGACY", False), ("VALUE", True), ("MAP", True), ("ADAPTIVE", False)]


def random_changelog(seed: int, n: int) -> list[tuple[str, tuple]]:
    """Changes (kind, (pk, uk, v)) for a few primary keys; retractions pick any row a key holds."""
    rnd = random.Random(seed)
    held: dict = {}
    out = []
    while len(out) < n:
        pk = rnd.choice([0, 1, 2, 3, None])
        rows = held.setdefault(pk, [])
        if rows and rnd.random() < 0.45:
            row = rows.pop(rnd.randrange(len(rows)))
            out.append((rnd.choice(["-U", "-D"]), row))
        elif rnd.random() < 0.04:
            out.append(("-D", (pk, rnd.randrange(8), "never-added")))  # ignored, as Flink does
        else:
            row = (pk, rnd.randrange(8), rnd.choice("abc") * rnd.randrange(1, 3))
            rows.append(row)
            out.append((rnd.choice(["+I", "+U"]), row))
    return out


def changelog_stream(spark, directory: str, records, per_batch: int, first: int = 0):
    """``records`` as a changelog stream of one Parquet file per micro-batch (``first``: records already written)."""
    os.makedirs(directory, exist_ok=True)
    schema = pa.schema([("pk", pa.int64()), ("uk", pa.int64()), ("v", pa.string()), (KIND, pa.int8()),
                        (SEQ, pa.int64()), (SUB, pa.int64())])
    for start in range(first, len(records), per_batch):
        part = records[start:start + per_batch]
        columns = [[r[i] for _, r in part] for i in range(3)]
        table = pa.Table.from_arrays([pa.array(c, type=schema.field(i).type) for i, c in enumerate(columns)]
                                     + [pa.array([KINDS.index(k) for k, _ in part], type=pa.int8()),
                                        pa.array(range(start, start + len(part)), type=pa.int64()),
                                        pa.array([0] * len(part), type=pa.int64())], schema=schema)
        path = os.path.join(directory, f"part-{start:06d}.parquet")  # named by its first record: never overwritten
        pq.write_table(table, path)
        os.utime(path, (1_000_000_000 + start, 1_000_000_000 + start))  # the file source takes oldest first
    from pyspark.sql import types as T

    spark_schema = T.StructType([T.StructField("pk", T.LongType()), T.StructField("uk", T.LongType()),
                                 T.StructField("v", T.StringType()), T.StructField(KIND, T.ByteType()),
                                 T.StructField(SEQ, T.LongType()), T.StructField(SUB, T.LongType())])
    return spark.readStream.schema(spark_schema).option("maxFilesPerTrigger", 1).parquet(directory)


def run_query(frame, checkpoint: str) -> list[dict]:
    rows: list[dict] = []
    lock = threading.Lock()

    def collect(batch, _):
        with lock:
            rows.extend(batch.toArrow().to_pylist())

    query = (frame.writeStream.foreachBatch(collect).option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    if not query.awaitTermination(300):  # raises the query's error, if it failed
        query.stop()
        raise AssertionError("the availableNow query did not end")
    return sorted(rows, key=lambda r: (r[SEQ], r[SUB]))


def materializers(spark, tmp_path, records, variants, conflict="DEDUPLICATE", first=0, ttl_ms=0):
    """One query with a materializer per variant (tagged by its index) over ``records``.

    ``first`` records were written (and read by an earlier run of the same checkpoint) already.
    """
    from pyspark.sql import functions as F

    translator = StreamingTranslator(spark, StreamingSettings(mini_batch=False, rows_per_batch=80, buckets=2,
                                                              pages=2), str(tmp_path))
    translator.control = False  # no end-of-input or flush control rows in this query
    changes = changelog_stream(spark, str(tmp_path / "changes"), records, 80, first)
    scan = Source("changes", COLUMNS, "elements", [])
    out = None
    for i, (strategy, with_uk) in enumerate(variants):
        node = UpsertMaterialize(scan, ("tag", "pk"), ("tag", "uk") if with_uk else None, conflict=conflict,
                                 strategy=strategy, threshold_high=4, threshold_low=2, ttl_ms=ttl_ms)
        tagged = changes.select(F.lit(i).cast("long").alias("tag"), "pk", "uk", "v", KIND, SEQ, SUB)
        frame = materialize_changes(translator, node, tagged)
        out = frame if out is None else out.unionAll(frame)
    return run_query(out, str(tmp_path / "checkpoint"))


def test_every_strategy_emits_the_reference_changelog(spark, tmp_path):
    records = random_changelog(7, 160)
    rows = materializers(spark, tmp_path, records, VARIANTS)
    for i, (strategy, with_uk) in enumerate(VARIANTS):
        got = [(KINDS[r[KIND]], (r["pk"], r["uk"], r["v"])) for r in rows if r["tag"] == i]
        expected = reference_changes(records, [0], [1] if with_uk else None)
        assert got == expected, f"{strategy}, upsert key: {with_uk}"
        assert upsert_materialize(got, [0]) == upsert_materialize(expected, [0])
    assert any(k == "-D" for k, _ in expected) and any(k == "+U" for k, _ in expected)


def test_a_restarted_query_resumes_the_histories_from_its_checkpoint(spark, tmp_path):
    records = random_changelog(11, 160)
    before = materializers(spark, tmp_path, records[:80], [("MAP", False)])
    after = materializers(spark, tmp_path, records, [("MAP", False)], first=80)  # same checkpoint, new file only
    got = [(KINDS[r[KIND]], (r["pk"], r["uk"], r["v"])) for r in before + after]
    assert got == reference_changes(records, [0], None)
    assert after and all(r[SEQ] >= 80 for r in after)


def test_on_conflict_do_error_fails_the_query_naming_the_key_and_both_rows(spark, tmp_path):
    records = [("+I", (5, 1, "first")), ("+I", (6, 1, "other")), ("+I", (5, 2, "second"))]
    with pytest.raises(Exception) as failure:
        materializers(spark, tmp_path, records, [("MAP", True)], conflict="ERROR")
    message = str(failure.value)
    assert "ON CONFLICT DO ERROR" in message and "{'tag': 0, 'pk': 5}" in message
    assert "(0, 5, 1, 'first')" in message and "(0, 5, 2, 'second')" in message


def stored_primary_keys(spark, checkpoint: str, operator: int) -> set:
    """The primary keys (tag, pk) holding history rows in an operator's state, read with Spark's state reader."""
    import pickle

    import pandas as pd

    pages = (spark.read.format("statestore").option("path", checkpoint).option("operatorId", operator)
             .option("stateVarName", "pages").load())
    keys = set()
    for row in pages.collect():
        if row.user_map_key.page < 0:  # the directory of growing pages
            continue
        for table, frame in pickle.loads(row.user_map_value.blob).items():
            if table in ("value", "legacy", "map_meta", "map_node", "map_index"):
                keys |= {(int(t), None if pd.isna(p) else int(p))
                         for t, p in zip(frame["tag"], frame["pk"], strict=True)}
    return keys


def test_state_ttl_sweeps_the_histories_of_keys_that_see_no_more_records(spark, tmp_path):
    """TTL 1 s: keys written in the first run and idle in the second are swept by its timers.

    The second run's records retract a row of one expired key (nothing is emitted, as
    before a sweep), add a row to another (``+I``: its history starts over) and to a
    new key; the idle keys 0, 3 and null see no records, so only the sweep removes them.
    """
    import time

    variants = [("VALUE", False), ("MAP", True)]
    records = [("+I", (pk, 1, "a")) for pk in (0, 1, 2, 3, None)] + [("+I", (1, 2, "b"))]
    first = materializers(spark, tmp_path, records, variants, ttl_ms=1000)
    assert len(first) == 2 * 6
    checkpoint = str(tmp_path / "checkpoint")

    def stored():
        return stored_primary_keys(spark, checkpoint, 0) | stored_primary_keys(spark, checkpoint, 1)

    assert stored() == {(t, pk) for t in (0, 1) for pk in (0, 1, 2, 3, None)}
    time.sleep(2.5)  # past the TTL, and past the timers (a TTL after the first micro-batch)
    later = records + [("-D", (1, 2, "b")), ("+I", (2, 5, "d")), ("+I", (9, 1, "c"))]
    second = materializers(spark, tmp_path, later, variants, first=len(records), ttl_ms=1000)
    assert sorted((r["tag"], r["pk"], KINDS[r[KIND]]) for r in second) == [
        (0, 2, "+I"), (0, 9, "+I"), (1, 2, "+I"), (1, 9, "+I")]
    assert stored() == {(t, pk) for t in (0, 1) for pk in (2, 9)}


def aggregate_changelog(data, limit):
    """The changes of ``GROUP BY uk: LAST_VALUE(pk), SUM(v)`` per input row, then ``WHERE total < limit``."""
    state: dict = {}
    out = []
    for uk, pk, v in data:
        old = state.get(uk)
        new = (uk, pk, (old[2] if old else 0) + v)
        state[uk] = new
        changes = [("+I", new)] if old is None else [("-U", old), ("+U", new)]
        out.extend((k, r) for k, r in changes if r[2] < limit)
    return out


def test_insert_on_conflict_into_a_materialized_table_reads_back_by_primary_key(stream_env):
    """SQL end to end: GROUP BY uk, a filter, ON CONFLICT DO DEDUPLICATE into a table keyed by pk, then from_path."""
    rnd = random.Random(4)
    data = [(rnd.randrange(6), rnd.randrange(3), rnd.randrange(1, 4)) for _ in range(40)]
    config = stream_env.get_config()
    config.set("changeflow.source.rows-per-batch", "20")
    config.set("table.exec.sink.upsert-materialize-strategy.type", "ADAPTIVE")
    config.set("table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high", "3")
    config.set("table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low", "1")
    stream_env.create_temporary_view("src", stream_env.from_elements(data, DataTypes.ROW([
        DataTypes.FIELD("uk", DataTypes.BIGINT()), DataTypes.FIELD("pk", DataTypes.BIGINT()),
        DataTypes.FIELD("v", DataTypes.BIGINT())])))
    stream_env.execute_sql("CREATE TABLE latest (uk BIGINT, pk BIGINT, total BIGINT, PRIMARY KEY (pk) NOT ENFORCED) "
                           "WITH ('connector' = 'materialized')")
    insert = ("INSERT INTO latest SELECT uk, pk, total FROM (SELECT uk, LAST_VALUE(pk) AS pk, SUM(v) AS total "
              "FROM src GROUP BY uk) WHERE total < 12 ON CONFLICT DO DEDUPLICATE")
    assert "SinkMaterializer" in stream_env.explain_sql(insert)
    stream_env.execute_sql(insert).wait()
    expected = upsert_materialize(reference_changes(aggregate_changelog(data, 12), [1], [0]), [1])
    with stream_env.from_path("latest").execute().collect() as rows:
        got = [tuple(r) for r in rows]
    assert got == [expected[k] for k in sorted(expected)]
    assert len(got) == 3  # the data leaves three primary keys


def test_with_no_data_batches_a_bounded_ttl_query_runs_without_the_sweep_and_ends(spark, tmp_path):
    """Spark's default (no-data micro-batches on) would never end an availableNow query with timers."""
    saved = spark.conf.get("spark.sql.streaming.noDataMicroBatches.enabled")
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "true")
    try:
        rows = materializers(spark, tmp_path, [("+I", (1, 1, "a")), ("+I", (1, 2, "b"))], [("MAP", True)],
                             ttl_ms=1000)
    finally:
        spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", saved)
    assert [KINDS[r[KIND]] for r in rows] == ["+I", "+U"]
