"""Every public name of PyFlink 2.3's DataStream API exists in changeflow or is refused naming itself;
checkpointing settings, partitioning and task hints as PyFlink 2.3 gives them (no Spark)."""

from __future__ import annotations

import importlib

import pytest

from changeflow.common import Configuration, Types
from changeflow.common.time import Duration
from changeflow.datastream import (CheckpointConfig, CheckpointingMode, ExternalizedCheckpointRetention,
                                   StreamExecutionEnvironment)
from changeflow.datastream.pyflink_names import MODULE_NAMES, UNSUPPORTED

# dir() of PyFlink 2.3's classes, public names (recorded with apache-flink 2.3.0).
PYFLINK_2_3 = {
    "StreamExecutionEnvironment": [
        "add_classpaths", "add_jars", "add_python_archive", "add_python_file", "add_source", "close",
        "configure", "create_input", "disable_operator_chaining", "enable_changelog_state_backend",
        "enable_checkpointing", "execute", "execute_async", "from_collection", "from_source",
        "get_buffer_timeout", "get_checkpoint_config", "get_checkpoint_interval",
        "get_checkpointing_consistency_mode", "get_checkpointing_mode", "get_config",
        "get_default_local_parallelism", "get_default_savepoint_directory", "get_execution_environment",
        "get_execution_plan", "get_max_parallelism", "get_parallelism", "is_chaining_enabled",
        "is_chaining_of_operators_with_different_max_parallelism_enabled",
        "is_changelog_state_backend_enabled", "is_force_unaligned_checkpoints",
        "is_unaligned_checkpoints_enabled", "register_cached_file", "register_slot_sharing_group",
        "set_buffer_timeout", "set_default_local_parallelism", "set_default_savepoint_directory",
        "set_max_parallelism", "set_parallelism", "set_python_executable", "set_python_requirements",
        "set_runtime_mode",
    ],
    "DataStream": [
        "add_sink", "assign_timestamps_and_watermarks", "broadcast", "cache", "connect",
        "disable_chaining", "execute_and_collect", "filter", "flat_map", "force_non_parallel",
        "forward", "get_execution_config", "get_execution_environment", "get_name", "get_side_output",
        "get_type", "key_by", "map", "name", "partition_custom", "print", "process", "project",
        "rebalance", "rescale", "set_buffer_timeout", "set_description", "set_max_parallelism",
        "set_parallelism", "set_uid_hash", "shuffle", "sink_to", "slot_sharing_group",
        "start_new_chain", "uid", "union", "window_all",
    ],
    "KeyedStream": [
        "AccumulateType", "add_sink", "assign_timestamps_and_watermarks", "broadcast", "cache",
        "connect", "count_window", "disable_chaining", "execute_and_collect", "filter", "flat_map",
        "force_non_parallel", "forward", "get_execution_config", "get_execution_environment",
        "get_name", "get_side_output", "get_type", "key_by", "map", "max", "max_by", "min", "min_by",
        "name", "partition_custom", "print", "process", "project", "rebalance", "reduce", "rescale",
        "set_buffer_timeout", "set_description", "set_max_parallelism", "set_parallelism",
        "set_uid_hash", "shuffle", "sink_to", "slot_sharing_group", "start_new_chain", "sum", "uid",
        "union", "window", "window_all",
    ],
    "DataStreamSink": [
        "disable_chaining", "name", "set_description", "set_parallelism", "set_uid_hash",
        "slot_sharing_group", "uid",
    ],
    "CheckpointConfig": [
        "disable_unaligned_checkpoints", "enable_unaligned_checkpoints",
        "get_aligned_checkpoint_timeout", "get_alignment_timeout", "get_checkpoint_interval",
        "get_checkpoint_timeout", "get_checkpointing_mode", "get_externalized_checkpoint_retention",
        "get_max_concurrent_checkpoints", "get_min_pause_between_checkpoints",
        "get_tolerable_checkpoint_failure_number", "is_checkpointing_enabled",
        "is_externalized_checkpoints_enabled", "is_fail_on_checkpointing_errors",
        "is_force_unaligned_checkpoints", "is_unaligned_checkpoints_enabled",
        "set_aligned_checkpoint_timeout", "set_alignment_timeout", "set_checkpoint_interval",
        "set_checkpoint_timeout", "set_checkpointing_mode", "set_externalized_checkpoint_retention",
        "set_fail_on_checkpointing_errors", "set_force_unaligned_checkpoints",
        "set_max_concurrent_checkpoints", "set_min_pause_between_checkpoints",
        "set_tolerable_checkpoint_failure_number",
    ],
}
PYFLINK_2_3_MODULE = [
        "AggregateFunction", "AsyncDataStream", "AsyncFunction", "AsyncRetryPredicate",
        "AsyncRetryStrategy", "BroadcastConnectedStream", "BroadcastProcessFunction", "BroadcastStream",
        "CheckpointConfig", "CheckpointStorage", "CheckpointingMode", "CoFlatMapFunction",
        "CoMapFunction", "CoProcessFunction", "ConnectedStreams", "CountWindow",
        "CustomCheckpointStorage", "CustomStateBackend", "DataStream", "DataStreamSink",
        "EmbeddedRocksDBStateBackend", "ExternalizedCheckpointRetention", "FileSystemCheckpointStorage",
        "FilterFunction", "FlatMapFunction", "GlobalWindow", "HashMapStateBackend",
        "JobManagerCheckpointStorage", "KeySelector", "KeyedBroadcastProcessFunction",
        "KeyedCoProcessFunction", "KeyedProcessFunction", "KeyedStream", "MapFunction", "MemorySize",
        "MergingWindowAssigner", "OutputTag", "Partitioner", "PredefinedOptions", "ProcessFunction",
        "ProcessWindowFunction", "ReduceFunction", "RuntimeContext", "RuntimeExecutionMode",
        "SinkFunction", "SlotSharingGroup", "SourceFunction", "StateBackend",
        "StreamExecutionEnvironment", "TimeDomain", "TimeWindow", "TimerService", "Trigger",
        "TriggerResult", "Window", "WindowAssigner", "WindowFunction", "WindowedStream",
]
OWNERS = {"StreamExecutionEnvironment": StreamExecutionEnvironment, "CheckpointConfig": CheckpointConfig}


