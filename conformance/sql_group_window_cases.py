"""SQL conformance cases of Flink's legacy group windows (issue 18):
``GROUP BY TUMBLE(ts, INTERVAL ...)``, ``HOP(ts, slide, size)``, ``SESSION(ts, gap)`` and
their auxiliary functions ``*_START``, ``*_END`` (``TIMESTAMP(3) NOT NULL``) and
``*_ROWTIME`` (the window's end - 1 ms, still a rowtime attribute).

Registered into :data:`conformance.sql_cases.CASES` (imported at the end of that module),
recorded by ``conformance/record_flink_sql.py`` like every SQL case.  The input is the
``bids`` table of :mod:`conformance.sql_window_cases` (``ts`` the rowtime attribute, rows up
to 1.5 s out of order under a 2 s watermark delay), so the windows and their rows are those
of the window TVF cases: Flink plans a group window as a window aggregation too.  The
cases: TUMBLE per key with all three auxiliary functions, HOP and SESSION per key (a
session per key: Flink's group windows partition sessions by the other GROUP BY keys), a
cascade (a second TUMBLE over the first one's ``TUMBLE_ROWTIME``, as a view and as a FROM
subquery), a group window in a FROM subquery under a filter, batch mode, and what
Flink refuses (a group window over a column that is not a time attribute).
"""

from __future__ import annotations

from conformance.sql_cases import case, case_in_both_modes
from conformance.sql_window_cases import WHY_WINDOW, _bids

_TUMBLE = "TUMBLE(ts, INTERVAL '10' SECOND)"
_TUMBLE_QUERY = (f"SELECT k, TUMBLE_START(ts, INTERVAL '10' SECOND) AS ws, TUMBLE_END(ts, INTERVAL '10' SECOND) AS we, "
                 f"TUMBLE_ROWTIME(ts, INTERVAL '10' SECOND) AS rt, COUNT(*) AS cnt, SUM(v) AS s "
                 f"FROM bids GROUP BY {_TUMBLE}, k")


@case("group_window_tumble", compare="multiset", why=WHY_WINDOW)
def group_window_tumble(t_env, E):
    """GROUP BY TUMBLE(ts, 10 s), k with TUMBLE_START, TUMBLE_END and TUMBLE_ROWTIME: one +I
    per (window, key) when the watermark passes the window's end."""
    _bids(t_env, E)
    return t_env.sql_query(_TUMBLE_QUERY)


@case("group_window_hop", compare="multiset", why=WHY_WINDOW)
def group_window_hop(t_env, E):
    """GROUP BY HOP(ts, 5 s slide, 10 s size), k with HOP_START and HOP_END: every row in
    two overlapping windows."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT k, HOP_START(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) AS ws, "
        "HOP_END(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) AS we, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM bids GROUP BY HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND), k")


@case("group_window_session", compare="multiset", why=WHY_WINDOW)
def group_window_session(t_env, E):
    """GROUP BY SESSION(ts, 5 s), k: sessions per key (SESSION_START, SESSION_END,
    SESSION_ROWTIME)."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT k, SESSION_START(ts, INTERVAL '5' SECOND) AS ws, SESSION_END(ts, INTERVAL '5' SECOND) AS we, "
        "SESSION_ROWTIME(ts, INTERVAL '5' SECOND) AS rt, COUNT(*) AS cnt, SUM(v) AS s "
        "FROM bids GROUP BY SESSION(ts, INTERVAL '5' SECOND), k")


@case("group_window_cascade", compare="multiset", why=WHY_WINDOW)
def group_window_cascade(t_env, E):
    """A second group window over the first one's TUMBLE_ROWTIME: TUMBLE 5 s per key, then
    TUMBLE 10 s over its rows without a key (rt stays a rowtime attribute)."""
    _bids(t_env, E)
    t_env.execute_sql(
        "CREATE TEMPORARY VIEW five AS SELECT k, TUMBLE_ROWTIME(ts, INTERVAL '5' SECOND) AS rt, COUNT(*) AS cnt "
        "FROM bids GROUP BY TUMBLE(ts, INTERVAL '5' SECOND), k")
    return t_env.sql_query(
        "SELECT TUMBLE_START(rt, INTERVAL '10' SECOND) AS ws, TUMBLE_END(rt, INTERVAL '10' SECOND) AS we, "
        "COUNT(*) AS keys_windows, SUM(cnt) AS cnt FROM five GROUP BY TUMBLE(rt, INTERVAL '10' SECOND)")


@case("group_window_in_subquery", compare="multiset", why=WHY_WINDOW)
def group_window_in_subquery(t_env, E):
    """A group window in a FROM subquery, filtered and projected by the outer SELECT (the outer
    SELECT has no group window of its own)."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT k, ws, cnt FROM (SELECT k, TUMBLE_START(ts, INTERVAL '10' SECOND) AS ws, COUNT(*) AS cnt "
        "FROM bids GROUP BY TUMBLE(ts, INTERVAL '10' SECOND), k) WHERE cnt > 1")


@case("group_window_cascade_in_subquery", compare="multiset", why=WHY_WINDOW)
def group_window_cascade_in_subquery(t_env, E):
    """group_window_cascade written as one statement: the outer group window reads the inner
    subquery's TUMBLE_ROWTIME."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT TUMBLE_START(rt, INTERVAL '10' SECOND) AS ws, COUNT(*) AS keys_windows, SUM(cnt) AS cnt "
        "FROM (SELECT k, TUMBLE_ROWTIME(ts, INTERVAL '5' SECOND) AS rt, COUNT(*) AS cnt "
        "FROM bids GROUP BY TUMBLE(ts, INTERVAL '5' SECOND), k) GROUP BY TUMBLE(rt, INTERVAL '10' SECOND)")


@case("group_window_tumble_batch", mode="batch")
def group_window_tumble_batch(t_env, E):
    """group_window_tumble in batch mode: the same rows (the watermark plays no part)."""
    _bids(t_env, E)
    return t_env.sql_query(_TUMBLE_QUERY)


@case_in_both_modes("group_window_rowtime_in_expressions", compare="multiset", why=WHY_WINDOW)
def group_window_rowtime_in_expressions(t_env, E):
    """TUMBLE_ROWTIME inside expressions (a CAST to STRING, + INTERVAL, IS NULL): typed from the
    auxiliary function's nullable TIMESTAMP(3) *ROWTIME*, where TUMBLE_START's stay NOT NULL."""
    _bids(t_env, E)
    rowtime = "TUMBLE_ROWTIME(ts, INTERVAL '10' SECOND)"
    return t_env.sql_query(
        f"SELECT k, CAST({rowtime} AS STRING) AS rs, {rowtime} + INTERVAL '1' SECOND AS rp, {rowtime} IS NULL AS rn, "
        f"CAST(TUMBLE_START(ts, INTERVAL '10' SECOND) AS STRING) AS ss, COUNT(*) AS cnt "
        f"FROM bids GROUP BY {_TUMBLE}, k")


@case("group_window_error_not_time_attribute", compare="error", error_mentions=("time attribute",))
def group_window_error_not_time_attribute(t_env, E):
    """GROUP BY TUMBLE over a TIMESTAMP(3) column of a table without a WATERMARK (not a
    time attribute)."""
    _bids(t_env, E, watermark=None)
    return t_env.sql_query(_TUMBLE_QUERY)
