"""SQL conformance cases of Flink's window operators over window TVFs: window Top-N, window
deduplication and window join (issue 18).

Registered into :data:`conformance.sql_cases.CASES` (imported at the end of that module),
recorded by ``conformance/record_flink_sql.py`` like every SQL case.  The tables are those of
:mod:`conformance.sql_window_cases` (``bids``: rows up to 1.5 s out of order, a watermark 2 s
behind the newest row, and two rows behind the watermark at the end: ``a`` at 5 s, whose window
[0,10) has fired, and ``a`` at 31 s, whose window [30,40) has not: lateness is tested on the
one-input operators) and ``asks``, the same shape.
Each operator emits a window's rows once, insert-only, when the watermark passes the window's
end, and drops the rows of windows that have fired.  Where the output of one window spans
several keys, Flink emits the keys in the order of its timer queue, hence ``multiset``; several
operators share one query (``UNION ALL``) to keep the suite's Spark queries few.
"""

from __future__ import annotations

from conformance.sql_cases import case
from conformance.sql_window_cases import LATE_BID_ROWS, WHY_WINDOW, _bids

_TUMBLE = "TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
_ASKS = "TABLE(TUMBLE(TABLE asks, DESCRIPTOR(ts), INTERVAL '10' SECOND))"
WHY_TOP = "window Top-N: one partition per window, windows fired in window-end order, each in rank order"

# asks(ts, k, v): a and b ask in most windows, d only in [10,20); c never asks.  No row is
# behind its own table's watermark: a window join's watermark is the least of its two inputs',
# and how far the other input has come when a row arrives depends on how Flink interleaves the
# two sources, so a row behind its own watermark may or may not be late (the joins' lateness is
# tested on the kernel, tests/kernels/test_window_ops_kernels.py).
ASK_ROWS = [
    ("02.500", "a", 2),
    ("06.000", "b", 5),
    ("05.000", "a", 1),     # 1 s late, window still open
    ("12.000", "d", 4),
    ("16.000", "a", 7),
    ("18.000", "b", 3),
    ("22.000", "b", 1),
    ("21.000", "a", 8),     # 1 s behind the newest row, window still open
    ("31.000", "a", 9),
]


@case("window_topn_tvf", compare="changelog", why=WHY_TOP)
def window_topn_tvf(t_env, E):
    """Window Top-N on a TUMBLE TVF: the two largest v per 10 s window with their row number.
    The late row a at 5 s (v=100) is dropped from [0,10), which has fired; a at 31 s (v=200)
    leads [30,40).  NULL v ranks last in DESC order."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    return t_env.sql_query(
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
        f"ORDER BY v DESC) AS rn FROM {_TUMBLE}) WHERE rn <= 2")


@case("window_topn_window_aggregate", compare="changelog", why=WHY_TOP)
def window_topn_window_aggregate(t_env, E):
    """Window Top-N after a window aggregation: the two keys with the largest SUM(v) per 10 s
    window, ranks 1 and 2 (rn BETWEEN), the row number not selected.  Ties on SUM(v) are broken
    by k: rows of equal sort keys rank in arrival order, which is the window aggregation's
    emission order (its timer queue's in Flink)."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    return t_env.sql_query(
        "SELECT window_start, window_end, k, s FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, "
        "window_end ORDER BY s DESC, k) AS rn FROM (SELECT window_start, window_end, k, SUM(v) AS s, COUNT(*) AS c "
        f"FROM {_TUMBLE} GROUP BY window_start, window_end, k)) WHERE rn BETWEEN 1 AND 2")


@case("window_topn_hop_per_key", compare="multiset", why=WHY_WINDOW)
def window_topn_hop_per_key(t_env, E):
    """Window Top-N per key on HOP windows (slide 5 s, size 10 s): the two smallest v per key
    and window (rn <= 2, with a second ORDER BY column), and rn = 1 by v DESC: a rank kept only
    at 1 on a column that is no time attribute is a WindowRank with the constant 1 added."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    hop = "TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND))"
    return t_env.sql_query(
        "SELECT 'low2' AS q, window_start, window_end, k, v, ts, rn FROM (SELECT *, ROW_NUMBER() OVER "
        f"(PARTITION BY window_start, window_end, k ORDER BY v ASC, ts DESC) AS rn FROM {hop}) WHERE rn <= 2 "
        "UNION ALL "
        "SELECT 'high1' AS q, window_start, window_end, k, v, ts, rn FROM (SELECT *, ROW_NUMBER() OVER "
        f"(PARTITION BY window_start, window_end, k ORDER BY v DESC) AS rn FROM {hop}) WHERE rn = 1")


@case("window_deduplicate_first_last", compare="multiset", why=WHY_WINDOW)
def window_deduplicate_first_last(t_env, E):
    """Window deduplication on a TUMBLE TVF per key: the first row by ts (ORDER BY ts ASC, with
    rn selected: the constant 1) and the last row (ORDER BY ts DESC, rn not selected).  The
    late row a at 5 s would be [0,10)'s first a; it is dropped."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    return t_env.sql_query(
        "SELECT 'first' AS q, ts, k, v, window_start, window_end, rn FROM (SELECT *, ROW_NUMBER() OVER "
        f"(PARTITION BY window_start, window_end, k ORDER BY ts ASC) AS rn FROM {_TUMBLE}) WHERE rn = 1 "
        "UNION ALL "
        "SELECT 'last' AS q, ts, k, v, window_start, window_end, CAST(0 AS BIGINT) AS rn FROM (SELECT *, "
        f"ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts DESC) AS rn FROM {_TUMBLE}) "
        "WHERE rn <= 1")


