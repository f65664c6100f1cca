"""Every Flink 2.3 configuration key is known (the list generated from Flink's jars), EXPLAIN names the
keys that have no effect on Spark, and a misspelt key still fails. No Spark here."""

import pytest

from changeflow.common import Configuration
from changeflow.config.flink_keys import IGNORED, UNSUPPORTED, flink_key, flink_options, no_effect_keys
from changeflow.config.options import check_key, lookup
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.table.expressions import col

CONFIG_KEYS = [o for o in flink_options() if o.scope == "config" and "<" not in o.key and ".#." not in o.key]


def test_the_generated_list_holds_flinks_keys_with_their_old_spellings():
    keys = {o.key: o for o in flink_options()}
    assert len(CONFIG_KEYS) > 1000
    assert keys["table.optimizer.distinct-agg.split.enabled"].default == "false"
    assert keys["table.optimizer.distinct-agg.split.bucket-num"].default == "1024"
    assert keys["taskmanager.numberOfTaskSlots"].declared_in == "org.apache.flink.configuration.TaskManagerOptions"
    # a deprecated spelling points at the key Flink reads it as
    assert keys["state.checkpoints.dir"].kind == "deprecated"
    assert keys["state.checkpoints.dir"].primary == "execution.checkpointing.dir"
    # WITH-clause options of connectors and formats are listed, but not as configuration keys
    assert keys["sink.parallelism"].scope == "other"


def test_every_flink_configuration_key_is_known():
    for option in CONFIG_KEYS:
        key = option.key.lower()
        assert lookup(key) is not None or flink_key(key) is not None, option.key
        check_key(option.key)  # reading it is never an error


def test_every_ignored_key_is_accepted_with_any_value_and_kept():
    for key in IGNORED:
        assert Configuration().set(key, "x").get_string(key, "") == "x"


def test_keys_changeflow_acts_on_still_parse_their_values():
    with pytest.raises(ValueError, match="table.exec.mini-batch.enabled"):
        Configuration().set("table.exec.mini-batch.enabled", "maybe")
    assert "table.exec.mini-batch.enabled" not in IGNORED


def test_deprecated_spellings_of_refused_keys_are_refused_too():
    assert "state.savepoints.dir" not in IGNORED
    with pytest.raises(ValueError, match="state.savepoints.dir"):
        Configuration().set("state.savepoints.dir", "file:///sp")
    assert not set(IGNORED) & set(UNSUPPORTED)


def test_unlisted_plugin_keys_under_flink_namespaces_stay_accepted():
    for key in ("metrics.reporter.prom.port", "metrics.reporter.prom.factory.class", "state.backend.custom.thing"):
        assert Configuration().set(key, "1").get_string(key, "") == "1"


def test_template_keys_accept_any_name_in_the_placeholder():
    assert flink_key("flink.hadoop.fs.s3a.access.key").primary == "flink.hadoop.<key>"
    conf = Configuration().set("external-resource.gpu.amount", "2")
    assert conf.get_string("external-resource.gpu.amount", "") == "2"


@pytest.mark.parametrize(("typo", "meant"), [
    ("table.optimizer.distinct-agg.split.enable", "table.optimizer.distinct-agg.split.enabled"),
    ("table.exec.async-lookup.buffer-capacty", "table.exec.async-lookup.buffer-capacity"),
    ("pipeline.operator-chaining.enable", "pipeline.operator-chaining.enabled"),
    # under Flink-only namespaces too, now that every Flink key is listed
    ("taskmanager.numberOfTaskSlot", "taskmanager.numberoftaskslots"),
    ("state.backend.typ", "state.backend.type"),
    ("rest.bind-prot", "rest.bind-port"),
])
def test_a_misspelt_key_still_fails_naming_the_closest(typo, meant):
    with pytest.raises(ValueError, match=f"Did you mean '{meant}'"):
        Configuration().set(typo, "true")


def test_no_effect_keys_names_only_set_flink_keys_changeflow_never_reads():
    # table.optimizer.distinct-agg.split.enabled was the example here until changeflow implemented it.
    keys = ["table.optimizer.join-reorder-enabled", "table.exec.mini-batch.enabled", "my.key",
            "taskmanager.numberOfTaskSlots", "table.local-time-zone", "table.optimizer.distinct-agg.split.enabled"]
    assert no_effect_keys(keys) == ["table.optimizer.join-reorder-enabled", "taskmanager.numberOfTaskSlots"]


def test_explain_says_which_keys_have_no_effect_on_spark():
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.optimizer.join-reorder-enabled", "true")
    env.get_config().set("pipeline.object-reuse", "true")
    env.get_config().set("table.exec.mini-batch.enabled", "false")
    table = env.from_elements([(1, "a")], ["k", "s"])
    lines = table.group_by(col('k')).select(col('k'), col('s').count.distinct).explain().splitlines()
    assert lines[-2:] == ["== Configuration ==",
                          "Flink keys set with no effect on Spark (accepted, not read): "
                          "pipeline.object-reuse, table.optimizer.join-reorder-enabled"]


def test_explain_without_such_keys_has_no_configuration_section():
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    assert "== Configuration ==" not in env.from_elements([(1,)], ["k"]).explain()
