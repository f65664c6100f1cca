"""The public harness drives every call of the kernel contract (kernels/contract.py).

Batches, processing-time timers (the clock advanced), TTL expiry with a sweep,
end of input, flush, the event-time hook, and a snapshot/restore between
batches: the state pickled and a fresh kernel object unpickled, as Spark
re-creates the processor every micro-batch.
"""

import random

import pandas as pd
import pytest

from changeflow.common.types import DataTypes
from changeflow.datastream.functions import ProcessWindowFunction, RuntimeContext
from changeflow.datastream.window import GlobalWindow
from changeflow.kernels.aggregate import AggCall, GroupAggregate
from changeflow.kernels.contract import Kernel, KernelBase
from changeflow.kernels.join import StreamingJoin
from changeflow.kernels.keyed import KeyedProcess, KeyedReduce
from changeflow.kernels.keyed.buffered import ChangelogRecords
from changeflow.kernels.keyed.records import KEY, VALUE, dumps, loads, record_frame
from changeflow.kernels.order import STAMP, source_stamp
from changeflow.kernels.materializer import SinkUpsertMaterializer
from changeflow.kernels.rank import InsertOnlyDeduplicate, RetractingDeduplicate, TopN
from changeflow.kernels.ttl import KeyStateTtl
from changeflow.kernels.window import CoGroupKernel, PartialFold, WindowKernel, WindowSpec
from changeflow.kernels.window.evaluate import SIDE
from changeflow.testing import KernelHarness, Snapshot, delete_record, format_changes, insert_record, row_of_kind
from keyed_functions import Reminder


def count_per_key():
    return GroupAggregate(["k"], [AggCall("count_star", None, DataTypes.BIGINT(), "n"),
                                  AggCall("sum", "v", DataTypes.BIGINT(), "total")],
                          mini_batch=False, input_insert_only=False)


def records(rows, start=0, key=lambda v: v[0]):
    return record_frame([dumps(v) for v in rows], [source_stamp(start + i, 0) for i in range(len(rows))],
                        [dumps(key(v)) for v in rows])


def decoded(rows):
    """The values of harness rows from a record kernel (``_value``, its stamp), in stamp order."""
    return [loads(r[0]) for r in sorted(rows, key=lambda r: r[1])]


# --- the contract ---------------------------------------------------------------------------

TABLE_KERNELS = {
    "group_agg": lambda: count_per_key(),
    "group_agg_ttl": lambda: KeyStateTtl(count_per_key(), ["k"], ttl_ms=1000),
    "top_n": lambda: TopN(["k", "v"], ["k"], [("v", False, False)], 1, 2, None, input_insert_only=False,
                          mini_batch=False),
    "dedup": lambda: InsertOnlyDeduplicate(["k", "v"], ["k"], keep_last=True, mini_batch=False),
    "dedup_retract": lambda: RetractingDeduplicate(["k", "v"], ["k"], keep_last=True, mini_batch=False, ttl_ms=1000),
    "materializer": lambda: SinkUpsertMaterializer(["k"], ["k", "v"], strategy="ADAPTIVE", threshold_high=3,
                                                   threshold_low=1, ttl_ms=1000),
}


def test_every_kernel_declares_the_contract():
    kernels = [make() for make in TABLE_KERNELS.values()] + [
        StreamingJoin("LEFT", ["k", "v"], ["k0", "w"], ["k"], ["k0"]),
        KeyedReduce(lambda a, b: a, "r"), KeyedProcess(Reminder(), "p"),
        ChangelogRecords(KeyedReduce(lambda a, b: a, "r", with_keys=True)),
        WindowKernel(WindowSpec("reduce", lambda a, b: a), "w"), CoGroupKernel("co_group", lambda a, b: [], "c")]
    for kernel in kernels:
        assert isinstance(kernel, KernelBase)
        for name in Kernel.__dict__:  # every attribute and method the Protocol declares
            if not name.startswith("_"):
                assert hasattr(kernel, name), (type(kernel).__name__, name)
    assert [k.sweep_interval_ms for k in kernels[:2]] == [None, 1000]
    assert [k.has_timers for k in kernels[-4:]] == [True, False, False, False]
    assert ChangelogRecords(KeyedProcess(Reminder(), "p", with_keys=True)).has_timers
    assert KeyStateTtl(count_per_key(), ["k"], 10).operator_name == "GroupAggregate"


@pytest.mark.parametrize("name", sorted(TABLE_KERNELS))
def test_a_fresh_kernel_restored_every_batch_emits_the_same_changelog(name):
    rng = random.Random(name)
    batches = []
    live: list[tuple] = []
    for _ in range(12):
        batch = []
        for _ in range(rng.randint(1, 4)):
            if live and rng.random() < 0.3 and name != "dedup":  # InsertOnlyDeduplicate takes insert-only input
                batch.append(delete_record(*live.pop(rng.randrange(len(live)))))
            else:
                row = (rng.choice("abc"), rng.randint(0, 5))
                live.append(row)
                batch.append(insert_record(*row))
        batches.append(batch)
    kept = KernelHarness(TABLE_KERNELS[name](), ["k", "v"], now=0)
    restarted = KernelHarness(TABLE_KERNELS[name](), ["k", "v"], now=0, restart_every_batch=True)
    for i, batch in enumerate(batches):
        kept.set_time(i * 10)
        restarted.set_time(i * 10)
        assert format_changes(restarted.process(batch)) == format_changes(kept.process(batch))
    assert restarted.kernel is not kept.kernel


