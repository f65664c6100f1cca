"""VAR_POP, VAR_SAMP, STDDEV_POP, STDDEV_SAMP as Flink 2.3 computes them.

Flink rewrites each of these into two aggregates, ``$WELFORD_M2(x)`` and
``COUNT(x)``, plus a projection (see ``variance_value``). M2 is Welford's online
sum of squared deviations (Flink's WelfordM2AggFunction)::

    accumulate x:  n += 1; if n > 0: d = x - mean; mean += d / n; m2 += d * (x - mean)
    retract x:     n -= 1; if n == 0: mean = m2 = 0
                           elif n > 0: d2 = x - mean; mean -= d2 / n; m2 -= (x - mean) * d2

in doubles, so the result depends on the exact order of the operations: it is
computed row by row in source order. Rows of different keys are independent,
so the recurrence is vectorised across keys, one position of each key's rows
at a time (a padded matrix per segment length, as in :mod:`.segments`); very
long runs of one key fall back to a plain Python loop.

Because the rewrite happens before the aggregate operator, Flink's "nothing
changed, emit nothing" check compares M2 and COUNT(x), not the projected result:
a row can leave an integral STDDEV unchanged and still emit ``-U``/``+U``.
"""

from __future__ import annotations

import numpy as np

from changeflow.kernels.aggregate.base import Accumulator, Folded, StateView
from changeflow.kernels.aggregate.fold import Fold
from changeflow.kernels.aggregate.functions import AggCall, variance_value
from changeflow.kernels.aggregate.segments import Segments
from changeflow.kernels.aggregate.values import Values

# Below this many segments of one length class, a Python loop over the rows beats
# stepping numpy through every position of the (few, long) segments.
_VECTOR_MIN_SEGMENTS = 16


class WelfordAccumulator(Accumulator):
    """One of the variance family, from Welford's (n, mean, m2) per key."""

    needs_order = True
    needs_grouping = True
    acc_fields = ("n", "mean", "m2")

    def __init__(self, call: AggCall) -> None:
        super().__init__(call)
        if self.arg_type.root not in ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE"):
            raise NotImplementedError(f"{call.function.upper()} over {call.arg_type} is not supported yet")

    def fold(self, fold: Fold, arg: Values, sign: np.ndarray, state: StateView) -> Folded:
        stored = (
            state.column(self.column("n"), np.int64),
            state.column(self.column("mean"), np.float64),
            state.column(self.column("m2"), np.float64),
        )
        g = fold.grouping()
        life = g.lifetimes
        n0, mean0, m2_0 = (np.where(g.life_from_state, f[g.life_key], 0).astype(f.dtype) for f in stored)
        x = arg.data.astype(np.float64)  # Java's (double) conversion of the value
        step = np.where(arg.valid, sign, 0)
        running = welford_scan(life, x, step, (n0, mean0, m2_0))
        n1, mean1, m2_1 = (f[g.key_last_row] for f in running)
        final = (n1, mean1, m2_1)
        before, before_hidden = self._result(stored)
        after, after_hidden = self._result(final)
        result = Folded(
            before=before,
            after=after,
            running=None,
            acc={self.column(name): f for name, f in zip(self.acc_fields, final, strict=True)},
            before_hidden=before_hidden,
            after_hidden=after_hidden,
        )
        if not fold.mini_batch:
            result.running, result.running_hidden = self._result(running)
        return result

    def _result(self, fields: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[Values, list[Values]]:
        """The visible value and the hidden aggregates (M2, COUNT) Flink compares."""
        n, _, m2 = fields
        # WelfordM2AggFunction.getValue: NULL when n <= 0 or m2 < 0.
        m2_valid = (n > 0) & ~(m2 < 0)
        data, valid = variance_value(self.call.function, m2, m2_valid, n, self.arg_type)
        hidden = [Values(m2, m2_valid), Values(n, np.ones(len(n), dtype=bool))]
        return Values(data, valid), hidden


def welford_scan(
    segments: Segments, x: np.ndarray, step: np.ndarray, base: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, mean, m2) after every row; each segment starts from ``base`` and folds in row order.

    ``step`` is +1 (accumulate x), -1 (retract x) or 0 (the row does not touch M2).
    """
    out = (np.empty(segments.n, np.int64), np.empty(segments.n, np.float64), np.empty(segments.n, np.float64))
    for block in segments.blocks():
        if len(block.segments) < _VECTOR_MIN_SEGMENTS:
            _scan_rows(segments, block.segments, x, step, base, out)
            continue
        shape = (len(block.segments), block.width)
        xs = np.zeros(shape)
        steps = np.zeros(shape, dtype=np.int64)
        xs[block.slot, block.rank] = x[block.rows]
        steps[block.slot, block.rank] = step[block.rows]
        n, mean, m2 = (f[block.segments].copy() for f in base)
        seen = [np.empty(shape, np.int64), np.empty(shape), np.empty(shape)]
        for j in range(block.width):
            n, mean, m2 = _welford_step(n, mean, m2, xs[:, j], steps[:, j])
            seen[0][:, j], seen[1][:, j], seen[2][:, j] = n, mean, m2
        for target, matrix in zip(out, seen, strict=True):
            target[block.rows] = matrix[block.slot, block.rank]
    return out


@np.errstate(invalid="ignore", over="ignore")
def _welford_step(n, mean, m2, x, step):
    """One Welford update of every lane (numpy arrays), exactly as WelfordM2AggFunction.

    Lanes that do not change (no row, a null, a count at or below zero) compute
    throwaway values, hence the silenced warnings.
    """
    n_new = n + step
    grow = (step > 0) & (n_new > 0)
    shrink = (step < 0) & (n_new > 0)
    reset = (step < 0) & (n_new == 0)
    divisor = np.where(n_new > 0, n_new, 1).astype(np.float64)
    delta = x - mean
    grown_mean = mean + delta / divisor
    grown_m2 = m2 + delta * (x - grown_mean)
    shrunk_mean = mean - delta / divisor  # delta is x - old mean ("delta2" in Flink)
    shrunk_m2 = m2 - (x - shrunk_mean) * delta
    mean = np.where(grow, grown_mean, np.where(shrink, shrunk_mean, np.where(reset, 0.0, mean)))
    m2 = np.where(grow, grown_m2, np.where(shrink, shrunk_m2, np.where(reset, 0.0, m2)))
    return n_new, mean, m2


def _scan_rows(segments: Segments, which: np.ndarray, x, step, base, out) -> None:
    """The same recurrence in plain Python floats (IEEE doubles, like Java's), row by row."""
    xs, steps = x.tolist(), step.tolist()
    for seg in which.tolist():
        n, mean, m2 = int(base[0][seg]), float(base[1][seg]), float(base[2][seg])
        start = int(segments.starts[seg])
        stop = start + int(segments.lengths[seg])
        for i in range(start, stop):
            s = steps[i]
            if s > 0:
                n += 1
                if n > 0:
                    delta = xs[i] - mean
                    mean += delta / n
                    m2 += delta * (xs[i] - mean)
            elif s < 0:
                n -= 1
                if n == 0:
                    mean = m2 = 0.0
                elif n > 0:
                    delta2 = xs[i] - mean
                    mean -= delta2 / n
                    m2 -= (xs[i] - mean) * delta2
            out[0][i], out[1][i], out[2][i] = n, mean, m2
