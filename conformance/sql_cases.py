"""Flink SQL conformance cases, shared by the Flink golden recorder and changeflow's tests.

Each case is a small program ``build(t_env, E)`` that runs unchanged under PyFlink 2.3
and under changeflow: it registers its inputs (``t_env.create_temporary_view(name,
t_env.from_elements(rows, schema))``, or ``execute_sql`` DDL over files it writes into
``E.tmp``), may run ``SET`` statements, and returns the result of
``t_env.sql_query(sql)`` (a ``Table``) or of ``t_env.execute_sql(sql)`` (a
``TableResult``).  ``E`` is a namespace with ``DataTypes`` (from ``pyflink.table`` or
``changeflow.table``) and ``tmp`` (an empty directory of the case's own); this module
imports neither engine.

Every case says how its changelog is compared (``compare``) and why (``why``):

* ``"changelog"``: the exact changelog, in order.  Flink's order is deterministic at
  parallelism 1 when the query reads one source: every operator processes records one
  at a time, in input order.
* ``"multiset"``: the changes as a multiset.  With mini-batch on, Flink emits the keys of
  a bundle in its bundle ``HashMap``'s order (each key's changes are still exact).
* ``"materialized"``: the result of applying the changelog to an empty table.  Used for
  batch mode (row order is the hash operators' order, every row is ``+I``) and for
  queries over two sources (joins, unions): Flink's two-input operators interleave
  their inputs in whatever order the network buffers arrive.
* ``"error"``: Flink rejects the program; the golden records the Java exception class,
  its message's first line and the stage (``plan`` = while building the table,
  ``execute`` = at ``execute()``, ``collect`` = while the job runs).  ``error_mentions``
  are the names changeflow's error must contain (the offending column, table, function
  or construct), compared case-insensitively.

Goldens recorded by ``conformance/record_flink_sql.py`` live in ``conformance/goldens/sql/``.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Tuple

__all__ = ["SqlCase", "CASES", "case", "case_in_both_modes", "queries_in_both_modes", "MINIBATCH", "COMPARES"]

COMPARES = ("changelog", "multiset", "materialized", "error")

# Reasons shared by many cases (each case states one).
WHY_ONE_SOURCE = "one source at parallelism 1: Flink's order is input order"
WHY_MINIBATCH = "mini-batch: Flink emits a bundle's keys in hash-map order"
WHY_BATCH = "batch: rows come in the hash operators' order, all +I"
WHY_TWO_SOURCES = "two sources: Flink interleaves a two-input operator's inputs nondeterministically"
WHY_ERROR = "Flink rejects the query"


@dataclass(frozen=True)
class SqlCase:
    name: str
    build: Callable  # build(t_env, E) -> Table | TableResult
    mode: str = "streaming"  # or "batch"
    config: Dict[str, str] = field(default_factory=dict)
    compare: str = "changelog"
    why: str = WHY_ONE_SOURCE
    description: str = ""
    error_mentions: Tuple[str, ...] = ()

    @property
    def deterministic(self) -> bool:
        """Whether Flink's emission order is deterministic (and compared exactly)."""
        return self.compare == "changelog"


CASES: Dict[str, SqlCase] = {}


def case(name: str, *, mode: str = "streaming", config: Optional[Dict[str, str]] = None,
         compare: Optional[str] = None, why: Optional[str] = None,
         description: Optional[str] = None, error_mentions: Tuple[str, ...] = ()):
    """Register ``build`` as case ``name`` (stackable).  ``compare`` defaults to
    ``materialized`` in batch mode, ``multiset`` with mini-batch on and ``changelog``
    otherwise; ``why`` defaults to the matching reason.  The description defaults to the
    build's docstring."""
    if mode not in ("streaming", "batch"):
        raise ValueError(f"mode must be 'streaming' or 'batch', got {mode!r}")
    config = dict(config or {})
    if compare is None:
        if mode == "batch":
            compare = "materialized"
        elif config.get("table.exec.mini-batch.enabled") == "true":
            compare = "multiset"
        else:
            compare = "changelog"
    if compare not in COMPARES:
        raise ValueError(f"compare must be one of {COMPARES}, got {compare!r}")
    if why is None:
        why = {"error": WHY_ERROR, "multiset": WHY_MINIBATCH}.get(
            compare, WHY_BATCH if mode == "batch" else
            WHY_TWO_SOURCES if compare == "materialized" else WHY_ONE_SOURCE)
    if compare == "error" and not error_mentions:
        raise ValueError(f"error case {name!r} needs error_mentions")

    def register(build: Callable) -> Callable:
        if name in CASES:
            raise ValueError(f"duplicate conformance case {name!r}")
        desc = description if description is not None else (build.__doc__ or "")
        CASES[name] = SqlCase(name=name, build=build, mode=mode, config=config,
                              compare=compare, why=why, description=" ".join(desc.split()),
                              error_mentions=tuple(error_mentions))
        return build

    return register


def case_in_both_modes(name: str, *, description: Optional[str] = None, **options) -> Callable[[Callable], Callable]:
    """Register ``build`` as two cases, ``{name}_streaming`` and ``{name}_batch``, each in its mode
    (``options`` as for :func:`case`); ``{mode}`` in ``description`` (default: the docstring) names it."""
    def register(build: Callable) -> Callable:
        text = description if description is not None else (build.__doc__ or "")
        for mode in ("streaming", "batch"):
            case(f"{name}_{mode}", mode=mode, description=text.replace("{mode}", mode), **options)(build)
        return build

    return register


