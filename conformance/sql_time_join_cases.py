"""SQL conformance cases of event-time joins: interval joins and temporal joins (issue 18).

Registered into :data:`conformance.sql_cases.CASES` (imported at the end of that module),
recorded by ``conformance/record_flink_sql.py`` like every SQL case. The inputs are CSV
files read by filesystem tables with a ``WATERMARK``; two sources, so the streaming
changelogs are compared materialized. The rows are out of order by less than the
watermark delay, so no row is late whenever Flink's periodic watermark comes.
"""

from __future__ import annotations

import functools

from conformance.sql_cases import _write, case, case_in_both_modes, queries_in_both_modes

# orders(id, k, ts, amount) and shipments(sid, k, ts, carrier): times in seconds after 2024-01-01 00:00:00.
ORDER_ROWS = [(1, "a", 1, 10), (2, "b", 2, 20), (3, "a", 5, 30), (4, "c", 4, 40), (5, "a", 9, 50),
              (6, "b", 12, 60), (7, "d", 11, 70), (8, "a", 15, 80), (9, "b", 20, 90), (10, None, 21, 100)]
SHIPMENT_ROWS = [(1, "a", 2, "ups"), (2, "b", 5, "dhl"), (3, "a", 7, "fedex"), (4, "a", 6, "ups"),
                 (5, "c", 14, "dhl"), (6, "b", 13, "ups"), (7, "e", 16, "dhl"), (8, "a", 17, "ups"),
                 (9, None, 20, "dhl"), (10, "b", 30, "fedex")]


def _stamp(seconds: int) -> str:
    return f"2024-01-01 00:00:{seconds:02d}" if seconds < 60 else f"2024-01-01 00:01:{seconds - 60:02d}"


def _csv(rows, time_index: int) -> str:
    lines = []
    for row in rows:
        fields = ["" if v is None else (_stamp(v) if i == time_index else str(v)) for i, v in enumerate(row)]
        lines.append(",".join(fields) + "\n")
    return "".join(lines)


# Rows appended to both inputs for the WHERE cases, after the newest rows (21 s, 30 s): out of order by
# less than the watermark delay (a, 19 s; a, 26 s: they still match), and late, far behind the watermark
# (e, 4 s; d, 3 s). The late rows have no partner within the bounds, so they add no row whether they
# arrive before or after the other input's watermark passes them (two sources interleave by timing).
LATE_ORDER_ROWS = [(11, "a", 19, 110), (12, "e", 4, 120)]
LATE_SHIPMENT_ROWS = [(11, "a", 26, "dhl"), (12, "d", 3, "ups")]


def _orders_shipments(t_env, E, late=False):
    orders = _write(E, "orders", _csv(ORDER_ROWS + (LATE_ORDER_ROWS if late else []), 2))
    shipments = _write(E, "shipments", _csv(SHIPMENT_ROWS + (LATE_SHIPMENT_ROWS if late else []), 2))
    t_env.execute_sql(
        "CREATE TABLE orders (id BIGINT, k STRING, ts TIMESTAMP(3), amount BIGINT, "
        "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv')")
    t_env.execute_sql(
        "CREATE TABLE shipments (sid BIGINT, k STRING, ts TIMESTAMP(3), carrier STRING, "
        "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{shipments}', 'format' = 'csv')")


_BETWEEN = "o.ts BETWEEN s.ts - INTERVAL '2' SECOND AND s.ts + INTERVAL '3' SECOND"
_HALF_OPEN = "o.ts >= s.ts - INTERVAL '4' SECOND AND o.ts < s.ts + INTERVAL '1' SECOND"
_FLIPPED = "s.ts > o.ts AND s.ts <= o.ts + INTERVAL '5' SECOND"

_INTERVAL_JOINS = {
    "inner_between": f"SELECT o.id, s.sid, o.ts, s.ts AS sts FROM orders o JOIN shipments s "
                     f"ON o.k = s.k AND {_BETWEEN}",
    "left_between": f"SELECT o.id, o.k, s.sid, s.carrier FROM orders o LEFT JOIN shipments s "
                    f"ON o.k = s.k AND {_BETWEEN}",
    "right_half_open": f"SELECT o.id, s.sid, s.k FROM orders o RIGHT JOIN shipments s "
                       f"ON o.k = s.k AND {_HALF_OPEN}",
    "full_flipped_with_condition": f"SELECT o.id, s.sid, o.amount, s.carrier FROM orders o FULL OUTER JOIN "
                                   f"shipments s ON o.k = s.k AND {_FLIPPED} AND s.carrier <> 'dhl'",
    "inner_all_columns": f"SELECT * FROM orders o JOIN shipments s ON o.k = s.k AND {_HALF_OPEN}",
}


