"""``upsert-kafka`` as a source against a real Apache Kafka broker (tests/kafka_broker.py).

A keyed topic of upserts (repeated equal values, tombstones, a tombstone of a key never
written) is read through the planner's ChangelogNormalize while more records arrive: the
table mirrored into another upsert-kafka topic materializes to the source topic's final
state per key, and an aggregation over it (which needs the -U and full -D rows the node
adds) to the aggregation of that final state.
"""

from __future__ import annotations

import json
import time
import uuid

from tests.kafka_broker import upsert_table



def _records(rows: list[tuple[str, int | None, str | None]]) -> list[tuple[bytes, str | None]]:
    """``(k, v, g)`` as keyed JSON records; ``v`` None is a tombstone of ``k``."""
    return [(json.dumps({"k": k}).encode(), None if v is None else json.dumps({"k": k, "v": v, "g": g}))
            for k, v, g in rows]


def _final(records) -> dict:
    """The topic's final state: the latest value per key, tombstones deleting."""
    return {json.loads(k)["k"]: json.loads(v) for k, v in upsert_table(records).items()}


def _totals(final: dict) -> dict:
    out: dict = {}
    for row in final.values():
        total, n = out.get(row["g"], (0, 0))
        out[row["g"]] = (total + row["v"], n + 1)
    return {g: {"g": g, "total": t, "n": n} for g, (t, n) in out.items()}


def _sink(name: str, topic: str, columns: str, key: str, bootstrap: str) -> str:
    return (f"CREATE TABLE {name} ({columns}, PRIMARY KEY ({key}) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', "
            f"'topic' = '{topic}', 'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'json', "
            f"'value.format' = 'json')")


def test_an_upsert_kafka_table_materializes_to_the_topics_final_state(stream_env, kafka_broker):
    source = kafka_broker.create_topic(f"ups-{uuid.uuid4().hex[:8]}", 2)
    mirror = kafka_broker.create_topic(f"mirror-{uuid.uuid4().hex[:8]}", 2)
    totals = kafka_broker.create_topic(f"totals-{uuid.uuid4().hex[:8]}", 2)
    stream_env.get_config().set("changeflow.source.rows-per-batch", "4")  # several micro-batches
    bootstrap = kafka_broker.bootstrap
    stream_env.execute_sql(f"CREATE TABLE src (k STRING, v INT, g STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ("
                           f"'connector' = 'upsert-kafka', 'topic' = '{source}', "
                           f"'properties.bootstrap.servers' = '{bootstrap}', 'key.format' = 'json', "
                           f"'value.format' = 'json')")
    stream_env.execute_sql(_sink("mirror", mirror, "k STRING, v INT, g STRING", "k", bootstrap))
    stream_env.execute_sql(_sink("totals", totals, "g STRING, total INT, n BIGINT", "g", bootstrap))
    plan = stream_env.explain_sql("SELECT g, SUM(v) AS total FROM src GROUP BY g")
    assert "ChangelogNormalize(key=[k], changelogMode=[I,UB,UA,D])" in plan
    assert "+- Exchange(distribution=[hash[k]], changelogMode=[I,UA,D])" in plan

    first = [("a", 1, "x"), ("b", 2, "x"), ("a", 1, "x"), ("c", 3, "y"), ("a", 4, "y"), ("zz", None, None),
             ("b", None, None), ("d", 5, "x"), ("c", 3, "y"), ("b", 6, "y")]
    kafka_broker.produce(source, _records(first))
    # Both INSERTs as one job (one streaming query: fewer Python workers on a busy machine).
    statements = stream_env.create_statement_set()
    statements.add_insert_sql("INSERT INTO mirror SELECT k, v, g FROM src")
    statements.add_insert_sql("INSERT INTO totals SELECT g, SUM(v) AS total, COUNT(*) AS n FROM src GROUP BY g")
    jobs = [statements.execute().get_job_client()]
    try:
        expected = _final(_records(first))
        _wait(lambda: (_final(kafka_broker.consume(mirror)), _final_by(kafka_broker.consume(totals), "g")),
              (expected, _totals(expected)), jobs)
        # More upserts while the jobs run: the state of the earlier micro-batches is used.
        second = [("a", 4, "y"), ("d", None, None), ("e", 7, "x"), ("c", 8, "x"), ("e", None, None),
                  ("x", None, None), ("a", 9, "y")]
        kafka_broker.produce(source, _records(second))
        expected = _final(_records(first + second))
        _wait(lambda: (_final(kafka_broker.consume(mirror)), _final_by(kafka_broker.consume(totals), "g")),
              (expected, _totals(expected)), jobs)
    finally:
        for job in jobs:
            job.cancel()
    assert expected == {"a": {"k": "a", "v": 9, "g": "y"}, "b": {"k": "b", "v": 6, "g": "y"},
                        "c": {"k": "c", "v": 8, "g": "x"}}


def _wait(observe, expected, jobs, limit_s: float = 600.0) -> None:
    """Until ``observe()`` equals ``expected`` (a guard against a hung job on a busy machine, not a timing
    assertion); a failed job raises its error, a timeout shows what was observed."""
    deadline = time.monotonic() + limit_s
    while (seen := observe()) != expected:
        for job in jobs:
            if job.get_job_status() == "FAILED":
                job.wait()
        assert time.monotonic() < deadline, f"observed {seen}, expected {expected}"
        time.sleep(1)


def _final_by(records, key: str) -> dict:
    return {json.loads(k)[key]: json.loads(v) for k, v in upsert_table(records).items()}
