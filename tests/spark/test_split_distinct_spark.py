"""End to end on Spark: ``table.optimizer.distinct-agg.split.enabled`` runs the two-level plan, and its
changelog materializes to the one-level plan's result and the batch result (with and without mini-batch)."""

from __future__ import annotations

import pytest

from changeflow.common.types import DataTypes as T
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.testing import materialize

pytestmark = pytest.mark.spark

ROWS = [(i % 3, (i * 7) % 5 if i % 4 else None, i % 6) for i in range(30)]
SCHEMA = T.ROW([T.FIELD("k", T.INT()), T.FIELD("u", T.BIGINT()), T.FIELD("v", T.INT())])
QUERIES = [
    # COUNT(DISTINCT) with the aggregates the final level combines
    "SELECT k, COUNT(DISTINCT u) AS c, SUM(v) AS s, AVG(v) AS a, MAX(u) AS m, COUNT(*) AS n FROM t GROUP BY k",
    # over an updating input (the inner aggregation retracts): a global COUNT(DISTINCT)
    "SELECT COUNT(DISTINCT s) AS c, MIN(s) AS lo FROM (SELECT u, SUM(v) AS s FROM t GROUP BY u)",
    # DISTINCT over two columns: a copy of each row per distinct column (plan/distinct_expand.py)
    "SELECT k, COUNT(DISTINCT u) AS cu, COUNT(DISTINCT v) AS cv, SUM(v) AS s, COUNT(*) AS n FROM t GROUP BY k",
]
MODES = {"split": {"table.optimizer.distinct-agg.split.enabled": "true",
                   "table.optimizer.distinct-agg.split.bucket-num": "4"},
         "split, mini-batch": {"table.optimizer.distinct-agg.split.enabled": "true",
                               "table.exec.mini-batch.enabled": "true",
                               "table.exec.mini-batch.allow-latency": "1 s", "table.exec.mini-batch.size": "15"},
         "one level": {}}


def result(spark, sql, streaming, conf):
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings, spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    # Two micro-batches of 15 rows: state carries over from one to the next. A streaming test costs its
    # stateful operators times its micro-batches (docs/development.md, "Fewer micro-batches").
    t_env.get_config().set("changeflow.source.rows-per-batch", "15")
    for key, value in conf.items():
        t_env.get_config().set(key, value)
    t_env.create_temporary_view("t", t_env.from_elements(ROWS, SCHEMA))
    table = t_env.sql_query(sql)
    with table.execute().collect() as changes:
        changes = list(changes)
    return table.explain(), changes


@pytest.mark.parametrize("sql", QUERIES, ids=["group-by", "over-updates", "two-distinct-columns"])
def test_the_split_plan_materializes_to_the_unsplit_and_batch_results(spark, sql):
    _, batch = result(spark, sql, False, {})
    expected = materialize(batch)
    for mode, conf in MODES.items():
        plan, changes = result(spark, sql, True, conf)
        assert ("partialFinalType=[FINAL]" in plan) == mode.startswith("split"), mode
        assert materialize(changes) == expected, mode
        if mode.startswith("split"):
            assert "MiniBatchGroupAggregate" in plan if "mini-batch" in mode else "MiniBatch" not in plan
            # The final level consumes the partial level's updates and emits updates itself.
            assert any(str(c.get_row_kind()) in ("-U", "-D") for c in changes), mode
        if sql == QUERIES[0] and "mini-batch" not in mode:
            # Over insert-only input one level's COUNT(DISTINCT) never goes down; the split plan's
            # final level does, between a partial count's retraction and its new value: the job ran split.
            assert _count_goes_down(changes) == (mode == "split"), mode


def _count_goes_down(changes) -> bool:
    last: dict = {}
    down = False
    for change in changes:
        if str(change.get_row_kind()) in ("+I", "+U"):
            k, c = change[0], change[1]
            down = down or c < last.get(k, 0)
            last[k] = c
    return down
