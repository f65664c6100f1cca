"""PyFlink's ExecutionConfig (``env.get_config()``) and the rest of pyflink.common's names.

The expected keys and values were recorded from PyFlink 2.3 (its ``ExecutionConfig`` over a local
environment, then the Java configuration's map).
"""

import pytest

import changeflow.common as common
from changeflow.common import Configuration, ExecutionConfig, JobExecutionResult, JobID
from changeflow.config.job_parameters import format_job_parameters, parse_job_parameters
from changeflow.datastream import StreamExecutionEnvironment

# PyFlink 2.3's getters on a fresh environment (get_parallelism left out: Flink's local default is its cores).
FLINK_DEFAULTS = {
    "get_auto_watermark_interval": 200, "get_global_job_parameters": {}, "get_latency_tracking_interval": 0,
    "get_max_parallelism": -1, "get_task_cancellation_interval": 30000, "get_task_cancellation_timeout": 180000,
    "has_auto_generated_uids_enabled": True, "is_closure_cleaner_enabled": True, "is_object_reuse_enabled": False,
    "is_use_snapshot_compression": False,
}
# The keys PyFlink 2.3 wrote for the calls of test_the_calls_write_flinks_keys.
FLINK_KEYS = {
    "execution.checkpointing.snapshot-compression": "true", "metrics.latency.interval": "5 ms",
    "parallelism.default": "3", "pipeline.auto-generate-uids": "false", "pipeline.auto-watermark-interval": "150 ms",
    "pipeline.closure-cleaner-level": "NONE", "pipeline.max-parallelism": "64", "pipeline.object-reuse": "true",
    "task.cancellation.interval": "7 s", "task.cancellation.timeout": "9 s",
}


def test_get_config_is_pyflinks_execution_config_and_the_jobs_configuration():
    env = StreamExecutionEnvironment.get_execution_environment(Configuration().set_string("pipeline.name", "j"))
    config = env.get_config()
    assert isinstance(config, ExecutionConfig) and isinstance(config, Configuration)
    assert {name: getattr(config, name)() for name in FLINK_DEFAULTS} == FLINK_DEFAULTS
    assert config.get_string("pipeline.name", "") == "j"  # the configuration it was made from
    config.set_parallelism(4)
    assert env.get_parallelism() == 4  # one configuration: the environment reads what the config wrote


def test_the_calls_write_flinks_keys():
    config = StreamExecutionEnvironment.get_execution_environment().get_config()
    config.set_auto_watermark_interval(150).set_parallelism(3).set_max_parallelism(64).enable_object_reuse()
    config.set_global_job_parameters({"a": "1", "b": 2})
    config.set_latency_tracking_interval(5).set_task_cancellation_interval(7000).set_task_cancellation_timeout(9000)
    config.set_use_snapshot_compression(True).disable_closure_cleaner().disable_auto_generated_uids()
    written = config.to_dict()
    assert {k: v for k, v in written.items() if k != "pipeline.global-job-parameters"} == FLINK_KEYS
    assert config.get_global_job_parameters() == {"a": "1", "b": "2"}  # PyFlink keeps str(value)
    assert (config.get_auto_watermark_interval(), config.get_max_parallelism(), config.get_parallelism(),
            config.get_latency_tracking_interval(), config.get_task_cancellation_interval()) == (150, 64, 3, 5, 7000)
    assert not config.is_closure_cleaner_enabled() and not config.has_auto_generated_uids_enabled()
    config.enable_closure_cleaner().disable_object_reuse()
    assert config.is_closure_cleaner_enabled() and not config.is_object_reuse_enabled()


def test_serializer_flags_are_kept_and_the_kryo_registries_are_empty():
    config = ExecutionConfig()
    config.disable_generic_types().enable_force_kryo().enable_force_avro()
    assert (config.has_generic_types_disabled(), config.is_force_kryo_enabled(), config.is_force_avro_enabled()) == (
        True, True, True)
    assert config.to_dict()["pipeline.force-kryo"] == "true"
    assert (config.get_default_kryo_serializer_classes(), config.get_registered_kryo_types(),
            config.get_registered_pojo_types()) == ({}, [], [])


@pytest.mark.parametrize(("call", "message"), [
    (lambda c: c.set_parallelism(0), "Parallelism must be at least one, or ExecutionConfig.PARALLELISM_DEFAULT"),
    (lambda c: c.set_auto_watermark_interval(-5), "Auto watermark interval must not be negative."),
    (lambda c: c.set_max_parallelism(0), "The maximum parallelism must be greater than 0."),
])
def test_flinks_checks(call, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        call(ExecutionConfig())


def test_set_parallelism_default_is_allowed():
    assert ExecutionConfig().set_parallelism(ExecutionConfig.PARALLELISM_DEFAULT).get_parallelism() == -1


def test_job_parameters_quote_what_needs_it():
    parameters = {"url": "jdbc:postgresql://h/db", "list": "a,b", "quote": "it's", "space": " x ", "plain": "1"}
    text = format_job_parameters(parameters)
    assert parse_job_parameters(text) == parameters
    config = ExecutionConfig().set_global_job_parameters(parameters)
    assert config.get_global_job_parameters() == parameters
    assert parse_job_parameters("k1:v1, k2 : v:2") == {"k1": "v1", "k2": "v:2"}  # the documented plain syntax
    with pytest.raises(ValueError, match="expected key:value pairs"):
        parse_job_parameters("novalue")


def test_job_execution_result_has_pyflinks_methods():
    result = JobExecutionResult("job", JobID("00" * 16), 42)
    assert (str(result.get_job_id()), result.get_net_runtime(), result.get_accumulator_result("x"),
            result.get_all_accumulator_results(), result.get_job_name()) == ("00" * 16, 42, None, {}, "job")
    assert JobID.generate() != JobID.generate()


# pyflink.common's __all__ in PyFlink 2.3.
PYFLINK_COMMON = [
    "AssignerWithPeriodicWatermarksWrapper", "ByteArraySchema", "CompletableFuture", "ConfigOption", "ConfigOptions",
    "Configuration", "DeserializationSchema", "Duration", "Encoder", "ExecutionConfig", "InputDependencyConstraint",
    "Instant", "JobClient", "JobExecutionResult", "JobID", "JobStatus", "RestartStrategies",
    "RestartStrategyConfiguration", "Row", "RowKind", "SerializationSchema", "SimpleStringSchema", "Time",
    "TypeInformation", "TypeSerializer", "Types", "WatermarkStrategy"]


@pytest.mark.parametrize("name", PYFLINK_COMMON)
def test_every_pyflink_common_name_is_there_or_refused_by_name(name):
    if name in common.__all__:
        assert getattr(common, name) is not None
        return
    with pytest.raises(NotImplementedError, match=f"pyflink.common.{name} is not supported by changeflow: .+"):
        getattr(common, name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError):
        common.Nonsense  # noqa: B018
