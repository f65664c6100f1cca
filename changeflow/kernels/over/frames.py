"""The aggregates of OVER frames: partial values, combining them, finishing them.

Each aggregate call of an OVER window keeps, per row, a *partial*: ``(value,
count)`` with ``count`` the number of non-null arguments (the rows, for
``COUNT(*)``) and ``value`` the argument (None when it is null). Partials
combine (sums add, MIN and MAX keep the extreme), so a frame's aggregate is the
combination of its rows' partials, and an unbounded frame's history is one
partial per call. :func:`finish` turns a partial into Flink's result: integral
sums wrap around as Java's ints do, an integral AVG divides with Java's
truncating division (``avg_value`` of :mod:`changeflow.kernels.aggregate.functions`),
SUM and AVG and MIN and MAX of no value are NULL.

:func:`frame_results` evaluates one partition's rows in order, for the four
frames of :class:`~changeflow.plan.over.OverFrame`.
"""

from __future__ import annotations

import decimal
from typing import Any, Sequence

import numpy as np

from changeflow.kernels.aggregate.functions import AggCall, avg_value, wrap_integral

Partial = tuple[Any, int]


def row_partial(call: AggCall, value: Any) -> Partial:
    """The partial of one row whose argument is ``value`` (ignored by ``COUNT(*)``)."""
    if call.function == "count_star":
        return None, 1
    if value is None:
        return None, 0
    return value, 1


def combine(call: AggCall, a: Partial, b: Partial) -> Partial:
    """Two partials of ``call`` as one."""
    (va, na), (vb, nb) = a, b
    if na == 0 or va is None:
        return vb, na + nb
    if nb == 0 or vb is None:
        return va, na + nb
    if call.function in ("min", "max"):
        pick = min if call.function == "min" else max
        return pick(va, vb), na + nb
    return va + vb, na + nb


def combine_all(call: AggCall, partials: Sequence[Partial]) -> Partial:
    out: Partial = (None, 0)
    for p in partials:
        out = combine(call, out, p)
    return out


def finish(call: AggCall, partial: Partial) -> Any:
    """The value of ``call`` over the rows ``partial`` summarises (Python value or None)."""
    value, count = partial
    if call.function in ("count", "count_star"):
        return count
    arg_type = call.typed_arg[1]
    if count == 0 or value is None:
        if call.function != "sum0":
            return None
        value = decimal.Decimal(0) if arg_type.root == "DECIMAL" else 0
    if call.function in ("min", "max"):
        return value
    if call.function == "avg":
        if arg_type.root == "DECIMAL":
            scale = call.result_type.params[1]
            return (decimal.Decimal(value) / count).quantize(decimal.Decimal(1).scaleb(-scale),
                                                             rounding=decimal.ROUND_HALF_UP)
        if arg_type.is_integral:
            values, _ = avg_value(np.asarray([_wrap64(value)]), np.asarray([count]), arg_type)
            return int(values[0])
        return float(value) / count
    if arg_type.is_integral:   # sum, sum0
        return int(wrap_integral(np.asarray([_wrap64(value)]), arg_type)[0])
    return value


def _wrap64(value: Any) -> int:
    """A Python int sum as Java's long accumulator holds it (wrapped to 64 bits)."""
    return ((int(value) + 2**63) % 2**64) - 2**63


def frame_results(calls: Sequence[AggCall], rows: bool, preceding: int | None, history: list[tuple[int, list]],
                  new: list[tuple[int, list]]) -> tuple[list[list], list[tuple[int, list]]]:
    """The results of ``calls`` for every row of ``new``, and the history the next rows need.

    ``history`` and ``new`` hold ``(timestamp, [partial per call])`` of one partition:
    ``history`` the rows emitted before (for an unbounded frame one entry, the
    combination of them all), ``new`` the rows to emit, in order (timestamp, then
    arrival). ``rows`` and ``preceding`` are the frame's (``preceding`` None:
    unbounded; a row count for ROWS, milliseconds for RANGE). The returned history
    keeps what later rows' frames can reach, given that their timestamps are after
    every timestamp of ``new``.
    """
    results: list[list] = []
    if preceding is None:
        acc = history[0][1] if history else [(None, 0)] * len(calls)
        i = 0
        while i < len(new):
            # A ROWS frame takes one row at a time; a RANGE frame every row of the timestamp at once.
            j = i + 1
            if not rows:
                while j < len(new) and new[j][0] == new[i][0]:
                    j += 1
            for k in range(i, j):
                acc = [combine(c, a, p) for c, a, p in zip(calls, acc, new[k][1], strict=True)]
            results.extend([[finish(c, a) for c, a in zip(calls, acc, strict=True)]] * (j - i))
            i = j
        last = new[-1][0] if new else (history[0][0] if history else 0)
        return results, [(last, acc)] if new or history else []
    every = history + new
    start = len(history)
    lo = 0
    for idx in range(start, len(every)):
        ts = every[idx][0]
        if rows:
            first, last = max(0, idx - preceding), idx
        else:
            while every[lo][0] < ts - preceding:
                lo += 1
            first, last = lo, idx
            while last + 1 < len(every) and every[last + 1][0] == ts:
                last += 1
        frame = every[first:last + 1]
        results.append([finish(c, combine_all(c, [e[1][i] for e in frame])) for i, c in enumerate(calls)])
    if rows:
        kept = every[max(0, len(every) - preceding):] if preceding else []
    else:
        newest = every[-1][0] if every else 0
        kept = [e for e in every if e[0] >= newest - preceding]
    return results, kept


__all__ = ["combine", "finish", "frame_results", "row_partial"]
