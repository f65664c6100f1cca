"""Deduplication on row time (kernels/rank/rowtime_deduplicate.py) against Flink 2.3's goldens and a
row-by-row model of Flink's functions, without Spark."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.kernels.rank import RowtimeDeduplicate
from changeflow.testing import KernelHarness, insert_record

GOLDENS = Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "sql"
BASE = dt.datetime(2024, 1, 1)
EPOCH_BASE = int((BASE - dt.datetime(1970, 1, 1)).total_seconds() * 1000)
COLUMNS = ["ts", "k", "v"]
DTYPES = {"ts": "datetime64[ns]", "k": object, "v": "Int64"}


def _golden(name: str) -> list[tuple[str, tuple]]:
    changes = json.loads((GOLDENS / f"{name}.json").read_text())["changes"]
    return [(kind, (dt.datetime.fromisoformat(ts), k, v)) for kind, (ts, k, v) in changes]


def _golden_rows() -> list[tuple]:
    """The input of the golden cases: conformance/sql_rowtime_dedup_cases.py's rows."""
    from conformance.sql_rowtime_dedup_cases import ROWS

    return [(BASE + dt.timedelta(seconds=float(s)), k, v) for s, k, v in ROWS]


def _ms(ts: dt.datetime) -> int:
    return EPOCH_BASE + round((ts - BASE).total_seconds() * 1000)


def _run(kernel: RowtimeDeduplicate, rows: list[tuple], *, per_row: bool = True, delay_ms: int = 2000,
         restart: bool = False) -> list[tuple[str, tuple]]:
    """Feed ``rows`` one batch each (or all in one), the watermark ``delay_ms`` behind the newest
    after each row as Flink's assigner emits it; end of input fires what waits."""
    h = KernelHarness(kernel, COLUMNS, dtypes=DTYPES, restart_every_batch=restart)
    newest = None
    if per_row:
        for row in rows:
            h.process([insert_record(*row)])
            newest = _ms(row[0]) if newest is None else max(newest, _ms(row[0]))
            h.watermark(newest - delay_ms)
    else:
        h.process([insert_record(*r) for r in rows])
    h.end_of_input()
    return [(str(r.get_row_kind()), (r[0].to_pydatetime(), r[1], r[2])) for r in h.changes]


def test_keep_last_matches_flinks_changelog():
    out = _run(RowtimeDeduplicate(COLUMNS, ["k"], "ts", keep_last=True), _golden_rows())
    assert out == _golden("rowtime_dedup_keep_last")


def test_keep_first_on_the_watermark_matches_flinks_changelog():
    kernel = RowtimeDeduplicate(COLUMNS, ["k"], "ts", keep_last=False, on_watermark=True)
    out = _run(kernel, _golden_rows(), restart=True)
    assert out == _golden("rowtime_dedup_keep_first")


def test_keep_last_in_one_bundle_emits_every_replacement_as_flinks_mini_batch_does():
    out = _run(RowtimeDeduplicate(COLUMNS, ["k"], "ts", keep_last=True), _golden_rows(), per_row=False)
    assert Counter(out) == Counter(_golden("rowtime_dedup_keep_last_mini_batch"))


def test_late_rows_of_keep_first_are_counted():
    kernel = RowtimeDeduplicate(COLUMNS, ["k"], "ts", keep_last=False, on_watermark=True)
    h = KernelHarness(kernel, COLUMNS, dtypes=DTYPES)
    h.watermark(_ms(BASE) + 5000)
    h.process([insert_record(BASE + dt.timedelta(seconds=4), "a", 1),    # behind the watermark: late
               insert_record(BASE + dt.timedelta(seconds=6), "a", 2)])
    assert kernel.late_records(h.state) == 1
    assert [r[2] for r in h.end_of_input()] == [2]


# --- a row-by-row model of Flink's functions ----------------------------------------------------

def _flink_eager(rows: list[tuple], keep_last: bool) -> list[tuple[str, tuple]]:
    """RowTimeDeduplicateFunction, one record at a time (shouldKeepCurrentRow, updateDeduplicateResult)."""
    current: dict = {}
    out = []
    for row in rows:
        before = current.get(row[1])
        keep = before is None or (before[0] <= row[0] if keep_last else row[0] < before[0])
        if keep:
            out += [("+I", row)] if before is None else [("-U", before), ("+U", row)]
            current[row[1]] = row
    return out


