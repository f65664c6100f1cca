"""examples/postgres_cdc_pipeline.py against the test PostgreSQL: two CDC tables, a join, a two-level
aggregation and an upsert sink reach the result PostgreSQL computes over the changed tables."""

from __future__ import annotations

import importlib.util
import os

from tests.postgres_server import PASSWORD, USER

_EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "postgres_cdc_pipeline.py")


def test_the_postgres_cdc_example_reaches_the_query_result(postgres, spark):
    spec = importlib.util.spec_from_file_location("postgres_cdc_pipeline", _EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    result = example.main("127.0.0.1", postgres.port, USER, PASSWORD, "postgres", spark_session=spark)
    # ann moved south: north keeps cy (50), south has bob (15 + 25) and ann (30 + 5), east di (12)
    assert result == [("east", 1, 12), ("north", 1, 50), ("south", 2, 75)]
    assert postgres.execute("SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'shop_%'") == [(0,)]