def queries_in_both_modes(prefix: str, queries: Dict[str, str], setup: Callable, what: str, **options) -> None:
    """Register each of ``queries`` (name: SQL over the tables ``setup(t_env, E)`` makes) in both modes
    (:func:`case_in_both_modes`, as ``{prefix}{name}``), described as ``SQL (mode): what``."""
    for name, sql in queries.items():
        def build(t_env, E, sql=sql):
            setup(t_env, E)
            return t_env.sql_query(sql)
        case_in_both_modes(f"{prefix}{name}", description=f"{sql} ({{mode}}): {what}", **options)(build)


# Mini-batch on, with a latency far longer than the job: a bounded input is consumed
# before the first processing-time boundary, so each operator sees one bundle.
MINIBATCH = {
    "table.exec.mini-batch.enabled": "true",
    "table.exec.mini-batch.allow-latency": "10 s",
    "table.exec.mini-batch.size": "1000",
}

# --------------------------------------------------------------------------------------
# Input data
# --------------------------------------------------------------------------------------

# t(k BIGINT, s STRING, v BIGINT): nulls in s and v, negative and zero v.
T_ROWS = [(1, "apple", 5), (2, "Banana", 3), (3, None, 7), (1, "cherry", None),
          (4, "date", 4), (2, " elder ", -2), (5, "fig", 10), (3, "grape", 0)]

# kv(k BIGINT, v BIGINT).  Inner SUM(v) GROUP BY k updates keys up and down (the table
# cases' KV_ROWS): final sums k1 0, k2 2, k3 0, k4 4, k5 6, k6 4; b = MOD(k, 2).
KV_ROWS = [(1, 5), (2, 7), (3, 2), (1, 3), (4, 4), (2, -7), (3, 4), (1, -8), (5, 6),
           (4, 0), (6, 4), (2, 2), (3, -6)]

# (k BIGINT, name STRING) for LISTAGG / FIRST_VALUE / LAST_VALUE over retractions.
KS_ROWS = [(1, "a"), (2, "b"), (3, "c"), (1, "d"), (4, "e"), (5, None), (3, "a"),
           (2, "f"), (5, "g"), (6, "b"), (1, "a")]

# The mini-batch seed's daily-UV input: (user_id INT, day STRING).
DAILY_UV_ROWS = [(1, "2023-12-19"), (2, "2023-12-19"), (11, "2023-12-19")]
DAILY_UV_SQL = (
    "SELECT `day`, SUM(cnt) total\n"
    "FROM (\n"
    "SELECT `day`, MOD(user_id, 10), COUNT(DISTINCT user_id) as cnt\n"
    "FROM source GROUP BY `day`, MOD(user_id, 10))\n"
    "GROUP BY `day`")

# Join inputs.  l(k, lv): SUM(lv) GROUP BY k goes 1:10 -> 15, 2:20 -> 0, 3:30, 4:1, 5:7.
L_ROWS = [(1, 10), (2, 20), (1, 5), (3, 30), (4, 1), (2, -20), (5, 7)]
# r(k, rv): MAX(rv), COUNT(*) GROUP BY k: 2:x, 3:y -> y (count 2), 6:z, 1:v, 7:a.
R_ROWS = [(2, "x"), (3, "y"), (6, "z"), (3, "w"), (1, "v"), (7, "a"), (6, "u")]

# Versioned rows (k, name, v): later rows are newer versions of the key.
VERSION_ROWS = [(1, "a", 1), (2, "b", 2), (1, "c", 3), (3, "d", 4), (2, "e", 5),
                (1, "f", 6), (4, "g", 7), (3, "h", 8)]

# scores(g STRING, player STRING, score BIGINT) for Top-N; p6 and p9 tie at 7.
SCORE_ROWS = [("a", "p1", 10), ("a", "p2", 20), ("b", "p3", 5), ("a", "p4", 15),
              ("a", "p5", 30), ("b", "p6", 7), ("b", "p7", 1), ("a", "p8", 12),
              ("b", "p9", 7), ("b", "p10", 6)]

# (g, player, delta): SUM(delta) GROUP BY g, player goes up and down, so a Top-N over it
# sees retractions (players leave and re-enter the top 2).
DELTA_ROWS = [("a", "p1", 10), ("a", "p2", 20), ("a", "p3", 15), ("a", "p1", 15),
              ("a", "p2", -12), ("b", "p4", 5), ("b", "p5", 8), ("a", "p3", -15),
              ("b", "p4", 4), ("a", "p2", 30), ("b", "p6", 1)]


def _schema(E, *fields):
    D = E.DataTypes
    return D.ROW([D.FIELD(name, t) for name, t in fields])


def _view(t_env, E, name, rows, *fields):
    t_env.create_temporary_view(name, t_env.from_elements(rows, _schema(E, *fields)))


def _t(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "t", T_ROWS, ("k", D.BIGINT()), ("s", D.STRING()), ("v", D.BIGINT()))


def _kv(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "kv", KV_ROWS, ("k", D.BIGINT()), ("v", D.BIGINT()))


def _ks(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "ks", KS_ROWS, ("k", D.BIGINT()), ("name", D.STRING()))


def _daily_uv_source(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "source", DAILY_UV_ROWS, ("user_id", D.INT()), ("day", D.STRING()))


def _lr(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "l", L_ROWS, ("k", D.BIGINT()), ("lv", D.BIGINT()))
    _view(t_env, E, "r", R_ROWS, ("k", D.BIGINT()), ("rv", D.STRING()))


def _versions_with_proctime(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "versions", VERSION_ROWS,
          ("k", D.BIGINT()), ("name", D.STRING()), ("v", D.BIGINT()))
    t_env.create_temporary_view("versions_pt", t_env.sql_query(
        "SELECT *, PROCTIME() AS pt FROM versions"))


def _scores(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "scores", SCORE_ROWS,
          ("g", D.STRING()), ("player", D.STRING()), ("score", D.BIGINT()))


