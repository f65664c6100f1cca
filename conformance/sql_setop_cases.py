"""SQL conformance cases of set operations, VALUES, aggregate FILTER, grouping sets,
IN / EXISTS subqueries, ORDER BY / LIMIT and the refusals of issue 17.

Registered into :data:`conformance.sql_cases.CASES` (imported at the end of that module),
recorded by ``conformance/record_flink_sql.py`` like every SQL case. Set operations
read two scans, so their streaming changelogs are compared materialized.
"""

from __future__ import annotations

from conformance.sql_cases import _kv, _schema, _t, _view, case, queries_in_both_modes

# Two multisets with duplicates, a NULL and overlapping rows: a(k, s), b(k, s).
A_ROWS = [(1, "x"), (1, "x"), (1, "x"), (2, "y"), (3, None), (3, None), (4, "z"), (5, "w")]
B_ROWS = [(1, "x"), (1, "x"), (3, None), (4, "z"), (4, "z"), (6, "v")]

WHY_GROUPING_SETS = ("grouping sets: changeflow plans a union of aggregations (one per set), Flink one "
                     "aggregation over Expand: the sets' changes interleave differently")
WHY_SUBQUERY = "two scans (the subquery is a join input): Flink interleaves them nondeterministically"


def _ab(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "a", A_ROWS, ("k", D.BIGINT()), ("s", D.STRING()))
    _view(t_env, E, "b", B_ROWS, ("k", D.BIGINT()), ("s", D.STRING()))


_SETOPS = {
    "union": "SELECT k, s FROM a UNION SELECT k, s FROM b",
    "intersect": "SELECT k, s FROM a INTERSECT SELECT k, s FROM b",
    "intersect_all": "SELECT k, s FROM a INTERSECT ALL SELECT k, s FROM b",
    "except": "SELECT k, s FROM a EXCEPT SELECT k, s FROM b",
    "except_all": "SELECT k, s FROM a EXCEPT ALL SELECT k, s FROM b",
}


queries_in_both_modes("setop_", _SETOPS, _ab, "duplicates and NULLs compare as set operations do.",
                      compare="materialized")

# Over updating inputs: per-key sums that go up and down (KV_ROWS), so the set
# operation's input retracts rows.
_SUMS = "(SELECT k, SUM(v) AS s FROM kv GROUP BY k)"


@case("setop_intersect_all_over_retracting_input", compare="materialized")
def setop_intersect_all_over_retracting_input(t_env, E):
    """INTERSECT ALL of two updating inputs (the sums per key, and the sums of the even keys)."""
    _kv(t_env, E)
    return t_env.sql_query(f"SELECT s FROM {_SUMS} INTERSECT ALL SELECT s FROM {_SUMS} WHERE MOD(k, 2) = 0")


@case("setop_except_all_over_retracting_input", compare="materialized")
def setop_except_all_over_retracting_input(t_env, E):
    """EXCEPT ALL of two updating inputs."""
    _kv(t_env, E)
    return t_env.sql_query(f"SELECT s FROM {_SUMS} EXCEPT ALL SELECT s FROM {_SUMS} WHERE MOD(k, 2) = 0")


@case("setop_union_over_retracting_input", compare="materialized")
def setop_union_over_retracting_input(t_env, E):
    """UNION (distinct) of an updating input and an insert-only one."""
    _kv(t_env, E)
    return t_env.sql_query(f"SELECT s FROM {_SUMS} UNION SELECT v FROM kv")


@case("setop_except_over_retracting_input_batch", mode="batch")
def setop_except_over_retracting_input_batch(t_env, E):
    """EXCEPT of aggregated inputs in batch mode."""
    _kv(t_env, E)
    return t_env.sql_query(f"SELECT s FROM {_SUMS} EXCEPT SELECT s FROM {_SUMS} WHERE MOD(k, 2) = 0")


