"""The broadcast state pattern on Spark beyond the conformance goldens
(tests/conformance/test_datastream_conformance.py): batch mode gives the streaming result where Flink 2.3's batch
execution differs, and the broadcast state of every bucket survives a restart from the checkpoint."""

from __future__ import annotations

import pytest

from changeflow.common import Types, WatermarkStrategy
from changeflow.datastream import (KeyedBroadcastProcessFunction, MapStateDescriptor, RuntimeExecutionMode,
                                   ValueStateDescriptor)
from changeflow.datastream.connectors import NumberSequenceSource
from conformance import datastream_broadcast_cases
from tests.datastream.test_co_process_spark import _env, batch_result_is_streaming_golden


def test_batch_keyed_rules_with_timers_gives_the_streaming_result(spark):
    assert batch_result_is_streaming_golden(spark, datastream_broadcast_cases, "broadcast_keyed_rules_timers")


class CrashOnce:
    """Collects the records of every micro-batch but the second, where it fails the job, the first time only."""

    def __init__(self, flag):
        self.flag = flag
        self.batches = 0
        self.records = []

    def write(self, records):
        self.batches += 1
        if self.batches == 2 and not self.flag.exists():
            self.flag.write_text("crashed")
            raise RuntimeError("simulated crash")
        self.records.extend(records)


def test_the_broadcast_state_survives_a_restart_from_the_checkpoint(spark, tmp_path):
    sink = CrashOnce(tmp_path / "crashed")
    limit = MapStateDescriptor("limit", Types.STRING(), Types.LONG())

    class Within(KeyedBroadcastProcessFunction):  # defined here: Spark's workers get it by value
        """Each number with the limit known when it is processed, and its key's count."""

        def open(self, runtime_context):
            self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))

        def process_element(self, value, ctx):
            self.count.update((self.count.value() or 0) + 1)
            yield value, ctx.get_broadcast_state(limit).get("max"), self.count.value()

        def process_broadcast_element(self, value, ctx):
            ctx.get_broadcast_state(limit).put("max", value * 10)
            return []


    def run():
        env = _env(spark, RuntimeExecutionMode.STREAMING, **{"changeflow.checkpoint-dir": str(tmp_path / "ckpt"),
                                                             "changeflow.state.buckets": "4"})
        numbers = env.from_source(NumberSequenceSource(1, 8), WatermarkStrategy.no_watermarks(), "numbers")
        limits = env.from_source(NumberSequenceSource(1, 2), WatermarkStrategy.no_watermarks(), "limits")
        numbers.key_by(lambda n: n % 3).connect(limits.broadcast(limit)).process(Within()).sink_to(sink)
        env.execute("broadcast restart")

    with pytest.raises(Exception, match="simulated crash"):
        run()
    run()  # resumes from the checkpoint: the failed micro-batch runs again, on the restored state
    # Both limits came in the first micro-batch (two rows per source), so every number of every key (spread
    # over 4 buckets) sees the last, before and after the restart; the per-key counts continue.
    assert sorted(sink.records) == [(n, 20, (n - 1) // 3 + 1) for n in range(1, 9)]
