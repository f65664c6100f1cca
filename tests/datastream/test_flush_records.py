"""The flush interval for DataStream keyed operators, below Spark: buffered records, control records, decisions."""

import pickle

import pandas as pd
import pytest

from changeflow.datastream.functions import RuntimeContext
from changeflow.common import Configuration, Types
from changeflow.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from changeflow.kernels.chain import ChainRunner
from changeflow.plan.stream_nodes import Op
from changeflow.kernels.keyed.buffered import KEY_COLUMNS, ChangelogRecords, as_changelog
from changeflow.kernels.keyed.process import KeyedProcess
from changeflow.kernels.changelog import CONTROL, KIND
from changeflow.kernels.keyed.records import KEY, RECORD_COLUMNS, VALUE, dumps, loads, record_frame
from changeflow.kernels.order import source_stamp, stamps_of
from changeflow.kernels.keyed.reduce import KeyedReduce
from changeflow.kernels.state import InMemoryKeyedState
from changeflow.runtime.spark.control_rows import END_OF_INPUT, FLUSH, Control, ControlFanOut, control_rows
from changeflow.plan.rules.output_buffer import buffering
from changeflow.plan.flush_policy import FlushPolicy
from changeflow.runtime.spark.flush import BucketBuffer, BucketFlusher
from changeflow.runtime.spark.packing import PAYLOAD

from kernel_helpers import records, values
from stream_programs import Events, Latest  # tests/ is on sys.path (rootdir conftest)


def ADD(x, y):  # the reduce function the tests share
    return x[0], x[1] + y[1]


def add_reduce():
    return ChangelogRecords(KeyedReduce(ADD, "sum", with_keys=True, runtime_context=RuntimeContext))


def test_buffered_reduce_emits_each_updated_keys_latest_running_value_once():
    kernel, state = add_reduce(), InMemoryKeyedState()
    flusher = BucketFlusher(FlushPolicy(interval_ms=60_000), KEY_COLUMNS, [KEY, VALUE], changelog=False)
    bucket = BucketBuffer()
    first = kernel.process(records([("a", 1), ("b", 2), ("a", 3)]), state)
    assert flusher.on_input(bucket, first, 1_000, had_input=True, force=False) is None  # same interval: buffered
    second = kernel.process(records([("a", 10), ("c", 7)], start=3), state)
    assert flusher.on_input(bucket, second, 2_000, had_input=True, force=False) is None
    flushed = flusher.on_input(bucket, None, 3_000, had_input=False, force=True)  # end of input
    # b keeps the stamp of its only record; a and c of their latest ones: source order downstream.
    assert values(flushed) == [("b", 2), ("a", 14), ("c", 7)]
    assert [loads(k) for k in flushed[KEY]] == ["b", "a", "c"]
    assert stamps_of(flushed) == [source_stamp(1, 0), source_stamp(3, 0), source_stamp(4, 0)]
    # Only keys updated since the last flush are emitted next time.
    third = kernel.process(records([("c", 1)], start=5), state)
    again = flusher.on_input(bucket, third, 120_000, had_input=True, force=False)  # a later interval
    assert values(again) == [("c", 8)]


def test_a_keyed_process_function_names_the_key_of_every_output_timers_included():
    class EchoTwice(KeyedProcessFunction):
        def process_element(self, value, ctx):
            ctx.timer_service().register_processing_time_timer(5)
            yield value
            yield value[0], -1

        def on_timer(self, timestamp, ctx):
            yield ctx.get_current_key(), timestamp

    kernel = ChangelogRecords(KeyedProcess(EchoTwice(), "echo", with_keys=True, runtime_context=RuntimeContext))
    state = InMemoryKeyedState()
    out = kernel.process(records([("a", 1), ("b", 2)]), state)
    assert [(loads(k), loads(v)) for k, v in zip(out[KEY], out[VALUE], strict=True)] == [
        ("a", ("a", 1)), ("a", ("a", -1)), ("b", ("b", 2)), ("b", ("b", -1))]
    # +I changes in stamp order: a record's stamp is the change's (_seq, _sub), each input's outputs its children.
    assert out["_kind"].tolist() == [0] * 4 and out["_seq"].tolist() == [0, 0, 1, 1]
    assert kernel.next_timer(state) == 5
    fired = kernel.fire(10, state)
    fired_pairs = sorted((loads(k), loads(v)) for k, v in zip(fired[KEY], fired[VALUE], strict=True))
    assert fired_pairs == [("a", ("a", 5)), ("b", ("b", 5))]


def test_buffering_needs_a_kernel_that_names_its_keys():
    with pytest.raises(ValueError, match="with_keys=True"):
        ChangelogRecords(KeyedReduce(ADD, "sum", runtime_context=RuntimeContext))
    with pytest.raises(ValueError, match="_key"):
        as_changelog(record_frame([dumps(1)], [source_stamp(0, 0)]))