def _instances():
    env = StreamExecutionEnvironment.get_execution_environment()
    stream = env.from_collection([("a", 1)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    return {"StreamExecutionEnvironment": env, "DataStream": stream, "KeyedStream": stream.key_by(lambda r: r[0]),
            "DataStreamSink": stream.print(), "CheckpointConfig": env.get_checkpoint_config()}


@pytest.mark.parametrize("owner", sorted(PYFLINK_2_3))
def test_every_pyflink_method_exists_or_is_refused_naming_itself(owner):
    instance = _instances()[owner]
    refused = UNSUPPORTED.get(owner, {})
    for name in PYFLINK_2_3[owner]:
        if name in refused:
            with pytest.raises(NotImplementedError, match=f"{owner}.{name} .PyFlink's. is not supported"):
                getattr(instance, name)()
        else:
            assert callable(getattr(instance, name)) or name == "AccumulateType", (owner, name)
    for name in refused:  # a refusal for a name changeflow implements would hide it
        assert name in PYFLINK_2_3[owner] and name not in type(instance).__dict__, name


def test_every_pyflink_module_name_imports_or_is_refused_naming_itself():
    module = importlib.import_module("changeflow.datastream")
    for name in PYFLINK_2_3_MODULE:
        if name in MODULE_NAMES:
            with pytest.raises(NotImplementedError, match=f"pyflink.datastream.{name} is not supported"):
                getattr(module, name)
        else:
            assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError):
        module.NoSuchName  # noqa: B018 - a name PyFlink does not have stays an AttributeError


def test_checkpoint_config_defaults_are_pyflinks():
    config = StreamExecutionEnvironment.get_execution_environment().get_checkpoint_config()
    assert (config.get_checkpoint_interval(), config.get_checkpoint_timeout(), config.get_checkpointing_mode(),
            config.get_externalized_checkpoint_retention(), config.get_max_concurrent_checkpoints(),
            config.get_min_pause_between_checkpoints(), config.get_tolerable_checkpoint_failure_number(),
            config.is_checkpointing_enabled(), config.is_externalized_checkpoints_enabled(),
            config.is_fail_on_checkpointing_errors(), config.is_force_unaligned_checkpoints(),
            config.is_unaligned_checkpoints_enabled()) == (
        -1, 600_000, CheckpointingMode.AT_LEAST_ONCE, ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS,
        1, 0, 0, False, False, True, False, False)


def test_checkpoint_settings_are_kept_under_flinks_keys_as_pyflink_writes_them():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.enable_checkpointing(5000, CheckpointingMode.AT_LEAST_ONCE)
    config = env.get_checkpoint_config()
    config.set_min_pause_between_checkpoints(500)
    config.set_checkpoint_timeout(60_000)
    config.set_max_concurrent_checkpoints(2)
    config.set_externalized_checkpoint_retention(ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION)
    config.enable_unaligned_checkpoints()
    config.set_tolerable_checkpoint_failure_number(3)
    config.set_aligned_checkpoint_timeout(Duration.of_seconds(2))
    # PyFlink 2.3's configuration after the same calls (its toMap()).
    assert env.get_config().to_dict() == {
        "execution.checkpointing.interval": "5 s", "execution.checkpointing.mode": "AT_LEAST_ONCE",
        "execution.checkpointing.min-pause": "500 ms", "execution.checkpointing.timeout": "1 min",
        "execution.checkpointing.max-concurrent-checkpoints": "2",
        "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
        "execution.checkpointing.unaligned.enabled": "true",
        "execution.checkpointing.tolerable-failed-checkpoints": "3",
        "execution.checkpointing.aligned-checkpoint-timeout": "2 s"}
    assert (env.get_checkpoint_interval(), env.get_checkpointing_mode(), config.is_checkpointing_enabled(),
            config.get_aligned_checkpoint_timeout(), config.is_fail_on_checkpointing_errors()) == (
        5000, CheckpointingMode.AT_LEAST_ONCE, True, Duration.of_seconds(2), False)
    plain = StreamExecutionEnvironment.get_execution_environment().enable_checkpointing(1000)
    assert plain.get_checkpointing_mode() is CheckpointingMode.EXACTLY_ONCE  # Flink's default once enabled


def test_checkpoint_settings_set_in_a_configuration_are_read_back():
    conf = Configuration().set("execution.checkpointing.interval", "2 min")
    assert StreamExecutionEnvironment.get_execution_environment(conf).get_checkpoint_interval() == 120_000


@pytest.mark.parametrize("call, message", [
    (lambda env: env.enable_checkpointing(5), "Checkpoint interval must be larger than or equal to 10 ms"),
    (lambda env: env.set_max_parallelism(0), "maxParallelism is out of bounds 0 < maxParallelism <= 32768"),
    (lambda env: env.set_buffer_timeout(-2), "Timeout of buffer must be non-negative or -1"),
    (lambda env: env.get_checkpoint_config().set_max_concurrent_checkpoints(0), "concurrent attempts"),
])
def test_bad_settings_fail_as_in_flink(call, message):
    with pytest.raises(ValueError, match=message):
        call(StreamExecutionEnvironment.get_execution_environment())


def test_task_graph_settings_read_back_as_pyflinks():
    env = StreamExecutionEnvironment.get_execution_environment()
    assert (env.get_max_parallelism(), env.get_buffer_timeout(), env.is_chaining_enabled(),
            env.is_changelog_state_backend_enabled(), env.get_default_savepoint_directory()) == (
        -1, 100, True, None, None)
    env.set_max_parallelism(128).set_buffer_timeout(-1).disable_operator_chaining()
    env.enable_changelog_state_backend(True)
    env.add_jars("file:///a.jar")
    env.add_jars("file:///b.jar")
    assert (env.get_max_parallelism(), env.get_buffer_timeout(), env.is_chaining_enabled(),
            env.is_changelog_state_backend_enabled(), env.get_config().get("pipeline.jars")) == (
        128, -1, False, True, "file:///a.jar;file:///b.jar")


def test_partitioning_keeps_the_stream_and_is_refused_on_a_keyed_stream_as_in_flink():
    env = StreamExecutionEnvironment.get_execution_environment()
    stream = env.from_collection([("a", 1, 10)], type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()]))
    moved = stream.rebalance().shuffle().forward().rescale().partition_custom(lambda k, n: 0, lambda r: r[0])
    assert moved.get_type() == stream.get_type() and moved._node is stream._node
    with pytest.raises(TypeError, match="Cannot override partitioning for KeyedStream."):
        stream.key_by(lambda r: r[0]).rebalance()
    assert stream.broadcast()._node is stream._node  # broadcast partitioning: the same records (docs/differences.md)
    with pytest.raises(TypeError, match="Cannot override partitioning for KeyedStream."):
        stream.key_by(lambda r: r[0]).broadcast()
    connected = stream.connect(stream)  # two-input operators: tests/datastream/test_co_process.py
    assert (connected.stream1, connected.stream2) == (stream, stream)


