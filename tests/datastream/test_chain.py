"""Stateless operator chains: map, flat_map, filter, process and the key selector, fused."""

import pytest

from changeflow.common import Types
from changeflow.datastream import FlatMapFunction, MapFunction, ProcessFunction, RuntimeContext
from changeflow.kernels.chain import ChainRunner, run
from changeflow.plan.stream_nodes import Op
from changeflow.kernels.keyed import UserFunctionError
from changeflow.kernels.keyed.records import KEY, VALUE, dumps, loads
from changeflow.kernels.keyed.records import record_frame
from changeflow.kernels.order import source_stamp


def test_flat_map_fan_out_keeps_per_record_order_across_nested_fan_outs():
    ops = [Op("flat_map", lambda s: s.split(","), "split"), Op("flat_map", lambda w: [w, w.upper()], "twice")]
    out, stamps, _ = run(ops, ["a,b", "c"], [source_stamp(0, 0), source_stamp(1, 0)])
    assert out == ["a", "A", "b", "B", "c", "C"] and stamps == sorted(stamps)


def test_function_classes_open_map_close():
    events = []

    class Scale(MapFunction):
        def open(self, ctx):
            events.append("open")
            self.k = 10

        def map(self, value):
            return value * self.k

        def close(self):
            events.append("close")

    class Explode(FlatMapFunction):
        def flat_map(self, value):
            yield from range(value)

    ops = [Op("map", Scale(), "Scale", context=RuntimeContext),
           Op("flat_map", Explode(), "Explode", context=RuntimeContext)]
    out, _, _ = run(ops, [0, 1], [(0, 0), (1, 0)])
    assert out == list(range(10)) and events == ["open", "close"]


def test_process_function_yields_outputs():
    class Both(ProcessFunction):
        def process_element(self, value, ctx):
            yield value
            yield -value

    assert run([Op("process", Both(), "Both", context=RuntimeContext)], [1, 2], [(0, 0), (1, 0)])[0] == [1, -1, 2, -2]


def test_output_type_converts_outputs():
    op = Op("map", lambda v: (v, v * 2), "pair", Types.ROW_NAMED(["a", "b"], [Types.INT(), Types.INT()]))
    assert run([op], [1], [(0, 0)])[0][0].b == 2


def test_output_type_mismatch_names_the_function_and_record():
    op = Op("map", lambda v: "x", "bad", Types.INT())
    with pytest.raises(UserFunctionError, match="bad failed on record 'x'"):
        run([op], [1], [(0, 0)])


def test_runner_adds_pickled_keys():
    frame = record_frame([dumps(("a", 1)), dumps(("b", 2))], [source_stamp(0, 0), source_stamp(1, 0)])
    out = ChainRunner([Op("filter", lambda r: r[1] > 1, "f"), Op("key", lambda r: r[0], "k")]).process(frame)
    assert [loads(k) for k in out[KEY]] == ["b"] and [loads(v) for v in out[VALUE]] == [("b", 2)]


def test_a_map_sees_the_kind_of_its_records_and_its_output_keeps_the_rows_kind():
    """As PyFlink 2.3's map after to_changelog_stream: ``value.get_row_kind()`` is the change's kind, and a Row
    returned keeps its kind into the next record's ``_kind``."""
    from changeflow.common import Row, RowKind
    from changeflow.kernels.keyed.records import KIND, values_of

    frame = record_frame([dumps(Row("a", 1)), dumps(Row("a", 2))], [source_stamp(0, 0), source_stamp(1, 0)],
                         kinds=[RowKind.UPDATE_BEFORE.value, RowKind.UPDATE_AFTER.value])
    seen = ChainRunner([Op("map", lambda r: f"{r.get_row_kind()} {r[1]}", "show")]).process(frame)
    assert [loads(v) for v in seen[VALUE]] == ["-U 1", "+U 2"] and seen[KIND].tolist() == [0, 0]
    kept = ChainRunner([Op("map", lambda r: r, "same")]).process(frame)
    assert kept[KIND].tolist() == [1, 2]
    assert [str(r.get_row_kind()) for r in values_of(kept)] == ["-U", "+U"]
