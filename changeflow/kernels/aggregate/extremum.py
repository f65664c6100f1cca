"""MIN, MAX, FIRST_VALUE and LAST_VALUE over insert-only input: one stored value per key.

Without retractions these functions only need their current value (Flink's
MinAggFunction / FirstValueAggFunction...), so they fold vectorised: MIN/MAX
by running minima over value ranks, FIRST/LAST_VALUE by the position of the
first / last non-null row. Nulls are ignored.

MIN and MAX merge partial results (two-phase aggregation): a partition's
minimum is one more candidate value, and a partition whose rows were all null
contributes a null, which is ignored like a null row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.common.types import DataType
from changeflow.kernels.aggregate.base import Accumulator, Folded, StateView
from changeflow.kernels.aggregate.fold import Fold
from changeflow.kernels.aggregate.values import Values, to_array


class InsertOnlyMinMax(Accumulator):
    """MIN / MAX keeping only the current extreme (input has no retractions)."""

    acc_fields = ("value",)
    mergeable = True

    def field_types(self) -> dict[str, DataType]:
        return {"value": self.arg_type.with_nullable(True)}

    def merge(self, fold: Fold, partials: dict[str, Values], state: StateView) -> Folded:
        return self.fold(fold, partials["value"], fold.sign, state)

    def fold(self, fold: Fold, arg: Values, sign: np.ndarray, state: StateView) -> Folded:
        stored = state.values(self.column("value"), self.arg_type)
        use = (sign != 0) & arg.valid
        # Rank the candidate values once so that any orderable type (strings,
        # dates...) reduces to an integer minimum. For MAX the ranks are
        # reversed, so "best" is always the smallest rank.
        uniques, ranks = _rank(np.concatenate([stored.data[stored.valid], arg.data[use]]))
        if self.call.function == "max":
            ranks = len(uniques) - 1 - ranks
        none = len(uniques)  # the rank of "no value yet"
        stored_rank = np.full(len(stored), none, dtype=np.int64)
        stored_rank[stored.valid] = ranks[: int(stored.valid.sum())]
        row_rank = np.full(fold.size, none, dtype=np.int64)
        row_rank[use] = ranks[int(stored.valid.sum()) :]

        def decode(rank: np.ndarray) -> Values:
            valid = rank != none
            original = rank if self.call.function == "min" else len(uniques) - 1 - rank
            data = Values.nulls(len(rank), self.arg_type).data
            data[valid] = uniques[original[valid]]
            return Values(data, valid)

        if fold.mini_batch:
            final = stored_rank.copy()
            np.minimum.at(final, fold.code, row_rank)
            running = None
        else:
            g = fold.grouping()
            base = np.where(g.life_from_state, stored_rank[g.life_key], none)
            scanned = g.lifetimes.scan(np.minimum, row_rank, base=base)
            running = decode(scanned)
            final = scanned[g.key_last_row]
        after = decode(final)
        return Folded(stored, after, running, acc={self.column("value"): to_array(after, self.arg_type)})


class InsertOnlyFirstLast(Accumulator):
    """FIRST_VALUE / LAST_VALUE keeping only the current value (input has no retractions)."""

    needs_order = True
    acc_fields = ("value",)

    def fold(self, fold: Fold, arg: Values, sign: np.ndarray, state: StateView) -> Folded:
        stored = state.values(self.column("value"), self.arg_type)
        use = (sign != 0) & arg.valid
        positions = np.arange(fold.size, dtype=np.int64)
        first = self.call.function == "first_value"
        # The position of the chosen row; `none` when no row qualifies.
        none = fold.size if first else -1
        candidate = np.where(use, positions, none)
        ufunc = np.minimum if first else np.maximum
        if fold.mini_batch:
            chosen = np.full(fold.keys.size, none, dtype=np.int64)
            ufunc.at(chosen, fold.code, candidate)
            keep_stored = fold.exists
            running = None
            after = self._pick(chosen, stored, keep_stored, arg, first)
        else:
            g = fold.grouping()
            scanned = g.lifetimes.scan(ufunc, candidate, base=np.full(g.lifetimes.count, none))
            from_state = g.life_from_state[g.lifetimes.of_row]
            running = self._pick(scanned, stored.take(fold.code), from_state, arg, first)
            after = running.take(g.key_last_row)
        return Folded(stored, after, running, acc={self.column("value"): to_array(after, self.arg_type)})

    @staticmethod
    def _pick(chosen: np.ndarray, stored: Values, from_state: np.ndarray, arg: Values, first: bool) -> Values:
        """The stored value or the chosen row's, by FIRST/LAST_VALUE's precedence."""
        found = (chosen >= 0) & (chosen < len(arg))
        keep = from_state & stored.valid
        # FIRST_VALUE keeps a stored value over any new row; LAST_VALUE prefers a new row.
        use_row = found & ~keep if first else found
        data = stored.data.copy()
        valid = stored.valid & from_state
        data[use_row] = arg.data[chosen[use_row]]
        valid = valid | use_row
        return Values(data, valid)


def _rank(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values and the rank of each input value among them."""
    if values.dtype != object:
        return np.unique(values, return_inverse=True)
    codes, uniques = pd.factorize(values)
    uniques = np.asarray(uniques, dtype=object)
    order = np.argsort(uniques, kind="stable")
    rank_of_code = np.empty(len(order), dtype=np.int64)
    rank_of_code[order] = np.arange(len(order))
    return uniques[order], rank_of_code[codes]
