"""DISTINCT aggregates: feed the inner aggregate each argument value once.

Per key Flink keeps a map value -> count of the argument (DistinctAggCodeGen,
one map shared by all distinct calls on the same argument). Accumulating ``v``
adds 1 and calls the inner aggregate's accumulate only when the count becomes 1;
retracting subtracts 1 and calls the inner retract only when it becomes 0.
Counts may go negative on unmatched retractions; entries at 0 are removed.

The filter is vectorised: rows are grouped by (key lifetime, value), the counts
are running sums inside each group, and a row reaches the inner aggregate (with
its sign) exactly where the running count crosses between 0 and 1. Nulls never
reach it (every inner aggregate ignores them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from changeflow.common.types import DataType
from changeflow.kernels.aggregate.base import CODE, StateView
from changeflow.kernels.aggregate.fold import Fold
from changeflow.kernels.aggregate.segments import Segments, group_order
from changeflow.kernels.aggregate.values import Values, from_series, to_array
from changeflow.kernels.frames import column


class DistinctFilter:
    """The shared value -> count map of one distinct argument column."""

    def __init__(self, arg: str, arg_type: DataType) -> None:
        self.arg = arg
        self.arg_type = arg_type
        self.table = f"distinct.{arg}"

    def fold(self, fold: Fold, arg: Values, state: StateView) -> tuple[np.ndarray, pd.DataFrame]:
        """The sign each row applies to the inner aggregates, and the map's new state rows."""
        stored, stored_codes = state.table(self.table)
        stored_values = from_series(column(stored, "_value"), self.arg_type).data if len(stored) else arg.data[:0]
        stored_counts = stored["_count"].to_numpy(dtype=np.int64) if len(stored) else np.empty(0, np.int64)

        active = np.flatnonzero((fold.sign != 0) & arg.valid)
        value_codes, uniques = pd.factorize(np.concatenate([stored_values, arg.data[active]]))
        n_values = max(len(uniques), 1)
        stored_vcode, row_vcode = value_codes[: len(stored_values)], value_codes[len(stored_values) :]

        # Group the active rows by (lifetime, value), keeping source order inside a group.
        g = fold.grouping()
        life = g.lifetimes.of_row[active]
        pair = life.astype(np.int64) * n_values + row_vcode
        pair_codes, pairs = pd.factorize(pair)
        order = group_order(pair_codes, len(pairs))
        rows = active[order]
        groups = Segments.from_sorted_ids(pair_codes[order])
        group_life = life[order][groups.starts]
        group_vcode = row_vcode[order][groups.starts]
        group_key = g.life_key[group_life]

        # A group continuing the stored accumulator starts from the stored count.
        stored_pair = stored_codes.astype(np.int64) * n_values + stored_vcode
        where = pd.Index(stored_pair).get_indexer(group_key.astype(np.int64) * n_values + group_vcode)
        continues = (where >= 0) & g.life_from_state[group_life]
        base = np.zeros(groups.count, dtype=np.int64)
        base[continues] = stored_counts[where[continues]]

        step = fold.sign[rows]
        count = groups.cumsum(step, base=base)
        inner = np.zeros(fold.size, dtype=np.int64)
        inner[rows] = np.where((step > 0) & (count == 1), 1, np.where((step < 0) & (count == 0), -1, 0))

        new_state = self._new_state(
            fold, groups, group_life, group_key, group_vcode, count,
            stored_codes, stored_vcode, stored_counts, stored_pair, n_values, uniques,
        )
        return inner, new_state

    def _new_state(self, fold, groups, group_life, group_key, group_vcode, count,
                   stored_codes, stored_vcode, stored_counts, stored_pair, n_values, uniques) -> pd.DataFrame:
        alive = fold.alive
        final_life = fold.key_final_life
        # Counts reached by the groups of each kept key's final lifetime...
        in_final = alive[group_key] & (group_life == final_life[group_key])
        new_codes = group_key[in_final]
        new_vcodes = group_vcode[in_final]
        new_counts = groups.last(count)[in_final]
        # ...plus stored entries the batch did not touch, if that lifetime is the stored one.
        keep = alive[stored_codes] & fold.grouping().life_from_state[final_life[stored_codes]]
        keep &= ~np.isin(stored_pair, new_codes.astype(np.int64) * n_values + new_vcodes)
        codes = np.concatenate([new_codes, stored_codes[keep]])
        vcodes = np.concatenate([new_vcodes, stored_vcode[keep]])
        counts = np.concatenate([new_counts, stored_counts[keep]])
        nonzero = counts != 0
        values = np.asarray(uniques)[vcodes[nonzero]]
        column = to_array(Values(values, np.ones(len(values), dtype=bool)), self.arg_type)
        return pd.DataFrame({CODE: codes[nonzero].astype(np.intp), "_value": column, "_count": counts[nonzero]})

