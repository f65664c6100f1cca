"""Runs a chain of stateless user functions over a frame of records (no Spark import, no API import at load).

Consecutive ``map``/``flat_map``/``filter``/``process`` operators, and the key
selector of a following keyed operator, run fused in one Python call over a
whole partition of a micro-batch, as Flink chains operators into one task.
Each operator runs over the whole list of records before the next (one
Python loop per operator, no per-record dispatch between operators); a
fan-out operator extends each output's stamp with its index
(:mod:`changeflow.kernels.keyed.records`).

The chain's ops are the job graph's (:class:`changeflow.plan.stream_nodes.Op`);
this module only reads their fields. It calls the user functions they hold as
the keyed kernels do (:mod:`changeflow.kernels.keyed.user`), by the methods of
Flink's interfaces and without importing the API: the front end checked each
function's kind when the op was built, and gave the op the ``context`` factory
its ``open()`` gets.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.common.typeinfo import conform
from changeflow.kernels.frames import select
from changeflow.kernels.keyed.process import ProcessContext
from changeflow.kernels.keyed.records import (KEY, RECORD_COLUMNS, VALUE, control_mask, dumps, fail,
                                              output_tag_of, records_of, timestamp_of, values_of)
from changeflow.kernels.order import Stamp, child_stamp, stamps_of
from changeflow.kernels.keyed.user import close_functions, method_or_self, open_functions

# The method of Flink's function interface each kind of op calls (a plain callable is called itself).
_METHODS = {"map": "map", "flat_map": "flat_map", "filter": "filter", "key": "get_key", "process": "process_element"}

__all__ = ["ChainRunner", "run", "run_timed"]


def run(ops: list[Any], values: list[Any], stamps: list[Stamp],
        announce: Any = None) -> tuple[list[Any], list[Stamp], list[Any] | None]:
    """The records after ``ops``: (values, stamps, keys or None when the last op is not a key selector).

    ``announce(what)``, if given, is told which function runs before each op runs over the records,
    and ``announce(None)`` after the last (the runtime records it where a dying worker's error can name it).

    >>> from changeflow.plan.stream_nodes import Op
    >>> ops = [Op("flat_map", lambda s: s.split(), "split"), Op("filter", lambda w: w != "b", "not b"),
    ...        Op("map", str.upper, "upper")]
    >>> from changeflow.kernels.order import source_stamp, stamp_seq, stamp_sub
    >>> values, stamps, _ = run(ops, ["a b", "c"], [source_stamp(0, 0), source_stamp(1, 0)])
    >>> values, [(stamp_seq(s), hex(stamp_sub(s))) for s in stamps]
    (['A', 'C'], [(0, '0x10000'), (1, '0x10000')])
    >>> run([Op("map", lambda x: 1 // x, "inverse")], [1, 0], [(0, 0), (1, 0)])  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    changeflow.kernels.keyed.records.UserFunctionError: user function inverse failed on record 0:
    ZeroDivisionError: integer division or modulo by zero
    """
    values, stamps, keys, _ = run_timed(ops, values, stamps, None, announce)
    return values, stamps, keys


def run_timed(ops: list[Any], values: list[Any], stamps: list[Stamp], timestamps: list[int | None] | None,
              announce: Any = None) -> tuple[list[Any], list[Stamp], list[Any] | None, list[int | None] | None]:
    """:func:`run` with the records' event timestamps (None: no record has one): every output keeps
    its input's timestamp, as Flink's chained operators do; a ProcessFunction's ``ctx.timestamp()`` reads it.

    >>> from changeflow.plan.stream_nodes import Op
    >>> run_timed([Op("flat_map", lambda s: s.split(), "split")], ["a b", "c"], [(0, 0), (1, 0)], [7, 9])[3]
    [7, 7, 9]
    """
    keys = None
    for op in ops:
        function = op.function
        if announce is not None:
            announce(f"{op.kind.replace('_', ' ')} function {op.name}")
        opened = open_functions([function], op.name, op.context)
        try:
            if op.kind == "process":
                values, stamps, timestamps = _process(op, values, stamps, timestamps)
            else:
                call = method_or_self(function, _METHODS[op.kind])
                if op.kind == "key":
                    keys = _apply(op, call, values)
                elif op.kind == "map":
                    values = _convert(op, _apply(op, call, values))
                elif op.kind == "filter":
                    keep = _apply(op, call, values)
                    values = [v for v, k in zip(values, keep, strict=True) if k]
                    stamps = [s for s, k in zip(stamps, keep, strict=True) if k]
                    if timestamps is not None:
                        timestamps = [t for t, k in zip(timestamps, keep, strict=True) if k]
                else:
                    values, stamps, timestamps = _fan_out(op, lambda v, _t, f=call: f(v), values, stamps,
                                                          timestamps)
        finally:
            close_functions(opened)
    if announce is not None:
        announce(None)  # no user function runs from here on
    return values, stamps, keys, timestamps


def _apply(op: Any, call: Any, values: list[Any]) -> list[Any]:
    out = []
    for v in values:
        try:
            out.append(call(v))
        except Exception as error:
            raise fail(op.name, v, error) from error
    return out


def _fan_out(op: Any, call: Any, values: list[Any], stamps: list[Stamp],
             timestamps: list[int | None] | None) -> tuple[list[Any], list[Stamp], list[int | None] | None]:
    out_values: list[Any] = []
    out_stamps: list[Stamp] = []
    out_times: list[int | None] = []
    times = timestamps if timestamps is not None else [None] * len(values)
    for v, stamp, t in zip(values, stamps, times, strict=True):  # a stamp per record
        try:
            produced = call(v, t)
            produced = list(produced) if produced is not None else []
        except Exception as error:
            raise fail(op.name, v, error) from error
        out_values.extend(produced)
        out_stamps.extend(child_stamp(stamp, i) for i in range(len(produced)))
        out_times.extend([t] * len(produced))
    return _convert(op, out_values), out_stamps, (out_times if timestamps is not None else None)


def _process(op: Any, values: list[Any], stamps: list[Stamp],
             timestamps: list[int | None] | None) -> tuple[list[Any], list[Stamp], list[int | None] | None]:
    process_element = method_or_self(op.function, _METHODS["process"])

    def call(v: Any, t: int | None) -> list[Any]:
        return select_outputs(process_element(v, ProcessContext(None, timestamp=t)), op.side_tag)

    return _fan_out(op, call, values, stamps, timestamps)


def select_outputs(produced: Any, side_tag: str | None) -> list[Any]:
    """A ProcessFunction's main outputs (``side_tag`` None), or its values yielded with that tag.

    A side output value is yielded as ``(output_tag, value)`` (:func:`~.keyed.records.output_tag_of`).

    >>> class Tag:
    ...     is_output_tag = True
    ...     def __init__(self, tag_id): self.tag_id = tag_id
    >>> out = [2, (Tag("odd"), 3), (Tag("other"), 5), ("not", "tagged")]
    >>> select_outputs(out, None), select_outputs(out, "odd")
    ([2, ('not', 'tagged')], [3])
    """
    selected = []
    for item in produced or ():
        tag = output_tag_of(item)
        if side_tag is None and tag is None:
            selected.append(item)
        elif side_tag is not None and tag == side_tag:
            selected.append(item[1])
    return selected


def _convert(op: Any, values: list[Any]) -> list[Any]:
    """The operator's outputs converted to its declared ``output_type``; a misfit names the operator."""
    if op.output_type is None or not op.output_type.is_declared():
        return values
    convert = op.output_type.converter()
    try:
        return [convert(v) for v in values]
    except ValueError:
        pass  # find the value that does not fit, to name it
    for v in values:
        try:
            conform(op.output_type, v, f"the output of {op.name}", convert)
        except ValueError as error:
            raise fail(op.name, v, error) from error
    raise AssertionError("unreachable: a value failed to convert once but not twice")


class ChainRunner:
    """The function given to ``mapInPandas``: record frames in, record frames (with ``_key`` when keyed) out."""

    def __init__(self, ops: list[Any], announce: Any = None) -> None:
        self.ops = list(ops)
        self.keyed = bool(ops) and ops[-1].kind == "key"
        self.announce = announce  # see run()

    def __call__(self, frames):
        for frame in frames:
            if len(frame):
                yield self.process(frame)

    def process(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Also the ``local`` hook of :class:`~changeflow.runtime.spark.packing.Packer`.

        Control rows (end of input, flush signals, watermarks: :mod:`changeflow.kernels.keyed.records`)
        pass through untouched, after the partition's records.
        """
        control = control_mask(frame)
        if control.any():
            records = self.process(select(frame, ~control).reset_index(drop=True)) if (~control).any() else None
            passed = frame.loc[control, RECORD_COLUMNS].reset_index(drop=True)
            if self.keyed:
                passed.insert(0, KEY, np.asarray([b""] * len(passed), dtype=object))
            return passed if records is None else pd.concat([records, passed], ignore_index=True)
        values = values_of(frame)  # a Row's kind is its record's _kind
        timestamps: list[int | None] | None = [timestamp_of(b) for b in frame[VALUE]]
        if all(t is None for t in timestamps):
            timestamps = None
        values, stamps, keys, timestamps = run_timed(self.ops, values, stamps_of(frame), timestamps, self.announce)
        if self.keyed:
            assert keys is not None  # a keyed chain ends with its key selector, which run() applied
        return records_of(values, stamps, [dumps(k) for k in keys] if self.keyed and keys is not None else None,
                          timestamps)
