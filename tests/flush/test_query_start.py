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
    from changeflow.runtime.spark.errors import FAULTHANDLER_CONFS
    from changeflow.runtime.spark.query_start import CHECKPOINT_SETTINGS

    retain = "spark.sql.streaming.minBatchesToRetain"

    class Recording(FakeWriter):
        def start(self):
            return dict(self.spark.conf.values)

    spark = FakeSpark({})
    seen = start_query(Recording(spark), spark)
    assert seen == {**CHECKPOINT_SETTINGS, FAULTHANDLER_CONFS[1]: "true"} and seen[retain] == "5"
    assert spark.conf.values == {}  # the session is left as it was
    spark = FakeSpark({retain: "50"})  # the user's own choice wins
    assert start_query(Recording(spark), spark)[retain] == "50" and spark.conf.values == {retain: "50"}
