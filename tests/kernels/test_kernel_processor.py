"""KernelProcessor hosts any kernel through the kernel contract (no Spark session: a fake handle).

Each micro-batch unpickles the processor afresh and calls ``init``, as Spark
does; the fake handle keeps the state and timers between micro-batches, and a
micro-batch fires its due timers after its input rows, as transformWithState does.
"""

import pickle

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from changeflow.common.types import DataTypes
from changeflow.datastream import KeyedProcessFunction, ValueStateDescriptor
from changeflow.datastream.functions import RuntimeContext
from changeflow.kernels.aggregate import AggCall, GroupAggregate
from changeflow.kernels.contract import HostClock, KernelBase
from changeflow.kernels.keyed import KeyedProcess
from changeflow.kernels.keyed.records import KEY, RECORD_COLUMNS, VALUE, dumps, loads
from changeflow.kernels.keyed.records import record_frame
from changeflow.kernels.order import source_stamp
from changeflow.kernels.ttl import KeyStateTtl
from changeflow.runtime.spark.control_rows import CONTROL, Control
from changeflow.runtime.spark.processor import KernelProcessor
from changeflow.state.paged import DictPageStore


class _Value:
    def __init__(self):
        self.value = None

    def get(self):
        return self.value

    def update(self, value):
        self.value = value

    def exists(self):
        return self.value is not None


class FakeHandle:
    def __init__(self):
        self.maps, self.values, self.timers = {}, {}, set()

    def getMapState(self, name, key_schema, value_schema):
        return self.maps.setdefault(name, DictPageStore())

    def getValueState(self, name, schema):
        return self.values.setdefault(name, _Value())

    def listTimers(self):
        return iter(sorted(self.timers))

    def registerTimer(self, t):
        self.timers.add(t)

    def deleteTimer(self, t):
        self.timers.discard(t)


class Time:
    def __init__(self, now):
        self.now = now

    def getCurrentProcessingTimeInMs(self):
        return self.now


def micro_batch(processor, handle, now, *payloads):
    """One micro-batch of one bucket: a fresh processor, its input (if any), then its due timers."""
    fresh = pickle.loads(pickle.dumps(processor))
    fresh.init(handle)
    out = []
    if payloads:
        frame = pd.DataFrame({"_bucket": [0] * len(payloads), "_payload": [pickle.dumps(p) for p in payloads]})
        out.extend(fresh.handleInputRows(0, iter([frame]), Time(now)))
    for t in sorted(handle.timers):
        if t <= now:
            handle.timers.discard(t)
            out.extend(fresh.handleExpiredTimer(0, Time(now), None))
    return fresh, out


class Reminder(KeyedProcessFunction):
    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total"))

    def process_element(self, value, ctx):
        self.total.update((self.total.value() or 0) + value[1])
        ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() + 10)
        yield "elem", value[0]

    def on_timer(self, timestamp, ctx):
        yield "timer", ctx.get_current_key(), self.total.value(), timestamp


def records(rows, start=0):
    return record_frame([dumps(r) for r in rows], [source_stamp(start + i, 0) for i in range(len(rows))],
                        [dumps(r[0]) for r in rows])


def values(frames):
    return [loads(v) for f in frames for v in f[VALUE]]


def test_a_kernel_with_timers_runs_in_the_one_processor():
    processor = KernelProcessor(KeyedProcess(Reminder(), "Reminder", runtime_context=RuntimeContext),
                                [KEY], pages=4, emit_columns=RECORD_COLUMNS)
    assert processor.time_mode == "ProcessingTime"
    handle = FakeHandle()
    fresh, out = micro_batch(processor, handle, 1000, records([("a", 1), ("b", 2), ("a", 3)]))
    assert values(out) == [("elem", "a"), ("elem", "b"), ("elem", "a")]
    assert isinstance(fresh.kernel.clock, HostClock)   # bound by the host, not patched: the wall clock here
    (due,) = handle.timers                              # one Spark timer per bucket, at the kernel's next timer
    assert due > 10**12
    _, out = micro_batch(processor, handle, due - 1)
    assert out == []
    _, out = micro_batch(processor, handle, due + 1000)  # the records' timers (wall clock + 10 ms each) are due
    # a's two records may have set two timers (the wall clock moved between them): each fires once.
    fired = [v[:3] for v in values(out)]
    assert set(fired) == {("timer", "a", 4), ("timer", "b", 2)} and fired.count(("timer", "b", 2)) == 1
    assert handle.timers == set()


def count_per_key(ttl_ms):
    agg = GroupAggregate(["k"], [AggCall("count_star", None, DataTypes.BIGINT(), "n")], mini_batch=False,
                         input_insert_only=False, state_ttl=True)
    return KeyStateTtl(agg, ["k"], ttl_ms)


def changes(keys, start=0):
    return pd.DataFrame({"k": pd.array(keys, dtype=object), "_kind": [0] * len(keys),
                         "_seq": range(start, start + len(keys)), "_sub": [0] * len(keys)}).astype({"_kind": "int8"})


def test_a_ttl_kernel_is_swept_from_the_bucket_timer():
    processor = KernelProcessor(count_per_key(100), ["k"], pages=2, output_columns=["k", "n"])
    handle = FakeHandle()
    micro_batch(processor, handle, 0, changes(["a", "b"]))
    assert handle.timers == {100}
    micro_batch(processor, handle, 50, changes(["b"], start=2))
    fresh, _ = micro_batch(processor, handle, 100)       # the sweep: a (written at 0) goes, b stays
    assert handle.timers == {200}                        # b expires at 150, but at most once per TTL
    assert fresh.kernel.clock() == 100