def _deltas(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "deltas", DELTA_ROWS,
          ("g", D.STRING()), ("player", D.STRING()), ("delta", D.BIGINT()))


def _write(E, name, text):
    """Write ``text`` to ``E.tmp/name/data`` and return the directory (a table's path)."""
    directory = os.path.join(E.tmp, name)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "data.csv"), "w", encoding="utf-8") as f:
        f.write(text)
    return directory


# --------------------------------------------------------------------------------------
# Projections, filters and scalar functions (insert-only)
# --------------------------------------------------------------------------------------

@case("select_where_arithmetic")
def select_where_arithmetic(t_env, E):
    """SELECT with arithmetic, comparison and boolean logic in WHERE; integer division
    truncates toward zero, null operands give null."""
    _t(t_env, E)
    return t_env.sql_query(
        "SELECT k, v * 2 + 1 AS w, v / 2 AS half, -v AS neg, v > 3 AS big, k + v AS kv "
        "FROM t WHERE (v <> 4 OR v IS NULL) AND k < 5")


@case("case_cast_mod")
def case_cast_mod(t_env, E):
    """CASE (searched and simple), CAST between numbers and strings, TRY_CAST, MOD with
    negative dividends, and the result types Flink gives them."""
    _t(t_env, E)
    return t_env.sql_query(
        "SELECT k, "
        "CASE WHEN v > 4 THEN 'big' WHEN v > 0 THEN 'small' ELSE 'other' END AS size, "
        "CASE k WHEN 1 THEN 'one' WHEN 2 THEN 'two' END AS name, "
        "CAST(v AS STRING) AS v_str, CAST(v AS DOUBLE) / 4 AS quarter, "
        "CAST(k AS INT) AS k_int, TRY_CAST(s AS INT) AS s_int, "
        "MOD(v, 3) AS m3, MOD(k, 2) AS parity, v % 4 AS pct "
        "FROM t")


@case("string_functions")
def string_functions(t_env, E):
    """UPPER, LOWER, CHAR_LENGTH, SUBSTRING, CONCAT, ||, CONCAT_WS, TRIM, REPLACE,
    POSITION, LIKE, INITCAP over strings with a null and surrounding spaces."""
    _t(t_env, E)
    return t_env.sql_query(
        "SELECT k, UPPER(s) AS up, LOWER(s) AS low, CHAR_LENGTH(s) AS len, "
        "SUBSTRING(s FROM 2 FOR 3) AS sub, CONCAT(s, '-', CAST(k AS STRING)) AS cat, "
        "s || '!' AS bang, CONCAT_WS('/', s, 'x') AS ws, TRIM(s) AS trimmed, "
        "REPLACE(s, 'a', 'A') AS repl, POSITION('e' IN s) AS pos, s LIKE '%e%' AS has_e, "
        "INITCAP(s) AS cap FROM t")


@case("null_functions")
def null_functions(t_env, E):
    """COALESCE, NULLIF, IFNULL, IS NULL / IS NOT NULL, IS DISTINCT FROM and null in
    comparisons and CASE."""
    _t(t_env, E)
    return t_env.sql_query(
        "SELECT k, COALESCE(s, 'none') AS s2, COALESCE(v, -1) AS v2, NULLIF(v, 0) AS nz, "
        "IFNULL(v, 100) AS v3, v IS NULL AS v_null, s IS NOT NULL AS s_set, "
        "v IS DISTINCT FROM 0 AS not_zero, v = 7 AS is_seven, "
        "CASE WHEN v IS NULL THEN 'missing' ELSE s END AS label FROM t")


@case("date_time_functions")
def date_time_functions(t_env, E):
    """DATE and TIMESTAMP(3) columns: EXTRACT, YEAR/MONTH/DAYOFMONTH, DATE_FORMAT,
    CAST to and from strings, interval arithmetic, TIMESTAMPDIFF, FLOOR to an hour."""
    D = E.DataTypes
    rows = [(1, datetime.date(2023, 12, 19), datetime.datetime(2023, 12, 19, 8, 30, 15)),
            (2, datetime.date(2024, 2, 29), datetime.datetime(2024, 2, 29, 23, 59, 59)),
            (3, None, None)]
    _view(t_env, E, "d", rows, ("k", D.BIGINT()), ("dt", D.DATE()), ("ts", D.TIMESTAMP(3)))
    return t_env.sql_query(
        "SELECT k, EXTRACT(YEAR FROM dt) AS y, MONTH(dt) AS m, DAYOFMONTH(dt) AS dom, "
        "DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm') AS fmt, CAST(dt AS STRING) AS dt_str, "
        "CAST('2024-01-01' AS DATE) AS new_year, dt + INTERVAL '1' DAY AS next_day, "
        "TIMESTAMPDIFF(DAY, CAST(dt AS TIMESTAMP(3)), ts) AS days, "
        "FLOOR(ts TO HOUR) AS hour_start, HOUR(ts) AS h, CAST(ts AS DATE) AS ts_date "
        "FROM d")


@case("subquery_in_from_and_union_all", compare="materialized", why=(
    "the union's branches reach the sink through separate network channels: Flink's "
    "order between branches is buffer-flush timing (here all of branch 1 came first)"))
def subquery_in_from_and_union_all(t_env, E):
    """A subquery in FROM, and UNION ALL of two filters of one (reused) source scan;
    every row takes exactly one branch."""
    _t(t_env, E)
    return t_env.sql_query(
        "SELECT k, w FROM (SELECT k, v * 10 AS w FROM t WHERE v > 3) "
        "UNION ALL "
        "SELECT k, -v AS w FROM t WHERE v <= 3")


