"""The window API and FLIP-331's planning without Spark: assigners, attributes, the plan, unbounded input."""

import json
from types import SimpleNamespace

import pytest

from changeflow.common import Types
from changeflow.datastream import (OperatorAttributesBuilder, ProcessWindowFunction,
                                   StreamExecutionEnvironment, WindowFunction)
from changeflow.datastream import graph
from changeflow.datastream.window import EndOfStreamTrigger, GlobalWindows
from changeflow.plan.rules.end_of_stream import is_end_of_stream
from changeflow.plan.rules.end_of_stream_inputs import check_end_of_stream_inputs
from stream_programs import AtTheEnd  # tests/ is on sys.path (rootdir conftest)

END = GlobalWindows.create_with_end_of_stream_trigger()


@pytest.fixture
def keyed():
    env = StreamExecutionEnvironment.get_execution_environment()
    return env.from_collection([("a", 1), ("b", 2)]).key_by(lambda r: r[0])


class TumblingProcessingTimeWindows:  # stands for PyFlink's assigner a ported program may still pass
    def __repr__(self):
        return "TumblingProcessingTimeWindows(5000, 0)"


def test_other_assigners_are_refused_by_name(keyed):
    with pytest.raises(ValueError, match=r"KeyedStream.window\(\) supports GlobalWindows.* got "
                                         r"TumblingProcessingTimeWindows TumblingProcessingTimeWindows\(5000, 0\): "
                                         r"window assigners of other modules"):
        keyed.window(TumblingProcessingTimeWindows())
    with pytest.raises(ValueError, match="DataStream.window_all"):
        keyed.window_all("every 5 s")
    with pytest.raises(ValueError, match=r"trigger\(\) supports NeverTrigger, EndOfStreamTrigger, .*PurgingTrigger "
                                         r"only.*Count"):
        keyed.window(END).trigger(type("CountTrigger", (), {})())


def test_window_functions_are_type_checked(keyed):
    with pytest.raises(TypeError, match="process\\(\\) takes an instance of ProcessWindowFunction, got _Count"):
        keyed.window(END).process(_Count())
    with pytest.raises(TypeError, match="aggregate\\(\\) takes an instance of AggregateFunction"):
        keyed.window(END).aggregate(lambda a, b: a)
    with pytest.raises(TypeError, match=r"co_group\(...\).apply\(\) takes a CoGroupFunction or a callable "
                                        r"function, got _Count"):
        keyed.co_group(keyed).where(lambda r: r).equal_to(lambda r: r).window(END).apply(_Count())


class _Count(WindowFunction):
    def apply(self, key, window, inputs):
        return [len(list(inputs))]


def test_only_the_end_of_stream_trigger_makes_an_end_of_stream_operator(keyed):
    assert is_end_of_stream(keyed.window(END).apply(_Count())._node)
    assert not is_end_of_stream(keyed.window(GlobalWindows.create()).apply(_Count())._node)
    assert is_end_of_stream(keyed.window(GlobalWindows.create()).trigger(EndOfStreamTrigger()).apply(_Count())._node)
    joined = keyed.join(keyed).where(lambda r: r[0]).equal_to(lambda r: r[0]).window(END).apply(lambda a, b: a)
    assert is_end_of_stream(joined._node) and joined._node.inputs == [keyed._node, keyed._node]


def test_user_functions_declare_output_only_after_end_of_stream(keyed):
    assert OperatorAttributesBuilder().set_output_only_after_end_of_stream(True).build() \
        .is_output_only_after_end_of_stream()
    assert is_end_of_stream(keyed.process(AtTheEnd())._node)
    # An output type wraps the function: the declaration still reaches the planner.
    assert is_end_of_stream(keyed.process(AtTheEnd(), output_type=Types.STRING())._node)
    assert not is_end_of_stream(keyed.reduce(lambda a, b: a)._node)


def test_unbounded_input_fails_at_planning_naming_operator_and_source():
    source = graph.SourceNode("clicks", None, kind="dataframe", payload=SimpleNamespace(isStreaming=True))
    totals = graph.KeyedProcessNode("KeyedProcess(AtTheEnd)", None, input=source, key_selector=None,
                                    function=AtTheEnd())
    with pytest.raises(ValueError, match=r"operator 'KeyedProcess\(AtTheEnd\)' outputs only after end of input.*"
                                         r"unbounded source 'clicks'"):
        check_end_of_stream_inputs([totals])
    never = graph.KeyedReduceNode("Reduce", None, input=source, key_selector=None, function=lambda a, b: a)
    check_end_of_stream_inputs([never])  # an ordinary operator over unbounded input is fine


def test_execution_plan_shows_end_of_stream_operators_and_their_batch_algorithm(keyed):
    env = keyed.get_execution_environment()

    class Listing(ProcessWindowFunction):
        def process(self, key, context, elements):
            yield key

    keyed.window(END).process(Listing()).print()
    keyed.window(GlobalWindows.create()).reduce(lambda a, b: a).print()
    nodes = json.loads(env.get_execution_plan())["nodes"]
    window = next(n for n in nodes if n["type"].startswith("Window(GlobalWindows(trigger=EndOfStreamTrigger)"))
    assert window["output_only_after_end_of_stream"] is True
    assert window["execution"].startswith("batch algorithm after end of input (shuffle by key, sort by key")
    never = next(n for n in nodes if "NeverTrigger" in n["type"])
    assert never["execution"].startswith("never fires") and "output_only_after_end_of_stream" in never
    assert never["output_only_after_end_of_stream"] is False
