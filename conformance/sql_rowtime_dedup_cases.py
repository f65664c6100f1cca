"""SQL conformance cases of deduplication on row time: ``ROW_NUMBER() OVER (PARTITION BY k
ORDER BY ts DESC|ASC) = 1`` where ``ts`` is the rowtime attribute (Nexmark q18's shape).

Registered into :data:`conformance.sql_cases.CASES` (imported at the end of that module),
recorded by ``conformance/record_flink_sql.py`` like every SQL case.  Flink plans the query
as ``Deduplicate(keep=[LastRow|FirstRow], order=[ROWTIME])``, not as a Top-N: a key's row is
replaced by a row whose time is later *or equal* (keep last) or strictly earlier (keep first),
the replacement emitted as ``-U``/``+U`` at once (no waiting for the watermark), so a row with
an older time is ignored and a tie goes to the row that came later.  A Top-1 would keep the
first of tied rows instead, which is where Nexmark q18's three rows differed.  Rows behind
the watermark are not dropped.  With mini-batch Flink still emits every replacement of the
bundle (RowTimeMiniBatchDeduplicateFunction: "we need all changelog in versioned table of
temporal join"), so only the order across keys changes (``multiset``).
"""

from __future__ import annotations

from conformance.sql_cases import MINIBATCH, case
from conformance.sql_window_cases import _bids

# (seconds after 2024-01-01 00:00:00 as text, key, value): per key, ties on ts, rows older
# than the key's newest, and at the end rows 10 s and more behind the watermark.
ROWS = [
    ("01.000", "a", 1),
    ("02.000", "b", 2),
    ("04.000", "a", 3),
    ("04.000", "a", 4),     # a tie with the row before: keep last takes it, keep first not
    ("03.000", "a", 5),     # older than a's newest: keep last ignores it, keep first too (3 > 1)
    ("00.500", "a", 6),     # earlier than a's first row: keep first takes it
    ("02.000", "b", 7),     # a tie with b's only row
    ("09.000", "c", 8),
    ("12.000", "b", 9),
    ("08.000", "c", 10),    # 4 s behind the newest row, 2 s behind the watermark: late, not dropped
    ("20.000", "a", 11),
    ("05.000", "c", 12),    # far behind the watermark, earlier than c's first row
    ("20.000", "a", 13),    # a tie again
]

_KEEP_LAST = ("SELECT ts, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn "
              "FROM bids) WHERE rn = 1")
_KEEP_FIRST = ("SELECT ts, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) AS rn "
               "FROM bids) WHERE rn <= 1")


@case("rowtime_dedup_keep_last")
def rowtime_dedup_keep_last(t_env, E):
    """Keep the latest row per key by row time: a later or equal time replaces the row (-U/+U),
    an older one is ignored, late rows count."""
    _bids(t_env, E, rows=ROWS)
    return t_env.sql_query(_KEEP_LAST)


@case("rowtime_dedup_keep_first")
def rowtime_dedup_keep_first(t_env, E):
    """Keep the earliest row per key by row time: only a strictly earlier time replaces the row."""
    _bids(t_env, E, rows=ROWS)
    return t_env.sql_query(_KEEP_FIRST)


@case("rowtime_dedup_keep_last_mini_batch", config=MINIBATCH)
def rowtime_dedup_keep_last_mini_batch(t_env, E):
    """Keep last by row time with mini-batch: every replacement of a bundle is still emitted."""
    _bids(t_env, E, rows=ROWS)
    return t_env.sql_query(_KEEP_LAST)


@case("rowtime_dedup_then_aggregate")
def rowtime_dedup_then_aggregate(t_env, E):
    """The latest row per key by row time, then SUM(v) over them: the -U/+U retract the sum."""
    _bids(t_env, E, rows=ROWS)
    return t_env.sql_query(f"SELECT COUNT(*) AS n, SUM(v) AS s FROM ({_KEEP_LAST})")


@case("rowtime_dedup_keep_last_batch", mode="batch")
def rowtime_dedup_keep_last_batch(t_env, E):
    """Keep last by row time over bounded input in batch mode: the row of the greatest time
    per key (Nexmark q18 in batch)."""
    _bids(t_env, E, rows=[r for r in ROWS if r[2] not in (4, 7, 13)])  # no ties: batch breaks them arbitrarily
    return t_env.sql_query(_KEEP_LAST)
