"""Two-input operators (``DataStream.connect``): a co-function's calls, and the keyed kernel running them.

A record of a two-input operator carries its input's number in the first byte
of its ``_value`` (:data:`FIRST` or :data:`SECOND`, before the record's own
bytes, :mod:`.records`): both inputs travel as one record stream, keyed by
their two key selectors, and the kernel calls the function's method for the
record's input. The calls follow PyFlink 2.3's adapters: a ``CoMapFunction``'s
``map1``/``map2`` result is emitted unless it is None, a ``CoFlatMapFunction``'s
``flat_map1``/``flat_map2`` results all, a ``(Keyed)CoProcessFunction``'s
``process_element1``/``process_element2(value, ctx)`` what it yields.

:class:`KeyedCoProcess` is :class:`~.process.KeyedProcess` with that dispatch:
the same keyed state (one state for the key, read and written from both
inputs, as Flink's), processing-time and event-time timers (``on_timer``), the
same batch algorithm (a key's records, then its timers). Its host gives it
the minimum of its inputs' watermarks, as Flink's two-input operators have.

Without keys the two inputs run apart: :class:`CoSide` is one input's calls as
a ``ProcessFunction``, run in that input's fused chain (:mod:`changeflow.kernels.chain`).
Both call the function through :class:`CoCalls`, which also converts the outputs
to the declared ``output_type``. :class:`MarkedChains` runs each input's chain and
key selector over the marked records of both, in one Python call per partition.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from changeflow.common.typeinfo import conform
from changeflow.kernels.keyed.process import KeyedProcess, _Run
from changeflow.kernels.keyed.records import VALUE, control_mask, decode, output_tag_of, timestamp_of
from changeflow.kernels.order import Stamp

#: The first byte of a two-input operator's record: which input it came from.
FIRST, SECOND = b"\x01", b"\x02"

# The methods a co-function of each kind has for its first and its second input.
_METHODS = {"map": ("map1", "map2"), "flat_map": ("flat_map1", "flat_map2"),
            "process": ("process_element1", "process_element2"),
            "broadcast": ("process_element", "process_broadcast_element")}  # .broadcast: the other input, then rules


class CoCalls:
    """A co-function's calls by input: ``call(side, value, ctx)`` (``side`` 0 or 1) and ``on_timer``, the outputs
    as a list converted to ``output_type`` (a ``TypeInformation``, or None); ``kind``: map, flat_map or process
    (the ``ConnectedStreams`` method that took the function), ``name`` the operator's, for errors.

    >>> class Tag:
    ...     def map1(self, v): return ("left", v)
    ...     def map2(self, v): return None if v < 0 else ("right", v)
    >>> calls = CoCalls(Tag(), "map", None, "Co-Map")
    >>> calls.call(0, 1, None), calls.call(1, -1, None)
    ([('left', 1)], [])
    """

    def __init__(self, function: Any, kind: str, output_type: Any, name: str) -> None:
        self.function = function
        self.kind = kind
        self.output_type = output_type if output_type is not None and output_type.is_declared() else None
        self.where = f"the output of {name}"

    def open(self, runtime_context: Any) -> None:
        open_ = getattr(self.function, "open", None)
        if callable(open_):
            open_(runtime_context)

    def close(self) -> None:
        close = getattr(self.function, "close", None)
        if callable(close):
            close()

    def is_output_idempotent(self) -> bool:
        declared = getattr(self.function, "is_output_idempotent", None)
        return bool(declared()) if callable(declared) else False

    def call(self, side: int, value: Any, ctx: Any) -> list:
        method = getattr(self.function, _METHODS[self.kind][side])
        if self.kind == "map":  # PyFlink's CoMap adapter emits a result unless it is None
            out = method(value)
            produced = [] if out is None else [out]
        elif self.kind == "flat_map":
            produced = method(value)
        else:
            produced = method(value, ctx)
        return self._converted(produced)

    def on_timer(self, timestamp: int, ctx: Any) -> list:
        on_timer = getattr(self.function, "on_timer", None)
        return self._converted(on_timer(timestamp, ctx) if callable(on_timer) else None)

    def _converted(self, produced: Any) -> list:
        outputs = list(produced or ())
        if self.output_type is None:
            return outputs
        convert = self.output_type.converter()
        # A side output's value (yielded with its tag) is not the main output's type.
        return [v if output_tag_of(v) is not None else conform(self.output_type, v, self.where, convert)
                for v in outputs]


class KeyedCoProcess(KeyedProcess):
    """The kernel of keyed ``ConnectedStreams``' ``map``/``flat_map``/``process``: ``calls`` a :class:`CoCalls`.

    >>> from changeflow.datastream.functions import RuntimeContext
    >>> from changeflow.datastream.state import ValueStateDescriptor
    >>> from changeflow.kernels.keyed.records import VALUE, dumps, loads, record_frame
    >>> from changeflow.kernels.order import source_stamp
    >>> from changeflow.kernels.state import InMemoryKeyedState
    >>> class Total:  # a KeyedCoProcessFunction: one sum per key over both inputs
    ...     def open(self, ctx): self.total = ctx.get_state(ValueStateDescriptor("total"))
    ...     def process_element1(self, value, ctx):
    ...         self.total.update((self.total.value() or 0) + value)
    ...         yield ctx.get_current_key(), self.total.value()
    ...     process_element2 = process_element1
    >>> batch = record_frame([FIRST + dumps(1), SECOND + dumps(10), FIRST + dumps(100)],
    ...                      [source_stamp(i, 0) for i in range(3)], [dumps("k")] * 3)
    >>> kernel = KeyedCoProcess(CoCalls(Total(), "process", None, "Total"), "Total", runtime_context=RuntimeContext)
    >>> [loads(v) for v in kernel.process(batch, InMemoryKeyedState())[VALUE]]
    [('k', 1), ('k', 11), ('k', 111)]
    """

    function: CoCalls

    def element(self, run: _Run, key_blob: bytes, blob: bytes, kind: int, stamp: Stamp) -> None:
        side, blob = blob[:1], blob[1:]
        if side not in (FIRST, SECOND):
            raise ValueError(f"{self.name}: a record without its input's mark ({side!r})")
        index = 0 if side == FIRST else 1
        run.process_element(key_blob, decode(blob, kind), stamp, timestamp_of(blob),
                            lambda value, ctx: self.function.call(index, value, ctx))


class CoSide:
    """One input (``side`` 0 or 1) of non-keyed ``ConnectedStreams``' ``map``/``flat_map``/``process``, as a
    ``ProcessFunction`` over ``calls`` (a :class:`CoCalls`).

    Each input runs in its own chain with its own copy of the function (opened there), as each parallel
    instance of Flink's operator has its own: a field the function sets while processing one input is not seen
    by the other's calls.
    """

    def __init__(self, calls: CoCalls, side: int) -> None:
        self.calls = calls
        self.side = side

    def open(self, runtime_context: Any) -> None:
        self.calls.open(runtime_context)

    def close(self) -> None:
        self.calls.close()

    def process_element(self, value: Any, ctx: Any) -> list:
        return self.calls.call(self.side, value, ctx)


class MarkedChains:
    """Each input's chain and key selector (``first``, ``second``: :class:`~changeflow.kernels.chain.ChainRunner`)
    over a frame of both inputs' marked records, the marks kept: the keyed records of a two-input operator.

    The ``local`` step of the operator's stateful stage (``process``), or a ``mapInPandas`` function
    (``__call__``); control rows pass through, as :class:`~changeflow.kernels.chain.ChainRunner` passes them.

    >>> from changeflow.kernels.chain import ChainRunner
    >>> from changeflow.kernels.keyed.records import KEY, dumps, loads, record_frame
    >>> from changeflow.kernels.order import source_stamp
    >>> from changeflow.plan.stream_nodes import Op
    >>> chains = MarkedChains(ChainRunner([Op("key", lambda v: v[0], "first key")]),
    ...                       ChainRunner([Op("map", lambda v: (v[1], v[0]), "swap"), Op("key", lambda v: v[0], "k")]))
    >>> frame = record_frame([FIRST + dumps(("a", 1)), SECOND + dumps((2, "b"))],
    ...                      [source_stamp(0, 0), source_stamp(0, 1)])
    >>> out = chains.process(frame)
    >>> [(loads(k), v[:1], loads(v[1:])) for k, v in zip(out[KEY], out[VALUE])]
    [('a', b'\\x01', ('a', 1)), ('b', b'\\x02', ('b', 2))]
    """

    def __init__(self, first: Any, second: Any) -> None:
        self.runners = ((FIRST, first), (SECOND, second))

    def __call__(self, frames):
        for frame in frames:
            if len(frame):
                yield self.process(frame)

    def process(self, frame: pd.DataFrame) -> pd.DataFrame:
        control = control_mask(frame)
        marks = np.asarray([b"" if c else v[:1] for v, c in zip(frame[VALUE], control, strict=True)], dtype=object)
        parts = []
        for mark, runner in self.runners:
            rows = marks == mark
            if rows.any():
                side = frame.loc[rows].reset_index(drop=True)
                side[VALUE] = np.asarray([v[1:] for v in side[VALUE]], dtype=object)
                out = runner.process(side)
                out[VALUE] = np.asarray([mark + v for v in out[VALUE]], dtype=object)
                parts.append(out)
        if control.any():  # the first chain passes them through (with an empty key), as a one-input chain does
            parts.append(self.runners[0][1].process(frame.loc[control].reset_index(drop=True)))
        return pd.concat(parts, ignore_index=True) if parts else self.runners[0][1].process(frame.iloc[:0])