def _table_api_setops():
    for method in ("union", "union_all", "intersect", "intersect_all", "minus", "minus_all"):
        for mode in ("streaming", "batch"):
            def build(t_env, E, method=method):
                _ab(t_env, E)
                left, right = t_env.sql_query("SELECT * FROM a"), t_env.sql_query("SELECT * FROM b")
                return getattr(left, method)(right)
            batch_only = method != "union_all" and mode == "streaming"
            build.__doc__ = f"Table API left.{method}(right) ({mode})" + (
                ": Flink's Table API runs it in batch mode only." if batch_only else ".")
            word = "MINUS" if method.startswith("minus") else method.split("_")[0].upper()
            case(f"table_{method}_{mode}", mode=mode, compare="error" if batch_only else "materialized",
                 error_mentions=(word, "unbounded") if batch_only else ())(build)


_table_api_setops()


@case("table_distinct")
def table_distinct(t_env, E):
    """Table API distinct(): one row per distinct row, each +I when first seen."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT * FROM a").distinct()


# --- VALUES ---------------------------------------------------------------------------

@case("values_query")
def values_query(t_env, E):
    """VALUES as a query: literal rows of mixed widths, a negative number and a typed NULL."""
    return t_env.sql_query("VALUES (1, 'a'), (2, 'bb'), (-3, CAST(NULL AS STRING))")


@case("values_in_from")
def values_in_from(t_env, E):
    """VALUES in FROM with column names, filtered and computed on."""
    return t_env.sql_query("SELECT a * 2 AS twice, b FROM (VALUES (1, 'x'), (2, 'y'), (3, 'z')) AS t(a, b) "
                           "WHERE a > 1")


@case("values_aggregated_batch", mode="batch")
def values_aggregated_batch(t_env, E):
    """VALUES grouped in batch mode."""
    return t_env.sql_query("SELECT b, SUM(a) AS s FROM (VALUES (1, 'x'), (2, 'y'), (3, 'x')) AS t(a, b) GROUP BY b")


@case("select_without_from")
def select_without_from(t_env, E):
    """SELECT without FROM: one row of literals and expressions (Flink plans it over one VALUES row)."""
    return t_env.sql_query("SELECT 1 AS a, 'x' AS b, CAST(NULL AS INT) AS c, 1 + 2")


@case("select_without_from_aggregated_batch", mode="batch")
def select_without_from_aggregated_batch(t_env, E):
    """An aggregate without FROM: its one input row counted."""
    return t_env.sql_query("SELECT COUNT(*) AS n, SUM(1) AS s")


@case("error_select_star_without_from", compare="error", error_mentions=("SELECT *", "FROM"))
def error_select_star_without_from(t_env, E):
    """SELECT * without FROM."""
    return t_env.sql_query("SELECT *")


# --- aggregate FILTER -------------------------------------------------------------------

@case("aggregate_filter")
def aggregate_filter(t_env, E):
    """COUNT(*) / SUM / MAX with FILTER (WHERE ..) per group, over insert-only input."""
    _kv(t_env, E)
    return t_env.sql_query("SELECT MOD(k, 2) AS b, COUNT(*) FILTER (WHERE v > 0) AS pos, "
                           "SUM(v) FILTER (WHERE v < 0) AS neg, MAX(v) FILTER (WHERE k > 2) AS m, COUNT(*) AS n "
                           "FROM kv GROUP BY MOD(k, 2)")


@case("aggregate_filter_batch", mode="batch")
def aggregate_filter_batch(t_env, E):
    """Aggregate FILTER in batch mode, with COUNT(DISTINCT) filtered."""
    _kv(t_env, E)
    return t_env.sql_query("SELECT COUNT(DISTINCT k) FILTER (WHERE v > 0) AS keys_pos, "
                           "SUM(v) FILTER (WHERE k = 1) AS first_key FROM kv")


# --- GROUPING SETS / ROLLUP / CUBE -------------------------------------------------------

@case("grouping_sets", compare="materialized", why=WHY_GROUPING_SETS)
def grouping_sets(t_env, E):
    """GROUPING SETS with GROUPING() and GROUPING_ID()."""
    _t(t_env, E)
    return t_env.sql_query("SELECT MOD(k, 2) AS b, s, COUNT(*) AS n, SUM(v) AS total, GROUPING(s) AS gs, "
                           "GROUPING_ID(MOD(k, 2), s) AS gid FROM t "
                           "GROUP BY GROUPING SETS ((MOD(k, 2), s), (MOD(k, 2)), ())")


@case("rollup", compare="materialized", why=WHY_GROUPING_SETS)
def rollup(t_env, E):
    """ROLLUP over two keys, over an updating input."""
    _kv(t_env, E)
    return t_env.sql_query(f"SELECT MOD(k, 2) AS b, s, COUNT(*) AS n FROM {_SUMS} GROUP BY ROLLUP(MOD(k, 2), s)")


@case("cube_batch", mode="batch")
def cube_batch(t_env, E):
    """CUBE over two keys in batch mode, with GROUPING_ID()."""
    _t(t_env, E)
    return t_env.sql_query("SELECT k, s, SUM(v) AS total, GROUPING_ID(k, s) AS gid FROM t "
                           "WHERE k < 4 GROUP BY CUBE(k, s)")


# --- IN / EXISTS -------------------------------------------------------------------------

@case("in_subquery", compare="materialized", why=WHY_SUBQUERY)
def in_subquery(t_env, E):
    """k IN (SELECT ..): each row of a once if its key is in b (duplicates of b match once)."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT k, s FROM a WHERE k IN (SELECT k FROM b)")


