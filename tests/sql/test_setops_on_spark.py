"""Set operations, VALUES, ORDER BY and batch INSERT from an aggregation, end to end on Spark.

The set operations are checked against a reference computed here with Python
multisets (what the SQL standard and Flink define), and by the invariant of
the design: a streaming changelog, applied to an empty table, gives the batch
result, over random inputs whose rows come and go (the inputs are sums per key
that go up and down, so every set operation sees retractions).
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from changeflow.common.types import DataTypes as T

pytestmark = pytest.mark.spark

SCHEMA = T.ROW([T.FIELD("k", T.BIGINT()), T.FIELD("s", T.STRING())])
A = [(1, "x"), (1, "x"), (1, "x"), (2, "y"), (3, None), (3, None), (4, "z")]
B = [(1, "x"), (1, "x"), (3, None), (4, "z"), (4, "z"), (6, "v")]


def materialize(rows) -> Counter:
    table: Counter = Counter()
    for kind, values in rows:
        table[values] += -1 if kind in ("-U", "-D") else 1
        assert table[values] >= 0, f"{kind} of a row not in the table: {values}"
    return +table


def collect(table) -> list:
    with table.execute().collect() as rows:
        return [(str(r.get_row_kind()), tuple(r)) for r in rows]


def reference(method: str, a: list, b: list) -> Counter:
    ca, cb = Counter(a), Counter(b)
    return {
        "union": Counter(set(ca) | set(cb)), "union_all": ca + cb,
        "intersect": Counter(set(ca) & set(cb)), "intersect_all": ca & cb,
        "minus": Counter(set(ca) - set(cb)), "minus_all": ca - cb,
    }[method]


@pytest.mark.parametrize("method", ["union", "union_all", "intersect", "intersect_all", "minus", "minus_all"])
def test_table_api_set_operations_in_batch(batch_env, method):
    left, right = batch_env.from_elements(A, SCHEMA), batch_env.from_elements(B, SCHEMA)
    rows = collect(getattr(left, method)(right))
    assert {kind for kind, _ in rows} == {"+I"}
    assert materialize(rows) == reference(method, A, B)


def test_set_operations_in_streaming_mode_carry_retractions(stream_env):
    """All five SQL set operations in one streaming query, tagged, over an updating input."""
    stream_env.create_temporary_view("a", stream_env.from_elements(A, SCHEMA))
    stream_env.create_temporary_view("b", stream_env.from_elements(B, SCHEMA))
    sql = " UNION ALL ".join(
        f"SELECT '{op}' AS op, k, s FROM (SELECT k, s FROM a {op} SELECT k, s FROM b)"
        for op in ("UNION", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"))
    rows = collect(stream_env.sql_query(sql))
    assert {kind for kind, _ in rows} & {"-U", "-D"}  # the counts change as rows arrive
    got = materialize(rows)
    for op, method in (("UNION", "union"), ("INTERSECT", "intersect"), ("INTERSECT ALL", "intersect_all"),
                       ("EXCEPT", "minus"), ("EXCEPT ALL", "minus_all")):
        assert Counter({r[1:]: n for r, n in got.items() if r[0] == op}) == reference(method, A, B), op


def test_values_query_in_from_and_insert(batch_env, tmp_path):
    rows = collect(batch_env.sql_query("SELECT a * 2 AS twice, b FROM (VALUES (1, 'x'), (2, 'yy'), "
                                       "(3, CAST(NULL AS STRING))) AS t(a, b) WHERE a > 1"))
    assert sorted(r for _, r in rows) == [(4, "yy"), (6, None)]
    out = tmp_path / "out"
    batch_env.execute_sql(f"CREATE TABLE sink_v (a INT, b STRING) WITH ('connector' = 'filesystem', "
                          f"'path' = '{out}', 'format' = 'csv')")
    batch_env.execute_sql("INSERT INTO sink_v VALUES (1, 'p'), (2, 'q')").wait()
    lines = sorted(line for f in os.listdir(out) if not f.startswith((".", "_"))
                   for line in (out / f).read_text().splitlines())
    assert lines == ["1,p", "2,q"]


def test_batch_insert_from_group_by_into_an_append_only_sink(batch_env, tmp_path):
    """Flink's batch output of a GROUP BY is insert-only: the filesystem sink takes it (issue 17 bug)."""
    out = tmp_path / "totals"
    batch_env.create_temporary_view("kv", batch_env.from_elements(
        [(1, 5), (2, 7), (1, 3)], T.ROW([T.FIELD("k", T.BIGINT()), T.FIELD("v", T.BIGINT())])))
    batch_env.execute_sql(f"CREATE TABLE totals (k BIGINT, total BIGINT) WITH ('connector' = 'filesystem', "
                          f"'path' = '{out}', 'format' = 'csv')")
    batch_env.execute_sql("INSERT INTO totals SELECT k, SUM(v) FROM kv GROUP BY k").wait()
    lines = sorted(line for f in os.listdir(out) if not f.startswith((".", "_"))
                   for line in (out / f).read_text().splitlines())
    assert lines == ["1,8", "2,7"]