@case("union_all_of_two_sources_then_aggregate", compare="materialized")
def union_all_of_two_sources_then_aggregate(t_env, E):
    """UNION ALL of two sources feeding a GROUP BY; the aggregate's intermediate updates
    depend on how Flink interleaves the sources."""
    _lr(t_env, E)
    return t_env.sql_query(
        "SELECT k, COUNT(*) AS n FROM "
        "(SELECT k FROM l UNION ALL SELECT k FROM r) GROUP BY k")


@case("select_via_execute_sql")
def select_via_execute_sql(t_env, E):
    """A SELECT through execute_sql (a TableResult rather than a Table)."""
    _t(t_env, E)
    return t_env.execute_sql("SELECT k, s FROM t WHERE s IS NOT NULL AND k > 1")


# --------------------------------------------------------------------------------------
# Aggregations
# --------------------------------------------------------------------------------------

@case("group_by_expression")
def group_by_expression(t_env, E):
    """GROUP BY an expression (MOD(k, 3)) that is also selected, with COUNT(*) and SUM;
    every row updates its group (-U/+U)."""
    _t(t_env, E)
    return t_env.sql_query(
        "SELECT MOD(k, 3) AS g, COUNT(*) AS n, SUM(v) AS total, COUNT(v) AS nv "
        "FROM t GROUP BY MOD(k, 3)")


@case("having")
def having(t_env, E):
    """HAVING over an updating aggregate: a group enters the result (+I or +U) and
    leaves it (-U without +U) as its sum crosses the threshold."""
    _kv(t_env, E)
    return t_env.sql_query(
        "SELECT k, SUM(v) AS s, COUNT(*) AS n FROM kv GROUP BY k HAVING SUM(v) > 3")


@case("select_distinct")
def select_distinct(t_env, E):
    """SELECT DISTINCT: a group aggregate without aggregates, emitting each new
    combination once (+I) and nothing for repeats."""
    _kv(t_env, E)
    return t_env.sql_query("SELECT DISTINCT MOD(k, 2) AS b, v > 0 AS pos FROM kv")


@case("count_distinct_and_sum_distinct_over_retracting_input")
def count_distinct_and_sum_distinct_over_retracting_input(t_env, E):
    """COUNT(DISTINCT s), SUM(DISTINCT s), COUNT(*) GROUP BY b over the retracting inner
    SUM(v) GROUP BY k (duplicate sums are retracted one occurrence at a time)."""
    _kv(t_env, E)
    return t_env.sql_query(
        "SELECT b, COUNT(DISTINCT s) AS nd, SUM(DISTINCT s) AS sd, COUNT(*) AS n "
        "FROM (SELECT k, SUM(v) AS s, MOD(k, 2) AS b FROM kv GROUP BY k) GROUP BY b")


@case("min_max_avg_sum_over_retracting_input")
def min_max_avg_sum_over_retracting_input(t_env, E):
    """MIN, MAX, AVG, SUM, COUNT over a retracting input: retracting the current
    minimum/maximum falls back to the next remaining value; AVG of BIGINT truncates."""
    _kv(t_env, E)
    return t_env.sql_query(
        "SELECT b, MIN(s) AS mn, MAX(s) AS mx, AVG(s) AS av, SUM(s) AS sm, COUNT(s) AS n "
        "FROM (SELECT k, SUM(v) AS s, MOD(k, 2) AS b FROM kv GROUP BY k) GROUP BY b")


@case("stddev_var_over_retracting_input")
def stddev_var_over_retracting_input(t_env, E):
    """STDDEV_POP, STDDEV_SAMP, VAR_POP, VAR_SAMP of BIGINT (truncated BIGINT results)
    and of DOUBLE over a retracting input."""
    _kv(t_env, E)
    return t_env.sql_query(
        "SELECT b, STDDEV_POP(s) AS sp, STDDEV_SAMP(s) AS ss, VAR_POP(s) AS vp, "
        "VAR_SAMP(s) AS vs, VAR_POP(CAST(s AS DOUBLE)) AS vpd, "
        "STDDEV_SAMP(CAST(s AS DOUBLE)) AS ssd "
        "FROM (SELECT k, SUM(v) AS s, MOD(k, 2) AS b FROM kv GROUP BY k) GROUP BY b")


@case("listagg_first_last_value_over_retracting_input")
def listagg_first_last_value_over_retracting_input(t_env, E):
    """LISTAGG (default and ';' separator), FIRST_VALUE and LAST_VALUE GROUP BY b over
    the retracting inner LAST_VALUE(name) GROUP BY k (nulls skipped)."""
    _ks(t_env, E)
    return t_env.sql_query(
        "SELECT b, LISTAGG(name) AS names, LISTAGG(name, ';') AS names_semi, "
        "FIRST_VALUE(name) AS first_name, LAST_VALUE(name) AS last_name "
        "FROM (SELECT k, LAST_VALUE(name) AS name, MOD(k, 2) AS b FROM ks GROUP BY k) "
        "GROUP BY b")


@case("all_aggregates_insert_only")
def all_aggregates_insert_only(t_env, E):
    """Every aggregate over an insert-only input with nulls, grouped by MOD(k, 2), incl.
    COUNT(DISTINCT), LISTAGG with a separator and the integer STDDEV/VAR types."""
    _t(t_env, E)
    return t_env.sql_query(
        "SELECT MOD(k, 2) AS b, COUNT(*) AS n, COUNT(v) AS nv, COUNT(DISTINCT k) AS nk, "
        "SUM(v) AS sm, AVG(v) AS av, MIN(s) AS mn, MAX(v) AS mx, "
        "FIRST_VALUE(s) AS fs, LAST_VALUE(s) AS ls, LISTAGG(s, '|') AS la, "
        "STDDEV_POP(v) AS sp, STDDEV_SAMP(v) AS ss, VAR_POP(v) AS vp, VAR_SAMP(v) AS vs "
        "FROM t GROUP BY MOD(k, 2)")