def test_snapshot_restore_continues_with_a_fresh_kernel_and_the_same_state():
    h = KernelHarness(count_per_key(), ["k", "v"])
    h.process([insert_record("a", 1), insert_record("b", 2)])
    snap = h.snapshot()
    assert isinstance(snap, Snapshot) and isinstance(snap.state, bytes)
    h.process([insert_record("a", 5)])  # lost: the restore goes back to the snapshot
    before = h.kernel
    h.restore(snap)
    assert h.kernel is not before
    assert format_changes(h.process([insert_record("a", 3)])) == ["-U[a, 1, 1]", "+U[a, 2, 4]"]


def test_a_join_survives_restarts():
    def make():
        return KernelHarness(StreamingJoin("LEFT", ["id", "name"], ["id0", "region"], ["id"], ["id0"]),
                             ["_side", "id", "name", "id0", "region"], restart_every_batch=True)

    h = make()
    assert format_changes(h.process([insert_record(0, 1, "a", None, None)])) == ["+I[1, a, null, null]"]
    assert format_changes(h.process([insert_record(1, None, None, 1, "eu")])) == \
        ["-D[1, a, null, null]", "+I[1, a, 1, eu]"]


# --- processing time: timers and TTL --------------------------------------------------------

@pytest.mark.parametrize("restart", [False, True], ids=["kept", "restarted"])
def test_processing_time_timers_fire_as_the_clock_advances(restart):
    kernel = KeyedProcess(Reminder(), "Reminder", runtime_context=RuntimeContext)
    h = KernelHarness(kernel, [], now=1000, restart_every_batch=restart)
    assert decoded(h.rows_of_frame(h.process_frame(records([("a", 1, 50), ("b", 2, 10), ("a", 3, 10)])))) == \
        [("elem", "a", 1), ("elem", "b", 2), ("elem", "a", 3)]
    assert h.next_timer() == 1010
    assert h.advance(9) == []                       # 1009: nothing due
    assert sorted(decoded(h.advance(1))) == [("timer", "a", 4, 1010), ("timer", "b", 2, 1010)]
    h.process_frame(records([("b", 5, 100)], start=3))  # registered at 1010 + 100
    assert decoded(h.set_processing_time(1100)) == [("timer", "a", 4, 1050)]
    assert decoded(h.set_processing_time(1110)) == [("timer", "b", 7, 1110)]
    assert h.next_timer() is None


def test_timers_through_the_changelog_wrapper_come_out_as_changes():
    kernel = ChangelogRecords(KeyedProcess(Reminder(), "Reminder", with_keys=True, runtime_context=RuntimeContext))
    h = KernelHarness(kernel, [], now=0, restart_every_batch=True)
    h.process_frame(records([("a", 1, 5)]))
    fired = h.advance(5)
    assert [str(r.get_row_kind()) for r in fired] == ["+I"]
    assert loads(fired[0][1]) == ("timer", "a", 1, 5)


def test_ttl_expires_on_access_and_the_sweep_reclaims_idle_keys():
    h = KernelHarness(KeyStateTtl(count_per_key(), ["k"], ttl_ms=100), ["k", "v"], now=0, restart_every_batch=True)
    h.process([insert_record("a", 1), insert_record("b", 1)])
    h.set_time(60)
    h.process([insert_record("b", 2)])               # b written again at 60: lives to 160
    assert h.advance(39) == [] and h.state.row_count("acc") == 2   # 99: the sweep is not due yet
    h.advance(1)                                     # 100: the sweep armed by the first batch runs
    assert h.state.row_count("acc") == 1             # a is gone, silently
    assert format_changes(h.process([insert_record("a", 7)])) == ["+I[a, 1, 7]"]
    h.set_processing_time(1000)                      # the next sweep (due at 200) removes everything
    assert h.state.row_count("acc") == 0
    assert h.sweep() is None


def test_materializer_sweep_through_the_harness_clock():
    h = KernelHarness(SinkUpsertMaterializer(["k"], ["k", "v"], ttl_ms=100), ["k", "v"], now=0)
    h.process([insert_record(1, "a")])
    h.set_processing_time(100)
    assert h.state.scan("legacy").empty or h.state.row_count("legacy") == 0
    assert format_changes(h.process([delete_record(1, "a")])) == []   # the row expired: nothing to retract


# --- end of input, flush, watermark ---------------------------------------------------------

