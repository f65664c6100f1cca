"""Deduplication over a retracting input, end to end on Spark: SQL in, streaming changelog out.

A GROUP BY with ``PROCTIME()`` in its select list is an updating input with a
processing-time column; deduplicating it by another column (the sum) makes
retractions of one group move between partitions. Without mini-batch the
changelog order is deterministic (each record's changes in input order), so a
plain-Python model of the aggregation followed by the deduplication gives the
exact final table. With mini-batch the aggregation emits one change per group
and bundle, stamped with the group's last record of the bundle, so a live row
still arrives at its group's last record and the final table is the same.
"""

from __future__ import annotations

import pytest

from changeflow.common import DataTypes
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.testing import materialize_table

pytestmark = pytest.mark.spark

# Positive amounts: every record changes its group's sum (no unchanged update to reason about).
DATA = [("a", 1), ("b", 2), ("a", 1), ("c", 2), ("b", 3), ("d", 4), ("c", 3), ("a", 3), ("e", 5), ("d", 1),
        ("e", 1), ("b", 1), ("f", 6), ("c", 1), ("f", 1), ("g", 5), ("a", 2)]


def reference(keep_last: bool) -> list[tuple]:
    """SUM per name as Flink's changelog (+I, then -U/+U), then the rows per sum, newest (or oldest) shown."""
    sums: dict[str, int] = {}
    history: dict[int, list[tuple]] = {}
    for name, amount in DATA:
        if name in sums:
            old = (sums[name], name)
            history[old[0]].remove(old)  # the -U: the oldest equal row
        sums[name] = sums.get(name, 0) + amount
        history.setdefault(sums[name], []).append((sums[name], name))  # the +I / +U
    return sorted((rows[-1] if keep_last else rows[0]) for rows in history.values() if rows)


@pytest.mark.parametrize("keep_last, mini_batch", [(True, False), (False, True)],
                         ids=["keep-last-per-record", "keep-first-mini-batch"])
def test_sql_dedup_over_group_by_materializes_to_the_reference(spark, keep_last, mini_batch):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    t_env.get_config().set("changeflow.source.rows-per-batch", "9")  # two micro-batches: state carries over
    if mini_batch:
        t_env.get_config().set("table.exec.mini-batch.enabled", "true")
        t_env.get_config().set("table.exec.mini-batch.allow-latency", "1 s")
        t_env.get_config().set("table.exec.mini-batch.size", "9")
    t_env.create_temporary_view("payments", t_env.from_elements(
        DATA, DataTypes.ROW([DataTypes.FIELD("name", DataTypes.STRING()), DataTypes.FIELD("amount", DataTypes.INT())])))
    order = "DESC" if keep_last else "ASC"
    table = t_env.sql_query(f"""
        SELECT s, name FROM (
          SELECT *, ROW_NUMBER() OVER (PARTITION BY s ORDER BY pt {order}) AS rn
          FROM (SELECT name, SUM(amount) AS s, PROCTIME() AS pt FROM payments GROUP BY name))
        WHERE rn = 1""")
    assert "strategy=[RetractStrategy]" in table.explain()
    assert sorted(tuple(r) for r in materialize_table(table)) == reference(keep_last)
