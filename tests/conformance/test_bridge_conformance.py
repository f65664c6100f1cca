"""Table <-> DataStream conversions against PyFlink 2.3's recorded output (conformance/goldens/bridge).

Each case runs in a ``StreamTableEnvironment`` on a ``StreamExecutionEnvironment``
of the case's mode; its DataStream is collected with ``execute_and_collect()``,
its Table with ``execute().collect()``, as the recorder did under Flink.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from types import SimpleNamespace

import pytest

from conformance import bridge_cases
from conformance.bridge_cases import CASES
from conformance.record_flink_bridge import GOLDEN_DIR, encode


def _api():
    from changeflow.common import Row, RowKind, Types
    from changeflow.table import ChangelogMode, DataTypes, Schema
    from changeflow.table.expressions import col, lit

    return SimpleNamespace(Types=Types, Row=Row, RowKind=RowKind, DataTypes=DataTypes, Schema=Schema,
                           ChangelogMode=ChangelogMode, col=col, lit=lit)


def _golden(name):
    with open(os.path.join(GOLDEN_DIR, f"{name}.json")) as f:
        return json.load(f)


def _run(spark, name):
    from pyspark import cloudpickle

    from changeflow.common import Configuration
    from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    from changeflow.table import StreamTableEnvironment

    cloudpickle.register_pickle_by_value(bridge_cases)  # Spark's workers cannot import the cases module
    c = CASES[name]
    conf = Configuration()
    conf.set_string("changeflow.state.buckets", "2")
    conf.set_string("changeflow.source.rows-per-batch", "2")  # several micro-batches per source
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH if c.mode == "batch" else RuntimeExecutionMode.STREAMING)
    t_env = StreamTableEnvironment.create(env)
    result = c.program(env, t_env, _api())
    if hasattr(result, "execute_and_collect"):
        return "stream", [encode(r) for r in result.execute_and_collect()]
    with result.execute().collect() as rows:
        return "table", [encode(r) for r in rows]


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_flink(name, spark):
    golden = _golden(name)
    if golden["result"] == "error":
        with pytest.raises(Exception, match=golden["error"]):
            _run(spark, name)
        return
    kind, got = _run(spark, name)
    assert kind == golden["result"]
    expected = golden["records"]
    if golden["ordered"]:
        assert got == expected
    else:
        key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
        assert Counter(map(key, got)) == Counter(map(key, expected))
