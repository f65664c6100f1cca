"""SET / RESET: keys and values checked by the configuration; ``SET`` lists (no Spark)."""

import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment


@pytest.fixture
def t_env():
    return TableEnvironment.create(EnvironmentSettings.in_streaming_mode())


def test_set_validates_and_stores_typed_values(t_env, capsys):
    t_env.execute_sql("SET 'table.exec.mini-batch.enabled' = 'true'").print()
    assert t_env.get_config().get("table.exec.mini-batch.enabled") == "true"
    with pytest.raises(ValueError, match="Invalid value 'yes' for configuration key 'table.exec.mini-batch.enabled'"):
        t_env.execute_sql("SET 'table.exec.mini-batch.enabled' = 'yes'")
    with pytest.raises(ValueError, match="Did you mean 'table.exec.mini-batch.enabled'"):
        t_env.execute_sql("SET 'table.exec.mini-batch.enable' = 'true'")
    t_env.execute_sql("SET 'table.exec.mini-batch.allow-latency' = '5000ms'")
    t_env.execute_sql("SET;").print()
    assert capsys.readouterr().out == """OK
+-------------------------------------+-------+
|                                 key | value |
+-------------------------------------+-------+
| table.exec.mini-batch.allow-latency |   5 s |
|       table.exec.mini-batch.enabled |  true |
+-------------------------------------+-------+
2 rows in set
"""


def test_reset_one_key_or_all_back_to_the_environment_settings(t_env):
    t_env.execute_sql("SET 'table.exec.mini-batch.enabled' = 'true'")
    t_env.execute_sql("SET 'table.exec.mini-batch.size' = '10'")
    t_env.execute_sql("RESET 'table.exec.mini-batch.size'")
    assert t_env.get_config().get("table.exec.mini-batch.size") is None
    assert t_env.get_config().get("table.exec.mini-batch.enabled") == "true"
    t_env.execute_sql("RESET")
    assert t_env.get_config().get_configuration().to_dict() == {}


def test_reset_keeps_what_the_environment_was_created_with():
    from changeflow.common.configuration import Configuration

    conf = Configuration().set("table.exec.mini-batch.size", "7")
    t_env = TableEnvironment.create(EnvironmentSettings.new_instance().with_configuration(conf).build())
    t_env.execute_sql("SET 'table.exec.mini-batch.size' = '10'")
    t_env.execute_sql("RESET")
    assert t_env.get_config().get("table.exec.mini-batch.size") == "7"