@case("global_aggregate")
def global_aggregate(t_env, E):
    """A global aggregate (no GROUP BY): one row, updated per input row."""
    _t(t_env, E)
    return t_env.sql_query(
        "SELECT COUNT(*) AS n, SUM(v) AS total, MAX(s) AS last_name FROM t")


@case("two_level_aggregation")
def two_level_aggregation(t_env, E):
    """Inner SUM(v) GROUP BY k, outer COUNT(*) GROUP BY s (a histogram of sums): keys
    move between outer groups, emptied groups emit -D."""
    _kv(t_env, E)
    return t_env.sql_query(
        "SELECT s, COUNT(*) AS n FROM (SELECT k, SUM(v) AS s FROM kv GROUP BY k) GROUP BY s")


@case("two_level_aggregation_minibatch", config=MINIBATCH)
def two_level_aggregation_minibatch(t_env, E):
    """two_level_aggregation with mini-batch on: one bundle, only final +I rows."""
    return two_level_aggregation(t_env, E)


@case("daily_uv_minibatch_off")
def daily_uv_minibatch_off(t_env, E):
    """The mini-batch seed's daily-UV query verbatim (`day` quoted) without mini-batch:
    the outer value jitters +I 1, -U 1, +U 2, -U 2, +U 1, -U 1, +U 3."""
    _daily_uv_source(t_env, E)
    return t_env.sql_query(DAILY_UV_SQL)


@case("daily_uv_minibatch_on", config=MINIBATCH)
def daily_uv_minibatch_on(t_env, E):
    """The seed's daily-UV query verbatim with mini-batch on: one bundle, +I 3 only."""
    _daily_uv_source(t_env, E)
    return t_env.sql_query(DAILY_UV_SQL)


@case("daily_uv_ddl_filesystem_csv_minibatch", config=MINIBATCH)
def daily_uv_ddl_filesystem_csv_minibatch(t_env, E):
    """The seed end to end: its CREATE TABLE (user_id INT, `day` VARCHAR) over a CSV
    file and its query via execute_sql, mini-batch on: +I 3 only.  (Flink 2.3's
    TableEnvironment.execute_sql rejects SET statements -- they belong to the SQL
    client -- so the configuration is set through the table config.)"""
    path = _write(E, "source", "".join(f"{u},{d}\n" for u, d in DAILY_UV_ROWS))
    t_env.execute_sql(
        "CREATE TABLE source (\n"
        "user_id INT,\n"
        "`day` VARCHAR\n"
        f") WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')")
    return t_env.execute_sql(DAILY_UV_SQL)


@case("daily_uv_ddl_filesystem_csv")
def daily_uv_ddl_filesystem_csv(t_env, E):
    """The seed's CREATE TABLE over a CSV file and its query, mini-batch off: the same
    jittering changelog as daily_uv_minibatch_off from a filesystem source."""
    path = _write(E, "source", "".join(f"{u},{d}\n" for u, d in DAILY_UV_ROWS))
    t_env.execute_sql(
        "CREATE TABLE source (\n"
        "user_id INT,\n"
        "`day` VARCHAR\n"
        f") WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')")
    return t_env.execute_sql(DAILY_UV_SQL)


@case("batch_daily_uv", mode="batch")
def batch_daily_uv(t_env, E):
    """The seed's daily-UV query in batch mode: a single +I (2023-12-19, 3)."""
    _daily_uv_source(t_env, E)
    return t_env.sql_query(DAILY_UV_SQL)


@case("batch_group_by_having_distinct", mode="batch")
def batch_group_by_having_distinct(t_env, E):
    """Batch GROUP BY with HAVING and aggregates over a subquery with DISTINCT."""
    _kv(t_env, E)
    return t_env.sql_query(
        "SELECT MOD(k, 2) AS b, COUNT(*) AS n, SUM(v) AS s, MAX(v) AS mx FROM "
        "(SELECT DISTINCT k, v FROM kv) GROUP BY MOD(k, 2) HAVING COUNT(*) > 2")


@case("batch_all_aggregates", mode="batch")
def batch_all_aggregates(t_env, E):
    """all_aggregates_insert_only in batch mode (FIRST_VALUE/LAST_VALUE/LISTAGG left out:
    their batch values follow the hash operator's row order)."""
    _t(t_env, E)
    return t_env.sql_query(
        "SELECT MOD(k, 2) AS b, COUNT(*) AS n, COUNT(v) AS nv, COUNT(DISTINCT k) AS nk, "
        "SUM(v) AS sm, AVG(v) AS av, MIN(s) AS mn, MAX(v) AS mx, "
        "STDDEV_POP(v) AS sp, STDDEV_SAMP(v) AS ss, VAR_POP(v) AS vp, VAR_SAMP(v) AS vs "
        "FROM t GROUP BY MOD(k, 2)")


# --------------------------------------------------------------------------------------
# Joins
# --------------------------------------------------------------------------------------

@case("inner_join_insert_only", compare="materialized")
def inner_join_insert_only(t_env, E):
    """INNER JOIN of two insert-only sources on k (one-to-many matches)."""
    _lr(t_env, E)
    return t_env.sql_query(
        "SELECT l.k, lv, rv FROM l JOIN r ON l.k = r.k")


@case("left_join_insert_only", compare="materialized")
def left_join_insert_only(t_env, E):
    """LEFT JOIN: unmatched left rows are padded with null; when a match arrives Flink
    retracts the padded row (-D) and inserts the joined one."""
    _lr(t_env, E)
    return t_env.sql_query(
        "SELECT l.k, lv, rv FROM l LEFT JOIN r ON l.k = r.k")


@case("right_join_insert_only", compare="materialized")
def right_join_insert_only(t_env, E):
    """RIGHT JOIN of two insert-only sources."""
    _lr(t_env, E)
    return t_env.sql_query(
        "SELECT r.k, lv, rv FROM l RIGHT JOIN r ON l.k = r.k")


