"""changeflow on a user's own SparkSession: queries get the settings they need per query, the session is left as it was.

A user's session here is the shared session's ``newSession()`` (its own SQL configuration, the same
SparkContext) with every SQL setting changeflow's own session makes reset to Spark's default, and a
time zone other than UTC, as a user's session in New York would have.
"""

from __future__ import annotations

import sys
import threading

import pytest
from pyspark import cloudpickle

from changeflow.common import Configuration, Types
from changeflow.common.row import Row
from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.runtime.spark.query_settings import CHANGEFLOW_SESSION_SETTINGS
from changeflow.table import EnvironmentSettings, TableEnvironment

cloudpickle.register_pickle_by_value(sys.modules[__name__])
pytestmark = pytest.mark.spark

TIME_ZONE = "spark.sql.session.timeZone"
ROWS = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 5), ("a", 6)]
TIMEOUT_S = 240  # a bounded query that runs past this has hung (the bug took forever; a run takes ~20 s)


@pytest.fixture
def user_session(spark):
    user = spark.newSession()
    for key in CHANGEFLOW_SESSION_SETTINGS:
        user.conf.unset(key)
    user.conf.set(TIME_ZONE, "America/New_York")
    before = conf_of(user)
    assert before.get("spark.sql.streaming.noDataMicroBatches.enabled") is None  # Spark's default: true
    yield user
    for query in user.streams.active:  # a hung query of a failed test
        query.stop()
    assert conf_of(user) == before, "changeflow changed the user's session configuration"


def conf_of(session) -> dict:
    keys = list(CHANGEFLOW_SESSION_SETTINGS) + [TIME_ZONE, "spark.sql.streaming.minBatchesToRetain",
                                               "spark.sql.streaming.stateStore.maintenanceInterval"]
    return {key: session.conf.get(key, None) for key in keys}


def within_timeout(session, run):
    """``run()``'s result; fails (and stops the session's queries) if it has not returned within the timeout."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = run()
        except BaseException as error:  # noqa: BLE001 - raised again in the test's thread below
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(TIMEOUT_S)
    if thread.is_alive():
        for query in session.streams.active:
            query.stop()
        thread.join(30)
        pytest.fail(f"the job did not end within {TIMEOUT_S} s on a user's session")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def table_env(session, streaming: bool = True, **options) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings, spark_session=session)
    t_env.get_config().set("changeflow.state.buckets", "2")
    t_env.get_config().set("changeflow.source.rows-per-batch", "2")
    for key, value in options.items():
        t_env.get_config().set(key, value)
    t_env.create_temporary_view("t", t_env.from_elements(ROWS, ["k", "v"]))
    return t_env


def materialized(rows) -> list:
    table: dict = {}
    for row in rows:
        kind = str(row.get_row_kind())
        key = row[0]
        if kind in ("+I", "+U"):
            table[key] = tuple(row)
        else:
            table.pop(key, None)
    return sorted(table.values())


def test_a_bounded_streaming_query_with_a_flush_interval_ends(user_session):
    t_env = table_env(user_session, **{"execution.max-flush-interval": "1 s"})
    rows = within_timeout(user_session, lambda: list(
        t_env.execute_sql("SELECT k, SUM(v) AS s FROM t GROUP BY k").collect()))
    assert materialized(rows) == [("a", 10), ("b", 7), ("c", 4)]


def test_a_group_aggregation_gives_flinks_changelog(user_session):
    t_env = table_env(user_session)
    rows = within_timeout(user_session, lambda: list(
        t_env.execute_sql("SELECT k, COUNT(*) AS n FROM t GROUP BY k").collect()))
    assert [(str(r.get_row_kind()), tuple(r)) for r in rows] == [
        ("+I", ("a", 1)), ("+I", ("b", 1)), ("-U", ("a", 1)), ("+U", ("a", 2)), ("+I", ("c", 1)),
        ("-U", ("b", 1)), ("+U", ("b", 2)), ("-U", ("a", 2)), ("+U", ("a", 3))]


def test_time_functions_run_in_utc_as_on_changeflows_session(user_session):
    # The user's session is in New York; changeflow's queries evaluate time functions in UTC, in batch and streaming.
    for streaming in (False, True):
        t_env = table_env(user_session, streaming=streaming)
        rows = within_timeout(user_session, lambda t_env=t_env: list(
            t_env.execute_sql("SELECT k, FROM_UNIXTIME(v * 3600) AS t FROM t WHERE v < 3").collect()))
        assert sorted(tuple(r) for r in rows) == [("a", "1970-01-01 01:00:00"), ("b", "1970-01-01 02:00:00")]


def test_a_batch_query(user_session):
    t_env = table_env(user_session, streaming=False)
    rows = within_timeout(user_session, lambda: list(
        t_env.execute_sql("SELECT k, SUM(v) AS s FROM t GROUP BY k").collect()))
    assert sorted(tuple(r) for r in rows) == [("a", 10), ("b", 7), ("c", 4)]
    assert all(isinstance(r, Row) for r in rows)


def test_a_datastream_job_with_a_flush_interval_ends(user_session):
    conf = Configuration()
    for key, value in {"changeflow.state.buckets": "2", "changeflow.source.rows-per-batch": "2",
                       "execution.max-flush-interval": "2400 h"}.items():
        conf.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=user_session)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    stream = env.from_collection(ROWS, type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    out = within_timeout(user_session, lambda: list(
        stream.key_by(lambda r: r[0]).reduce(lambda x, y: (x[0], x[1] + y[1])).execute_and_collect()))
    # An interval longer than the job: each key's latest sum once, at the end of input.
    assert sorted(out) == [("a", 10), ("b", 7), ("c", 4)]


def test_to_spark_names_the_state_store_setting_a_stateful_query_needs(user_session):
    from changeflow.runtime.spark.query_settings import (
        ROCKSDB,
        STATE_STORE_PROVIDER,
        SessionSettingError,
    )

    t_env = table_env(user_session)
    # A stateless query needs nothing of the session; a stateful one runs only on RocksDB, which changeflow
    # cannot set for a query the user starts.
    assert t_env.sql_query("SELECT k, v FROM t WHERE v > 2").to_spark().isStreaming
    with pytest.raises(SessionSettingError, match=STATE_STORE_PROVIDER.replace(".", r"\.")):
        t_env.sql_query("SELECT k, SUM(v) AS s FROM t GROUP BY k").to_spark()
    user_session.conf.set(STATE_STORE_PROVIDER, ROCKSDB)
    try:
        assert t_env.sql_query("SELECT k, SUM(v) AS s FROM t GROUP BY k").to_spark().isStreaming
    finally:
        user_session.conf.unset(STATE_STORE_PROVIDER)
