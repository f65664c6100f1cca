"""The changelog formats as sink formats on Spark, against Flink 2.3's records.

Few Spark queries (each costs seconds, more under load): a Debezium changelog passed
through to a file sink (Flink's records byte for byte; read back with the same format and
materialized, the query's result), the refused json sink over a two-level aggregation, and
a ``kafka`` sink writing a real topic. Every case's records are checked without Spark in
``test_changelog_sinks.py``.
"""

from __future__ import annotations

import json
import pathlib
import uuid

import pytest

from conformance.cdc_format_cases import SCHEMA
from conformance.sink_format_cases import SINK_CASES, create_source, sink_ddl
from tests.conformance.test_sql_conformance import materialize

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "conformance" / "goldens" / "sink_formats"


def _golden(name: str) -> dict:
    return json.loads((GOLDENS / f"{name}.json").read_text(encoding="utf-8"))


def _records(path: pathlib.Path) -> list[str]:
    return [line for f in sorted(path.glob("part-*")) for line in f.read_text(encoding="utf-8").splitlines()]


def _result(changelog: str) -> set:
    """A query's result: Flink's changelog of it (a cdc_formats golden), materialized."""
    golden = json.loads((ROOT / "conformance" / "goldens" / "cdc_formats" / f"{changelog}.json")
                        .read_text(encoding="utf-8"))
    return {tuple(v) for v in materialize([(kind, tuple(values)) for kind, values in golden["changes"]])}


@pytest.mark.spark
def test_a_debezium_file_sink_writes_flinks_records_which_read_back_as_the_querys_result(stream_env, tmp_path):
    # The Debezium changelog passed through (no stateful operator: the lightest Spark query with -U/+U/-D)
    c = SINK_CASES["debezium_sink_changelog"]
    create_source(stream_env, str(tmp_path))
    out = tmp_path / "out"
    stream_env.execute_sql(sink_ddl(c, str(out)))
    stream_env.execute_sql(f"INSERT INTO snk {c.query}").wait()
    records = _records(out)
    assert records == _golden(c.name)["records"]
    stream_env.execute_sql(f"CREATE TABLE back ({c.columns}) WITH ('connector' = 'filesystem', "
                           f"'path' = '{out}', 'format' = '{c.format}')")
    rows = stream_env.from_path("back").execute().collect()
    try:
        changes = [(str(r.get_row_kind()), tuple(r)) for r in (next(rows) for _ in records)]
    finally:
        rows.close()
    assert {kind for kind, _ in changes} == {"+I", "-D"}  # an update was written as a delete and an insert
    assert {tuple(v) for v in materialize(changes)} == _result("debezium_changelog")
    assert len(_result("debezium_changelog")) == 3


@pytest.mark.spark
def test_a_plain_json_sink_refuses_an_updating_query_like_flink(stream_env, tmp_path):
    c = SINK_CASES["json_sink_updating"]
    create_source(stream_env, str(tmp_path))
    stream_env.execute_sql(sink_ddl(c, str(tmp_path / "out")))
    with pytest.raises(Exception) as info:
        stream_env.execute_sql(f"INSERT INTO snk {c.query}").wait()
    # changeflow's node description names the aggregate COUNT(*), Flink's COUNT_RETRACT(*): the rest is Flink's
    assert _golden(c.name)["error"].split(", select=")[0] in str(info.value)


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["maxwell-json"])
def test_kafka_sink_writes_flinks_records_to_a_topic(fmt, stream_env, kafka_broker, tmp_path):
    topic = kafka_broker.create_topic(f"sinkfmt-{uuid.uuid4().hex[:8]}")
    create_source(stream_env, str(tmp_path))
    stream_env.execute_sql(f"CREATE TABLE snk ({SCHEMA}) WITH ('connector' = 'kafka', "
                           f"'topic' = '{topic}', 'properties.bootstrap.servers' = '{kafka_broker.bootstrap}', "
                           f"'value.format' = '{fmt}')")
    stream_env.execute_sql("INSERT INTO snk SELECT * FROM src").wait()
    values = [value.decode() for _, value in kafka_broker.consume(topic)]
    assert values == _golden(f"{fmt.split('-')[0]}_sink_changelog")["records"]


@pytest.mark.spark
def test_a_two_level_aggregation_writes_flinks_debezium_records(stream_env, tmp_path):
    c = SINK_CASES["debezium_sink_two_level"]
    create_source(stream_env, str(tmp_path))
    stream_env.execute_sql(sink_ddl(c, str(tmp_path / "out")))
    stream_env.execute_sql(f"INSERT INTO snk {c.query}").wait()
    assert _records(tmp_path / "out") == _golden(c.name)["records"]