@case("full_join_insert_only", compare="materialized")
def full_join_insert_only(t_env, E):
    """FULL OUTER JOIN of two insert-only sources, with keys only on either side."""
    _lr(t_env, E)
    return t_env.sql_query(
        "SELECT l.k AS lk, r.k AS rk, lv, rv FROM l FULL OUTER JOIN r ON l.k = r.k")


_AGG_SIDES = (
    "(SELECT k, SUM(lv) AS total FROM l GROUP BY k) AS a",
    "(SELECT k, MAX(rv) AS top, COUNT(*) AS n FROM r GROUP BY k) AS b",
)


@case("inner_join_both_sides_aggregated", compare="materialized")
def inner_join_both_sides_aggregated(t_env, E):
    """INNER JOIN of two aggregations: both inputs retract (-U/+U) and the join
    retracts its earlier joined rows."""
    _lr(t_env, E)
    a, b = _AGG_SIDES
    return t_env.sql_query(f"SELECT a.k, total, top, n FROM {a} JOIN {b} ON a.k = b.k")


@case("left_join_both_sides_aggregated", compare="materialized")
def left_join_both_sides_aggregated(t_env, E):
    """LEFT JOIN of two aggregations (retraction on both sides, null padding)."""
    _lr(t_env, E)
    a, b = _AGG_SIDES
    return t_env.sql_query(f"SELECT a.k, total, top, n FROM {a} LEFT JOIN {b} ON a.k = b.k")


@case("right_join_both_sides_aggregated", compare="materialized")
def right_join_both_sides_aggregated(t_env, E):
    """RIGHT JOIN of two aggregations (retraction on both sides, null padding)."""
    _lr(t_env, E)
    a, b = _AGG_SIDES
    return t_env.sql_query(f"SELECT b.k, total, top, n FROM {a} RIGHT JOIN {b} ON a.k = b.k")


@case("full_join_both_sides_aggregated", compare="materialized")
def full_join_both_sides_aggregated(t_env, E):
    """FULL OUTER JOIN of two aggregations (retraction on both sides, padding on both)."""
    _lr(t_env, E)
    a, b = _AGG_SIDES
    return t_env.sql_query(
        f"SELECT a.k AS ak, b.k AS bk, total, top, n FROM {a} FULL OUTER JOIN {b} ON a.k = b.k")


@case("join_with_residual_condition_then_aggregate", compare="materialized")
def join_with_residual_condition_then_aggregate(t_env, E):
    """INNER JOIN with an equality and a non-equi condition, then an aggregation of the
    joined rows (the shape of the SQL benchmark)."""
    _lr(t_env, E)
    return t_env.sql_query(
        "SELECT rv, COUNT(*) AS n, SUM(lv) AS s FROM l JOIN r "
        "ON l.k = r.k AND lv > 1 GROUP BY rv")


@case("left_join_minibatch", config=MINIBATCH, compare="materialized")
def left_join_minibatch(t_env, E):
    """LEFT JOIN of an aggregation and a source with mini-batch on."""
    _lr(t_env, E)
    return t_env.sql_query(
        "SELECT a.k, total, rv FROM (SELECT k, SUM(lv) AS total FROM l GROUP BY k) AS a "
        "LEFT JOIN r ON a.k = r.k")


@case("batch_joins", mode="batch")
def batch_joins(t_env, E):
    """LEFT JOIN and FULL JOIN of aggregations in batch mode."""
    _lr(t_env, E)
    a, b = _AGG_SIDES
    return t_env.sql_query(
        f"SELECT a.k AS ak, b.k AS bk, total, top, n FROM {a} FULL OUTER JOIN {b} ON a.k = b.k")


@case("batch_inner_join_then_aggregate", mode="batch")
def batch_inner_join_then_aggregate(t_env, E):
    """join_with_residual_condition_then_aggregate in batch mode."""
    return join_with_residual_condition_then_aggregate(t_env, E)


# --------------------------------------------------------------------------------------
# Deduplication on processing time
# --------------------------------------------------------------------------------------

_DEDUP = ("SELECT k, name, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k "
          "ORDER BY pt {order}) AS rn FROM versions_pt) WHERE rn = 1")


@case("dedup_keep_first_row")
def dedup_keep_first_row(t_env, E):
    """ROW_NUMBER() OVER (PARTITION BY k ORDER BY PROCTIME() ASC) = 1: the first row per
    key, insert-only (+I once per key, later versions dropped)."""
    _versions_with_proctime(t_env, E)
    return t_env.sql_query(_DEDUP.format(order="ASC"))


@case("dedup_keep_last_row")
def dedup_keep_last_row(t_env, E):
    """ORDER BY PROCTIME() DESC = 1: the last row per key; a new version emits -U old,
    +U new."""
    _versions_with_proctime(t_env, E)
    return t_env.sql_query(_DEDUP.format(order="DESC"))


@case("dedup_keep_first_row_minibatch", config=MINIBATCH)
def dedup_keep_first_row_minibatch(t_env, E):
    """Keep-first deduplication with mini-batch on."""
    _versions_with_proctime(t_env, E)
    return t_env.sql_query(_DEDUP.format(order="ASC"))


@case("dedup_keep_last_row_minibatch", config=MINIBATCH)
def dedup_keep_last_row_minibatch(t_env, E):
    """Keep-last deduplication with mini-batch on: one bundle, the final version per key
    only."""
    _versions_with_proctime(t_env, E)
    return t_env.sql_query(_DEDUP.format(order="DESC"))


