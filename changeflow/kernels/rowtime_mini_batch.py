"""The row-time MiniBatchAssigner's watermark filter (Flink's ``RowTimeMiniBatchAssginerOperator``).

With ``table.exec.mini-batch.enabled`` and an operator that needs a watermark
(a window aggregation), Flink's planner puts a ``MiniBatchAssigner`` in
``RowTime`` mode right above each ``WatermarkAssigner``: it forwards the rows
and only those watermarks that reach the end of the mini-batch interval
(``table.exec.mini-batch.allow-latency``) they fall in, so each watermark that
passes closes a mini-batch for the operators after it. For the interval 5 and
the watermarks 1, 3, 7, 8, 14 only 7 and 14 pass (the mini-batch seed's example).

The filter depends only on the last watermark it passed, which is what a host
keeps per assigner (the Spark runtime in its watermark state, so the filter
holds across micro-batches). ``MAX_WATERMARK`` (end of input) always passes.
"""

from __future__ import annotations

from changeflow.kernels.contract import MAX_WATERMARK


def next_passing(last_passed: int | None, interval_ms: int) -> int:
    """The least watermark that passes after ``last_passed`` (None: none has passed yet).

    Flink's operator starts from the watermark 0, so the first to pass is the
    first at or after ``interval - 1``; after ``w`` passed, the next is the end
    of ``w``'s interval (``start + interval - 1``), or of the following
    interval when ``w`` is that end itself.

    >>> next_passing(None, 5), next_passing(7, 5), next_passing(9, 5)
    (4, 9, 14)
    """
    current = 0 if last_passed is None else last_passed
    start = current - (current + interval_ms) % interval_ms
    end = start + interval_ms - 1
    return end if end > current else end + interval_ms


def passes(last_passed: int | None, watermark: int, interval_ms: int) -> bool:
    """Whether the row-time MiniBatchAssigner forwards ``watermark`` after passing ``last_passed``.

    >>> kept, last = [], None
    >>> for w in [1, 3, 7, 8, 14]:
    ...     if passes(last, w, 5):
    ...         kept.append(w); last = w
    >>> kept
    [7, 14]
    """
    if watermark == MAX_WATERMARK:
        return True
    return watermark >= next_passing(last_passed, interval_ms)


__all__ = ["next_passing", "passes"]
