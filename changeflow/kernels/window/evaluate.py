"""Evaluating windows that fire once, at end of input, over whole key groups.

A :class:`WindowSpec` says what a window computes: ``reduce``, ``aggregate``
(each optionally followed by a window function), ``process`` or ``apply``.
:class:`WindowKernel` evaluates it the way a batch engine would:

- ``reduce``/``aggregate`` are *combinable*: :class:`PartialFold` folds each
  partition's records into one partial per key (the reduced value, or an
  ``AggregateFunction`` accumulator) before the shuffle, as Flink's and
  Spark's combiners do, and :meth:`WindowKernel.fire` merges a key's partials
  in input order (``reduce`` again, or ``merge``). A ReduceFunction must
  therefore be associative (Flink's batch combiners assume the same).
- ``process``/``apply`` get all of a key's elements, in input order, in one call.

:class:`~.co_group.CoGroupKernel` does the same for ``co_group``/``join`` over two inputs.

Both also follow the kernel contract (:mod:`changeflow.kernels.contract`): a
host that feeds input as it arrives keeps each key's window in state
(:meth:`WindowKernel.process`) and fires every window at
:meth:`WindowKernel.end_of_input`, with the same outputs.

Frames are record frames (:mod:`changeflow.kernels.keyed.records`): ``_key``,
``_value``, ``_seq``, ``_sub``; partials add ``_last_seq``, ``_last_sub``, the stamp
of the key's last record folded into them. Every output is stamped with its key's last input
stamp extended by the output's index (a fan-out), so downstream operators see
a key's outputs in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from changeflow.kernels.contract import KernelBase, wall_clock
from changeflow.kernels.frames import select
from changeflow.kernels.changelog import KIND
from changeflow.kernels.keyed.records import (KEY, RECORD_COLUMNS, VALUE, decode, dumps, fail, kind_of, loads,
                                              record_frame, records_of, values_of)
from changeflow.kernels.order import STAMP, Stamp, child_stamp, stamp_columns, stamps_of
from changeflow.kernels.keyed.user import MAX_LONG_VALUE, ContextFactory, close_functions, method_or_self, \
    open_functions
from changeflow.kernels.state import KeyedState
from changeflow.kernels.window.groups import group_bounds

LAST = ["_last_seq", "_last_sub"]   # a partial's last stamp
SIDE = "_side"   # 0 for a co-group's first input, 1 for its second

KINDS = ("reduce", "aggregate", "process", "apply")


@dataclass(frozen=True)
class WindowSpec:
    """What a window computes when it fires.

    ``kind``: one of :data:`KINDS`; ``function``: the ReduceFunction (or callable),
    AggregateFunction, (Process)WindowFunction or its ``All`` form;
    ``window_function``: applied to the result of a reduce/aggregate, or None;
    ``keyed``: False for ``window_all`` (functions get no key);
    ``output_type``: TypeInformation outputs are converted to, or None;
    ``window``: the window that fires, as window functions see it (the API's
    ``GlobalWindow``, given by the front end that builds the spec), or None.
    """

    kind: str
    function: Any
    window_function: Any = None
    keyed: bool = True
    output_type: Any = None
    window: Any = None

    @property
    def combinable(self) -> bool:
        return self.kind in ("reduce", "aggregate")


class _Context:
    """The ``Context`` of a (Process)(All)WindowFunction when a global window fires at end of input."""

    def __init__(self, name: str, window: Any) -> None:
        self._name = name
        self._window = window

    def window(self):
        return self._window

    def current_processing_time(self) -> int:
        return wall_clock()

    def current_watermark(self) -> int:
        # The final watermark of a bounded input: what Flink's window sees when it fires at end of input.
        return MAX_LONG_VALUE

    def window_state(self):
        raise NotImplementedError(f"{self._name}: window_state() is not supported by changeflow's windows yet")

    def global_state(self):
        raise NotImplementedError(f"{self._name}: global_state() is not supported by changeflow's windows yet")


def outputs_of(produced: Any) -> list[Any]:
    return list(produced) if produced is not None else []


def evaluate_window_function(function: Any, key: Any, elements: list[Any], keyed: bool, name: str,
                             window: Any = None) -> list[Any]:
    """The outputs of a window function (None: pass the elements through) for one fired window.

    By Flink's interfaces (:mod:`changeflow.kernels.keyed.user`): a
    ``process`` method is a ProcessWindowFunction (``process(key, context,
    elements)``; without the key for ``window_all``), an ``apply`` method a
    WindowFunction (``apply(key, window, elements)``; idem). ``window`` is the
    window that fired (the API's ``GlobalWindow``).
    """
    if function is None:
        return list(elements)
    if callable(getattr(function, "process", None)):
        context = _Context(name, window)
        return outputs_of(function.process(key, context, elements) if keyed else function.process(context, elements))
    if callable(getattr(function, "apply", None)):
        return outputs_of(function.apply(key, window, elements) if keyed else function.apply(window, elements))
    raise TypeError(f"{name}: not a window function: {type(function).__name__}")


class Emitter:
    """Collects a task's outputs with their stamps and converts them to the declared type."""

    def __init__(self, name: str, output_type: Any) -> None:
        self.name = name
        self.output_type = output_type
        self.values: list[bytes] = []
        self.kinds: list[int] = []
        self.stamps: list[Stamp] = []

    def emit(self, outputs: list[Any], last_stamp: Stamp) -> None:
        for i, value in enumerate(outputs):
            if self.output_type is not None:
                try:
                    value = self.output_type.from_value(value)
                except ValueError as error:
                    raise fail(self.name, value, error) from error
            self.values.append(dumps(value))
            self.kinds.append(kind_of(value))
            self.stamps.append(child_stamp(last_stamp, i))

    def frame(self) -> pd.DataFrame:
        return record_frame(self.values, self.stamps, kinds=self.kinds)


class WindowKernel(KernelBase):
    """Evaluates a :class:`WindowSpec` over complete key groups; ``name`` names the operator in errors.

    >>> from changeflow.kernels.order import source_stamp
    >>> values = [("a", 1), ("b", 2), ("a", 3)]
    >>> records = record_frame([dumps(v) for v in values], [source_stamp(i, 0) for i in range(3)],
    ...                        [dumps(v[0]) for v in values])
    >>> kernel = WindowKernel(WindowSpec("reduce", lambda x, y: (x[0], x[1] + y[1])), "Sum")
    >>> fold = PartialFold(kernel)
    >>> fold.add(records)
    >>> partials = fold.result().sort_values([KEY] + STAMP)
    >>> sorted(loads(v) for v in kernel.fire(partials)[VALUE])
    [('a', 4), ('b', 2)]
    """

    emits_at_end_of_input = True  # the global window fires at the end of input (the kernel contract)

    def __init__(self, spec: WindowSpec, name: str, *, runtime_context: ContextFactory | None = None,
                 window: Any = None) -> None:
        if spec.kind not in KINDS:
            raise ValueError(f"unknown window computation {spec.kind!r}; expected one of {KINDS}")
        self.spec = spec
        self.name = name
        self.runtime_context = runtime_context  # builds the context user functions' open() gets (keyed.user)
        # The window that fires (the API's GlobalWindow), given to window functions.
        self.window = window if window is not None else spec.window

    # --- the kernel contract: a streaming host keeps the window in state until end of input --
    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        """Add a batch of records (``_key``, ``_value``, stamp) to their keys' windows in ``state``; emit nothing.

        Combinable specs keep one partial per key (table ``window``: ``_key``,
        ``_value`` the pickled partial, ``_seq``/``_sub`` its first stamp, ``_last_seq``/``_last_sub``
        its last), the others every record. The runtime runs these windows with the
        batch algorithm instead (:meth:`fire` over sorted groups); this is the
        same window for a host that feeds input as it comes (the testing harness).
        """
        keys = pd.DataFrame({KEY: np.asarray(pd.unique(batch[KEY]), dtype=object)})
        stored = state.load(WINDOW_TABLE, keys)
        if self.spec.combinable:
            fold = PartialFold(self)
            if len(stored) and LAST[0] in stored.columns:
                for k, v, kind, first, last in zip(stored[KEY], stored[VALUE], stored[KIND].tolist(), stamps_of(stored),
                                                   stamps_of(stored, LAST), strict=True):
                    fold.partials[k] = [decode(v, kind), first, last]
            fold.add(batch)
            rows = fold.result()
        else:
            parts = [select(stored, [KEY] + RECORD_COLUMNS)] if len(stored) and VALUE in stored.columns else []
            rows = pd.concat(parts + [select(batch, [KEY] + RECORD_COLUMNS)], ignore_index=True)
        state.store(WINDOW_TABLE, keys, rows)
        return no_records()

    def end_of_input(self, state: KeyedState) -> pd.DataFrame | None:
        """The input ended: every key's window fires (in key order), and its contents are dropped."""
        return fire_stored(state, [KEY] + STAMP, self.fire)

    # --- before the shuffle: one partial per key ----------------------------------------
    def start(self) -> Any:
        """A new partial for a key's first record (``reduce``: the record itself)."""
        if self.spec.kind == "aggregate":
            return self.spec.function.create_accumulator()
        return _FIRST

    def add(self, partial: Any, record: Any, key_blob: bytes) -> Any:
        try:
            if self.spec.kind == "aggregate":
                return self.spec.function.add(record, partial)
            return record if partial is _FIRST else self._reduce(partial, record)
        except Exception as error:
            raise fail(self.name, record, error, loads(key_blob) if self.spec.keyed else None) from error

    @property
    def _reduce(self) -> Any:
        # Resolved once per kernel object (it is called for every record).
        reduce = self.__dict__.get("_reduce_call")
        if reduce is None:
            reduce = self.__dict__["_reduce_call"] = method_or_self(self.spec.function, "reduce")
        return reduce

    def _merge(self, a: Any, b: Any, key: Any) -> Any:
        try:
            return self.spec.function.merge(a, b) if self.spec.kind == "aggregate" else self._reduce(a, b)
        except Exception as error:
            raise fail(self.name, f"partial results {a!r} and {b!r}", error, key) from error

    # --- after the shuffle: fire each key's window -------------------------------------
    def fire(self, groups: pd.DataFrame) -> pd.DataFrame:
        """Outputs of the windows of ``groups``: complete key groups sorted by key and stamp.

        Combinable specs take partials (``_key``, ``_value``, the stamp, the last stamp), the
        others records (``_key``, ``_value``, the stamp).
        """
        spec = self.spec
        emitter = Emitter(self.name, spec.output_type)
        opened = open_functions([spec.function, spec.window_function], self.name, self.runtime_context)
        try:
            keys = groups[KEY].to_numpy()
            values = values_of(groups)  # a Row's kind is its record's (or partial's) _kind
            lasts = stamps_of(groups, LAST if spec.combinable else STAMP)
            starts, ends = group_bounds(keys)
            for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
                key = loads(keys.item(start)) if spec.keyed else None
                elements = values[start:end]
                if spec.combinable:
                    result = elements[0]
                    for partial in elements[1:]:
                        result = self._merge(result, partial, key)
                    if spec.kind == "aggregate":
                        result = self._result(result, key)
                    elements, function = [result], spec.window_function
                else:
                    function = spec.function
                try:
                    outputs = evaluate_window_function(function, key, elements, spec.keyed, self.name, self.window)
                except Exception as error:
                    raise fail(self.name, f"the window of {len(elements)} elements", error, key) from error
                emitter.emit(outputs, max(lasts[start:end]))
        finally:
            close_functions(opened)
        return emitter.frame()

    def _result(self, accumulator: Any, key: Any) -> Any:
        try:
            return self.spec.function.get_result(accumulator)
        except Exception as error:
            raise fail(self.name, f"accumulator {accumulator!r}", error, key) from error


_FIRST = object()  # a reduce partial before its first record


class PartialFold:
    """Folds one partition's records into one partial per key, across the partition's batches.

    Each batch is folded in stamp order, batches in arrival order (a source
    partition's order); :meth:`result` gives the partials with the first and
    last stamp of the records folded into each.
    """

    def __init__(self, kernel: WindowKernel) -> None:
        self.kernel = kernel
        self.partials: dict[bytes, list] = {}  # key -> [partial, first stamp, last stamp]
        self._opened = open_functions([kernel.spec.function], kernel.name, kernel.runtime_context)

    def add(self, records: pd.DataFrame) -> None:
        """Folds a record frame (``_key``, ``_value``, ``_seq``, ``_sub``)."""
        self.add_values(records[KEY].tolist(), values_of(records), stamps_of(records))

    def add_values(self, keys: list[bytes], values: list, stamps: list) -> None:
        """Folds records given as pickled keys, values and stamps, in stamp order."""
        order = range(len(stamps))
        # Usually sorted already: sources emit in order.
        if any(stamps[i] > stamps[i + 1] for i in range(len(stamps) - 1)):
            order = sorted(order, key=stamps.__getitem__)
        partials = self.partials
        kernel = self.kernel
        for i in order:
            key, stamp = keys[i], stamps[i]
            entry = partials.get(key)
            if entry is None:
                entry = partials[key] = [kernel.start(), stamp, stamp]
            entry[0] = kernel.add(entry[0], values[i], key)
            entry[2] = stamp

    def result(self, stamp: Any = None) -> pd.DataFrame:
        """One row per key: ``_key``, ``_value`` (the pickled partial), its first stamp and its last (:data:`LAST`).

        ``stamp`` turns the stamps given to :meth:`add_values` into stamps
        (a caller may fold with plain source positions, which compare the same).
        """
        close_functions(self._opened)
        entries = self.partials
        stamp = stamp or (lambda s: s)
        frame = records_of([e[0] for e in entries.values()], [stamp(e[1]) for e in entries.values()], list(entries))
        return frame.assign(**stamp_columns([stamp(e[2]) for e in entries.values()], LAST))


WINDOW_TABLE = "window"


def no_records() -> pd.DataFrame:
    return record_frame([], [])


def fire_stored(state: KeyedState, order: list[str], fire: Any) -> pd.DataFrame | None:
    """Fire every window kept in ``state`` (sorted into complete groups by ``order``), then drop them."""
    rows = state.scan(WINDOW_TABLE)
    if not len(rows) or VALUE not in rows.columns:
        return None
    out = fire(rows.sort_values(order, kind="stable", ignore_index=True))
    keys = pd.DataFrame({KEY: np.asarray(pd.unique(rows[KEY]), dtype=object)})
    state.store(WINDOW_TABLE, keys, rows.iloc[:0])
    return out