@case("dedup_keep_last_then_aggregate")
def dedup_keep_last_then_aggregate(t_env, E):
    """Keep-last deduplication feeding SUM/COUNT GROUP BY MOD(k, 2): each new version
    retracts the old one from the aggregate."""
    _versions_with_proctime(t_env, E)
    return t_env.sql_query(
        "SELECT MOD(k, 2) AS b, SUM(v) AS s, COUNT(*) AS n FROM ("
        + _DEDUP.format(order="DESC") + ") GROUP BY MOD(k, 2)")


# --------------------------------------------------------------------------------------
# Top-N
# --------------------------------------------------------------------------------------

_TOP2 = ("SELECT {cols} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY g "
         "ORDER BY score DESC) AS rn FROM scores) WHERE rn <= 2")


@case("top2_with_row_number")
def top2_with_row_number(t_env, E):
    """Top-2 per group with the row number selected: a new leader shifts the others'
    ranks (-U/+U of each moved row); ties keep arrival order."""
    _scores(t_env, E)
    return t_env.sql_query(_TOP2.format(cols="g, player, score, rn"))


@case("top2_without_row_number")
def top2_without_row_number(t_env, E):
    """Top-2 per group without the row number: a row entering the top 2 inserts (+I)
    and the row pushed out is deleted (-D)."""
    _scores(t_env, E)
    return t_env.sql_query(_TOP2.format(cols="g, player, score"))


@case("top1_by_value")
def top1_by_value(t_env, E):
    """ROW_NUMBER() ... ORDER BY score DESC = 1 (a Top-1 on a non-time column, not a
    deduplication)."""
    _scores(t_env, E)
    return t_env.sql_query(
        "SELECT g, player, score FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY g "
        "ORDER BY score DESC) AS rn FROM scores) WHERE rn = 1")


_TOP2_RETRACTING = (
    "SELECT {cols} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY g ORDER BY total DESC) "
    "AS rn FROM (SELECT g, player, SUM(delta) AS total FROM deltas GROUP BY g, player)) "
    "WHERE rn <= 2")


@case("top2_over_retracting_input")
def top2_over_retracting_input(t_env, E):
    """Top-2 per group over an aggregation whose sums go up and down: players leave the
    top 2 and the next one re-enters (Flink's retract strategy)."""
    _deltas(t_env, E)
    return t_env.sql_query(_TOP2_RETRACTING.format(cols="g, player, total"))


@case("top2_over_retracting_input_with_row_number")
def top2_over_retracting_input_with_row_number(t_env, E):
    """top2_over_retracting_input with the row number selected."""
    _deltas(t_env, E)
    return t_env.sql_query(_TOP2_RETRACTING.format(cols="g, player, total, rn"))


@case("top2_minibatch", config=MINIBATCH, compare="materialized",
      why="changeflow folds Top-N per bundle (the mini-batch seed); Flink 2.3's append-only Top-N does not, "
          "so only the materialized result is Flink's")
def top2_minibatch(t_env, E):
    """Top-2 without row number with mini-batch on. Flink's append-only Top-N does not
    buffer bundles (its changelog is the one without mini-batch); changeflow folds each
    bundle per partition, so the two agree on the materialized result."""
    _scores(t_env, E)
    return t_env.sql_query(_TOP2.format(cols="g, player, score"))


@case("top2_over_retracting_input_minibatch", config=MINIBATCH)
def top2_over_retracting_input_minibatch(t_env, E):
    """top2_over_retracting_input with mini-batch on."""
    _deltas(t_env, E)
    return t_env.sql_query(_TOP2_RETRACTING.format(cols="g, player, total"))


@case("batch_top2_with_row_number", mode="batch")
def batch_top2_with_row_number(t_env, E):
    """Top-2 per group in batch mode."""
    _scores(t_env, E)
    return t_env.sql_query(_TOP2.format(cols="g, player, score, rn"))


# --------------------------------------------------------------------------------------
# Queries Flink rejects
# --------------------------------------------------------------------------------------

@case("error_unknown_column", compare="error", error_mentions=("nope",))
def error_unknown_column(t_env, E):
    """A column that does not exist."""
    _t(t_env, E)
    return t_env.sql_query("SELECT k, nope FROM t")


@case("error_unknown_table", compare="error", error_mentions=("missing",))
def error_unknown_table(t_env, E):
    """A table that does not exist."""
    _t(t_env, E)
    return t_env.sql_query("SELECT * FROM missing")


def _orders(t_env, E):
    D = E.DataTypes
    _view(t_env, E, "orders", [("ann", 3, "x"), ("bob", 4, "y")],
          ("customer", D.STRING()), ("amount", D.BIGINT()), ("note", D.STRING()))


@case("error_column_not_grouped", compare="error", error_mentions=("amount",))
def error_column_not_grouped(t_env, E):
    """A selected column that is neither grouped nor aggregated."""
    _orders(t_env, E)
    return t_env.sql_query("SELECT customer, amount FROM orders GROUP BY customer")


@case("error_sum_of_string", compare="error", error_mentions=("SUM", "note"))
def error_sum_of_string(t_env, E):
    """SUM of a STRING column."""
    _orders(t_env, E)
    return t_env.sql_query("SELECT customer, SUM(note) FROM orders GROUP BY customer")


@case("error_syntax", compare="error", error_mentions=("SELEC",))
def error_syntax(t_env, E):
    """A misspelt keyword."""
    _t(t_env, E)
    return t_env.sql_query("SELEC k FROM t")


@case("error_order_by_non_time_attribute", compare="error", error_mentions=("ORDER BY",))
def error_order_by_non_time_attribute(t_env, E):
    """ORDER BY on a non-time column in a streaming query (Flink plans only time-ordered
    or Top-N sorts in streaming mode)."""
    _t(t_env, E)
    return t_env.sql_query("SELECT k, v FROM t ORDER BY v")