class Listing(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield key, [e[1] for e in elements], context.window().max_timestamp()


@pytest.mark.parametrize("spec", [WindowSpec("reduce", lambda x, y: (x[0], x[1] + y[1])),
                                  WindowSpec("process", Listing())], ids=["reduce", "process"])
def test_windows_fire_at_end_of_input_as_the_batch_algorithm(spec):
    kernel = WindowKernel(spec, "W", runtime_context=RuntimeContext, window=GlobalWindow.get())
    rows = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5)]
    h = KernelHarness(kernel, [], restart_every_batch=True)
    assert h.rows_of_frame(h.process_frame(records(rows[:2]))) == []
    h.process_frame(records(rows[2:], start=2))
    fired = decoded(h.end_of_input())
    if spec.combinable:
        fold = PartialFold(kernel)
        fold.add(records(rows))
        groups = fold.result()
    else:
        groups = records(rows)
    expected = [loads(v) for v in kernel.fire(groups.sort_values([KEY] + STAMP))[VALUE]]
    assert sorted(fired, key=repr) == sorted(expected, key=repr) and len(fired) == 3
    assert h.end_of_input() == []                    # the windows are gone once fired


def test_co_group_fires_at_end_of_input():
    kernel = CoGroupKernel("join", lambda a, b: (a[0], a[1] + b[1]), "J", runtime_context=RuntimeContext)
    h = KernelHarness(kernel, [])
    h.process_frame(records([("a", 1), ("b", 2)]).assign(**{SIDE: 0}))
    h.process_frame(records([("a", 10)], start=2).assign(**{SIDE: 1}))
    assert decoded(h.end_of_input()) == [("a", 11)]


class HoldBack(KernelBase):
    """Holds its input back until an upstream flush (a kernel that buffers its own output)."""

    def process(self, batch, state):
        keys = batch[["k"]].drop_duplicates()
        held = state.load("held", keys)
        state.store("held", keys, pd.concat([held, batch], ignore_index=True) if len(held) else batch)
        return batch.iloc[:0]

    def flush(self, state):
        held = state.scan("held")
        if len(held):
            state.store("held", held[["k"]].drop_duplicates(), held.iloc[:0])
        return held


def test_flush_and_end_of_input_reach_the_kernel_also_through_a_ttl_wrapper():
    h = KernelHarness(KeyStateTtl(HoldBack(), ["k"], ttl_ms=10, tables=["held"]), ["k"], now=0)
    assert h.process([insert_record("a"), insert_record("b")]) == []
    assert sorted(format_changes(h.flush())) == ["+I[a]", "+I[b]"]
    assert h.flush() == [] and h.end_of_input() == []


def test_event_time_is_refused_by_name():
    h = KernelHarness(count_per_key(), ["k", "v"])
    with pytest.raises(NotImplementedError, match="event time"):
        h.watermark(100)


def test_process_bounded_defaults_to_process_then_end_of_input():
    kernel = WindowKernel(WindowSpec("reduce", lambda x, y: (x[0], x[1] + y[1])), "W")
    out = KernelBase.process_bounded(kernel, records([("a", 1), ("a", 2)]))
    assert [loads(v) for v in out[VALUE]] == [("a", 3)]
    assert row_of_kind("+I", 1) == insert_record(1)


class FiresAtWatermark(KernelBase):
    """Holds each row until the watermark passes its ``ts``: the smallest event-time kernel."""

    event_time = True

    def process(self, batch, state):
        keys = batch[["ts"]].drop_duplicates()
        state.store("held", keys, pd.concat([state.load("held", keys), batch[["ts"]]], ignore_index=True))
        return batch.iloc[0:0]

    def on_watermark(self, watermark, state):
        held = state.scan("held")
        due = held[held["ts"] <= watermark] if len(held) else held
        if len(due):
            state.store("held", due[["ts"]].drop_duplicates(), due.iloc[0:0])
        return due.sort_values("ts", ignore_index=True) if len(due) else None


def test_end_of_input_fires_every_event_time_timer_first_in_every_host():
    h = KernelHarness(FiresAtWatermark(), ["ts"])
    h.process_frame(pd.DataFrame({"ts": [5, 1, 9]}))
    assert [r[0] for r in h.watermark(5)] == [1, 5]
    assert [r[0] for r in h.end_of_input()] == [9]        # MAX_WATERMARK, then end_of_input
    bounded = FiresAtWatermark().process_bounded(pd.DataFrame({"ts": [5, 1, 9]}))
    assert bounded["ts"].tolist() == [1, 5, 9]


class EmitsUndeclared(KernelBase):
    """Emits at the end of input without declaring ``emits_at_end_of_input``."""

    def process(self, batch, state):
        return batch.iloc[:0]

    def end_of_input(self, state):
        return pd.DataFrame({"k": ["late"], "_kind": pd.array([0], dtype="int8"), "_seq": [0], "_sub": [0]})


def test_output_at_end_of_input_must_be_declared():
    # A host may leave the end of input out for a kernel that does not declare it (signal_use).
    h = KernelHarness(EmitsUndeclared(), ["k"])
    with pytest.raises(TypeError, match="emits_at_end_of_input"):
        h.end_of_input()