queries_in_both_modes("interval_join_", _INTERVAL_JOINS, _orders_shipments,
                      "an interval join over two rowtime attributes.", compare="materialized")


# Bounds in WHERE rather than ON: Flink pushes them into the join condition (FlinkFilterJoinRule), and a LEFT
# join whose WHERE compares the padded side's columns becomes an inner join first: an interval join each time.
_WHERE_JOINS = {
    "comma": f"SELECT o.id, s.sid, o.ts, s.ts AS sts FROM orders o, shipments s WHERE o.k = s.k AND {_BETWEEN}",
    "on_and_where": f"SELECT o.id, s.sid, s.carrier FROM orders o JOIN shipments s ON o.k = s.k "
                    f"WHERE {_HALF_OPEN} AND o.amount > 20",
    "left_join": f"SELECT o.id, o.k, s.sid FROM orders o LEFT JOIN shipments s ON o.k = s.k WHERE {_BETWEEN}",
}


queries_in_both_modes("interval_join_where_", _WHERE_JOINS, functools.partial(_orders_shipments, late=True),
                      "time bounds in WHERE make an interval join, as in ON; inputs with out-of-order rows and late "
                      "rows.", compare="materialized")


@case("interval_join_then_tumble", compare="materialized")
def interval_join_then_tumble(t_env, E):
    """A tumbling window over the interval join's output: its rowtime columns stay time attributes."""
    _orders_shipments(t_env, E)
    t_env.create_temporary_view("joined", t_env.sql_query(
        f"SELECT o.id, o.amount, o.ts FROM orders o JOIN shipments s ON o.k = s.k AND {_BETWEEN}"))
    return t_env.sql_query(
        "SELECT window_start, window_end, COUNT(*) AS n, SUM(amount) AS total "
        "FROM TABLE(TUMBLE(TABLE joined, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end")


@case("time_join_regular_join_one_bound", compare="materialized")
def time_join_regular_join_one_bound(t_env, E):
    """Only a lower bound on the time distance: a regular join (updating for an outer join), whose time
    columns are no longer time attributes."""
    _orders_shipments(t_env, E)
    return t_env.sql_query("SELECT o.id, s.sid, o.ts, s.ts AS sts FROM orders o LEFT JOIN shipments s "
                           "ON o.k = s.k AND o.ts >= s.ts")


# One time bound with interval arithmetic, in WHERE: no interval join (one bound), so the bound stays in the
# regular join's condition, whose compilers must evaluate `ts - INTERVAL` (Nexmark q7's shape).
@case_in_both_modes("time_join_regular_join_interval_bound", compare="materialized")
def time_join_regular_join_interval_bound(t_env, E):
    """One bound with interval arithmetic in WHERE: a regular join whose condition shifts a timestamp."""
    _orders_shipments(t_env, E)
    return t_env.sql_query("SELECT o.id, s.sid, o.ts, s.ts AS sts FROM orders o JOIN shipments s ON o.k = s.k "
                           "WHERE o.ts >= s.ts - INTERVAL '2' SECOND")


# --- event-time temporal joins ------------------------------------------------------------------
# rates(currency, rate, ts): versions per currency, out of order by less than the 5 s watermark delay;
# rate_orders(id, currency, amount, ts) probe the version valid at their time.
RATE_ROWS = [("eur", 10, 0), ("usd", 20, 1), ("eur", 11, 6), ("gbp", 30, 4), ("usd", 21, 9),
             ("eur", 12, 14), ("usd", 22, 12), ("eur", 13, 20)]