@case("exists_correlated", compare="materialized", why=WHY_SUBQUERY)
def exists_correlated(t_env, E):
    """Correlated EXISTS with a further condition in the subquery."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT k, s FROM a WHERE EXISTS (SELECT * FROM b WHERE b.k = a.k AND b.k > 1)")


@case("not_exists_correlated", compare="materialized", why=WHY_SUBQUERY)
def not_exists_correlated(t_env, E):
    """Correlated NOT EXISTS (an anti join): rows of a with no row of b of their key."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT k, s FROM a WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.k = a.k)")


@case("in_subquery_over_retracting_input", compare="materialized", why=WHY_SUBQUERY)
def in_subquery_over_retracting_input(t_env, E):
    """IN over a subquery whose rows come and go (sums per key)."""
    _kv(t_env, E)
    return t_env.sql_query(f"SELECT k, v FROM kv WHERE v IN (SELECT s FROM {_SUMS})")


@case("in_and_not_exists_batch", mode="batch")
def in_and_not_exists_batch(t_env, E):
    """IN and NOT EXISTS in batch mode."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT k, s FROM a WHERE k IN (SELECT k FROM b WHERE s IS NOT NULL) "
                           "OR k > 100 UNION ALL SELECT k, s FROM a WHERE NOT EXISTS "
                           "(SELECT 1 FROM b WHERE b.k = a.k)")


# --- ORDER BY / LIMIT ----------------------------------------------------------------------

@case("order_by_limit_streaming")
def order_by_limit_streaming(t_env, E):
    """ORDER BY .. LIMIT in streaming mode: a Top-N over the whole input."""
    _kv(t_env, E)
    return t_env.sql_query("SELECT k, v FROM kv ORDER BY v DESC LIMIT 3")


@case("order_by_offset_fetch_batch", mode="batch")
def order_by_offset_fetch_batch(t_env, E):
    """ORDER BY .. OFFSET .. FETCH FIRST in batch mode."""
    _kv(t_env, E)
    return t_env.sql_query("SELECT k, v FROM kv ORDER BY v DESC, k OFFSET 2 ROWS FETCH FIRST 4 ROWS ONLY")


@case("order_by_batch", mode="batch")
def order_by_batch(t_env, E):
    """ORDER BY without a limit in batch mode (allowed there)."""
    _kv(t_env, E)
    return t_env.sql_query("SELECT k, SUM(v) AS s FROM kv GROUP BY k ORDER BY s, k")


# --- refusals ------------------------------------------------------------------------------

@case("error_for_system_time_as_of", compare="error", error_mentions=("FOR SYSTEM_TIME AS OF",))
def error_for_system_time_as_of(t_env, E):
    """A temporal join (FOR SYSTEM_TIME AS OF) on a table with no time attribute."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT a.k, b.s FROM a JOIN b FOR SYSTEM_TIME AS OF a.k ON a.k = b.k")


@case("error_window_tvf_tumble", compare="error", error_mentions=("TUMBLE",))
def error_window_tvf_tumble(t_env, E):
    """A window TVF over a column that is not a time attribute."""
    _ab(t_env, E)
    return t_env.sql_query("SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(k), INTERVAL '1' MINUTE))")


__all__ = ["A_ROWS", "B_ROWS", "_schema"]
