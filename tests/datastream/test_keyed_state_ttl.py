"""StateTtlConfig on keyed state: Flink's processing-time TTL, driven by the kernel harness's clock."""

import pytest

from changeflow.common import Time, Types
from changeflow.datastream import KeyedProcessFunction
from changeflow.datastream.functions import RuntimeContext
from changeflow.datastream.state import (AggregatingStateDescriptor, ListStateDescriptor, MapStateDescriptor,
                                         ReducingStateDescriptor, StateTtlConfig, ValueStateDescriptor)
from changeflow.kernels.keyed import KeyedProcess
from changeflow.testing.harness import KernelHarness

from kernel_helpers import records, values

TTL = StateTtlConfig.UpdateType
VIS = StateTtlConfig.StateVisibility


def config(update=TTL.OnCreateAndWrite, visibility=VIS.NeverReturnExpired, ms=1000):
    return (StateTtlConfig.new_builder(Time.milliseconds(ms)).set_update_type(update)
            .set_state_visibility(visibility).cleanup_incrementally(10, True).build())


class Probe(KeyedProcessFunction):
    """Record ("r", k): read the value state; ("w", k, v): write it. Emits what a read saw."""

    def __init__(self, ttl):
        self.ttl = ttl

    def open(self, ctx):
        d = ValueStateDescriptor("v", Types.LONG())
        d.enable_time_to_live(self.ttl)
        self.v = ctx.get_state(d)

    def process_element(self, value, ctx):
        if value[0] == "w":
            self.v.update(value[2])
        else:
            yield value[1], self.v.value()


def harness(function):
    return KernelHarness(KeyedProcess(function, "Probe", runtime_context=RuntimeContext), [], now=0,
                         restart_every_batch=True)


def run(h, at, recs, start):
    h.set_time(at)
    return values(h.process_frame(records(recs, key=lambda r: r[1], start=start)))


def test_on_create_and_write_expires_a_ttl_after_the_write_and_reads_do_not_extend_it():
    h = harness(Probe(config()))
    assert run(h, 0, [("w", "a", 1), ("r", "a")], 0) == [("a", 1)]
    assert run(h, 999, [("r", "a")], 2) == [("a", 1)]          # read at 999 does not renew the stamp
    assert run(h, 1000, [("r", "a")], 3) == [("a", None)]      # expired at write + ttl
    assert h.state.row_count("keyed") == 0                     # and cleaned up on that access


def test_on_read_and_write_renews_on_every_read():
    h = harness(Probe(config(TTL.OnReadAndWrite)))
    run(h, 0, [("w", "a", 1)], 0)
    assert run(h, 900, [("r", "a")], 1) == [("a", 1)]
    assert run(h, 1800, [("r", "a")], 2) == [("a", 1)]         # 900 + 1000 > 1800: alive, renewed again
    assert run(h, 2800, [("r", "a")], 3) == [("a", None)]


def test_return_expired_if_not_cleaned_up_returns_it_once_then_it_is_gone():
    h = harness(Probe(config(visibility=VIS.ReturnExpiredIfNotCleanedUp)))
    run(h, 0, [("w", "a", 7), ("w", "b", 8)], 0)
    assert run(h, 5000, [("r", "a"), ("r", "a")], 2) == [("a", 7), ("a", None)]
    assert run(h, 5000, [("w", "b", 9), ("r", "b")], 4) == [("b", 9)]   # a write makes a fresh value


class Collections(KeyedProcessFunction):
    """A list, a map, a reducing and an aggregating state with one TTL; emits them all on every record."""

    def __init__(self, ttl):
        self.ttl = ttl

    def open(self, ctx):
        def with_ttl(d):
            d.enable_time_to_live(self.ttl)
            return d

        class Count:
            def create_accumulator(self):
                return 0

            def add(self, value, acc):
                return acc + 1

            def get_result(self, acc):
                return acc

        self.seen = ctx.get_list_state(with_ttl(ListStateDescriptor("seen", Types.STRING())))
        self.last = ctx.get_map_state(with_ttl(MapStateDescriptor("last", Types.STRING(), Types.LONG())))
        self.total = ctx.get_reducing_state(with_ttl(ReducingStateDescriptor("total", lambda a, b: a + b,
                                                                             Types.LONG())))
        self.count = ctx.get_aggregating_state(with_ttl(AggregatingStateDescriptor("count", Count())))

    def process_element(self, value, ctx):
        tag, _, n = value   # keyed by value[1]
        if n is not None:
            self.seen.add(tag)
            self.last.put(tag, n)
            self.total.add(n)
            self.count.add(n)
        yield self.seen.get(), sorted(self.last.items()), self.total.get(), self.count.get()


def test_list_elements_and_map_entries_expire_one_by_one_and_folds_restart():
    h = harness(Collections(config()))
    assert run(h, 0, [("x", "k", 1)], 0) == [(["x"], [("x", 1)], 1, 1)]
    assert run(h, 600, [("y", "k", 2)], 1) == [(["x", "y"], [("x", 1), ("y", 2)], 3, 2)]
    # At 1000 the elements/entries written at 0 have expired, those of 600 live; the reducing and
    # aggregating values were written at 600 (their last add): alive.
    assert run(h, 1000, [("q", "k", None)], 2) == [(["y"], [("y", 2)], 3, 2)]
    # At 1600 everything has expired: a fold starts again from the new value.
    assert run(h, 1600, [("z", "k", 5)], 3) == [(["z"], [("z", 5)], 5, 1)]


def test_config_builder_follows_pyflink():
    c = StateTtlConfig.new_builder(Time.seconds(1)).update_ttl_on_read_and_write().return_expired_if_not_cleaned_up() \
        .disable_cleanup_in_background().build()
    assert (c.get_update_type(), c.get_state_visibility(), c.get_ttl()) == \
        (TTL.OnReadAndWrite, VIS.ReturnExpiredIfNotCleanedUp, Time.seconds(1))
    assert c.is_enabled() and not c.get_cleanup_strategies().is_cleanup_in_background()
    assert not StateTtlConfig.new_builder(Time.seconds(1)).set_update_type(TTL.Disabled).build().is_enabled()
    with pytest.raises(ValueError, match="TTL must be positive"):
        StateTtlConfig.new_builder(Time.seconds(0)).build()
    with pytest.raises(TypeError, match="enable_time_to_live takes a StateTtlConfig"):
        ValueStateDescriptor("v").enable_time_to_live(Time.seconds(1))
