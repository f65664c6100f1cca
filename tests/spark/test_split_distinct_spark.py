"""End to end on Spark: ``table.optimizer.distinct-agg.split.enabled`` runs the two-level plan, and its
changelog materializes to the one-level plan's result and the batch result (with and without mini-batch).

The three queries are independent aggregations over the same rows: each mode runs them as the tagged
branches of one streaming query (one query start instead of three; the branches' rows are told apart by
the tag), and each query's own plan is checked without Spark.
"""

from __future__ import annotations

import pytest

from changeflow.common import Row
from changeflow.common.types import DataTypes as T
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.testing import materialize

ROWS = [(i % 3, (i * 7) % 5 if i % 4 else None, i % 6) for i in range(30)]
SCHEMA = T.ROW([T.FIELD("k", T.INT()), T.FIELD("u", T.BIGINT()), T.FIELD("v", T.INT())])
QUERIES = {
    # COUNT(DISTINCT) with the aggregates the final level combines
    "group-by": "SELECT k, COUNT(DISTINCT u) AS c, SUM(v) AS s, AVG(v) AS a, MAX(u) AS m, COUNT(*) AS n "
                "FROM t GROUP BY k",
    # over an updating input (the inner aggregation retracts): a global COUNT(DISTINCT)
    "over-updates": "SELECT COUNT(DISTINCT s) AS c, MIN(s) AS lo FROM (SELECT u, SUM(v) AS s FROM t GROUP BY u)",
    # DISTINCT over two columns: a copy of each row per distinct column (plan/distinct_expand.py)
    "two-distinct-columns": "SELECT k, COUNT(DISTINCT u) AS cu, COUNT(DISTINCT v) AS cv, SUM(v) AS s, "
                            "COUNT(*) AS n FROM t GROUP BY k",
}
# Each query's columns in the columns of the tagged union (q INT, k INT, c BIGINT, c2 BIGINT, s INT, a INT,
# m BIGINT, n BIGINT): NULL where a query has no such column.
_NULL = {"k": "CAST(NULL AS INT)", "c2": "CAST(NULL AS BIGINT)", "a": "CAST(NULL AS INT)",
         "m": "CAST(NULL AS BIGINT)", "n": "CAST(NULL AS BIGINT)"}
UNION_COLUMNS = {"group-by": ["k", "c", _NULL["c2"], "s", "a", "m", "n"],
                 "over-updates": [_NULL["k"], "c", _NULL["c2"], "lo", _NULL["a"], _NULL["m"], _NULL["n"]],
                 "two-distinct-columns": ["k", "cu", "cv", "s", _NULL["a"], _NULL["m"], "n"]}
# Where each query's own columns are in a row of the union (after the tag).
POSITIONS = {"group-by": [0, 1, 3, 4, 5, 6], "over-updates": [1, 3], "two-distinct-columns": [0, 1, 2, 3, 6]}
MODES = {"split": {"table.optimizer.distinct-agg.split.enabled": "true",
                   "table.optimizer.distinct-agg.split.bucket-num": "4"},
         "split, mini-batch": {"table.optimizer.distinct-agg.split.enabled": "true",
                               "table.exec.mini-batch.enabled": "true",
                               "table.exec.mini-batch.allow-latency": "1 s", "table.exec.mini-batch.size": "7"},
         "one level": {}}


def environment(spark, streaming, conf):
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings, spark_session=spark)  # None: planning only, no Spark
    t_env.get_config().set("changeflow.state.buckets", "2")
    t_env.get_config().set("changeflow.source.rows-per-batch", "7")
    for key, value in conf.items():
        t_env.get_config().set(key, value)
    t_env.create_temporary_view("t", t_env.from_elements(ROWS, SCHEMA))
    return t_env


def collect(table) -> list:
    with table.execute().collect() as changes:
        return list(changes)


def tagged_union() -> str:
    return " UNION ALL ".join(f"SELECT {tag} AS q, {', '.join(UNION_COLUMNS[name])} FROM ({QUERIES[name]})"
                              for tag, name in enumerate(QUERIES))


def untagged(changes, name) -> list:
    """The union's changes of query ``name``, as that query's own rows (the kinds kept)."""
    tag = list(QUERIES).index(name)
    own = []
    for change in changes:
        if change[0] == tag:
            own.append(Row.of(change.get_row_kind(), [change[1 + i] for i in POSITIONS[name]]))
    return own


@pytest.mark.parametrize("name", QUERIES)
def test_each_query_plans_split_only_when_enabled(name):
    for mode, conf in MODES.items():
        plan = environment(None, True, conf).sql_query(QUERIES[name]).explain()
        assert ("partialFinalType=[FINAL]" in plan) == mode.startswith("split"), mode
        if mode.startswith("split"):
            assert "MiniBatchGroupAggregate" in plan if "mini-batch" in mode else "MiniBatch" not in plan


@pytest.mark.spark
def test_the_split_plan_materializes_to_the_unsplit_and_batch_results(spark):
    batch = environment(spark, False, {})
    expected = {name: materialize(collect(batch.sql_query(sql))) for name, sql in QUERIES.items()}
    for mode, conf in MODES.items():
        table = environment(spark, True, conf).sql_query(tagged_union())
        assert table.explain().count("partialFinalType=[FINAL]") == (len(QUERIES) if mode.startswith("split")
                                                                      else 0), mode
        changes = collect(table)
        for name in QUERIES:
            own = untagged(changes, name)
            assert materialize(own) == expected[name], (mode, name)
            if mode.startswith("split"):
                # The final level consumes the partial level's updates and emits updates itself.
                assert any(str(c.get_row_kind()) in ("-U", "-D") for c in own), (mode, name)
            if name == "group-by" and "mini-batch" not in mode:
                # Over insert-only input one level's COUNT(DISTINCT) never goes down; the split plan's
                # final level does, between a partial count's retraction and its new value: the job ran split.
                assert _count_goes_down(own) == (mode == "split"), mode


def _count_goes_down(changes) -> bool:
    last: dict = {}
    down = False
    for change in changes:
        if str(change.get_row_kind()) in ("+I", "+U"):
            k, c = change[0], change[1]
            down = down or c < last.get(k, 0)
            last[k] = c
    return down