_rows = st.lists(st.tuples(st.integers(0, 30), st.sampled_from("abc"), st.integers(0, 9)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(rows=_rows, keep_last=st.booleans(), split=st.integers(1, 7), restart=st.booleans())
def test_eager_modes_equal_flinks_record_by_record_changelog(rows, keep_last, split, restart):
    """Random times with ties and disorder, fed in random batches (the kernel folds each batch in one
    pass): the changelog is the per-record one, in order."""
    rows = [(BASE + dt.timedelta(seconds=s), k, v) for s, k, v in rows]
    h = KernelHarness(RowtimeDeduplicate(COLUMNS, ["k"], "ts", keep_last=keep_last), COLUMNS, dtypes=DTYPES,
                      restart_every_batch=restart)
    for i in range(0, len(rows), split):
        h.process([insert_record(*r) for r in rows[i:i + split]])
    got = [(str(r.get_row_kind()), (r[0].to_pydatetime(), r[1], r[2])) for r in h.changes]
    assert got == _flink_eager(rows, keep_last)


def _flink_on_watermark(events: list) -> list[tuple]:
    """RowTimeDeduplicateKeepFirstRowFunction: ``events`` are rows and ``("wm", ms)`` watermarks."""
    pending: dict = {}
    emitted: set = set()
    watermark = -(2 ** 63)
    out = []
    for event in events + [("wm", 2 ** 62)]:
        if event[0] == "wm":
            if event[1] > watermark:
                watermark = event[1]
                due = sorted((r for r in pending.values() if _ms(r[0]) <= watermark), key=lambda r: (r[0], r[3]))
                for r in due:
                    out.append(r[:3])
                    emitted.add(r[1])
                    del pending[r[1]]
            continue
        if _ms(event[0]) < watermark or event[1] in emitted:
            continue
        before = pending.get(event[1])
        if before is None or event[0] < before[0]:
            pending[event[1]] = event
    return out


@settings(max_examples=150, deadline=None)
@given(rows=_rows, delay=st.integers(0, 8), restart=st.booleans(), split=st.integers(1, 5))
def test_keep_first_on_the_watermark_equals_flinks_function(rows, delay, restart, split):
    """Random disorder against a watermark ``delay`` s behind the newest row after each batch: the
    rows emitted, in order, are those of Flink's timer-based function; late rows are dropped."""
    rows = [(BASE + dt.timedelta(seconds=s), k, v, i) for i, (s, k, v) in enumerate(rows)]
    h = KernelHarness(RowtimeDeduplicate(COLUMNS, ["k"], "ts", keep_last=False, on_watermark=True), COLUMNS,
                      dtypes=DTYPES, restart_every_batch=restart)
    events: list = []
    newest = None
    for i in range(0, len(rows), split):
        batch = rows[i:i + split]
        h.process([insert_record(*r[:3]) for r in batch])
        events += batch
        newest = max([newest or -(2 ** 62)] + [_ms(r[0]) for r in batch])
        h.watermark(newest - delay * 1000)
        events.append(("wm", newest - delay * 1000))
    h.end_of_input()
    got = [(r[0].to_pydatetime(), r[1], r[2]) for r in h.changes]
    assert all(str(r.get_row_kind()) == "+I" for r in h.changes)
    assert got == _flink_on_watermark(events)


def test_a_retraction_is_refused_naming_the_record():
    import pytest

    from changeflow.testing import delete_record

    h = KernelHarness(RowtimeDeduplicate(COLUMNS, ["k"], "ts", keep_last=True), COLUMNS, dtypes=DTYPES)
    with pytest.raises(ValueError, match="insert-only input but got the retraction .*'k': 'a'"):
        h.process([delete_record(BASE, "a", 1)])


def test_timestamps_as_objects_with_a_time_zone_compare_as_instants():
    """TIMESTAMP_LTZ values as Python objects: the later instant wins across the DST change."""
    kernel = RowtimeDeduplicate(COLUMNS, ["k"], "ts", keep_last=True)
    h = KernelHarness(kernel, COLUMNS, dtypes={"ts": object, "k": object, "v": "Int64"})
    paris = [pd.Timestamp(t, tz="Europe/Paris") for t in ("2024-10-27 02:30+02:00", "2024-10-27 02:10+01:00")]
    h.process([insert_record(paris[0], "a", 1), insert_record(paris[1], "a", 2)])   # 00:30 UTC, then 01:10 UTC
    assert [r[2] for r in h.changes] == [1, 1, 2]
