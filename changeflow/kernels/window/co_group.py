"""``co_group``/``join`` of two inputs over a global window that fires at end of input (FLIP-331).

Frames are record frames (:mod:`changeflow.kernels.keyed.records`) with ``_side``
(0 the first input, 1 the second); see :mod:`.evaluate` for the stamps.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.contract import KernelBase
from changeflow.kernels.frames import select
from changeflow.kernels.changelog import KIND
from changeflow.kernels.keyed.records import KEY, VALUE, fail, loads, values_of
from changeflow.kernels.order import STAMP, stamps_of
from changeflow.kernels.keyed.user import ContextFactory, close_functions, method_or_self, open_functions
from changeflow.kernels.state import KeyedState
from changeflow.kernels.window.evaluate import SIDE, WINDOW_TABLE, Emitter, fire_stored, no_records, outputs_of
from changeflow.kernels.window.groups import group_bounds


class CoGroupKernel(KernelBase):
    """``co_group``/``join`` of two inputs over a global window that fires at end of input.

    ``kind``: ``co_group`` (``function.co_group(first, second)`` yields outputs
    for every key present in either input), ``join`` (``function.join(a, b)``
    returns one output per pair with equal keys: an inner join, pairs in
    Flink's order: first input outer, second inner) or ``flat_join``
    (``join(a, b)`` yields outputs per pair). Groups hold both inputs' records
    of each key, told apart by ``_side`` and sorted by key, side and stamp.
    """

    emits_at_end_of_input = True  # the global window fires at the end of input (the kernel contract)

    def __init__(self, kind: str, function: Any, name: str, output_type: Any = None, *,
                 runtime_context: ContextFactory | None = None) -> None:
        if kind not in ("co_group", "join", "flat_join"):
            raise ValueError(f"unknown two-input window computation {kind!r}")
        self.kind = kind
        self.function = function
        self.name = name
        self.output_type = output_type
        self.runtime_context = runtime_context

    # --- the kernel contract: a streaming host keeps both inputs in state until end of input --
    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Keep a batch of both inputs' records (``_key``, ``_side``, ``_value``, ``_seq``, ``_sub``) in ``state``.

        Emits nothing.
        """
        keys = pd.DataFrame({KEY: np.asarray(pd.unique(batch[KEY]), dtype=object)})
        stored = state.load(WINDOW_TABLE, keys)
        columns = [KEY, SIDE, VALUE, KIND] + STAMP
        parts = [select(stored, columns)] if len(stored) and VALUE in stored.columns else []
        state.store(WINDOW_TABLE, keys, pd.concat(parts + [select(batch, columns)], ignore_index=True))
        return no_records()

    def end_of_input(self, state: KeyedState) -> pd.DataFrame | None:
        """The input ended: every key's window fires (in key order), and its contents are dropped."""
        return fire_stored(state, [KEY, SIDE] + STAMP, self.fire)

    def fire(self, groups: pd.DataFrame) -> pd.DataFrame:
        emitter = Emitter(self.name, self.output_type)
        opened = open_functions([self.function], self.name, self.runtime_context)
        try:
            keys = groups[KEY].to_numpy()
            sides = groups[SIDE].to_numpy()
            values = values_of(groups)  # a Row's kind is its record's _kind
            stamps = stamps_of(groups)
            starts, ends = group_bounds(keys)
            for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
                split = start + int(np.count_nonzero(sides[start:end] == 0))
                first = values[start:split]
                second = values[split:end]
                if self.kind != "co_group" and not (first and second):
                    continue
                try:
                    outputs = self._evaluate(first, second)
                except Exception as error:
                    raise fail(self.name, f"{len(first)} and {len(second)} elements", error,
                               loads(keys.item(start))) from error
                emitter.emit(outputs, max(stamps[start:end]))
        finally:
            close_functions(opened)
        return emitter.frame()

    def _evaluate(self, first: list[Any], second: list[Any]) -> list[Any]:
        function = self.function
        if self.kind == "co_group":
            call = method_or_self(function, "co_group")
            return outputs_of(call(first, second))
        call = method_or_self(function, "join")
        if self.kind == "join":
            return [call(a, b) for a in first for b in second]
        return [out for a in first for b in second for out in outputs_of(call(a, b))]