RATE_ORDER_ROWS = [(1, "eur", 2, 3), (2, "usd", 1, 0), (3, "eur", 3, 6), (4, "gbp", 4, 8), (5, "eur", 5, 12),
                   (6, "usd", 6, 10), (7, "chf", 7, 11), (8, "eur", 8, 16), (9, "usd", 9, 15), (10, None, 10, 17),
                   (11, "eur", 11, 25), (12, "usd", 12, 13)]


def _rates(t_env, E, primary_key=True, watermark=True):
    rates = _write(E, "rates", _csv(RATE_ROWS, 2))
    orders = _write(E, "rate_orders", _csv(RATE_ORDER_ROWS, 3))
    key = ", PRIMARY KEY (currency) NOT ENFORCED" if primary_key else ""
    wm = ", WATERMARK FOR ts AS ts - INTERVAL '5' SECOND" if watermark else ""
    t_env.execute_sql(
        f"CREATE TABLE rates (currency STRING, rate BIGINT, ts TIMESTAMP(3){key}{wm}) "
        f"WITH ('connector' = 'filesystem', 'path' = '{rates}', 'format' = 'csv')")
    t_env.execute_sql(
        "CREATE TABLE rate_orders (id BIGINT, currency STRING, amount BIGINT, ts TIMESTAMP(3), "
        "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{orders}', 'format' = 'csv')")


_AS_OF = "FROM rate_orders AS o {join} rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency"

_TEMPORAL_JOINS = {
    "inner": "SELECT o.id, o.currency, o.amount, r.rate, o.amount * r.rate AS total " + _AS_OF.format(join="JOIN"),
    "left": "SELECT o.id, o.currency, r.rate, r.ts AS version_ts " + _AS_OF.format(join="LEFT JOIN"),
    "left_with_condition": "SELECT o.id, r.rate " + _AS_OF.format(join="LEFT JOIN") + " AND r.rate > 11",
    "all_columns": "SELECT * " + _AS_OF.format(join="JOIN"),
}


def _register_temporal_joins():
    for name, sql in _TEMPORAL_JOINS.items():
        def build(t_env, E, sql=sql):
            _rates(t_env, E)
            return t_env.sql_query(sql)
        build.__doc__ = f"{sql}: each order with the rate valid at its time, emitted as the watermark passes it."
        case(f"temporal_join_{name}", compare="materialized")(build)


_register_temporal_joins()


@case("temporal_join_error_right_join", compare="error", error_mentions=("FOR SYSTEM_TIME AS OF", "RIGHT"))
def temporal_join_error_right_join(t_env, E):
    """A RIGHT temporal join: Flink supports INNER and LEFT only."""
    _rates(t_env, E)
    return t_env.sql_query("SELECT o.id, r.rate " + _AS_OF.format(join="RIGHT JOIN"))


@case("temporal_join_error_no_primary_key", compare="error", error_mentions=("FOR SYSTEM_TIME AS OF", "primary key"))
def temporal_join_error_no_primary_key(t_env, E):
    """The versioned table declares no PRIMARY KEY."""
    _rates(t_env, E, primary_key=False)
    return t_env.sql_query("SELECT o.id, r.rate " + _AS_OF.format(join="JOIN"))


@case("temporal_join_error_no_watermark", compare="error", error_mentions=("FOR SYSTEM_TIME AS OF", "time attribute"))
def temporal_join_error_no_watermark(t_env, E):
    """The versioned table has no rowtime attribute (no WATERMARK)."""
    _rates(t_env, E, watermark=False)
    return t_env.sql_query("SELECT o.id, r.rate " + _AS_OF.format(join="JOIN"))


@case("temporal_join_error_key_not_in_condition", compare="error",
      error_mentions=("FOR SYSTEM_TIME AS OF", "primary key"))
def temporal_join_error_key_not_in_condition(t_env, E):
    """ON does not equate the versioned table's primary key."""
    _rates(t_env, E)
    return t_env.sql_query("SELECT o.id, r.rate FROM rate_orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
                           "ON o.amount = r.rate")


@case("temporal_join_error_batch", mode="batch", compare="error", error_mentions=("FOR SYSTEM_TIME AS OF",))
def temporal_join_error_batch(t_env, E):
    """A temporal join in batch mode: Flink 2.3 cannot plan it."""
    _rates(t_env, E)
    return t_env.sql_query("SELECT o.id, r.rate " + _AS_OF.format(join="JOIN"))
