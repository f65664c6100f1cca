"""changeflow.common.configuration.Configuration: PyFlink's methods plus typed get/set."""

import copy
import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from changeflow.common.configuration import Configuration
from changeflow.config import (
    TABLE_EXEC_MINI_BATCH_ENABLED,
    TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_TYPE,
    ConfigOption,
    OptionType,
    options,
    register,
    registered_options,
    validate_mini_batch,
)

STRATEGY = "table.exec.sink.upsert-materialize-strategy.type"
STRATEGY_ALIAS = "table.exec.sink.upsert-materialize.strategy"


def test_unset_keys_give_their_defaults():
    conf = Configuration()
    for option in registered_options():
        assert conf.get(option.key) == option.default
        assert conf.get_option(option) == option.default
    assert conf.keys() == set()
    assert conf.to_dict() == {}


def test_set_returns_self_and_get_returns_typed_values():
    conf = Configuration()
    assert conf.set("table.exec.mini-batch.enabled", "true") is conf
    conf.set("table.exec.mini-batch.allow-latency", "5 s").set("table.exec.mini-batch.size", "5000")
    assert conf.get("table.exec.mini-batch.enabled") is True
    assert conf.get("table.exec.mini-batch.allow-latency") == datetime.timedelta(seconds=5)
    assert conf.get("table.exec.mini-batch.size") == 5000
    assert conf.to_dict() == {
        "table.exec.mini-batch.enabled": "true",
        "table.exec.mini-batch.allow-latency": "5 s",
        "table.exec.mini-batch.size": "5000",
    }


def test_set_takes_an_option_object_too():
    conf = Configuration().set(TABLE_EXEC_MINI_BATCH_ENABLED, True)
    assert conf.get(TABLE_EXEC_MINI_BATCH_ENABLED) is True
    assert conf.get_option(TABLE_EXEC_MINI_BATCH_ENABLED) is True


def test_get_default_argument():
    conf = Configuration()
    # An explicit default beats the option's, and is parsed like a set value.
    assert conf.get("parallelism.default", 3) == 3
    assert conf.get("table.exec.state.ttl", "1 h") == datetime.timedelta(hours=1)
    # Once set, the value wins over any default.
    conf.set("parallelism.default", 2)
    assert conf.get("parallelism.default", 3) == 2
    assert conf.get("some.free.key", "fallback") == "fallback"


def test_values_are_validated_when_set():
    conf = Configuration()
    with pytest.raises(ValueError) as error:
        conf.set("execution.runtime-mode", "streamed")
    message = str(error.value)
    assert "'execution.runtime-mode'" in message
    assert "'streamed'" in message
    assert "STREAMING, BATCH, AUTOMATIC" in message
    assert not conf.contains_key("execution.runtime-mode")


def test_unknown_keys_under_checked_prefixes_are_rejected_with_a_suggestion():
    conf = Configuration()
    with pytest.raises(ValueError, match=r"Did you mean 'table\.exec\.mini-batch\.enabled'\?"):
        conf.set_string("table.exec.mini-batch.enable", "true")
    with pytest.raises(ValueError, match="Unknown configuration key 'execution.runtime_mode'"):
        conf.set("execution.runtime_mode", "BATCH")
    with pytest.raises(ValueError, match="Unknown configuration key"):
        conf.get("table.exec.mini-batch.enable")
    assert conf.keys() == set()


def test_pyflink_getters_do_not_fail_on_unknown_keys():
    # PyFlink's getters return the default for any key that is not set.
    conf = Configuration()
    assert conf.get_string("pipeline.name", "job") == "job"
    assert conf.get_integer("table.exec.nope", 7) == 7
    assert conf.get_boolean("table.exec.nope", True) is True
    assert conf.get_float("table.exec.nope", 0.5) == 0.5
    assert conf.contains_key("table.exec.nope") is False
    assert conf.remove_config("table.exec.nope") is False


def test_spark_and_other_keys_pass_through_as_strings():
    conf = Configuration()
    conf.set("spark.sql.shuffle.partitions", 4)
    conf.set("spark.sql.adaptive.enabled", False)
    conf.set("spark.anything.at.all", "whatever value")
    conf.set("connector.my-source.path", "/data")
    conf.set("Spark.Odd.Case", "kept")
    assert conf.get("spark.sql.shuffle.partitions") == "4"
    assert conf.get("spark.sql.adaptive.enabled") == "false"
    assert conf.get_integer("spark.sql.shuffle.partitions", 200) == 4
    assert conf.get_boolean("spark.sql.adaptive.enabled", True) is False
    assert conf.to_dict() == {
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.adaptive.enabled": "false",
        "spark.anything.at.all": "whatever value",
        "connector.my-source.path": "/data",
        "Spark.Odd.Case": "kept",
    }


