"""Shipping changeflow to the executors (runtime/spark/shipping.py) and changeflow.ship-package.

The shipped zip running on executors without changeflow is tested on a real
standalone cluster in tests/cluster.
"""

from __future__ import annotations

import os
import zipfile

import pytest

from changeflow.connectors import filestore


def test_the_package_zip_holds_every_module_as_a_package(tmp_path):
    import changeflow
    from changeflow.runtime.spark import shipping

    path = shipping.package_zip()
    assert shipping.package_zip() == path  # built once per process
    names = set(zipfile.ZipFile(path).namelist())
    root = os.path.dirname(changeflow.__file__)
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        relative = os.path.relpath(directory, os.path.dirname(root))
        for f in files:
            if f.endswith(".py"):
                assert os.path.join(relative, f) in names
                assert os.path.join(relative, "__init__.py") in names  # zipimport has no namespace packages
    assert not any("__pycache__" in n for n in names)


def test_ship_package_is_an_option():
    from changeflow.common import Configuration

    conf = Configuration()
    assert conf.get("changeflow.ship-package") is True
    conf.set_string("changeflow.ship-package", "false")
    assert conf.get("changeflow.ship-package") is False
    with pytest.raises(ValueError, match="changeflow.ship-package"):
        conf.set_string("changeflow.ship-package", "sometimes")


@pytest.mark.spark
def test_a_local_session_ships_nothing_and_serves_hadoop_schemes(spark, monkeypatch):
    from changeflow.runtime.spark import shipping
    from changeflow.runtime.spark.connectors.hadoop_store import HadoopFileStore

    added = []
    monkeypatch.setattr(type(spark.sparkContext), "addPyFile", lambda self, path: added.append(path))
    shipping.prepare(spark)
    assert added == []  # local[...]: the executors are the driver's threads
    assert isinstance(filestore.store_for("hdfs://nn:8020/x"), HadoopFileStore)
    assert filestore.store_for("file:///x") is filestore.LOCAL


@pytest.mark.spark
@pytest.mark.parametrize("value", [True, False])
def test_environments_pass_ship_package_to_the_session(spark, monkeypatch, value):
    from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    from changeflow.common import Configuration
    from changeflow.runtime.spark import shipping
    from changeflow.table import EnvironmentSettings, TableEnvironment

    calls = []
    monkeypatch.setattr(shipping, "prepare", lambda session, ship=True: calls.append(ship))
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.ship-package", str(value).lower())
    t_env.from_elements([(1,)], ["n"]).execute().collect()
    conf = Configuration()
    conf.set_string("changeflow.ship-package", str(value).lower())
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    assert list(env.from_collection([1, 2]).execute_and_collect()) == [1, 2]
    assert calls == [value, value]
