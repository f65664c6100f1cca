"""Starting a query with no-data micro-batches for it alone (runtime/spark/query_start.py), without Spark."""

from __future__ import annotations

from changeflow.runtime.spark.query_start import NO_DATA_BATCHES, start_query


class FakeConf:
    def __init__(self, values: dict) -> None:
        self.values = dict(values)

    def get(self, key, default=None):
        return self.values.get(key, default)

    def set(self, key, value) -> None:
        self.values[key] = value

    def unset(self, key) -> None:
        self.values.pop(key, None)


class FakeSpark:
    def __init__(self, values: dict) -> None:
        self.conf = FakeConf(values)


class FakeWriter:
    """Records the setting a query would copy from the session when it starts."""

    def __init__(self, spark: FakeSpark | None = None) -> None:
        self.spark = spark

    def start(self):
        return "started", self.spark.conf.get(NO_DATA_BATCHES) if self.spark else None


def test_no_data_batches_are_on_while_the_query_starts_and_the_session_is_left_as_it_was():
    spark = FakeSpark({NO_DATA_BATCHES: "false"})
    assert start_query(FakeWriter(spark), spark, no_data_batches=True) == ("started", "true")
    assert spark.conf.values == {NO_DATA_BATCHES: "false"}
    unset = FakeSpark({})
    assert start_query(FakeWriter(unset), unset, no_data_batches=True) == ("started", "true")
    assert unset.conf.values == {}


def test_other_queries_start_with_the_session_as_it_is():
    spark = FakeSpark({NO_DATA_BATCHES: "false"})
    assert start_query(FakeWriter(spark)) == ("started", "false")


class FakeQuery:
    """A query whose awaitTermination raises ``failure`` (or returns when None)."""

    def __init__(self, failure: Exception | None) -> None:
        self.failure = failure

    def awaitTermination(self):
        if self.failure is not None:
            raise self.failure


TRANSIENT = RuntimeError("org.apache.spark.SparkException: Python worker failed to connect back.\n\tat ...")


def run_with(failures: list, retries: int = 2):
    """await_query over queries failing as ``failures`` says, in turn; the starts it made and the pauses."""
    from changeflow.runtime.spark.query_start import await_query

    queries = iter(FakeQuery(f) for f in failures)
    starts, pauses = [], []

    def restart():
        starts.append(1)
        return next(queries)

    await_query(next(queries), restart, retries=retries, pause_s=1.0, sleep=pauses.append)
    return len(starts), pauses


def test_a_transient_failure_restarts_the_query_from_its_checkpoint():
    assert run_with([TRANSIENT, TRANSIENT, None]) == (2, [1.0, 2.0])
    assert run_with([None]) == (0, [])


def test_retries_are_bounded_and_other_failures_raise_at_once():
    import pytest

    with pytest.raises(RuntimeError, match="failed to connect back"):
        run_with([TRANSIENT, TRANSIENT, TRANSIENT, None], retries=2)
    with pytest.raises(ValueError, match="bad key"):
        run_with([ValueError("bad key"), None])


def test_a_job_cancelled_before_the_restart_stops_retrying():
    from changeflow.runtime.spark.query_start import await_query

    restarts = []
    await_query(FakeQuery(TRANSIENT), lambda: restarts.append(1), sleep=lambda s: None)  # restart() gives None
    assert restarts == [1]


def test_checkpoint_settings_apply_to_the_query_unless_the_session_sets_them():
    from changeflow.runtime.spark.query_settings import CHANGEFLOW_SESSION_SETTINGS

    retain = "spark.sql.streaming.minBatchesToRetain"

    class Recording(FakeWriter):
        def start(self):
            return dict(self.spark.conf.values)

    spark = FakeSpark({})
    seen = start_query(Recording(spark), spark)
    # A query on a session that sets nothing (a user's) starts with the settings of changeflow's own session
    # (before: only the checkpoint and fault-handler settings, so a bounded query with timers never ended).
    assert seen == CHANGEFLOW_SESSION_SETTINGS and seen[retain] == "5" and seen[NO_DATA_BATCHES] == "false"
    assert spark.conf.values == {}  # the session is left as it was
    spark = FakeSpark({retain: "50"})  # the user's own choice wins
    assert start_query(Recording(spark), spark)[retain] == "50" and spark.conf.values == {retain: "50"}


def test_settings_changeflow_needs_win_over_the_sessions_for_the_query_only():
    from changeflow.runtime.spark.query_settings import (
        ROCKSDB,
        STATE_STORE_PROVIDER,
        TIME_ZONE,
    )

    user = {TIME_ZONE: "America/New_York", STATE_STORE_PROVIDER: "x.HDFSBackedStateStoreProvider",
            NO_DATA_BATCHES: "true", "spark.sql.execution.arrow.maxRecordsPerBatch": "5000"}
    spark = FakeSpark(user)

    class Recording(FakeWriter):
        def start(self):
            return dict(self.spark.conf.values)

    seen = start_query(Recording(spark), spark)
    assert (seen[TIME_ZONE], seen[STATE_STORE_PROVIDER], seen[NO_DATA_BATCHES]) == ("UTC", ROCKSDB, "false")
    assert seen["spark.sql.execution.arrow.maxRecordsPerBatch"] == "5000"  # performance: the session's own wins
    assert spark.conf.values == user


def test_job_settings_are_shared_by_jobs_at_once_and_restored_by_the_last():
    from changeflow.runtime.spark.query_settings import TIME_ZONE, for_job

    spark = FakeSpark({TIME_ZONE: "Asia/Tokyo"})
    with for_job(spark, starts_queries=True):
        assert spark.conf.values[TIME_ZONE] == "UTC" and spark.conf.values[NO_DATA_BATCHES] == "false"
        with for_job(spark):
            # A query started meanwhile gets its own no-data setting and leaves the job's in place.
            assert start_query(FakeWriter(spark), spark, no_data_batches=True) == ("started", "true")
            assert spark.conf.values[NO_DATA_BATCHES] == "false"
        assert spark.conf.values[TIME_ZONE] == "UTC"  # the first job still runs
    assert spark.conf.values == {TIME_ZONE: "Asia/Tokyo"}


def test_a_setting_the_session_refuses_is_named():
    import pytest

    from changeflow.runtime.spark.query_settings import SessionSettingError, for_job

    class Static(FakeConf):
        def set(self, key, value):
            if key == "spark.sql.session.timeZone":
                raise RuntimeError("[CANNOT_MODIFY_CONFIG] Cannot modify the value of the Spark config")
            super().set(key, value)

    spark = FakeSpark({})
    spark.conf = Static({})
    with pytest.raises(SessionSettingError, match="spark.sql.session.timeZone = UTC"), for_job(spark):
        pass
    assert spark.conf.values == {}  # what was set before the refusal is undone