def test_a_free_key_cannot_be_set_to_none():
    with pytest.raises(ValueError, match="'spark.x' cannot be set to None"):
        Configuration().set("spark.x", None)
    with pytest.raises(ValueError, match="cannot be set to None"):
        Configuration().set("table.exec.state.ttl", None)


# ----------------------------------------------------------------------------------------
#  Aliases.
# ----------------------------------------------------------------------------------------


def test_an_alias_is_stored_under_the_primary_key():
    conf = Configuration().set(STRATEGY_ALIAS, "map")
    assert conf.keys() == {STRATEGY}
    assert conf.to_dict() == {STRATEGY: "MAP"}
    assert conf.get(STRATEGY) == conf.get(STRATEGY_ALIAS) == "MAP"
    assert conf.get_string(STRATEGY_ALIAS, "") == "MAP"
    assert conf.contains_key(STRATEGY_ALIAS) and conf.contains_key(STRATEGY)
    assert conf.get_option(TABLE_EXEC_SINK_UPSERT_MATERIALIZE_STRATEGY_TYPE) == "MAP"


def test_the_last_write_wins_across_alias_and_primary():
    conf = Configuration().set(STRATEGY, "VALUE").set(STRATEGY_ALIAS, "LEGACY")
    assert conf.get(STRATEGY) == "LEGACY"
    conf.set(STRATEGY, "ADAPTIVE")
    assert conf.get(STRATEGY_ALIAS) == "ADAPTIVE"


def test_removing_through_an_alias():
    conf = Configuration().set(STRATEGY, "MAP")
    assert conf.remove_config(STRATEGY_ALIAS) is True
    assert conf.remove_config(STRATEGY) is False
    assert conf.get(STRATEGY) == "LEGACY"


# ----------------------------------------------------------------------------------------
#  PyFlink-style typed getters and setters.
# ----------------------------------------------------------------------------------------


def test_set_string_get_string_normalizes():
    conf = Configuration()
    conf.set_string("table.exec.mini-batch.allow-latency", "5000ms")
    conf.set_string("table.exec.mini-batch.enabled", "TRUE")
    conf.set_string("execution.runtime-mode", "batch")
    assert conf.get_string("table.exec.mini-batch.allow-latency", "") == "5 s"
    assert conf.get_string("table.exec.mini-batch.enabled", "") == "true"
    assert conf.get_string("execution.runtime-mode", "") == "BATCH"
    assert conf.get_string("table.exec.state.ttl", "unset") == "unset"


def test_integer_getters_and_setters():
    conf = Configuration()
    assert conf.get_integer("parallelism.default", 5) == 5  # PyFlink: default_value when unset
    assert conf.set_integer("parallelism.default", 3) is conf
    assert conf.get_integer("parallelism.default", 5) == 3
    assert conf.get_string("parallelism.default", "") == "3"
    conf.set_integer("table.exec.mini-batch.allow-latency", 250)  # a bare number is ms
    assert conf.get("table.exec.mini-batch.allow-latency") == datetime.timedelta(milliseconds=250)
    with pytest.raises(ValueError, match="'table.exec.mini-batch.allow-latency'.*an integer"):
        conf.get_integer("table.exec.mini-batch.allow-latency", 0)
    with pytest.raises(ValueError, match="Invalid value 1 for configuration key"):
        conf.set_integer("table.exec.mini-batch.enabled", 1)


def test_boolean_getters_and_setters():
    conf = Configuration()
    assert conf.get_boolean("table.exec.sink.require-on-conflict", False) is False
    conf.set_boolean("table.exec.sink.require-on-conflict", False)
    assert conf.get_boolean("table.exec.sink.require-on-conflict", True) is False
    conf.set_string("my.flag", "True")
    assert conf.get_boolean("my.flag", False) is True
    conf.set_string("my.flag", "yes")
    with pytest.raises(ValueError, match="'my.flag'.*true or false"):
        conf.get_boolean("my.flag", False)


def test_float_getters_and_setters():
    conf = Configuration()
    conf.set_float("my.ratio", 0.25)
    assert conf.get_float("my.ratio", 1.0) == 0.25
    assert conf.get_string("my.ratio", "") == "0.25"
    conf.set_integer("parallelism.default", 4)
    assert conf.get_float("parallelism.default", 0.0) == 4.0
    with pytest.raises(ValueError, match="Invalid value 0.5 for configuration key 'parallelism"):
        conf.set_float("parallelism.default", 0.5)


@pytest.mark.parametrize(
    ("method", "value"),
    [("set_string", 5), ("set_integer", "5"), ("set_integer", True), ("set_integer", 5.0),
     ("set_boolean", "true"), ("set_boolean", 1), ("set_float", "0.5"), ("set_float", False)],
)
def test_typed_setters_check_the_python_type(method, value):
    with pytest.raises(TypeError, match=method):
        getattr(Configuration(), method)("my.key", value)


# ----------------------------------------------------------------------------------------
#  Whole-map operations.
# ----------------------------------------------------------------------------------------


