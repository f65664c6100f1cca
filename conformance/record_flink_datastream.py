"""Record PyFlink 2.3's output for the DataStream conformance cases as golden JSON files.

Run with PyFlink 2.3's python first on PATH (Flink starts its Python workers with
the ``python`` found on PATH), from the repository root::

    python conformance/record_flink_datastream.py            # all cases
    python conformance/record_flink_datastream.py keyed_sum_tuple_streaming

Each case of ``conformance/datastream_cases.py`` runs in a
``StreamExecutionEnvironment`` at parallelism 1 in the case's runtime mode, and
its stream is collected with ``execute_and_collect()`` into
``conformance/goldens/datastream/<name>.json``::

    {"case": name, "mode": "streaming"|"batch", "compare": "exact"|"multiset"|"last_per_key", "description": str,
     "records": [value, ...], "flink_version": "2.3.0"}

Values are encoded by :func:`encode`: a Row as ``{"row": [...], "names": [...]|null}``,
a tuple as ``{"tuple": [...]}``, a list as a list, scalars as themselves.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "datastream")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance import (datastream_broadcast_cases, datastream_cases,  # noqa: E402  (no pyflink import there)
                         datastream_connect_cases, datastream_event_time_cases)
from conformance.datastream_cases import CASES  # noqa: E402
from conformance.recording import FLINK_VERSION, case_names, record_each, write_records_golden  # noqa: E402


def encode(v):
    """A collected record as a JSON value (the Row test works for PyFlink's and changeflow's Row)."""
    if v is None or isinstance(v, (bool, int, str, float)):
        return v
    if type(v).__name__ == "Row":
        names = getattr(v, "_fields", None)
        return {"row": [encode(x) for x in v], "names": list(names) if names else None}
    if isinstance(v, tuple):
        return {"tuple": [encode(x) for x in v]}
    if isinstance(v, list):
        return [encode(x) for x in v]
    raise TypeError(f"cannot encode collected value {v!r} of type {type(v).__name__}")


def _api():
    from pyflink.common import Types
    from pyflink.datastream import (BroadcastProcessFunction, CoFlatMapFunction, CoMapFunction, CoProcessFunction,
                                    FlatMapFunction, KeyedBroadcastProcessFunction, KeyedCoProcessFunction,
                                    KeyedProcessFunction, MapFunction, OutputTag, ProcessFunction, ReduceFunction)
    from pyflink.datastream.functions import (AggregateFunction, AllWindowFunction, ProcessAllWindowFunction,
                                              ProcessWindowFunction, WindowFunction)
    from pyflink.datastream.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
    from pyflink.common import Duration, Time
    from pyflink.common.watermark_strategy import TimestampAssigner, WatermarkStrategy
    from pyflink.datastream import TimeDomain
    from pyflink.datastream.window import (ContinuousEventTimeTrigger, CountTrigger, CountTumblingWindowAssigner,
                                           EventTimeSessionWindows, GlobalWindows, PurgingTrigger,
                                           SlidingEventTimeWindows, TumblingEventTimeWindows)

    trigger = _end_of_stream_trigger()
    return SimpleNamespace(Types=Types, KeyedProcessFunction=KeyedProcessFunction, MapFunction=MapFunction,
                           FlatMapFunction=FlatMapFunction, ReduceFunction=ReduceFunction,
                           ValueStateDescriptor=ValueStateDescriptor, ProcessFunction=ProcessFunction,
                           ListStateDescriptor=ListStateDescriptor, CoMapFunction=CoMapFunction,
                           CoFlatMapFunction=CoFlatMapFunction, CoProcessFunction=CoProcessFunction,
                           KeyedCoProcessFunction=KeyedCoProcessFunction,
                           BroadcastProcessFunction=BroadcastProcessFunction,
                           KeyedBroadcastProcessFunction=KeyedBroadcastProcessFunction,
                           MapStateDescriptor=MapStateDescriptor,
                           OutputTag=OutputTag, GlobalWindows=GlobalWindows,
                           AggregateFunction=AggregateFunction, WindowFunction=WindowFunction,
                           AllWindowFunction=AllWindowFunction, ProcessWindowFunction=ProcessWindowFunction,
                           ProcessAllWindowFunction=ProcessAllWindowFunction,
                           Duration=Duration, Time=Time, TimestampAssigner=TimestampAssigner,
                           WatermarkStrategy=WatermarkStrategy, TimeDomain=TimeDomain,
                           TumblingEventTimeWindows=TumblingEventTimeWindows,
                           SlidingEventTimeWindows=SlidingEventTimeWindows,
                           EventTimeSessionWindows=EventTimeSessionWindows, CountTrigger=CountTrigger,
                           PurgingTrigger=PurgingTrigger, ContinuousEventTimeTrigger=ContinuousEventTimeTrigger,
                           count_window_all=lambda ds, size: ds.window_all(CountTumblingWindowAssigner.of(size)),
                           end_of_stream=lambda keyed: keyed.window(GlobalWindows.create()).trigger(trigger),
                           end_of_stream_all=lambda ds: ds.window_all(GlobalWindows.create()).trigger(trigger))


def _end_of_stream_trigger():
    """Flink's Java ``GlobalWindows.EndOfStreamTrigger`` in Python (PyFlink has no API for it).

    It registers an event-time timer at the window's end (``Long.MAX_VALUE`` for the
    global window), which only the final watermark of a bounded input reaches.
    """
    from pyflink.datastream.window import Trigger, TriggerResult

    class EndOfStreamTrigger(Trigger):
        def on_element(self, element, timestamp, window, ctx):
            ctx.register_event_time_timer(window.max_timestamp())
            return TriggerResult.CONTINUE

        def on_processing_time(self, time, window, ctx):
            return TriggerResult.CONTINUE

        def on_event_time(self, time, window, ctx):
            return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

        def on_merge(self, window, ctx):
            pass

        def clear(self, window, ctx):
            ctx.delete_event_time_timer(window.max_timestamp())

    return EndOfStreamTrigger()


def record(c, api) -> dict:
    from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH if c.mode == "batch" else RuntimeExecutionMode.STREAMING)
    with c.program(env, api).execute_and_collect() as results:
        records = [encode(r) for r in results]
    return {"case": c.name, "mode": c.mode, "compare": c.compare, "description": c.description,
            "records": records, "flink_version": FLINK_VERSION}


def main(argv: list[str] | None = None) -> int:
    import cloudpickle

    names = case_names(argv, CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    # PyFlink's workers cannot import the cases module: ship its functions by value.
    cloudpickle.register_pickle_by_value(datastream_cases)
    cloudpickle.register_pickle_by_value(datastream_event_time_cases)
    cloudpickle.register_pickle_by_value(datastream_connect_cases)
    cloudpickle.register_pickle_by_value(datastream_broadcast_cases)
    api = _api()
    return record_each(CASES, sorted(names), GOLDEN_DIR, lambda c: record(c, api),
                       summary=lambda g: f"{len(g['records'])} records", write=write_records_golden)


if __name__ == "__main__":
    sys.exit(main())
