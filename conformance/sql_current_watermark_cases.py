"""SQL conformance cases of ``CURRENT_WATERMARK(ts)`` (issue 18).

Registered into :data:`conformance.sql_cases.CASES` (imported at the end of that module),
recorded by ``conformance/record_flink_sql.py``.  The value is the last watermark that
reached the Calc before the row: NULL before the first, then what the WatermarkAssigner
emitted after the rows before it (``ts - 2 s`` of the newest row, emitted after each row
that moves it more than 200 ms), typed ``TIMESTAMP(3)`` (nullable, no time attribute).
Its typical use filters the rows behind the watermark; an argument that is no rowtime
attribute fails Flink's validation (``Invalid function call:`` with the argument types).
"""

from __future__ import annotations

from conformance.sql_cases import case
from conformance.sql_window_cases import LATE_BID_ROWS, _bids


@case("current_watermark_filters_late_rows")
def current_watermark_filters_late_rows(t_env, E):
    """Every row with the watermark before it, keeping only the rows ahead of it: the two
    rows at the end (05.000 and 31.000, behind the watermark 35 s) are dropped, as is no
    out-of-order row within the 2 s delay."""
    _bids(t_env, E, rows=LATE_BID_ROWS)
    return t_env.sql_query(
        "SELECT ts, k, v, CURRENT_WATERMARK(ts) AS wm FROM bids "
        "WHERE ts > CURRENT_WATERMARK(ts) OR CURRENT_WATERMARK(ts) IS NULL")


@case("current_watermark_error_not_rowtime", compare="error",
      error_mentions=("Invalid function call", "CURRENT_WATERMARK(INT)"))
def current_watermark_error_not_rowtime(t_env, E):
    """CURRENT_WATERMARK of a column that is no rowtime attribute."""
    _bids(t_env, E)
    return t_env.sql_query("SELECT CURRENT_WATERMARK(v) AS wm FROM bids")
