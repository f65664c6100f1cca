"""COUNT(*), COUNT, SUM, SUM0 and AVG: accumulators that add up.

Every field of these accumulators is a sum of per-row contributions (a row's
value, or 1 if it is not null) times the row's sign, so retraction
is subtraction and the whole batch folds with running sums: cumulative sums
over each key's lifetimes without mini-batch, one scatter-add per key with it.
Integers add in int64 (wrapping like Java's long; narrower types wrap when the
result is computed); floats add one row at a time in source order, as Flink does.

For the same reason a partial accumulator (the fields summed over part of a
bundle) merges by adding it like one more row's contributions. Only integer
fields may be merged: a float partial sum would re-associate the additions,
and the result would differ from Flink's sequential sum in the last bits.
"""

from __future__ import annotations

import numpy as np

from changeflow.common.types import DataType, DataTypes
from changeflow.kernels.aggregate.base import Accumulator, Folded, StateView
from changeflow.kernels.aggregate.fold import Fold
from changeflow.kernels.aggregate.functions import AggCall, avg_value, sum_value
from changeflow.kernels.aggregate.values import Values

ADDITIVE_FUNCTIONS = ("count_star", "count", "sum", "sum0", "avg")
# FLOAT is computed in double precision (Flink uses float arithmetic for it).
_SUPPORTED = ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE")

# Field name -> what one row contributes to it.
_FIELDS = {
    "count_star": ("rows",),
    "count": ("non_null",),
    "sum": ("sum", "non_null"),
    "sum0": ("sum",),
    "avg": ("sum", "non_null"),
}


class AdditiveAccumulator(Accumulator):
    """An accumulator whose fields are running sums of per-row contributions.

    >>> from changeflow.common.types import DataTypes
    >>> AdditiveAccumulator(AggCall("avg", "x", DataTypes.INT(), "a")).fields
    ('sum', 'non_null')
    """

    def __init__(self, call: AggCall) -> None:
        super().__init__(call)
        if call.arg_type is not None and call.function != "count" and call.arg_type.root not in _SUPPORTED:
            # Fail loudly rather than sum DECIMALs in binary floating point.
            raise NotImplementedError(f"{call.function.upper()} over {call.arg_type} is not supported yet")
        self.fields = _FIELDS[call.function]
        self.acc_fields = self.fields
        floating = call.arg_type is not None and not call.arg_type.is_integral
        self._dtypes = {
            f: (np.float64 if floating and f == "sum" else np.int64) for f in self.fields
        }
        # Float addition is not associative: the bundle total must follow source order,
        # so it can neither be folded out of order nor split into partial sums.
        self.needs_order = any(d == np.float64 for d in self._dtypes.values())
        self.mergeable = not self.needs_order

    def field_types(self) -> dict[str, DataType]:
        return {f: DataTypes.BIGINT(False) if d == np.int64 else DataTypes.DOUBLE(False)
                for f, d in self._dtypes.items()}

    def fold(self, fold: Fold, arg: Values | None, sign: np.ndarray, state: StateView) -> Folded:
        return self._accumulate(fold, self._contributions(fold, arg, sign), state)

    def merge(self, fold: Fold, partials: dict[str, Values], state: StateView) -> Folded:
        if not (self.mergeable and fold.mini_batch):
            raise ValueError(f"{self.call.function} over {self.call.arg_type} cannot merge partial accumulators")
        # A partial field is a sum of contributions, so it adds like one row's contribution.
        return self._accumulate(fold, {f: partials[f].data.astype(np.int64, copy=False) for f in self.fields}, state)

    def _accumulate(self, fold: Fold, contributions: dict[str, np.ndarray], state: StateView) -> Folded:
        stored = {f: state.column(self.column(f), self._dtypes[f]) for f in self.fields}
        if fold.mini_batch:
            final = {}
            for f in self.fields:
                total = stored[f].copy()
                # ufunc.at applies the rows one by one in order, so float totals
                # are ((stored + x1) + x2) + ..., exactly as Flink accumulates.
                np.add.at(total, fold.code, contributions[f])
                final[f] = total
            running = None
        else:
            g = fold.grouping()
            life = g.lifetimes
            sums = {}
            for f in self.fields:
                base = np.where(g.life_from_state, stored[f][g.life_key], 0).astype(self._dtypes[f])
                sums[f] = life.cumsum(contributions[f], base=base)
            running = self.value(sums)
            final = {f: sums[f][g.key_last_row] for f in self.fields}
        return Folded(
            before=self.value(stored),
            after=self.value(final),
            running=running,
            acc={self.column(f): final[f] for f in self.fields},
        )

    def _contributions(self, fold: Fold, arg: Values | None, sign: np.ndarray) -> dict[str, np.ndarray]:
        if arg is None:  # COUNT(*)
            return {"rows": sign}
        if sign is fold.sign and fold.all_accumulate and arg.valid.all():
            # Fast path: every row adds its value, no masking needed.
            weight = None
            out: dict[str, np.ndarray] = {"non_null": np.ones(fold.size, dtype=np.int64)}
        else:
            weight = np.where(arg.valid, sign, 0)
            out = {"non_null": weight}
        if "sum" in self.fields:
            dtype = self._dtypes["sum"]
            x = arg.data.astype(dtype, copy=False)
            if weight is None:
                out["sum"] = x
            elif dtype == np.int64:
                out["sum"] = x * weight  # nulls hold 0, so no masking is needed
            else:
                # where(), not x * weight: 0 * inf or a NaN null would poison the sum.
                out["sum"] = np.where(weight != 0, x * weight, 0.0)
        return {f: out[f] for f in self.fields}

    def value(self, fields: dict[str, np.ndarray]) -> Values:
        """The aggregate's result from its fields (arrays of any common length)."""
        function = self.call.function
        if function == "count_star":
            data, valid = fields["rows"], np.ones(len(fields["rows"]), dtype=bool)
        elif function == "count":
            data, valid = fields["non_null"], np.ones(len(fields["non_null"]), dtype=bool)
        elif function == "sum":
            data, valid = sum_value(fields["sum"], fields["non_null"], self.arg_type)
        elif function == "sum0":
            data, valid = sum_value(fields["sum"], None, self.arg_type)
        else:
            data, valid = avg_value(fields["sum"], fields["non_null"], self.arg_type)
        return Values(data, valid)
