"""Event-time and count windows of the DataStream API: Flink's ``WindowOperator`` and its triggers.

:class:`EventWindows` says how a record maps to windows: by its timestamp
(tumbling, sliding, session: Flink's ``TimeWindow`` arithmetic, offsets
included) or by its position in its key (PyFlink's count windows: the n-th
record of a key, from 0, is in window ``n // size`` (tumbling), or in every
window ``id`` with ``id * slide <= n < id * slide + size`` (sliding)).
:class:`EventTimeWindow` is the kernel (``event_time`` set, see
:mod:`changeflow.kernels.contract`). When a window fires is its trigger's
business (:class:`~.triggers.TriggerSpec`: event time, count, continuous
event time, never, optionally purging); the default ``EventTimeTrigger`` of
time windows and the ``CountTrigger(size)`` of count windows behave as follows:

- a record (it must have an event timestamp) goes to each of its windows that
  is not *late*: a window is late when ``max_timestamp + allowed_lateness <=
  watermark``. A record none of whose windows takes it and whose own
  ``timestamp + allowed_lateness <= watermark`` is a late record: dropped, or,
  with a late-data tag, emitted as a late record (:func:`late_mark`), which
  the runtime sends to the side output;
- a window fires when the watermark reaches its ``max_timestamp`` (``end - 1``),
  and fires again, with all its contents, for every record added to it later
  (within the allowed lateness), as Flink's ``EventTimeTrigger`` does;
  a count window fires when its ``size``-th record arrives (it is never late,
  and its results' timestamp is its ``max_timestamp``, ``Long.MAX_VALUE``);
- a trigger's event-time timers fire in timestamp order as the watermark
  passes them; a timer registered while the watermark's timers fire (a
  ``ContinuousEventTimeTrigger``'s next firing) fires at the next watermark
  advance even when already due, never after the final watermark, as in
  PyFlink 2.3 (its Python operator's timer registrations reach Flink's timer
  service after the watermark's timers ran; Java's WindowOperator would fire
  it in the same advance); a window that fires empty (purged) emits nothing;
- a time window's state is dropped when the watermark reaches ``max_timestamp +
  allowed_lateness`` (a ProcessWindowFunction's ``clear(context)`` is called);
  a count window that no later record of its key can reach and that has no
  pending timer is dropped (unobservable: Flink keeps it, never to fire again);
- session windows merge: a record's window ``[t, t + gap)`` merges with every
  window it intersects (``TimeWindow.intersects``: touching counts), contents
  merged (``reduce`` again, ``AggregateFunction.merge``, or the element lists
  concatenated).

What a window keeps (:class:`~.evaluate.WindowSpec`): ``reduce`` the reduced
value, ``aggregate`` the accumulator, ``process``/``apply`` the elements. A
firing emits the result of the window function (if any), each output with
the window's ``max_timestamp`` as its event timestamp. Windows due at one
watermark fire in ``max_timestamp`` order, then key order.

State: table ``event_windows`` holds ``(_key, _state)``: the key's windows and
record count, a pickled ``[{(start, end): [contents, last stamp, Pane]}, count]``
(a count window is ``(id, Long.MAX_VALUE + 1)``). ``on_watermark``
scans the bucket's keys (once per watermark: a micro-batch on Spark).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from changeflow.kernels.contract import MIN_WATERMARK, KernelBase, wall_clock
from changeflow.kernels.changelog import KIND
from changeflow.kernels.keyed.records import (KEY, VALUE, decode, dumps, fail, kind_of, loads, record_frame,
                                              timestamp_of)
from changeflow.kernels.order import Stamp, child_stamp, fire_stamp, sort_records, stamps_of
from changeflow.kernels.keyed.user import ContextFactory, close_functions, method_or_self, open_functions
from changeflow.kernels.state import KeyedState
from changeflow.kernels.window.evaluate import WindowSpec, outputs_of
from changeflow.kernels.window.triggers import Pane, TriggerSpec

STATE = "_state"
_TABLE = "event_windows"
LATE = b"L"  # the _value prefix of a late record bound for the side output
COUNT_WINDOW_END = 2**63  # a count window ends after Long.MAX_VALUE: its max_timestamp is Long.MAX_VALUE

NO_TIMESTAMP_MESSAGE = ("Record has Java Long.MIN_VALUE timestamp (= no timestamp marker). Is the time "
                        "characteristic set to 'ProcessingTime', or did you forget to call "
                        "'data_stream.assign_timestamps_and_watermarks(...)'?")


def late_mark(blob: bytes) -> bytes:
    """A late record's ``_value`` on its way to the side output: :data:`LATE`, then the record as it was."""
    return LATE + blob