def test_control_rows_travel_among_records_and_fan_out_to_every_bucket():
    rows = control_rows([VALUE], Control(frozenset({3}), flush=True))
    data = records([("a", 1)])[RECORD_COLUMNS]
    frame = pd.concat([data, rows], ignore_index=True)
    assert frame[VALUE].tolist()[1:] == [None, None] and frame[KIND].tolist()[1:] == [CONTROL, CONTROL]
    assert sorted(stamps_of(frame)[1:]) == [(FLUSH, 0), (END_OF_INPUT, 3)]

    seen = []

    def packer(frames):
        for f in frames:
            seen.append(f)
        return iter(())

    out = list(ControlFanOut(packer, RECORD_COLUMNS, buckets=3, ticks=False)(iter([frame])))
    assert [values_of(f) for f in seen] == [[("a", 1)]]  # the packer sees the records only
    assert len(out) == 1 and len(out[0]) == 3  # one control payload per bucket
    assert {pickle.loads(p) for p in out[0][PAYLOAD]} == {Control(frozenset({3}), flush=True)}


def values_of(frame):
    return [loads(v) for v in frame[VALUE]]


def test_ticks_tell_every_bucket_that_the_operator_had_input():
    out = list(ControlFanOut(lambda frames: iter(list(frames)[:0]), RECORD_COLUMNS, buckets=2, ticks=True)(
        iter([records([("a", 1)])[RECORD_COLUMNS]])))
    assert {pickle.loads(p) for p in out[-1][PAYLOAD]} == {Control()}


def test_stateless_chains_pass_control_records_through_untouched():
    calls = []

    def double(v):
        calls.append(v)
        return v * 2

    frame = record_frame([dumps(1), None, dumps(2)], [source_stamp(0, 0), (END_OF_INPUT, 0), source_stamp(1, 0)],
                         kinds=[0, CONTROL, 0])
    out = ChainRunner([Op("map", double, "double")]).process(frame)
    assert calls == [1, 2]
    assert out[VALUE].tolist() == [dumps(2), dumps(4), None] and out[KIND].tolist()[-1] == CONTROL
    assert stamps_of(out)[-1] == (END_OF_INPUT, 0)
    keyed = ChainRunner([Op("key", lambda v: v % 2, "parity")]).process(frame)
    assert keyed[KEY].tolist()[-1] == b"" and keyed[VALUE].tolist()[-1] is None


def test_which_operators_buffer():
    conf = Configuration()
    conf.set_string("execution.max-flush-interval", "2 min")
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    ds = env.from_collection([("a", 1)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    keyed = ds.key_by(lambda r: r[0])
    policy = FlushPolicy(interval_ms=120_000)
    for stream in [keyed.sum(1), keyed.min(1), keyed.max(1), keyed.min_by(1), keyed.max_by(1), keyed.reduce(ADD),
                   keyed.process(Latest())]:
        assert buffering(stream._node, policy) is policy, stream._node.name
    # Not idempotent, or not keyed, or no interval: no buffer.
    assert buffering(keyed.process(Events())._node, policy) is None
    assert buffering(ds.map(lambda r: r)._node, policy) is None
    assert buffering(keyed.sum(1)._node, None) is None


def test_the_execution_plan_says_which_operators_buffer_and_why():
    import json

    def plan(**options):
        conf = Configuration()
        for key, value in options.items():
            conf.set_string(key, value)
        env = StreamExecutionEnvironment.get_execution_environment(conf)
        ds = env.from_collection([("a", 1)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
        keyed = ds.key_by(lambda r: r[0])
        keyed.sum(1).map(lambda r: r).print()
        keyed.process(Events()).print()
        return json.loads(env.get_execution_plan())["nodes"]

    listed = plan(**{"execution.max-flush-interval": "2 min"})
    assert [n["contents"] for n in listed if n["pact"] == "Data Sink"] == ["Sink: Print to Std. Out"] * 2
    nodes = {n["contents"]: n for n in listed}
    buffers = {name: n["output_buffer"] for name, n in nodes.items() if "output_buffer" in n}
    assert buffers == {"sum(1)": "latest record per key, flushed every 2 min, on idle input and at end of input: "
                                 "output idempotent, keyed"}
    assert nodes["sum(1)"]["predecessors"][0]["ship_strategy"] == "HASH"
    memory = {n["contents"]: n for n in plan(**{"execution.max-flush-interval": "5 s",
                                                 "execution.flush.memory-buffer-only": "true"})}
    assert memory["sum(1)"]["output_buffer"].startswith("latest record per key in memory only")
    assert not any("output_buffer" in n for n in plan())


def test_the_buffer_keeps_each_records_kind():
    """A record's _kind (its Row's RowKind) is part of the record the flush emits, not refolded to +I."""
    from changeflow.common import Row, RowKind
    from changeflow.kernels.keyed.records import records_of, values_of

    frame = records_of([Row.of(RowKind.UPDATE_AFTER, ["a", 1]), Row.of(RowKind.DELETE, ["b", 2])],
                       [source_stamp(0, 0), source_stamp(1, 0)], [dumps("a"), dumps("b")])
    kernel, state = add_reduce(), InMemoryKeyedState()
    flusher = BucketFlusher(FlushPolicy(interval_ms=60_000), KEY_COLUMNS, [KEY, VALUE], changelog=False)
    bucket = BucketBuffer()
    assert flusher.on_input(bucket, kernel.process(frame, state), 1_000, had_input=True, force=False) is None
    flushed = flusher.on_input(bucket, None, 2_000, had_input=False, force=True)
    assert flushed is not None and flushed[KIND].tolist() == [2, 3]
    assert [(str(r.get_row_kind()), tuple(r)) for r in values_of(flushed)] == [("+U", ("a", 1)), ("-D", ("b", 2))]
