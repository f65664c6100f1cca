"""The watermarks a watermark assigner emits among a micro-batch's rows, as Flink's WatermarkAssignerOperator.

Pure numpy (no Spark): the Spark runtime's assigner stages (``runtime/spark/event_time.py``, and the
packing stage of ``inline_watermarks.py``) call it on each partition's rows in order.
"""

from __future__ import annotations

import numpy as np

__all__ = ["emitted_watermarks", "shifted_epoch_ms"]


def emitted_watermarks(values: np.ndarray, positions: np.ndarray, last: int | None, pending: tuple | None,
                       interval_ms: int) -> tuple[list[tuple[int, int]], int | None, tuple | None]:
    """The watermarks an assigner emits over rows with watermark expression ``values`` at ``positions``.

    As Flink's WatermarkAssignerOperator: the watermark is the largest value so far, emitted
    right after a row once it is more than ``interval_ms`` ahead of the last one emitted
    (``currentWatermark - lastWatermark > watermarkInterval``). Returns the ``(position,
    watermark)`` pairs emitted, the last watermark emitted, and the ``(position, watermark)``
    not yet emitted (None if none).

    >>> emitted_watermarks(np.array([1000., 1100., 900., 1500.]), np.array([0, 1, 2, 3]), None, None, 200)
    ([(0, 1000), (3, 1500)], 1500, None)
    >>> emitted_watermarks(np.array([1000., 1100.]), np.array([0, 1]), None, None, 200)
    ([(0, 1000)], 1000, (1, 1100))
    """
    valid = np.flatnonzero(~np.isnan(values.astype(float)))
    if not len(valid):
        return [], last, pending
    # Not a loop over rows: the running maximum only grows, so the next emission is the first row
    # whose running maximum passes the last emitted by more than the interval (a binary search).
    running = np.maximum.accumulate(values[valid].astype(np.int64))
    current = pending[1] if pending is not None else last
    if current is not None:
        running = np.maximum(running, current)
    marks: list[tuple[int, int]] = []
    start = 0
    if last is None:   # no watermark emitted yet (nor pending): the first row emits one
        last = int(running[0])
        marks.append((int(positions[valid[0]]), last))
        start = 1
    while start < len(running):
        i = start + int(np.searchsorted(running[start:], last + interval_ms, side="right"))
        if i == len(running):
            break
        last = int(running[i])
        marks.append((int(positions[valid[i]]), last))
        start = i + 1
    top = int(running[-1])
    if top > last and (current is None or top > current or marks):
        # The row that made the largest value so far, not yet emitted.
        pending = (int(positions[valid[int(np.searchsorted(running, top, side="left"))]]), top)
    elif marks:
        pending = None
    return marks, last, pending


def shifted_epoch_ms(times: np.ndarray, shift_ms: int) -> np.ndarray:
    """Timestamps (numpy ``datetime64``, NaT for none) as epoch milliseconds plus ``shift_ms``: floats, NaN for NaT.

    The value of a watermark expression ``rowtime + INTERVAL`` of a day-time unit (``shift_ms``
    whole milliseconds) for the assigner stages: floored to the millisecond, as Spark's
    ``unix_millis`` of the shifted TIMESTAMP, which it saves computing per row in the JVM.

    >>> shifted_epoch_ms(np.array(["1970-01-01T00:00:01.2345", "NaT", "1969-12-31T23:59:59.9995"],
    ...                           dtype="datetime64[us]"), -2000).tolist()
    [-766.0, nan, -2001.0]
    """
    stamps = np.asarray(times)
    if stamps.dtype.kind != "M":
        raise TypeError(f"shifted_epoch_ms needs datetime64 values, got {stamps.dtype}")
    unit, count = np.datetime_data(stamps.dtype)
    per_ms = np.timedelta64(1, "ms") / np.timedelta64(count, unit)
    if per_ms >= 1:   # a unit of a millisecond or finer: floor division (down for times before 1970)
        millis = np.floor_divide(stamps.view(np.int64), int(per_ms))
    else:
        millis = stamps.astype("datetime64[ms]").view(np.int64)
    return np.where(np.isnat(stamps), np.nan, (millis + shift_ms).astype(np.float64))