def test_keys_contains_remove():
    conf = Configuration().set("parallelism.default", 2).set("spark.x", "y")
    assert conf.keys() == {"parallelism.default", "spark.x"}
    assert conf.contains_key("spark.x")
    assert conf.remove_config("spark.x") is True
    assert conf.remove_config("spark.x") is False
    assert conf.keys() == {"parallelism.default"}


def test_add_all_and_add_all_to_dict():
    source = Configuration().set("table.exec.state.ttl", "1 h").set("spark.x", "1")
    target = Configuration().set("spark.x", "0").set("parallelism.default", 2)
    assert target.add_all(source) is target
    assert target.to_dict() == {
        "spark.x": "1",
        "parallelism.default": "2",
        "table.exec.state.ttl": "1 h",
    }
    assert target.get("table.exec.state.ttl") == datetime.timedelta(hours=1)
    out = {"other": "kept"}
    source.add_all_to_dict(out)
    assert out == {"other": "kept", "table.exec.state.ttl": "1 h", "spark.x": "1"}


def test_add_all_with_a_prefix_checks_the_prefixed_keys():
    source = Configuration().set("enabled", "true").set("size", "100")
    target = Configuration().add_all(source, prefix="table.exec.mini-batch.")
    assert target.get("table.exec.mini-batch.enabled") is True
    assert target.get("table.exec.mini-batch.size") == 100
    with pytest.raises(ValueError, match="Unknown configuration key 'table.exec.enabled'"):
        Configuration().add_all(source, prefix="table.exec.")
    with pytest.raises(TypeError):
        Configuration().add_all({"a": "b"})


def test_copies_are_independent_and_equal():
    conf = Configuration().set("parallelism.default", 2)
    for clone in (Configuration(conf), copy.copy(conf), copy.deepcopy(conf)):
        assert clone == conf and clone is not conf
        clone.set("parallelism.default", 3)
        assert conf.get("parallelism.default") == 2
        assert clone != conf


def test_equality_compares_normalized_values():
    assert Configuration().set("execution.runtime-mode", "batch") == Configuration().set(
        "execution.runtime-mode", "BATCH"
    )
    assert Configuration().set(STRATEGY_ALIAS, "MAP") == Configuration().set(STRATEGY, "map")
    assert Configuration() != {"a": "b"}


def test_repr_shows_the_string_map():
    assert repr(Configuration().set("table.exec.state.ttl", 60000)) == (
        "Configuration({'table.exec.state.ttl': '1 min'})"
    )


def test_get_option_reads_a_string_stored_before_its_option_was_registered(monkeypatch):
    monkeypatch.setattr(options, "_BY_KEY", dict(options._BY_KEY))
    conf = Configuration().set("plugin.retries", "3")
    option = register(ConfigOption("plugin.retries", OptionType.INT, 1))
    assert conf.get_option(option) == 3
    assert conf.get("plugin.retries") == 3


# ----------------------------------------------------------------------------------------
#  Mini-batch keys checked together.
# ----------------------------------------------------------------------------------------


def test_mini_batch_off_needs_nothing():
    validate_mini_batch(Configuration())


def test_mini_batch_on_needs_a_positive_latency_and_size():
    conf = Configuration().set("table.exec.mini-batch.enabled", True)
    with pytest.raises(ValueError) as error:
        validate_mini_batch(conf)
    message = str(error.value)
    assert "table.exec.mini-batch.allow-latency must be greater than 0 ms (it is 0 ms)" in message
    assert "table.exec.mini-batch.size must be > 0 (it is -1)" in message
    conf.set("table.exec.mini-batch.allow-latency", "5 s")
    with pytest.raises(ValueError, match="size must be > 0") as error:
        validate_mini_batch(conf)
    assert "allow-latency" not in str(error.value)
    conf.set("table.exec.mini-batch.size", 5000)
    validate_mini_batch(conf)


# ----------------------------------------------------------------------------------------
#  Properties.
# ----------------------------------------------------------------------------------------


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_any_long_round_trips(size):
    conf = Configuration().set("table.exec.mini-batch.size", str(size))
    assert conf.get("table.exec.mini-batch.size") == size
    assert conf.get_string("table.exec.mini-batch.size", "") == str(size)


@given(st.timedeltas(min_value=datetime.timedelta(0)))
def test_any_duration_round_trips_through_its_string(duration):
    conf = Configuration().set("table.exec.state.ttl", duration)
    text = conf.get_string("table.exec.state.ttl", "")
    assert Configuration().set_string("table.exec.state.ttl", text) == conf


@given(st.sampled_from(["STREAMING", "BATCH", "AUTOMATIC"]), st.data())
def test_enum_values_in_any_case(mode, data):
    spelled = "".join(
        c.upper() if data.draw(st.booleans()) else c.lower() for c in mode
    )
    assert Configuration().set("execution.runtime-mode", spelled).get("execution.runtime-mode") == mode
