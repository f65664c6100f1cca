"""Kafka -> keyed aggregation -> Kafka: changeflow against Spark's own streaming aggregation, same topic, same run.

Usage: .venv/bin/python benchmarks/kafka_aggregation.py [--rows 200000] [--keys 10000] [--partitions 2]
       [--out benchmarks/results/kafka_aggregation.json]

A throwaway Kafka broker (tests/kafka_broker.py, jars from ./setup.sh) gets one input topic of
``rows`` JSON records ``{"k": "k<i % keys>", "v": i % 100}``, keyed by ``k``. Then, one after the
other on one SparkSession (local[2]):

- changeflow: ``INSERT INTO totals SELECT k, SUM(v), COUNT(*) FROM src GROUP BY k`` from a ``kafka``
  table into an ``upsert-kafka`` table (at least once, mini-batch on: a micro-batch's changes are
  folded per key); timed from ``execute_sql`` until the output topic, materialized by key, equals
  the expected totals (polling the topic every second);
- Spark: ``readStream.format("kafka")`` -> ``from_json`` -> ``groupBy(k).agg(sum, count)`` ->
  ``writeStream.format("kafka")`` in ``update`` mode, ``availableNow``; timed from ``start()`` until
  the query ends, its output then checked the same way.

Both read at most ``changeflow.source.rows-per-batch`` / ``maxOffsetsPerTrigger`` records per
micro-batch (``--batch``, default: everything in one micro-batch). Each output topic is read back
and materialized (the latest value per key); both must equal the batch result. The figures are
wall times on a shared machine, after one batch read of the topic warms Spark's
Kafka source: compare them within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from changeflow.runtime.spark import session  # noqa: E402
from changeflow.table import EnvironmentSettings, TableEnvironment  # noqa: E402
from tests.kafka_broker import KafkaBroker, upsert_table  # noqa: E402


def materialized(records) -> dict:
    out = {}
    for value in upsert_table(records).values():
        row = json.loads(value)
        out[row["k"]] = (int(row["total"]), int(row["n"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--batch", type=int, default=10_000_000)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    broker = KafkaBroker().start()
    try:
        source = broker.create_topic("bench-in", args.partitions)
        for name in ("bench-changeflow", "bench-spark"):
            broker.create_topic(name, args.partitions)
        expected: dict = {}
        records = []
        for i in range(args.rows):
            k, v = f"k{i % args.keys}", i % 100
            total, n = expected.get(k, (0, 0))
            expected[k] = (total + v, n + 1)
            records.append((k.encode(), json.dumps({"k": k, "v": v})))
        started = time.monotonic()
        broker.produce(source, records)
        print(f"produced {args.rows} records in {time.monotonic() - started:.1f} s", flush=True)

        spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
        spark.range(10).count()  # the JVM and Python workers warm
        # Spark's Kafka source warm too (its first read costs ~15 s more here): neither side pays for it.
        (spark.read.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap).option("subscribe", source)
         .load().count())

        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
        config = t_env.get_config()
        config.set("table.exec.mini-batch.enabled", "true")
        config.set("table.exec.mini-batch.allow-latency", "1 s")
        config.set("table.exec.mini-batch.size", str(args.batch))
        config.set("changeflow.source.rows-per-batch", str(args.batch))
        config.set("changeflow.checkpoint-dir", tempfile.mkdtemp(prefix="kafka-bench-"))
        t_env.execute_sql(f"CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'kafka', 'topic' = '{source}', "
                          f"'properties.bootstrap.servers' = '{broker.bootstrap}', "
                          f"'scan.startup.mode' = 'earliest-offset', 'value.format' = 'json')")
        t_env.execute_sql(f"CREATE TABLE totals (k STRING, total INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) "
                          f"WITH ('connector' = 'upsert-kafka', 'topic' = 'bench-changeflow', "
                          f"'properties.bootstrap.servers' = '{broker.bootstrap}', 'key.format' = 'json', "
                          f"'value.format' = 'json')")
        started = time.monotonic()
        job = t_env.execute_sql("INSERT INTO totals SELECT k, SUM(v) AS total, COUNT(*) AS n FROM src "
                                "GROUP BY k").get_job_client()
        try:
            while materialized(broker.consume("bench-changeflow")) != expected:
                if job.get_job_status() == "FAILED":
                    job.wait()
                time.sleep(1)
            changeflow_s = time.monotonic() - started
        finally:
            job.cancel()
        changeflow_records = len(broker.consume("bench-changeflow"))
        print(f"changeflow: {changeflow_s:.1f} s, {changeflow_records} output records", flush=True)

        from pyspark.sql import functions as F

        checkpoint = tempfile.mkdtemp(prefix="kafka-bench-spark-")
        stream = (spark.readStream.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap)
                  .option("subscribe", source).option("startingOffsets", "earliest")
                  .option("maxOffsetsPerTrigger", args.batch).load())
        rows = stream.select(F.from_json(F.col("value").cast("string"), "k STRING, v INT").alias("r")).select("r.*")
        totals = rows.groupBy("k").agg(F.sum("v").cast("int").alias("total"), F.count("*").alias("n"))
        out = totals.select(F.to_json(F.struct(F.col("k"))).alias("key"),
                            F.to_json(F.struct("k", "total", "n")).alias("value"))
        started = time.monotonic()
        query = (out.writeStream.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap)
                 .option("topic", "bench-spark").option("checkpointLocation", checkpoint).outputMode("update")
                 .trigger(availableNow=True).start())
        query.awaitTermination()
        spark_s = time.monotonic() - started
        spark_records = len(broker.consume("bench-spark"))
        assert materialized(broker.consume("bench-spark")) == expected, "Spark's output differs from the batch result"
        print(f"Spark: {spark_s:.1f} s, {spark_records} output records", flush=True)
        result = {"rows": args.rows, "keys": args.keys, "partitions": args.partitions, "batch": args.batch,
                  "changeflow_s": round(changeflow_s, 2), "spark_s": round(spark_s, 2),
                  "changeflow_output_records": changeflow_records, "spark_output_records": spark_records}
        print(json.dumps(result))
        if args.out:
            with open(args.out, "w") as f:
                json.dump(result, f, indent=2)
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
