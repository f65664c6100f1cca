"""changeflow's own session carries its checkpoint settings, also for queries a user starts over to_spark()."""

import os
import sys

import pytest

from changeflow.runtime.spark.query_start import CHECKPOINT_SETTINGS


def test_changeflow_session_retains_few_micro_batches(spark):
    # A paged operator rewrites about its whole state per micro-batch: Spark's 100 retained
    # micro-batches made a checkpoint 30-120x the live state.
    for key, value in CHECKPOINT_SETTINGS.items():
        assert spark.conf.get(key) == value


def test_a_local_changeflow_session_forks_sparks_python_processes_from_a_warm_server(spark):
    # Spark runs `<pythonExec> -m pyspark.daemon`; the workers it forks come from the fork server, which
    # imported pandas before anything asked (a new interpreter running pyspark.worker has not).
    assert os.path.basename(spark.sparkContext.pythonExec) == "python-launcher"
    seen = spark.sparkContext.parallelize([0], 1).map(lambda _: ("pandas" in sys.modules, sys.executable)).collect()
    assert seen == [(True, sys.executable)]


@pytest.mark.parametrize("value", ["true", "false"])
def test_environments_pass_warm_python_to_the_session(monkeypatch, value):
    from changeflow.common import Configuration
    from changeflow.runtime.spark import engine, session

    calls = []
    monkeypatch.setattr(session, "get_or_create", lambda master, **kwargs: calls.append(kwargs["warm"]))
    conf = Configuration()
    conf.set_string("changeflow.spark.warm-python", value)
    engine.SparkEngine(conf).session()
    assert calls == [value == "true"]
