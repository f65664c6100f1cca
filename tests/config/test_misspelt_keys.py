"""Misspelt keys outside the checked prefixes, Flink's other keys, and every path that sets a key.

Issue "Nothing lost, nothing wrong": ``tabel.exec.mini-batch.enabled`` and an unprefixed
``mini-batch.enabled`` were accepted silently. No Spark here.
"""

import pytest

from changeflow.common import Configuration
from changeflow.config.flink_keys import IGNORED, UNSUPPORTED, flink_key
from changeflow.config.options import check_key, misspelling_of, registered_options
from changeflow.datastream import StreamExecutionEnvironment
from changeflow.table import EnvironmentSettings, TableEnvironment

MINI_BATCH = "table.exec.mini-batch.enabled"


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("tabel.exec.mini-batch.enabled", MINI_BATCH),  # a transposition in the namespace
        ("mini-batch.enabled", MINI_BATCH),  # the tail of a known key
        ("exec.mini-batch.enabled", MINI_BATCH),
        ("Mini-Batch.Enabled", MINI_BATCH),
        ("state.ttl", "table.exec.state.ttl"),  # a tail, even under Flink's state.* namespace
        ("max-flush-interval", "execution.max-flush-interval"),  # one hyphenated part
        ("checkpoint-dir", "changeflow.checkpoint-dir"),
        ("paralellism.default", "parallelism.default"),
        ("pipline.name", "pipeline.name"),
        ("exection.runtime-mode", "execution.runtime-mode"),
        ("changeflw.state.buckets", "changeflow.state.buckets"),
        ("taskmanger.memory.process.size", "taskmanager.memory.process.size"),
        ("sprak.sql.shuffle.partitions", "spark.sql.shuffle.partitions"),
    ],
)
def test_a_misspelt_key_is_an_error_naming_it_and_the_key_meant(typo, meant):
    with pytest.raises(ValueError) as error:
        Configuration().set(typo, "true")
    message = str(error.value)
    assert f"Unknown configuration key {typo!r}" in message
    assert f"Did you mean {meant!r}?" in message
    assert misspelling_of(typo)[0] == meant


def test_a_misspelt_flink_key_under_a_checked_prefix_suggests_the_flink_key():
    with pytest.raises(ValueError, match=r"Unknown configuration key 'pipeline.auto-watermark-intervall'\. "
                                         r"Did you mean 'pipeline.auto-watermark-interval'\?"):
        Configuration().set("pipeline.auto-watermark-intervall", "1 s")


@pytest.mark.parametrize(
    "key",
    [
        # Flink's keys from other namespaces, and changeflow's and Spark's, stay accepted.
        "pipeline.auto-watermark-interval", "pipeline.max-parallelism", "pipeline.object-reuse",
        "parallelism.default", "state.backend.type", "state.backend.incremental", "python.executable",
        "python.fn-execution.bundle.time", "taskmanager.numberOfTaskSlots", "taskmanager.memory.process.size",
        "jobmanager.memory.process.size", "rest.port", "restart-strategy.type",
        "restart-strategy.fixed-delay.attempts", "execution.checkpointing.interval", "execution.buffer-timeout",
        "high-availability.storageDir", "metrics.reporters", "table.exec.resource.default-parallelism",
        "table.optimizer.join-reorder-enabled", "spark.sql.shuffle.partitions", "spark.sql.shuffle.partition",
        # and free keys that look like nothing known: user and connector keys
        "my.own.key", "connector", "sink.parallelism", "other", "test.port", "app.threshold",
        "mycompany.feature.enabled",
    ],
)
def test_real_flink_spark_and_free_keys_are_accepted(key):
    conf = Configuration().set(key, "1")
    assert conf.get_string(key, "") == "1" or check_key(key) is not None


def test_a_flink_key_that_would_change_results_is_refused_unless_flinks_default():
    conf = Configuration()
    conf.set("table.exec.source.idle-timeout", "0 ms").set("table.local-time-zone", "default")
    assert conf.get("table.exec.source.idle-timeout") == "0 ms"
    with pytest.raises(ValueError) as error:
        conf.set("table.exec.source.idle-timeout", "5 s")
    message = str(error.value)
    assert "'table.exec.source.idle-timeout' is a Flink key changeflow does not implement" in message
    assert "'5 s'" in message and "only Flink's default '0 ms' is accepted" in message
    conf.set("table.local-time-zone", "Europe/Berlin")  # computed in the zone (plan/time_zone.py), not refused
    with pytest.raises(ValueError, match="Set changeflow.checkpoint-dir"):
        conf.set("state.checkpoints.dir", "file:///tmp/cp")
    with pytest.raises(ValueError, match="changeflow accepts no value for it"):
        conf.set("execution.savepoint.path", "/sp/1")


