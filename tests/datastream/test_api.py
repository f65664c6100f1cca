"""The DataStream API surface without running a job: modes, types, graph, errors, print format."""

import io

import pytest

from changeflow.common import Configuration, Row, Types
from changeflow.datastream import (KeyedProcessFunction, PrintSink, ReduceFunction, RuntimeExecutionMode,
                                   StreamExecutionEnvironment)
from changeflow.datastream import graph

PAIR = Types.TUPLE([Types.STRING(), Types.INT()])


def test_runtime_mode_from_configuration_and_automatic_with_bounded_sources():
    conf = Configuration().set_string("execution.runtime-mode", "batch")
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    ds = env.from_collection([1])
    assert not env.is_streaming([ds._node])
    env.set_runtime_mode(RuntimeExecutionMode.AUTOMATIC)
    assert not env.is_streaming([ds._node])  # every source bounded: batch
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    assert env.is_streaming([ds._node]) and env.get_config().get_string("execution.runtime-mode", "") == "STREAMING"


def test_from_collection_checks_elements_against_the_type():
    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(ValueError, match=r"element \('a', 'b'\): value 'b' does not fit Types.INT\(\)"):
        env.from_collection([("a", 1), ("a", "b")], type_info=PAIR)


def test_types_flow_through_the_graph():
    env = StreamExecutionEnvironment.get_execution_environment()
    ds = env.from_collection([("a", 1)], type_info=PAIR)
    assert ds.filter(lambda r: True).get_type() == PAIR
    assert ds.key_by(lambda r: r[0]).sum(1).get_type() == PAIR
    assert ds.map(lambda r: r).get_type() == Types.PICKLED_BYTE_ARRAY()
    assert ds.map(lambda r: r[0], output_type=Types.STRING()).get_type() == Types.STRING()


def test_operator_attributes_report_idempotent_output_for_the_flush_buffer():
    class Plain(ReduceFunction):
        def reduce(self, a, b):
            return a

    class Latest(KeyedProcessFunction):
        def is_output_idempotent(self):
            return True

        def process_element(self, value, ctx):
            yield value

    ds = StreamExecutionEnvironment.get_execution_environment().from_collection([("a", 1)])
    keyed = ds.key_by(lambda r: r[0])
    # Keyed reductions are built-in idempotent operators, whatever the reduce function.
    for out in (keyed.max_by(1), keyed.sum(1), keyed.reduce(lambda a, b: a), keyed.reduce(Plain())):
        assert out._node.attributes().is_output_idempotent() and out._node.keyed
    assert keyed.process(Latest())._node.attributes().is_output_idempotent()
    assert not ds.map(lambda r: r)._node.attributes().is_output_idempotent()


def test_name_uid_and_graph_shape():
    env = StreamExecutionEnvironment.get_execution_environment()
    a, b = env.from_collection([1]), env.from_collection([2])
    out = a.map(lambda x: x).name("double").uid("double-1").union(b)
    assert isinstance(out._node, graph.UnionNode) and out._node.streams[0].name == "double"
    assert out._node.streams[0].uid == "double-1" and len(graph.sources(out._node)) == 2


def test_wrong_function_kinds_are_rejected():
    keyed = StreamExecutionEnvironment.get_execution_environment().from_collection([1]).key_by(lambda x: x)
    with pytest.raises(TypeError, match="must be a MapFunction or a callable"):
        keyed.map(5)
    with pytest.raises(TypeError, match="takes a KeyedProcessFunction"):
        keyed.process(lambda x: x)

    class P(KeyedProcessFunction):
        def process_element(self, value, ctx):
            yield value

    with pytest.raises(TypeError, match="needs a KeyedStream"):
        StreamExecutionEnvironment.get_execution_environment().from_collection([1]).process(P())


def test_print_sink_formats_as_pyflink():
    out = io.StringIO()
    PrintSink("id", Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.INT()]), stream=out).write(
        [Row(k="a", v=None)])
    PrintSink(None, PAIR, stream=out).write([("a", 1)])
    PrintSink(None, None, stream=out).write([("a", 1), "s"])
    assert out.getvalue().splitlines() == ["id> +I[a,None]", "(a,1)", "('a', 1)", "s"]


def test_execute_without_sinks_fails_as_flink():
    pytest.importorskip("pyspark")
    with pytest.raises(RuntimeError, match="No operators defined in streaming topology"):
        from changeflow.runtime.spark.jobs import SparkJobs
        SparkJobs(None).run_datastream([], None)  # type: ignore[arg-type]