def test_without_its_sweep_a_ttl_kernel_runs_without_timers_on_the_wall_clock():
    processor = KernelProcessor(count_per_key(100), ["k"], pages=2, output_columns=["k", "n"], sweep=False)
    assert processor.time_mode == "None"
    handle = FakeHandle()
    fresh, out = micro_batch(processor, handle, 0, changes(["a"]))
    assert handle.timers == set() and fresh.kernel.clock() > 10**12
    assert out[0]["n"].tolist() == [1]


class Finale(KernelBase):
    """Counts rows; emits the count on an upstream flush and at end of input."""

    emits_at_end_of_input = True

    def process(self, batch, state):
        keys = pd.DataFrame({"k": pd.array(["all"], dtype=object)})
        held = state.load("n", keys)
        n = int(held["n"].iloc[0]) if len(held) else 0
        state.store("n", keys, keys.assign(n=n + len(batch)))
        return batch.iloc[:0][["k", "_kind", "_seq", "_sub"]]

    def _emit(self, state, what):
        n = state.load("n", pd.DataFrame({"k": pd.array(["all"], dtype=object)}))
        return pd.DataFrame({"k": [f"{what} {int(n['n'].iloc[0])}"], "_kind": pd.array([0], dtype="int8"),
                             "_seq": [0], "_sub": [0]})

    def flush(self, state):
        return self._emit(state, "flush")

    def end_of_input(self, state):
        return self._emit(state, "end")


def test_flush_and_end_of_input_signals_call_the_contract_once_all_sources_ended():
    processor = KernelProcessor(Finale(), ["k"], pages=1, output_columns=["k"], sources=frozenset({1, 2}),
                                control=True)
    handle = FakeHandle()
    _, out = micro_batch(processor, handle, 0, changes(["x", "y"]), Control(frozenset({1}), flush=True))
    rows = pd.concat(out)
    assert rows[rows["_kind"] != CONTROL]["k"].tolist() == ["flush 2"]   # source 2 has not ended yet
    assert sorted(rows[rows["_kind"] == CONTROL]["_seq"].tolist()) == [-2, -1]  # the signals pass on
    _, out = micro_batch(processor, handle, 1, changes(["z"], start=2), Control(frozenset({2})))
    rows = pd.concat(out)
    assert rows[rows["_kind"] != CONTROL]["k"].tolist() == ["end 3"]
    _, out = micro_batch(processor, handle, 2, Control(frozenset({1, 2})))
    rows = pd.concat(out)
    assert rows[rows["_kind"] != CONTROL].empty                        # end of input is called once


@pytest.mark.parametrize("declared", [True, False], ids=["sweep_off_by_host", "no_sweep_declared"])
def test_a_join_with_a_ttl_but_no_sweep_timer_still_expires_rows_on_access(declared):
    # A query that cannot fire timers runs the join without its sweep (StreamingTranslator.ttl_sweep):
    # the kernel then reads the wall clock. It used to stamp every row 0 then and never expire one.
    import time

    from changeflow.kernels.join import SIDE, StreamingJoin
    join = StreamingJoin("INNER", ["id", "v"], ["id0", "w"], ["id"], ["id0"], ttl_ms=1)
    if not declared:
        join.sweep_interval_ms = None  # what the translator used to do to turn the sweep off
    processor = KernelProcessor(join, join.key_columns, pages=1, output_columns=["id", "v", "id0", "w"], sweep=False)
    assert processor.time_mode == "None"
    handle = FakeHandle()

    def side(n, **columns):
        frame = pd.DataFrame({**columns, "_kind": pd.array([0], dtype="int8"), "_seq": [n], "_sub": [0]})
        frame[SIDE] = n % 2
        frame["_jk0"] = pd.array([1], dtype="Int64")
        return frame

    micro_batch(processor, handle, 0, side(0, id=pd.array([1], dtype="Int64"), v=["x"]))
    time.sleep(0.01)  # the left row (TTL 1 ms) expires
    _, out = micro_batch(processor, handle, 0, side(1, id0=pd.array([1], dtype="Int64"), w=["y"]))
    assert out == [] and handle.timers == set()


_MARKS = st.lists(st.tuples(st.sampled_from([1, 2, 3]), st.integers(0, 50), st.integers(-5, 40)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(_MARKS, st.one_of(st.none(), st.integers(-5, 40)))
def test_an_operator_after_one_assigner_moves_its_watermark_as_the_general_rule_does(marks, before):
    """The one-assigner path against the rule for several (a second assigner far ahead changes nothing)."""
    from changeflow.kernels.aggregate.window_agg import WindowAggregate
    from changeflow.runtime.spark.control_rows import merge_watermarks

    control = Control(watermarks=merge_watermarks(tuple(marks)))

    def run(assigners: frozenset, seen: dict):
        kernel = WindowAggregate(["k"], [AggCall("count_star", None, DataTypes.BIGINT(False), "n")], "k")
        processor = KernelProcessor(kernel, ["k"], pages=1, watermarks=assigners)
        handle = FakeHandle()
        processor.init(handle)
        handle.values["watermarks"].update((pickle.dumps(seen),))
        advances = processor._watermarks(control)
        return advances, pickle.loads(handle.values["watermarks"].get()[0]).get(1), kernel.current_watermark

    seen = {} if before is None else {1: before}
    one, general = run(frozenset({1}), dict(seen)), run(frozenset({1, 9}), {**seen, 9: 10 ** 9})
    assert one == general
    assert one[0] == sorted(one[0]) and all(v > (before if before is not None else -2 ** 63) for _, v in one[0])