@case("window_join_inner", compare="multiset", why=WHY_WINDOW)
def window_join_inner(t_env, E):
    """Window join of two TUMBLE TVFs on window_start, window_end and k: every pair of a bid
    and an ask of the same key in the same 10 s window, emitted when the watermark passes the
    window's end.  Both sides' ts and window_time stay rowtime attributes (*ROWTIME*)."""
    _bids(t_env, E)
    _bids(t_env, E, name="asks", rows=ASK_ROWS)
    return t_env.sql_query(
        f"SELECT * FROM (SELECT * FROM {_TUMBLE}) L JOIN (SELECT * FROM {_ASKS}) R "
        "ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k")


@case("window_join_outer", compare="multiset", why=WHY_WINDOW)
def window_join_outer(t_env, E):
    """LEFT, RIGHT and FULL window joins on window and k with a non-equi condition (the bid
    below the ask): the rows of a side that match nothing in their window are padded with
    nulls when the window fires."""
    _bids(t_env, E)
    _bids(t_env, E, name="asks", rows=ASK_ROWS)
    cols = "L.k AS lk, L.v AS lv, L.ts AS lts, R.k AS rk, R.v AS rv, R.ts AS rts, " \
           "COALESCE(L.window_end, R.window_end) AS we"
    on = "ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k AND L.v < R.v"
    return t_env.sql_query(" UNION ALL ".join(
        f"SELECT '{kind}' AS q, {cols} FROM (SELECT * FROM {_TUMBLE}) L {kind} JOIN (SELECT * FROM {_ASKS}) R {on}"
        for kind in ("LEFT", "RIGHT", "FULL")))


@case("window_join_in_subquery", compare="multiset", why=WHY_WINDOW)
def window_join_in_subquery(t_env, E):
    """A window semi join written as IN: the bids whose key asked in the same window (Flink
    plans a WindowJoin of type LeftSemiJoin; changeflow a window join with the distinct keys of
    each window of the subquery, a window aggregation, which gives the same rows)."""
    _bids(t_env, E)
    _bids(t_env, E, name="asks", rows=ASK_ROWS)
    return t_env.sql_query(
        f"SELECT k, v, ts, window_end FROM (SELECT * FROM {_TUMBLE}) L WHERE L.k IN (SELECT R.k FROM "
        f"(SELECT * FROM {_ASKS}) R WHERE L.window_start = R.window_start AND L.window_end = R.window_end)")


# --- windowed inputs: a window aggregation over another window operator's window ---------------
# Flink plans a GROUP BY window_start, window_end over a windowed input (a window aggregation's
# output, not a TVF) as a window aggregation with a WindowAttachedWindowingStrategy: insert-only,
# each window fired when the watermark passes its end; Nexmark q5 is the best-known such query.

_HOP = "TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))"


@case("window_agg_over_windowed_agg", compare="multiset", why=WHY_WINDOW)
def window_agg_over_windowed_agg(t_env, E):
    """A window aggregation over a window aggregation's window_start and window_end (not over
    a TVF): per HOP window (slide 2 s, size 10 s), the largest and total per-key count and how
    many keys bid.  The late rows (a at 5 s and 31 s) are dropped or counted by the first level
    as in window_tumble_agg_late_rows; the second level drops nothing: each first-level row
    reaches it before the watermark that fired it."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    return t_env.sql_query(
        "SELECT window_start, window_end, MAX(c) AS maxc, SUM(c) AS total, COUNT(*) AS keys FROM "
        f"(SELECT window_start, window_end, k, COUNT(*) AS c FROM {_HOP} GROUP BY window_start, window_end, k) "
        "GROUP BY window_start, window_end")


@case("window_agg_over_windowed_agg_window_time", compare="multiset", why=WHY_WINDOW)
def window_agg_over_windowed_agg_window_time(t_env, E):
    """The same over TUMBLE 10 s, grouping by the first level's window_time too (renamed): the
    second level's window_time stays a rowtime attribute (TIMESTAMP(3) *ROWTIME*)."""
    _bids(t_env, E)
    return t_env.sql_query(
        "SELECT ws, we, wt, SUM(s) AS s, MIN(s) AS low FROM (SELECT window_start AS ws, window_end AS we, "
        f"window_time AS wt, k, SUM(v) AS s FROM {_TUMBLE} GROUP BY window_start, window_end, window_time, k) "
        "GROUP BY ws, we, wt")


