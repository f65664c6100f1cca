"""A program of both APIs is one tree planned in one pass, each side with its own settings (plan/stream_bridge.py)."""

from changeflow.common.types import DataTypes as T
from changeflow.kernels.aggregate.functions import AggCall
from changeflow.kernels.bridge import RecordShape
from changeflow.plan.nodes import Aggregate, Project, Source, side_inputs, sources
from changeflow.plan.optimizer import PlannerSettings, optimize
from changeflow.plan.stream_bridge import StreamInput, StreamSource, TableInput, with_table_settings
from changeflow.plan.stream_nodes import KeyedReduceNode, SourceNode, StreamJob, TableNode
from changeflow.plan.stream_walks import all_nodes, graph_nodes
from changeflow.expressions import Column

_COLUMNS = (("k", T.STRING()), ("v", T.BIGINT()))


def _aggregate() -> Aggregate:
    src = Source("t", _COLUMNS, "elements", [("a", 1)])
    return Aggregate(src, ("k",), (AggCall("sum", "v", T.BIGINT(), "s"),), (("k", T.STRING()), ("s", T.BIGINT())))


def _job(table_settings: PlannerSettings | None) -> StreamJob:
    node = TableNode("table", None, payload=TableInput("row", False, "to_changelog_stream"), below=_aggregate())
    reduce = KeyedReduceNode("reduce", None, input=node, key_selector=None, function=None)
    job = StreamJob((reduce,))
    return with_table_settings(job, table_settings) if table_settings is not None else job


def _planned_aggregate(job: StreamJob) -> Aggregate:
    table_node = job.outputs[0].inputs[0]
    assert isinstance(table_node, TableNode) and not table_node.sealed
    aggregate = table_node.below
    assert isinstance(aggregate, Aggregate)
    return aggregate


def test_the_table_plan_under_a_job_is_its_input_planned_with_the_table_settings():
    job = optimize(_job(PlannerSettings(mini_batch=True)), PlannerSettings())
    aggregate = _planned_aggregate(job)
    # The Table side's options (mini-batch: two phases, an assigner) where the job's have none.
    assert aggregate.traits.two_phase and aggregate.input.traits.mini_batch_assigner == (0, -1, "ProcTime")
    assert str(aggregate.traits.changelog_mode) == "[I,UB,UA]"
    # The job's nodes are planned too, in the same pass, and see the Table plan as a source.
    assert job.outputs[0].traits.streaming and job.outputs[0].traits.get("streaming_state")
    assert [n.name for n in all_nodes(list(job.outputs))] == ["reduce", "table"]


def test_without_settings_of_its_own_the_side_below_takes_the_side_above():
    aggregate = _planned_aggregate(optimize(_job(None), PlannerSettings()))
    assert not aggregate.traits.two_phase and aggregate.input.traits.mini_batch_assigner is None
    batch = _planned_aggregate(optimize(_job(PlannerSettings(streaming=False)), PlannerSettings()))
    assert batch.traits.streaming is False


def test_a_stream_read_as_a_table_is_a_source_whose_graph_is_planned_with_the_query():
    graph = KeyedReduceNode("reduce", None, input=SourceNode("numbers", None, payload=[1]),
                            key_selector=None, function=None)
    source = StreamSource("s", _COLUMNS, "datastream", StreamInput(RecordShape("fields", (0, 1)), changelog=True),
                          below=graph)
    query = Project(source, (("k", Column("k")),), (("k", T.STRING()),))
    planned = optimize(query, PlannerSettings())
    below = planned.input
    assert isinstance(below, StreamSource) and str(below.traits.changelog_mode) == "[I,UB,UA,D]"
    assert [n.name for n in graph_nodes(planned)] == ["reduce", "numbers"]
    assert all(n.traits is not None and n.traits.streaming for n in graph_nodes(planned))
    # Walks of the Table side stop at the boundary.
    assert side_inputs(below) == () and sources(planned) == [below]