def test_reading_a_refused_flink_key_is_allowed():
    # Only setting is checked against Flink's default; a getter returns what is set (nothing).
    assert Configuration().get("table.local-time-zone") is None


def test_the_catalog_does_not_shadow_registered_keys():
    registered = {o.key for o in registered_options()} | {k for o in registered_options() for k in o.fallback_keys}
    assert not registered & set(IGNORED)
    assert not registered & set(UNSUPPORTED)
    assert flink_key(MINI_BATCH) is None


def test_no_catalog_key_is_taken_for_a_misspelling_of_another():
    # Every listed Flink key is accepted as itself, not flagged as close to another one.
    for key in list(IGNORED) + list(UNSUPPORTED):
        assert misspelling_of(key) == [], key


# ----------------------------------------------------------------------------------------
#  Every path that takes a key checks it.
# ----------------------------------------------------------------------------------------

TYPO = "tabel.exec.mini-batch.enabled"
DID_YOU_MEAN = r"Did you mean 'table\.exec\.mini-batch\.enabled'\?"


def test_configuration_setters_check_the_key():
    for setter, value in (("set", "true"), ("set_string", "true"), ("set_boolean", True),
                          ("set_integer", 1), ("set_float", 1.0)):
        with pytest.raises(ValueError, match=DID_YOU_MEAN):
            getattr(Configuration(), setter)(TYPO, value)
    with pytest.raises(ValueError, match=DID_YOU_MEAN):
        Configuration().add_all(Configuration().set("enabled", "true"), prefix="tabel.exec.mini-batch.")


def test_table_config_set_checks_the_key():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    with pytest.raises(ValueError, match=DID_YOU_MEAN):
        t_env.get_config().set(TYPO, "true")
    with pytest.raises(ValueError, match=DID_YOU_MEAN):
        t_env.get_config().set("mini-batch.enabled", "true")
    assert t_env.get_config().get_configuration().to_dict() == {}


def test_sql_set_checks_the_key():
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    with pytest.raises(ValueError, match=DID_YOU_MEAN):
        t_env.execute_sql(f"SET '{TYPO}' = 'true'")
    with pytest.raises(ValueError, match=DID_YOU_MEAN):
        t_env.execute_sql("SET 'mini-batch.enabled' = 'true'")
    t_env.execute_sql("SET 'pipeline.auto-watermark-interval' = '1 s'")
    assert t_env.get_config().get("pipeline.auto-watermark-interval") == "1 s"


def test_stream_environment_configuration_checks_the_key():
    with pytest.raises(ValueError, match=DID_YOU_MEAN):
        StreamExecutionEnvironment.get_execution_environment(Configuration().set_string(TYPO, "true"))
    env = StreamExecutionEnvironment.get_execution_environment(
        Configuration().set_string("taskmanager.numberOfTaskSlots", "4"))
    assert env.get_config().get_string("taskmanager.numberOfTaskSlots", "") == "4"
    with pytest.raises(ValueError, match=DID_YOU_MEAN):
        env.get_config().set_string("mini-batch.enabled", "true")
    with pytest.raises(ValueError, match=DID_YOU_MEAN):
        env.configure(_unchecked({TYPO: "true"}))


def test_a_configuration_built_from_a_dict_checks_every_key():
    with pytest.raises(ValueError, match=DID_YOU_MEAN):
        StreamExecutionEnvironment.get_execution_environment({TYPO: "true"})
    env = StreamExecutionEnvironment.get_execution_environment({"execution.runtime-mode": "batch"})
    assert env.get_config().get("execution.runtime-mode") == "BATCH"
    with pytest.raises(TypeError, match="takes a Configuration or a dict, got list"):
        Configuration([(TYPO, "true")])


def test_environment_settings_configuration_checks_the_key():
    with pytest.raises(ValueError, match=DID_YOU_MEAN):
        EnvironmentSettings.new_instance().with_configuration(Configuration().set(TYPO, "true"))


def _unchecked(values: dict) -> Configuration:
    # A Configuration whose keys were never checked (built around the setters), to show that
    # configure() checks every key it copies.
    conf = Configuration()
    conf._values.update(values)
    return conf
