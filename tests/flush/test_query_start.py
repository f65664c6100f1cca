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
