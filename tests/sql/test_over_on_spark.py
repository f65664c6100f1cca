"""OVER aggregations end to end on Spark, across micro-batches, against a plain-Python reference.

The conformance cases (conformance/sql_over_cases.py) read their input in one micro-batch
(or one row per micro-batch); here the source reads 5 rows per micro-batch, so frames reach
back into rows emitted by earlier micro-batches (the kernel's history state), and the
watermark, which moves after the rows that advance it, makes some rows late.
"""

from __future__ import annotations

import datetime
import os
import random

import pytest

pytestmark = pytest.mark.spark

EPOCH = datetime.datetime(2024, 1, 1)
ROWS_PER_BATCH = 5
DELAY_MS = 2000


def rows_of(seed: int, n: int = 40) -> list[tuple[int, str, int | None]]:
    """(ms, key, value): time mostly moves forward, with rows up to 8 s behind (some of them late)."""
    rnd = random.Random(seed)
    out, now = [], 0
    for _ in range(n):
        now += rnd.choice([0, 500, 1000, 1500])
        ts = max(0, now - rnd.choice([0, 0, 0, 500, 1500, 5000, 8000]))
        out.append((ts, rnd.choice("ab"), rnd.choice([None, 1, 2, 3, 5, 8])))
    return out


def not_late(rows):
    """The rows the streaming job keeps. A bounded frame (here RANGE 3 s) drops a row, as Flink's
    RowTimeRangeBoundedPrecedingFunction, when its timestamp is at or before the last one its key fired
    (its rows came out when a watermark passed them), though it may be behind the watermark. As Flink's
    WatermarkAssignerOperator, the watermark (newest timestamp so far minus the delay) is emitted after a
    row that moves it more than 200 ms ahead of the last one emitted; changeflow also emits the rest at
    the end of each micro-batch."""
    kept, emitted, newest = [], None, None
    fired: dict[str, int] = {}
    pending: list[tuple[int, str]] = []
    for i, (ts, k, v) in enumerate(rows):
        if k not in fired or ts > fired[k]:
            kept.append((ts, k, v))
            pending.append((ts, k))
        newest = ts if newest is None else max(newest, ts)
        candidate = newest - DELAY_MS
        end_of_batch = (i + 1) % ROWS_PER_BATCH == 0
        if emitted is None or candidate - emitted > 200 or (end_of_batch and candidate > emitted):
            emitted = candidate
            for t, key in pending:
                if t <= emitted:
                    fired[key] = max(fired.get(key, t), t)
            pending = [p for p in pending if p[0] > emitted]
    return kept


def reference(rows, preceding_ms: int):
    """(k, ms, v, SUM(v), COUNT(*)) over RANGE BETWEEN preceding_ms PRECEDING AND CURRENT ROW, per key."""
    out = []
    for ts, k, v in rows:
        frame = [r for r in rows if r[1] == k and ts - preceding_ms <= r[0] <= ts]
        values = [r[2] for r in frame if r[2] is not None]
        out.append((k, ts, v, sum(values) if values else None, len(frame)))
    return sorted(out, key=repr)


def run(spark, tmp_path, rows, streaming: bool):
    from changeflow.table import EnvironmentSettings, TableEnvironment

    directory = tmp_path / ("stream" if streaming else "batch")
    directory.mkdir()
    (directory / "data.csv").write_text("".join(
        f"{(EPOCH + datetime.timedelta(milliseconds=ts)).isoformat(sep=' ', timespec='milliseconds')},{k},"
        f"{'' if v is None else v}\n" for ts, k, v in rows))
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings, spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    t_env.get_config().set("changeflow.source.rows-per-batch", str(ROWS_PER_BATCH))
    t_env.execute_sql(
        "CREATE TABLE bids (ts TIMESTAMP(3), k STRING, v INT, WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
        f"WITH ('connector' = 'filesystem', 'path' = '{os.fspath(directory)}', 'format' = 'csv', "
        "'csv.null-literal' = '')")
    table = t_env.sql_query(
        "SELECT k, ts, v, SUM(v) OVER w AS s, COUNT(*) OVER w AS c FROM bids "
        "WINDOW w AS (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '3' SECOND PRECEDING AND CURRENT ROW)")
    with table.execute().collect() as result:
        out = [(str(r.get_row_kind()), tuple(r)) for r in result]
    assert {kind for kind, _ in out} == {"+I"}
    return sorted(((k, int((ts - EPOCH).total_seconds() * 1000), v, s, c) for _, (k, ts, v, s, c) in out), key=repr)


def test_streaming_over_micro_batches_equals_the_reference_over_the_rows_not_late(spark, tmp_path):
    rows = rows_of(seed=7)
    kept = not_late(rows)
    assert 0 < len(rows) - len(kept) < len(rows) // 2, "the input should have some late rows, not too many"
    assert run(spark, tmp_path, rows, streaming=True) == reference(kept, 3000)
    assert run(spark, tmp_path, rows, streaming=False) == reference(rows, 3000)
