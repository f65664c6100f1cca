"""The event-time API: what it builds and what it refuses by name (no Spark)."""

import pytest

from changeflow.common import Duration, Time, WatermarkStrategy
from changeflow.datastream import StreamExecutionEnvironment
from changeflow.datastream.connectors import NumberSequenceSource
from changeflow.datastream.side_output import OutputTag
from changeflow.datastream.window import (EventTimeSessionWindows, ProcessingTimeSessionWindows,
                                         SlidingEventTimeWindows, TumblingEventTimeWindows)
from changeflow.plan.stream_nodes import EventWindowNode, LateDataNode, TimestampsNode


@pytest.fixture
def timed():
    env = StreamExecutionEnvironment.get_execution_environment()
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(lambda v, t: v[1])
    return env.from_collection([("a", 1)]).assign_timestamps_and_watermarks(strategy)


def test_the_graph(timed):
    late = OutputTag("late")
    result = timed.key_by(lambda r: r[0]).window(TumblingEventTimeWindows.of(Time.seconds(1))) \
        .allowed_lateness(100).side_output_late_data(late).reduce(lambda a, b: a)
    assert isinstance(result._node, EventWindowNode) and isinstance(result._node.input, TimestampsNode)
    assert (result._node.lateness, result._node.windows.size) == (100, 1000)
    assert isinstance(result.get_side_output(late)._node, LateDataNode)
    with pytest.raises(ValueError, match="no such side output"):
        result.get_side_output(OutputTag("other"))


def test_from_source_with_a_timestamp_assigner_timestamps_the_records():
    env = StreamExecutionEnvironment.get_execution_environment()
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1)).with_timestamp_assigner(
        lambda v, t: v)
    assert isinstance(env.from_source(NumberSequenceSource(1, 3), strategy, "seq")._node, TimestampsNode)
    plain = env.from_source(NumberSequenceSource(1, 3), WatermarkStrategy.no_watermarks(), "seq")
    assert not isinstance(plain._node, TimestampsNode)


def test_refusals_name_what_is_refused(timed):
    with pytest.raises(NotImplementedError, match="with_watermark_alignment"):
        WatermarkStrategy.no_watermarks().with_watermark_alignment("g", Duration.of_seconds(1))
    with pytest.raises(NotImplementedError, match="with_dynamic_gap"):
        ProcessingTimeSessionWindows.with_dynamic_gap(None)
    with pytest.raises(TypeError, match="SessionWindowTimeGapExtractor"):
        EventTimeSessionWindows.with_dynamic_gap(None)
    with pytest.raises(ValueError, match="abs\\(offset\\) < size"):
        TumblingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(10))
    with pytest.raises(ValueError, match="abs\\(offset\\) < slide"):
        SlidingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(5), Time.milliseconds(5))
    with pytest.raises(ValueError, match="does not support event-time, processing-time or count windows"):
        timed.co_group(timed).where(lambda r: r).equal_to(lambda r: r).window(
            TumblingEventTimeWindows.of(Time.milliseconds(10)))
    with pytest.raises(TypeError, match="WatermarkStrategy"):
        timed.assign_timestamps_and_watermarks("every second")
    # with_idleness is accepted (and documented as without effect).
    assert WatermarkStrategy.for_monotonous_timestamps().with_idleness(Duration.of_seconds(1)).kind == \
        "for_monotonous_timestamps"
