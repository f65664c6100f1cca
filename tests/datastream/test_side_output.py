"""Side outputs of a ProcessFunction without Spark: the chain's main and side outputs, types, errors."""

import pytest

from changeflow.common import Types
from changeflow.datastream import (OutputTag, ProcessFunction, RuntimeContext, RuntimeExecutionMode,
                                   StreamExecutionEnvironment)
from changeflow.kernels.chain import run
from changeflow.kernels.order import source_stamp, stamp_seq
from changeflow.plan.stream_nodes import Op
from changeflow.plan.stream_walks import side_output_ops

EVEN = OutputTag("even", Types.STRING())
STAMPS = [source_stamp(i, 0) for i in range(3)]


class Parity(ProcessFunction):
    def process_element(self, value, ctx):
        if value % 2 == 0:
            yield EVEN, str(value)
        yield value * 10


class OddAsText(ProcessFunction):
    def process_element(self, value, ctx):
        yield OutputTag("odd"), str(value)


def test_main_output_drops_tagged_values_and_side_output_keeps_only_its_tag():
    ops = [Op("map", lambda x: x + 1, "inc"), Op("process", Parity(), "parity", context=RuntimeContext)]
    values, stamps, _ = run(ops, [1, 2, 3], STAMPS)
    assert values == [20, 30, 40]
    side, side_stamps, _ = run(side_output_ops(ops, EVEN), [1, 2, 3], STAMPS)
    assert side == ["2", "4"]
    # A side record's stamp descends from its input record's: side outputs keep input order.
    assert [stamp_seq(s) for s in side_stamps] == [0, 2]
    other, _, _ = run(side_output_ops(ops, OutputTag("other")), [1, 2, 3], STAMPS)
    assert other == []
    # A value that does not fit its tag's type fails naming the function, the tag and the record.
    with pytest.raises(Exception, match=r"parity side output odd failed on record '1': .*does not fit Types.INT"):
        odd_as_text = Op("process", OddAsText(), "parity", context=RuntimeContext)
        run(side_output_ops([odd_as_text], OutputTag("odd", Types.INT())), [1], STAMPS[:1])


def test_get_side_output_types_and_errors():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    ds = env.from_collection([1, 2], type_info=Types.INT())
    processed = ds.process(Parity(), output_type=Types.INT())
    assert processed.get_side_output(EVEN).get_type() == Types.STRING()
    assert processed.get_side_output(EVEN).cache().get_type() == Types.STRING()  # side outputs cache
    with pytest.raises(ValueError, match=r"get_side_output\('even'\): side outputs come from process\(\) of a "
                                         r"\(Keyed\)ProcessFunction, a \(Keyed\)CoProcessFunction or a "
                                         r"\(Keyed\)BroadcastProcessFunction; "
                                         r"Map\(str\) is not one"):
        ds.map(str).get_side_output(EVEN)
    with pytest.raises(TypeError, match="get_side_output\\(\\) takes an OutputTag, got str"):
        processed.get_side_output("even")
    with pytest.raises(ValueError, match="non-empty string id"):
        OutputTag("")