def late_records(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A window's output split: (the main output, the late records with their ``_value`` restored).

    >>> out = record_frame([dumps(1), late_mark(dumps(2))], [(0, 0), (1, 0)])
    >>> main, late = late_records(out)
    >>> [loads(v) for v in main[VALUE]], [loads(v) for v in late[VALUE]]
    ([1], [2])
    """
    late = np.fromiter((v[:1] == LATE for v in frame[VALUE]), dtype=bool, count=len(frame))
    side = frame.loc[late].reset_index(drop=True)
    side[VALUE] = [v[1:] for v in side[VALUE]]
    return frame.loc[~late].reset_index(drop=True), side


@dataclass(frozen=True)
class EventWindows:
    """Which windows a timestamp falls in: ``kind`` tumbling, sliding or session (ms); ``processing_time``:
    the timestamp is the record's arrival time (a processing-time assigner, :mod:`.processing_time`).

    >>> EventWindows("tumbling", 10).assign(23), EventWindows("tumbling", 10, offset=3).assign(2)
    ([(20, 30)], [(-7, 3)])
    >>> EventWindows("sliding", 10, slide=5).assign(23), EventWindows("session", 0, gap=4).assign(7)
    ([(20, 30), (15, 25)], [(7, 11)])
    >>> [w for w, _ in EventWindows("count_sliding", 3, slide=2).assign_count(4)]
    [2, 1]
    """

    kind: str
    size: int = 0
    slide: int = 0
    offset: int = 0
    gap: int = 0
    processing_time: bool = False
    gap_extractor: Any = None  # a session's gap per record in ms (a function of the record), else ``gap``

    @property
    def merging(self) -> bool:
        return self.kind == "session"

    @property
    def event_time(self) -> bool:
        """Time windows (by event timestamp; they can be late), not count (or global) windows."""
        return not self.kind.startswith("count") and self.kind != "global"

    def assign_count(self, n: int) -> list[tuple[int, int]]:
        """The count windows of a key's ``n``-th record (from 0), as PyFlink's count assigners give them (``global``:
        the one global window, ``GlobalWindows`` with a trigger of this kernel)."""
        if self.kind == "global":
            return [(0, COUNT_WINDOW_END)]
        if self.kind == "count_tumbling":
            return [(n // self.size, COUNT_WINDOW_END)]
        last = n // self.slide
        return [(i, COUNT_WINDOW_END) for i in range(last, -1, -1) if i * self.slide <= n < i * self.slide + self.size]

    def reachable(self, w: tuple[int, int], n: int) -> bool:
        """Whether count window ``w`` can still take a record once a key has ``n`` records."""
        if self.kind == "global":
            return True
        return n < w[0] * (self.size if self.kind == "count_tumbling" else self.slide) + self.size

    def assign(self, timestamp: int, value: Any = None) -> list[tuple[int, int]]:
        if self.kind == "session":  # ``value``, the record, gives a dynamic gap (``gap_extractor(value)``, checked)
            return [(timestamp, timestamp + (self.gap if self.gap_extractor is None else self.gap_extractor(value)))]
        step = self.size if self.kind == "tumbling" else self.slide
        last_start = timestamp - (timestamp - self.offset + step) % step
        return [(start, start + self.size) for start in range(last_start, timestamp - self.size, -step)]


def _intersects(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and a[1] >= b[0]


class _Context:
    """The ``Context`` of a ProcessWindowFunction (``window()``, ``current_watermark()``)."""

    def __init__(self, name: str, window: Any, watermark: int) -> None:
        self._name = name
        self._window = window
        self._watermark = watermark

    def window(self) -> Any:
        return self._window

    def current_processing_time(self) -> int:
        return wall_clock()

    def current_watermark(self) -> int:
        return self._watermark

    def window_state(self) -> Any:
        raise NotImplementedError(f"{self._name}: window_state() is not supported by changeflow's windows yet")

    def global_state(self) -> Any:
        raise NotImplementedError(f"{self._name}: global_state() is not supported by changeflow's windows yet")


class EventTimeWindow(KernelBase):
    """The kernel of ``KeyedStream.window(<event-time assigner>)`` (and ``window_all``) with a window function.

    ``windows`` the assigner (:class:`EventWindows`); ``trigger`` its trigger (default: the assigner's, event
    time or the count of a count window); ``make_window(start, end)``
    builds the window functions see (the API's ``TimeWindow``); ``lateness`` the
    allowed lateness (ms); ``late_tag``: emit late records (:func:`late_mark`) instead of dropping them.
    """

    event_time = True

    def __init__(self, spec: WindowSpec, windows: EventWindows, name: str, *, make_window: Callable = tuple,
                 lateness: int = 0, late_tag: str | None = None, trigger: TriggerSpec | None = None,
                 runtime_context: ContextFactory | None = None) -> None:
        self.spec = spec
        self.windows = windows
        if trigger is None:  # the assigner's default trigger (GlobalWindows': NeverTrigger)
            trigger = (TriggerSpec("event_time") if windows.event_time else TriggerSpec("never")
                       if windows.kind == "global" else TriggerSpec("count", count=windows.size))
        self.trigger = trigger
        self.name = name
        self.make_window = make_window
        self.lateness = lateness
        self.late_tag = late_tag
        self.runtime_context = runtime_context

    # --- the kernel contract -----------------------------------------------------------
    def process(self, batch: pd.DataFrame, state: KeyedState) -> pd.DataFrame:
        batch = sort_records(batch)
        keys = pd.DataFrame({KEY: np.asarray(pd.unique(batch[KEY]), dtype=object)})
        windows = _load(state, keys)
        out = _Out()
        watermark = self.current_watermark
        arrival = self.clock() if self.windows.processing_time else None  # one processing time per call
        opened = self._open()
        try:
            for key_blob, blob, kind, stamp in zip(batch[KEY], batch[VALUE], batch[KIND].tolist(), stamps_of(batch),
                                                   strict=True):
                timestamp = timestamp_of(blob) if arrival is None else arrival
                mine = windows.setdefault(key_blob, [{}, 0])
                record = decode(blob, kind)
                if self.windows.event_time:
                    if timestamp is None:
                        raise fail(self.name, record, ValueError(NO_TIMESTAMP_MESSAGE))
                    try:
                        assigned = self.windows.assign(timestamp, record)
                    except Exception as error:  # noqa: BLE001 - a dynamic gap: the user's extractor failed
                        raise fail(self.name, record, error) from error
                else:  # a count window: by the record's position in its key
                    assigned = self.windows.assign_count(mine[1])
                    mine[1] += 1
                    timestamp = MIN_WATERMARK if timestamp is None else timestamp
                added = self._add(key_blob, mine[0], record, timestamp, assigned, stamp, watermark, out)
                if not self.windows.event_time:
                    self._drop_unreachable(mine)
                    continue
                late = not added and timestamp + self.lateness <= watermark
                if late and self.late_tag is not None:  # else dropped, as Flink drops it
                    out.add([late_mark(blob)], stamp, raw=kind)
        finally:
            close_functions(opened)
        _store(state, keys, windows)
        return out.frame()

    def on_watermark(self, watermark: int, state: KeyedState) -> pd.DataFrame | None:
        """Fire the windows whose ``max_timestamp`` the watermark reached; drop those past the allowed lateness."""
        rows = state.scan(_TABLE)
        if not len(rows) or STATE not in rows.columns:
            return None
        windows = {k: loads(v) for k, v in zip(rows[KEY], rows[STATE], strict=True)}
        # The trigger timers due, earliest first (then by key); a timer a firing registers waits for the next
        # watermark (PyFlink's behaviour, see the module's docstring).
        due = [] if self.trigger.processing_time else sorted(  # a processing-time trigger's timers: on_timer
            (t, k, w) for k, mine in windows.items() for w, entry in mine[0].items() for t in entry[2].timers
            if t <= watermark)
        out = _Out()
        opened = self._open()
        try:
            for time, key_blob, w in due:
                entry = windows[key_blob][0][w]
                pane: Pane = entry[2]
                pane.timers.discard(time)
                if self.trigger.on_event_time(pane, time, w[1] - 1):
                    self._fire(key_blob, w, entry, watermark, out, fire_stamp(time))
            for key_blob, mine in windows.items():
                if not self.windows.event_time:
                    self._drop_unreachable(mine)
                    continue
                for w in [w for w in mine[0] if w[1] - 1 + self.lateness <= watermark]:
                    self._clear(key_blob, w, watermark)
                    del mine[0][w]
        finally:
            close_functions(opened)
        keys = pd.DataFrame({KEY: np.asarray(list(windows), dtype=object)})
        _store(state, keys, windows)
        return out.frame()

    # --- windows -----------------------------------------------------------------------
    def _add(self, key_blob: bytes, mine: dict, value: Any, timestamp: int, assigned: list[tuple[int, int]],
             stamp: Stamp, watermark: int, out: "_Out") -> bool:
        """Adds a record to its windows that are not late, firing those whose trigger says so."""
        added = False
        for j, w in enumerate(assigned):
            if self.windows.merging:
                w = self._merge(key_blob, mine, w, watermark)
            if self.windows.event_time and w[1] - 1 + self.lateness <= watermark:  # Flink's isWindowLate
                continue
            added = True
            entry = mine.get(w)
            contents = self._fold(entry[0] if entry is not None else _EMPTY, value, key_blob)
            entry = mine[w] = [contents, stamp, entry[2] if entry is not None else Pane()]
            if self.trigger.on_element(entry[2], timestamp, w[1] - 1, self._trigger_time(watermark)):
                self._fire(key_blob, w, entry, watermark, out, child_stamp(stamp, j))
        return added

    def _drop_unreachable(self, mine: list) -> None:
        """Drops the count windows no later record reaches and no timer fires (they cannot fire again)."""
        for w in [w for w, entry in mine[0].items() if not entry[2].timers and not self.windows.reachable(w, mine[1])]:
            del mine[0][w]

    def _merge(self, key_blob: bytes, mine: dict, new: tuple[int, int], watermark: int) -> tuple[int, int]:
        """A session: ``new`` and every window it (transitively) intersects become one window."""
        merged, parts = new, []
        changed = True
        while changed:
            changed = False
            for w in list(mine):
                if w not in parts and _intersects(w, merged):
                    parts.append(w)
                    merged = (min(merged[0], w[0]), max(merged[1], w[1]))
                    changed = True
        if not parts or parts == [merged]:
            return merged
        contents, last, panes = _EMPTY, None, []
        for w in sorted(parts):
            entry = mine.pop(w)
            if entry[0] is not _EMPTY:  # a purged window has no contents
                contents = entry[0] if contents is _EMPTY else self._combine(contents, entry[0], key_blob)
            last = entry[1] if last is None else max(last, entry[1])
            panes.append(entry[2])
        # Flink's merged window fires anew when the watermark reaches its end (its trigger timer moves).
        mine[merged] = [contents, last, self.trigger.on_merge(panes, merged[1] - 1, self._trigger_time(watermark))]
        return merged

    def _trigger_time(self, watermark: int) -> int:
        """The trigger's current time: the watermark, or the processing time for a processing-time trigger."""
        return self.clock() if self.trigger.processing_time else watermark

    def _fold(self, contents: Any, value: Any, key_blob: bytes) -> Any:
        kind = self.spec.kind
        try:
            if kind == "aggregate":
                acc = self.spec.function.create_accumulator() if contents is _EMPTY else contents
                return self.spec.function.add(value, acc)
            if kind == "reduce":
                return value if contents is _EMPTY else method_or_self(self.spec.function, "reduce")(contents, value)
            return [value] if contents is _EMPTY else contents + [value]
        except Exception as error:
            raise fail(self.name, value, error, self._key(key_blob)) from error

    def _combine(self, a: Any, b: Any, key_blob: bytes) -> Any:
        kind = self.spec.kind
        try:
            if kind == "aggregate":
                return self.spec.function.merge(a, b)
            if kind == "reduce":
                return method_or_self(self.spec.function, "reduce")(a, b)
            return a + b
        except Exception as error:
            raise fail(self.name, f"window contents {a!r} and {b!r}", error, self._key(key_blob)) from error

    def _fire(self, key_blob: bytes, w: tuple[int, int], entry: list, watermark: int, out: "_Out",
              stamp: Stamp) -> None:
        spec, key = self.spec, self._key(key_blob)
        window = self.make_window(*w)
        contents = entry[0]
        if contents is _EMPTY:  # purged since: Flink emits nothing for a window without contents
            return
        if self.trigger.purge:  # FIRE_AND_PURGE: the contents go, the trigger's state stays
            entry[0] = _EMPTY
        try:
            if spec.kind in ("reduce", "aggregate"):
                result = spec.function.get_result(contents) if spec.kind == "aggregate" else contents
                elements, function = [result], spec.window_function
            else:
                elements, function = list(contents), spec.function
            outputs = self._evaluate(function, key, elements, window, watermark)
        except Exception as error:
            raise fail(self.name, f"the window {window!r}", error, key) from error
        out.add(self._typed(outputs), stamp, timestamp=min(w[1] - 1, MAX_LONG))

    def _evaluate(self, function: Any, key: Any, elements: list, window: Any, watermark: int) -> list[Any]:
        if function is None:
            return elements
        keyed = self.spec.keyed
        if callable(getattr(function, "process", None)):
            context = _Context(self.name, window, watermark)
            return outputs_of(function.process(key, context, elements) if keyed else function.process(context,
                                                                                                     elements))
        return outputs_of(function.apply(key, window, elements) if keyed else function.apply(window, elements))

    def _clear(self, key_blob: bytes, w: tuple[int, int], watermark: int) -> None:
        function = self.spec.window_function if self.spec.combinable else self.spec.function
        clear = getattr(function, "clear", None)
        if callable(clear) and callable(getattr(function, "process", None)):
            clear(_Context(self.name, self.make_window(*w), watermark))

    def _typed(self, outputs: list[Any]) -> list[Any]:
        if self.spec.output_type is None:
            return outputs
        converted = []
        for value in outputs:
            try:
                converted.append(self.spec.output_type.from_value(value))
            except ValueError as error:
                raise fail(self.name, value, error) from error
        return converted

    def _key(self, key_blob: bytes) -> Any:
        return loads(key_blob) if self.spec.keyed else None

    def _open(self) -> list[Any]:
        return open_functions([self.spec.function, self.spec.window_function], self.name, self.runtime_context)


class _Empty:
    """The contents of a window without any (new, or purged): pickled as a reference to :data:`_EMPTY`."""

    def __reduce__(self) -> str:
        return "_EMPTY"


_EMPTY = _Empty()


class _Out:
    """A call's outputs: ``_value`` blobs, their ``_kind`` and their stamps."""

    def __init__(self) -> None:
        self.values: list[bytes] = []
        self.kinds: list[int] = []
        self.stamps: list[Stamp] = []

    def add(self, outputs: list[Any], stamp: Stamp, timestamp: int | None = None, raw: int | None = None) -> None:
        """Adds user values, or (``raw``: their ``_kind``) blobs that are ``_value`` already (a late record)."""
        for i, value in enumerate(outputs):
            self.values.append(value if raw is not None else dumps(value, timestamp))
            self.kinds.append(raw if raw is not None else kind_of(value))
            self.stamps.append(child_stamp(stamp, i))

    def frame(self) -> pd.DataFrame:
        return record_frame(self.values, self.stamps, kinds=self.kinds)


MAX_LONG = 2**63 - 1


def _load(state: KeyedState, keys: pd.DataFrame) -> dict[bytes, list]:
    stored = state.load(_TABLE, keys)
    if not len(stored) or STATE not in stored.columns:
        return {}
    return {k: loads(v) for k, v in zip(stored[KEY], stored[STATE], strict=True)}


def _store(state: KeyedState, keys: pd.DataFrame, windows: dict[bytes, list]) -> None:
    # A key without windows is deleted, unless it counts records for count windows.
    kept = [(k, dumps(v)) for k, v in windows.items() if v[0] or v[1]]
    state.store(_TABLE, keys, pd.DataFrame({KEY: np.asarray([k for k, _ in kept], dtype=object),
                                            STATE: np.asarray([b for _, b in kept], dtype=object)}))
