"""The contract between the group-aggregate kernel and one aggregate call's accumulator.

For every :class:`~changeflow.kernels.aggregate.functions.AggCall` the kernel
builds an :class:`Accumulator`. Per batch it hands the accumulator the planned
:class:`~changeflow.kernels.aggregate.fold.Fold`, the argument column in fold
order, the sign each row applies with, and a :class:`StateView` of what was
loaded. The accumulator answers with a :class:`Folded`: the aggregate's value
before and after the batch per key, its value after every row (without
mini-batch), and the state to write back.

Two-phase aggregation (:mod:`.local`) adds a second entry point: a
*mergeable* accumulator can also :meth:`Accumulator.merge` partial
accumulators, rows of its own fields computed by the local phase, into the
stored ones.

State layout: the kernel's shared table ``acc`` holds one row per key
(the key columns, the hidden record count ``_count``, then each accumulator's
scalar fields as ``<output>.<field>``). Accumulators that need a collection per
key (multisets, ordered lists) own an exploded table named in ``tables``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from changeflow.common.types import DataType
from changeflow.kernels.aggregate.fold import Fold
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.aggregate.keys import KeyIndex
from changeflow.kernels.aggregate.values import Values, from_series
from changeflow.kernels.frames import column

ACC_TABLE = "acc"
COUNT_COLUMN = "_count"
CODE = "_code"  # key code column of per-accumulator table rows, replaced by key columns on store


class StateView:
    """The state loaded for one batch, indexed by key code."""

    @staticmethod
    def empty(keys: KeyIndex) -> "StateView":
        """A view in which no key has state (the local phase starts every key from zero)."""
        return StateView(keys, keys.frame.iloc[:0], {})

    def __init__(self, keys: KeyIndex, acc: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> None:
        self.keys = keys
        self._acc = acc
        self._acc_codes = keys.lookup(acc)
        self.exists = np.zeros(keys.size, dtype=bool)
        self.exists[self._acc_codes] = True
        self._tables = tables

    def column(self, name: str, dtype: Any = np.int64) -> np.ndarray:
        """A numeric column of the ``acc`` table per key; 0 for keys without state."""
        out = np.zeros(self.keys.size, dtype=dtype)
        if name in self._acc.columns and len(self._acc):
            out[self._acc_codes] = self._acc[name].to_numpy(dtype=dtype, na_value=0)
        return out

    def values(self, name: str, type_: DataType) -> Values:
        """A column of the ``acc`` table per key as :class:`Values`; null for keys without state."""
        out = Values.nulls(self.keys.size, type_)
        if name in self._acc.columns and len(self._acc):
            loaded = from_series(column(self._acc, name), type_)
            out.data[self._acc_codes] = loaded.data
            out.valid[self._acc_codes] = loaded.valid
        return out

    def table(self, name: str) -> tuple[pd.DataFrame, np.ndarray]:
        """The loaded rows of an accumulator's own table and their key codes."""
        frame = self._tables.get(name)
        if frame is None or len(frame) == 0:
            return pd.DataFrame(), np.empty(0, dtype=np.intp)
        return frame, self.keys.lookup(frame)


@dataclass
class Folded:
    """What one accumulator computed for a batch.

    ``before`` / ``after`` hold one value per key code (meaningful where the key
    had, respectively keeps, an accumulator); ``running`` one value per fold row,
    the aggregate after that row (non-mini-batch only). ``acc`` maps ``acc``
    table columns to per-key arrays; ``tables`` maps owned table names to rows
    with a ``_code`` column followed by the payload columns.

    The ``*_hidden`` lists, when set, are what Flink's "unchanged, emit nothing"
    check compares instead of the value: for functions Flink's planner rewrites
    into other aggregates plus a projection (VAR/STDDEV into M2 and COUNT), the
    check sees the aggregates, not the projected result.
    """

    before: Values
    after: Values
    running: Values | None
    acc: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    before_hidden: list[Values] | None = None
    after_hidden: list[Values] | None = None
    running_hidden: list[Values] | None = None

    def compared(self, which: str) -> list[Values]:
        """What the emission check compares for ``which`` (before / after / running)."""
        hidden = getattr(self, f"{which}_hidden")
        return hidden if hidden is not None else [getattr(self, which)]


class Accumulator:
    """Folds one aggregate call over a batch for all keys at once."""

    #: The mini-batch result depends on the order of a key's rows (float sums, first/last...).
    needs_order: bool = False
    #: Works on contiguous rows per key (``fold.lifetimes``), also in mini-batch mode.
    needs_grouping: bool = False

    def __init__(self, call: AggCall) -> None:
        self.call = call
        self.result_type = call.result_type

    #: Names of this accumulator's scalar fields in the shared ``acc`` table.
    acc_fields: tuple[str, ...] = ()
    #: Partial accumulators (its ``acc_fields`` computed over part of a bundle) can be
    #: merged with :meth:`merge`, which two-phase aggregation needs.
    mergeable: bool = False

    @property
    def tables(self) -> tuple[str, ...]:
        """Names of the state tables this accumulator owns."""
        return ()

    @property
    def arg_type(self) -> DataType:
        """The argument's type (an accumulator of ``count_star`` never asks)."""
        return self.call.typed_arg[1]

    def column(self, field_name: str) -> str:
        """Name of one of this accumulator's fields in the shared ``acc`` table."""
        return f"{self.call.output}.{field_name}"

    def field_types(self) -> dict[str, DataType]:
        """The type of each of ``acc_fields`` (a partial row carries them with these types)."""
        raise NotImplementedError(f"{self.call.function} has no typed accumulator fields")

    def fold(self, fold: Fold, arg: Values | None, sign: np.ndarray, state: StateView) -> Folded:
        raise NotImplementedError

    def merge(self, fold: Fold, partials: dict[str, Values], state: StateView) -> Folded:
        """Merge partial accumulators, one per fold row, into the stored ones (mini-batch only).

        ``partials`` maps each of ``acc_fields`` to its values in fold order. The
        result is the :class:`Folded` that :meth:`fold` gives over the rows the
        partials were computed from.
        """
        raise NotImplementedError(f"{self.call.function} cannot merge partial accumulators")