@case("window_nexmark_q5_shape", compare="multiset", why=WHY_WINDOW)
def window_nexmark_q5_shape(t_env, E):
    """Nexmark q5 (hot items) over bids, its text with auction -> k and dateTime -> ts: per HOP
    window, the keys with the most bids.  Flink plans a window join of the per-key window
    counts with their per-window maximum (a window aggregation over a windowed input)."""
    _bids(t_env, E)
    counts = f"SELECT k, COUNT(*) AS num, window_start AS starttime, window_end AS endtime FROM {_HOP} " \
             "GROUP BY k, window_start, window_end"
    return t_env.sql_query(
        f"SELECT AuctionBids.k, AuctionBids.num FROM ({counts}) AS AuctionBids JOIN (SELECT MAX(CountBids.num) "
        f"AS maxn, CountBids.starttime, CountBids.endtime FROM ({counts}) AS CountBids "
        "GROUP BY CountBids.starttime, CountBids.endtime) AS MaxBids "
        "ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime AND "
        "AuctionBids.num >= MaxBids.maxn")


# asks with a NULL key in [30,40): NOT IN finds no bid of that window (x NOT IN (.., NULL) is
# never true), NOT EXISTS keeps the bids whose key did not ask.
ANTI_ASK_ROWS = ASK_ROWS + [("33.000", "", 3)]


@case("window_anti_join", compare="multiset", why=WHY_WINDOW)
def window_anti_join(t_env, E):
    """Window anti joins (Flink's WindowJoin of type LeftAntiJoin): the bids whose key did not
    ask in the same 10 s window, as NOT EXISTS and as NOT IN (null-aware: the NULL ask in
    [30,40) removes every bid of that window)."""
    _bids(t_env, E)
    _bids(t_env, E, name="asks", rows=ANTI_ASK_ROWS)
    where = "L.window_start = R.window_start AND L.window_end = R.window_end"
    return t_env.sql_query(
        f"SELECT 'not_exists' AS q, k, v, ts, window_end FROM (SELECT * FROM {_TUMBLE}) L WHERE NOT EXISTS "
        f"(SELECT * FROM (SELECT * FROM {_ASKS}) R WHERE L.k = R.k AND {where}) "
        f"UNION ALL SELECT 'not_in' AS q, k, v, ts, window_end FROM (SELECT * FROM {_TUMBLE}) L WHERE L.k NOT IN "
        f"(SELECT R.k FROM (SELECT * FROM {_ASKS}) R WHERE {where})")


@case("window_agg_over_window_operators", compare="multiset", why=WHY_WINDOW)
def window_agg_over_window_operators(t_env, E):
    """A window aggregation (GROUP BY window_start, window_end) over the output of a window
    Top-N, a window deduplication and a window join: Flink plans each as a window aggregation
    whose input carries its windows (a WindowAttachedWindowingStrategy), one insert-only row per
    window when the watermark passes its end.  The Top-N and deduplication read ``bids`` with the
    late rows (a at 5 s is dropped before them, a at 31 s leads [30,40)); the join reads ``bidsj``
    without them and ``asks`` (see ASK_ROWS on a join's lateness)."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    _bids(t_env, E, name="bidsj")
    _bids(t_env, E, name="asks", rows=ASK_ROWS)
    top2 = f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) " \
           f"AS rn FROM {_TUMBLE}) WHERE rn <= 2"
    first = f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts) " \
            f"AS rn FROM {_TUMBLE}) WHERE rn = 1"
    bidsj = _TUMBLE.replace("TABLE bids", "TABLE bidsj")
    joined = f"SELECT L.window_start, L.window_end, L.v + R.v AS v FROM (SELECT * FROM {bidsj}) L JOIN " \
             f"(SELECT * FROM {_ASKS}) R ON L.window_start = R.window_start AND L.window_end = R.window_end " \
             "AND L.k = R.k"
    return t_env.sql_query(" UNION ALL ".join(
        f"SELECT '{q}' AS q, window_start, window_end, COUNT(*) AS n, SUM(v) AS s FROM ({sub}) "
        "GROUP BY window_start, window_end" for q, sub in (("top2", top2), ("first", first), ("join", joined))))


@case("window_session_agg_over_session_agg", compare="multiset", why=(
    "the session aggregation fires the sessions one watermark closes in the order of its timer queue, "
    "which the ordinary GROUP BY after it emits in"))
def window_session_agg_over_session_agg(t_env, E):
    """GROUP BY window_start, window_end over a SESSION window aggregation's output: Flink 2.3
    plans no window-attached aggregation for a session window but an ordinary GroupAggregate
    over the session aggregation's insert-only rows (here no two keys share a session's start
    and end, so only inserts)."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    session = "TABLE(SESSION(TABLE bids PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
    return t_env.sql_query(
        "SELECT window_start, window_end, COUNT(*) AS n, SUM(c) AS s FROM (SELECT window_start, window_end, k, "
        f"COUNT(*) AS c FROM {session} GROUP BY window_start, window_end, k) GROUP BY window_start, window_end")