def test_project_picks_tuple_fields_and_only_of_a_tuple_stream():
    env = StreamExecutionEnvironment.get_execution_environment()
    stream = env.from_collection([("a", 1, 10)], type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()]))
    assert stream.project(2, 0).get_type() == Types.TUPLE([Types.INT(), Types.STRING()])
    with pytest.raises(TypeError, match="Only Tuple DataStreams can be projected."):
        env.from_collection([("a", 1)]).project(1)


# __all__ of PyFlink 2.3's pyflink.datastream.functions, .window and .state.
PYFLINK_MODULES = {
    "functions": [
        "AggregateFunction", "AllWindowFunction", "AsyncFunction", "AsyncFunctionDescriptor", "AsyncRetryPredicate",
        "AsyncRetryStrategy", "BaseBroadcastProcessFunction", "BroadcastProcessFunction", "CoFlatMapFunction",
        "CoMapFunction", "CoProcessFunction", "FilterFunction", "FlatMapFunction", "KeySelector",
        "KeyedBroadcastProcessFunction", "KeyedCoProcessFunction", "KeyedProcessFunction", "MapFunction", "Partitioner",
        "ProcessAllWindowFunction", "ProcessFunction", "ProcessWindowFunction", "ReduceFunction", "RuntimeContext",
        "SinkFunction", "SourceFunction", "TimerService", "WindowFunction"],
    "window": [
        "ContinuousEventTimeTrigger", "ContinuousProcessingTimeTrigger", "CountSlidingWindowAssigner", "CountTrigger",
        "CountTumblingWindowAssigner", "CountWindow", "CountWindowSerializer", "DynamicEventTimeSessionWindows",
        "DynamicProcessingTimeSessionWindows", "EventTimeSessionWindows", "EventTimeTrigger", "GlobalWindow",
        "GlobalWindowSerializer", "GlobalWindows", "MergingWindowAssigner", "NeverTrigger",
        "ProcessingTimeSessionWindows", "ProcessingTimeTrigger", "PurgingTrigger", "SessionWindowTimeGapExtractor",
        "SlidingEventTimeWindows", "SlidingProcessingTimeWindows", "TimeWindow", "TimeWindowSerializer", "Trigger",
        "TriggerResult", "TumblingEventTimeWindows", "TumblingProcessingTimeWindows", "Window", "WindowAssigner"],
    "state": [
        "AggregatingState", "AggregatingStateDescriptor", "BroadcastState", "ListState", "ListStateDescriptor",
        "MapState", "MapStateDescriptor", "OperatorStateStore", "ReadOnlyBroadcastState", "ReducingState",
        "ReducingStateDescriptor", "StateTtlConfig", "ValueState", "ValueStateDescriptor"],
}


@pytest.mark.parametrize(("module", "name"), [(m, n) for m, names in PYFLINK_MODULES.items() for n in names])
def test_every_name_of_pyflinks_datastream_modules_is_there_or_refused_by_name(module, name):
    import importlib

    mod = importlib.import_module(f"changeflow.datastream.{module}")
    try:
        value = getattr(mod, name)
    except NotImplementedError as refused:
        assert str(refused).startswith(f"pyflink.datastream.{module}.{name} is not supported by changeflow: ")
        return
    assert value is not None