def test_batch_order_by_offset_fetch_returns_rows_in_order(batch_env):
    batch_env.create_temporary_view("kv", batch_env.from_elements(
        [(1, 5), (2, 7), (3, None), (4, -1), (5, 7)], T.ROW([T.FIELD("k", T.BIGINT()), T.FIELD("v", T.BIGINT())])))
    rows = collect(batch_env.sql_query("SELECT k, v FROM kv ORDER BY v DESC, k OFFSET 1 ROWS FETCH NEXT 3 ROWS ONLY"))
    assert [r for _, r in rows] == [(5, 7), (1, 5), (4, -1)]  # DESC puts NULLs last, as Flink
    rows = collect(batch_env.sql_query("SELECT k, v FROM kv ORDER BY v"))
    assert [r for _, r in rows] == [(3, None), (4, -1), (1, 5), (2, 7), (5, 7)]  # ASC: NULLs first


def test_streaming_order_by_limit_is_a_top_n(stream_env):
    stream_env.create_temporary_view("kv", stream_env.from_elements(
        [(1, 5), (2, 7), (3, 1), (4, 9)], T.ROW([T.FIELD("k", T.BIGINT()), T.FIELD("v", T.BIGINT())])))
    rows = collect(stream_env.sql_query("SELECT k, v FROM kv ORDER BY v DESC LIMIT 2"))
    assert materialize(rows) == Counter({(4, 9): 1, (2, 7): 1})


# --- the invariant: streaming changelog materialized == batch result --------------------------

_OPS = ("UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL")
_rows = st.lists(st.tuples(st.integers(0, 3), st.integers(-2, 2)), min_size=1, max_size=12)
_EXAMPLES = 3


def _drawn_inputs() -> list[tuple[list, list]]:
    """The inputs Hypothesis draws for the property: its simplest example first, then random ones.

    They are drawn here, without Spark, so that all of them run as cases of one
    streaming query (a query with 18 stateful operators costs ~30 s to start;
    one per example cost three times that).
    """
    drawn: list[tuple[list, list]] = []

    @settings(max_examples=_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(left=_rows, right=_rows)
    def draw(left, right):
        drawn.append((left, right))

    draw()
    return drawn


def _all_set_operations(t_env, cases):
    """Every set operation over every case, in one query: the case number tags the rows and every key."""
    schema = T.ROW([T.FIELD("c", T.INT()), T.FIELD("k", T.BIGINT()), T.FIELD("v", T.BIGINT())])
    t_env.create_temporary_view("l", t_env.from_elements(
        [(c, k, v) for c, (left, _) in enumerate(cases) for k, v in left], schema))
    t_env.create_temporary_view("r", t_env.from_elements(
        [(c, k, v) for c, (_, right) in enumerate(cases) for k, v in right], schema))
    # Sums per key go up and down: each set operation's inputs retract rows. The set operations
    # compare (c, m) rows, so the cases stay apart: each one is the query over its own input.
    sums = "(SELECT c, k, MOD(SUM(v), 3) AS m FROM {} GROUP BY c, k)"
    sql = " UNION ALL ".join(
        f"SELECT '{op}' AS op, c, m FROM "
        f"(SELECT c, m FROM {sums.format('l')} {op} SELECT c, m FROM {sums.format('r')})"
        for op in _OPS)
    return materialize(collect(t_env.sql_query(sql)))


def test_streaming_changelog_materializes_to_the_batch_result(spark):
    from changeflow.table import EnvironmentSettings, TableEnvironment

    cases = _drawn_inputs()
    assert len(cases) == _EXAMPLES
    stream = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    stream.get_config().set("changeflow.state.buckets", "2")
    batch = TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)
    streamed, expected = _all_set_operations(stream, cases), _all_set_operations(batch, cases)
    for c, (left, right) in enumerate(cases):
        assert ({r: n for r, n in streamed.items() if r[1] == c} == {r: n for r, n in expected.items() if r[1] == c}), \
            f"case {c}: left={left} right={right}"
    assert streamed == expected
