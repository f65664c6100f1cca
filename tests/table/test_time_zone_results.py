"""Results under ``table.local-time-zone`` other than UTC, on Spark: TIMESTAMP_LTZ values shown and
handed over in the session zone, and the Table API computing in it as SQL does (the SQL goldens:
conformance/sql_time_zone_cases.py)."""

from __future__ import annotations

import datetime
import json
import pathlib
import zoneinfo

import pytest

from changeflow.common.types import DataTypes as T
from changeflow.table.expressions import col, to_timestamp_ltz
from conformance.sql_time_zone_cases import E_ROWS

pytestmark = pytest.mark.spark

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "sql"
SCHEMA = T.ROW([T.FIELD("id", T.INT()), T.FIELD("ms", T.BIGINT()), T.FIELD("x", T.STRING())])


def test_a_timestamp_ltz_is_printed_and_collected_in_the_session_zone(stream_env, capsys):
    stream_env.get_config().set("table.local-time-zone", "America/Los_Angeles")
    rows = [(1, 1730620800000), (2, 1730624400000)]  # 08:00Z and 09:00Z: 01:00 PDT, then 01:00 PST
    table = stream_env.from_elements(rows, ["id", "ms"]).select(col("id"), to_timestamp_ltz(col("ms"), 3).alias("l"))
    table.execute().print()
    printed = capsys.readouterr().out
    assert printed.count("2024-11-03 01:00:00.000") == 2  # Flink prints the wall clock: twice the same
    values = [row[1] for row in table.execute().collect()]
    zone = zoneinfo.ZoneInfo("America/Los_Angeles")
    assert all(v.tzinfo == zone for v in values)  # aware: each still names its instant
    assert [v.astimezone(datetime.timezone.utc).hour for v in values] == [8, 9]
    assert [(v.hour, v.utcoffset()) for v in values] == [(1, datetime.timedelta(hours=-7)),
                                                         (1, datetime.timedelta(hours=-8))]


def test_under_utc_a_timestamp_ltz_is_collected_naive_as_before(batch_env):
    batch_env.get_config().set("table.local-time-zone", "UTC")
    (row,) = batch_env.from_elements([(0,)], ["ms"]).select(to_timestamp_ltz(col("ms"), 3)).execute().collect()
    assert row[0] == datetime.datetime(1970, 1, 1)


@pytest.mark.parametrize("case", ["time_zone_casts_shanghai", "time_zone_casts_los_angeles"])
def test_table_api_casts_in_the_zone_as_sql_does(spark, case):
    from changeflow.table import EnvironmentSettings, TableEnvironment

    golden = json.loads((GOLDENS / f"{case}.json").read_text())
    settings = EnvironmentSettings.in_batch_mode() if golden["mode"] == "batch" else \
        EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings, spark_session=spark)
    t_env.get_config().set("table.local-time-zone", golden["config"]["table.local-time-zone"])
    instant = to_timestamp_ltz(col("ms"), 3)
    table = t_env.from_elements(E_ROWS, SCHEMA).select(
        col("id"), instant.cast(T.STRING()).alias("shown"),
        col("x").cast(T.TIMESTAMP_LTZ(0)).cast(T.STRING()).alias("round_trip"),
        (instant > col("x").cast(T.TIMESTAMP(3))).alias("later"))
    ours = sorted((r[0], r[1], r[2], r[3]) for r in table.execute().collect() if r[0] is not None)
    columns = golden["columns"]
    theirs = sorted((v[0], v[columns.index("shown")], v[columns.index("round_trip")], v[columns.index("later")])
                    for _, v in golden["changes"] if v[0] is not None)
    assert ours == theirs


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_a_table_converted_to_a_datastream_is_computed_in_the_zone(spark, mode):
    """The converted Table plan is planned inside the DataStream job with the Table runtime's settings, the
    session zone among them; so is one converted inside a DataStream that a Table query reads again."""
    from changeflow.common import Configuration
    from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    from changeflow.table import StreamTableEnvironment

    conf = Configuration()
    conf.set_string("changeflow.source.rows-per-batch", "2")
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH if mode == "batch" else RuntimeExecutionMode.STREAMING)
    t_env = StreamTableEnvironment.create(env)
    t_env.get_config().set("table.local-time-zone", "Asia/Shanghai")
    table = t_env.from_elements([(0,), (1730620800000,)], ["ms"]).select(
        to_timestamp_ltz(col("ms"), 3).cast(T.STRING()).alias("s"))
    expected = ["1970-01-01 08:00:00.000", "2024-11-03 16:00:00.000"]  # UTC would give 00:00 and 08:00
    with t_env.to_data_stream(table).execute_and_collect() as records:
        assert sorted(r[0] for r in records) == expected
    with t_env.from_data_stream(t_env.to_data_stream(table)).execute().collect() as rows:
        assert sorted(r[0] for r in rows) == expected
