"""The changelog formats on Spark: a two-level aggregation over a Debezium changelog, from a file and from Kafka.

Few Spark queries (each costs seconds): the filesystem case against Flink 2.3's golden in
streaming mode (the exact changelog) and in batch mode (refused, as Flink refuses it); a
record without ``op`` failing the job; the same Debezium records from a real Kafka topic
into an upsert file sink, whose table must equal Flink's result; and from a monitored
directory (decoded in Spark's workers), Flink's changes. The decoding itself is
tested without Spark in ``test_cdc_formats.py``.
"""

from __future__ import annotations

import json
import pathlib
import uuid

import pytest

from conformance.cdc_format_cases import CDC_CASES, DEBEZIUM, SCHEMA, TWO_LEVEL_SQL
from tests.conformance.test_sql_conformance import _run, materialize, normalize
from tests.connectors.test_job_resume import wait_until

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "cdc_formats"


def _golden(name: str) -> dict:
    path = GOLDENS / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.spark
def test_a_two_level_aggregation_over_a_debezium_file_gives_flinks_changelog(spark, tmp_path):
    name = "debezium_two_level_aggregate"
    golden, case = _golden(name), CDC_CASES[name]
    schema, ours = _run(case, spark, tmp_path, [None])
    assert schema.get_field_names() == golden["columns"]
    assert [str(t) for t in schema.get_field_data_types()] == golden["types"]
    assert ours == [(kind, normalize(values)) for kind, values in golden["changes"]]


@pytest.mark.spark
@pytest.mark.parametrize("name", ["debezium_two_level_aggregate_batch", "debezium_missing_op"])
def test_rejected_like_flink(name, spark, tmp_path):
    golden, case = _golden(name), CDC_CASES[name]
    stage = [None]
    with pytest.raises(Exception) as info:
        _run(case, spark, tmp_path, stage)
    stages = ("plan", "execute", "collect")
    assert stages.index(stage[0]) <= stages.index(golden["error"]["stage"]), info.value
    if name == "debezium_missing_op":  # the record, its file and line
        assert "Corrupt Debezium JSON message '{\"before\":null," in str(info.value)
        assert "data.json, line 1): the \"op\" field is missing" in str(info.value)
    else:
        assert golden["error"]["message"] in str(info.value)


@pytest.mark.spark
def test_debezium_records_from_kafka_retract_through_a_two_level_aggregation(stream_env, kafka_broker, tmp_path):
    topic = kafka_broker.create_topic(f"cdc-{uuid.uuid4().hex[:8]}")
    kafka_broker.produce(topic, [(None, line) for line in DEBEZIUM] + [(None, None)])  # and a tombstone
    stream_env.execute_sql(f"CREATE TABLE src ({SCHEMA}) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
                           f"'properties.bootstrap.servers' = '{kafka_broker.bootstrap}', "
                           f"'scan.startup.mode' = 'earliest-offset', 'value.format' = 'debezium-json')")
    out = tmp_path / "out"
    stream_env.execute_sql(f"CREATE TABLE out (total INT, names BIGINT, PRIMARY KEY (total) NOT ENFORCED) WITH "
                           f"('connector' = 'filesystem', 'path' = '{out}', 'format' = 'json', "
                           f"'sink.changelog-mode' = 'upsert')")
    expected = {tuple(values) for values in materialize(
        [(kind, tuple(values)) for kind, values in _golden("debezium_two_level_aggregate")["changes"]])}

    def table() -> set:
        rows: dict = {}
        for f in sorted(out.glob("part-*")) if out.exists() else []:
            for line in f.read_text().splitlines():
                record = json.loads(line)
                if record["op"] in ("+I", "+U"):
                    rows[record["total"]] = (record["total"], record["names"])
                else:
                    rows.pop(record["total"], None)
        return set(rows.values())

    job = stream_env.execute_sql(f"INSERT INTO out {TWO_LEVEL_SQL}").get_job_client()
    try:
        wait_until(lambda: table() == expected, job)
    finally:
        job.cancel()
    assert table() == expected == {(20, 1), (45, 1)}


@pytest.mark.spark
def test_a_monitored_directory_of_debezium_files_gives_flinks_changes(stream_env, tmp_path):
    (tmp_path / "1.json").write_text("".join(line + "\n" for line in DEBEZIUM), encoding="utf-8")
    stream_env.execute_sql(f"CREATE TABLE src ({SCHEMA}) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
                           f"'format' = 'debezium-json', 'source.monitor-interval' = '200 ms')")
    expected = [(kind, tuple(values)) for kind, values in _golden("debezium_changelog")["changes"]]
    rows = stream_env.from_path("src").execute().collect()
    try:
        got = [(str(r.get_row_kind()), tuple(r)) for r in (next(rows) for _ in expected)]
    finally:
        rows.close()
    assert got == expected