@case("error_cast_invalid_string_at_runtime", compare="error", error_mentions=("abc",))
def error_cast_invalid_string_at_runtime(t_env, E):
    """CAST of a non-numeric string to INT fails while the job runs (TRY_CAST would give
    null)."""
    D = E.DataTypes
    _view(t_env, E, "w", [("12",), ("abc",)], ("s", D.STRING()))
    return t_env.sql_query("SELECT CAST(s AS INT) AS n FROM w")


# The JSON function cases live in their own module; importing it registers them here.
from conformance import json_cases as _json_cases  # noqa: E402,F401


# --------------------------------------------------------------------------------------
# Split distinct aggregation (table.optimizer.distinct-agg.split.enabled, Nexmark sets it)
# --------------------------------------------------------------------------------------

SPLIT_DISTINCT = {"table.optimizer.distinct-agg.split.enabled": "true"}
WHY_SPLIT = ("split distinct aggregation: which distinct values share a bucket (Flink hashes with Java's "
             "hashCode, changeflow with another hash) decides the partial level's +I versus -U/+U, so only "
             "the materialized result is comparable")


@case("split_distinct_count_distinct", config=SPLIT_DISTINCT, compare="materialized", why=WHY_SPLIT)
def split_distinct_count_distinct(t_env, E):
    """COUNT(DISTINCT s) with COUNT(*), SUM, AVG, MAX GROUP BY MOD(k, 2), split into a
    partial level by (b, bucket of s) and a final level by b."""
    _t(t_env, E)
    return t_env.sql_query(
        "SELECT MOD(k, 2) AS b, COUNT(DISTINCT s) AS nd, COUNT(*) AS n, SUM(v) AS sv, AVG(v) AS av, "
        "MAX(v) AS mx FROM t GROUP BY MOD(k, 2)")


@case("split_distinct_over_retracting_input", config=SPLIT_DISTINCT, compare="materialized", why=WHY_SPLIT)
def split_distinct_over_retracting_input(t_env, E):
    """count_distinct_and_sum_distinct_over_retracting_input with the split on."""
    _kv(t_env, E)
    return t_env.sql_query(
        "SELECT b, COUNT(DISTINCT s) AS nd, SUM(DISTINCT s) AS sd, COUNT(*) AS n "
        "FROM (SELECT k, SUM(v) AS s, MOD(k, 2) AS b FROM kv GROUP BY k) GROUP BY b")


@case("split_distinct_over_retracting_input_minibatch", config={**SPLIT_DISTINCT, **MINIBATCH},
      compare="materialized", why=WHY_SPLIT)
def split_distinct_over_retracting_input_minibatch(t_env, E):
    """split_distinct_over_retracting_input with mini-batch on."""
    _kv(t_env, E)
    return t_env.sql_query(
        "SELECT b, COUNT(DISTINCT s) AS nd, SUM(DISTINCT s) AS sd, COUNT(*) AS n "
        "FROM (SELECT k, SUM(v) AS s, MOD(k, 2) AS b FROM kv GROUP BY k) GROUP BY b")


@case("split_distinct_global_count_distinct", config={**SPLIT_DISTINCT,
      "table.optimizer.distinct-agg.split.bucket-num": "4"}, compare="materialized", why=WHY_SPLIT)
def split_distinct_global_count_distinct(t_env, E):
    """A global COUNT(DISTINCT k) and MIN(v) over t with 4 buckets."""
    _t(t_env, E)
    return t_env.sql_query("SELECT COUNT(DISTINCT k) AS nk, MIN(v) AS lo FROM t")


# Set operations, VALUES, FILTER, grouping sets, subqueries, ORDER BY / LIMIT (issue 17).
from conformance import sql_setop_cases  # noqa: E402,F401  (registers its cases into CASES)

# Event-time windows (issue 18).
from conformance import sql_window_cases  # noqa: E402,F401  (registers its cases into CASES)

# OVER aggregations (issue 18).
from conformance import sql_over_cases  # noqa: E402,F401  (registers its cases into CASES)

# Event-time joins: interval joins and temporal joins (issue 18).
from conformance import sql_time_join_cases  # noqa: E402,F401  (registers its cases into CASES)

# Legacy group windows: GROUP BY TUMBLE/HOP/SESSION(...) (issue 18).
from conformance import sql_group_window_cases  # noqa: E402,F401  (registers its cases into CASES)

# CURRENT_WATERMARK(ts) (issue 18).
from conformance import sql_current_watermark_cases  # noqa: E402,F401  (registers its cases into CASES)

# NOT IN (subquery) and CAST to BYTES/TIME/MAP (issue 17's leftovers).
from conformance import sql_not_in_cases  # noqa: E402,F401  (registers its cases into CASES)
from conformance import sql_cast_cases  # noqa: E402,F401  (registers its cases into CASES)

# Window Top-N, window deduplication and window join (issue 18).
from conformance import sql_window_ops_cases  # noqa: E402,F401  (registers its cases into CASES)

# Deduplication on row time (Nexmark q18's shape).
from conformance import sql_rowtime_dedup_cases  # noqa: E402,F401  (registers its cases into CASES)

# REGEXP_EXTRACT (Nexmark q21).
from conformance import sql_regexp_cases  # noqa: E402,F401  (registers its cases into CASES)

# table.local-time-zone other than UTC: TIMESTAMP_LTZ in the session zone (issue 18).
from conformance import sql_time_zone_cases  # noqa: E402,F401  (registers its cases into CASES)

# Windows over a TIMESTAMP_LTZ time attribute in a zone other than UTC (issue 18).
from conformance import sql_ltz_window_cases  # noqa: E402,F401  (registers its cases into CASES)

from conformance import sql_datetime_parse_cases  # noqa: E402,F401  (registers its cases into CASES)
