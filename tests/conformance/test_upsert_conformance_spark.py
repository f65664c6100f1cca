"""Flink 2.3's upsert goldens end to end on Spark: INSERT ... ON CONFLICT into a primary-key print sink.

The same statements as ``conformance/record_flink_upsert.py`` ran under Flink, executed
by ``execute_sql`` on Spark (planner, streaming runtime of the materializer, print
sink); what the sink prints must be Flink's printed changelog, line for line.
One case per layout (a multiset strategy with an upsert key, ADAPTIVE without one
crossing its thresholds) keeps the Spark time small; the kernel-level test in
``test_upsert_conformance.py`` replays every golden.
"""

from __future__ import annotations

import csv
import json
import pathlib

import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment
from conformance.upsert_cases import DATA

pytestmark = pytest.mark.spark

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "upsert"


def flink_line(kind: str, values: list) -> str:
    return f"{kind}[{', '.join('null' if v is None else str(v) for v in values)}]"


@pytest.mark.parametrize("name", ["dedup_upsert_key_map", "dedup_no_upsert_key_adaptive"])
def test_print_sink_prints_flinks_upsert_changelog(spark, tmp_path, capsys, name):
    golden = json.loads((GOLDENS / f"{name}.json").read_text())
    for file, rows in DATA.items():
        with open(tmp_path / file, "w", newline="") as f:
            csv.writer(f).writerows(rows)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    for key, value in golden["config"].items():
        t_env.get_config().set(key, value)
    *ddl, insert = [s.replace("{tmp}", str(tmp_path)) for s in golden["statements"]]
    for statement in ddl:
        t_env.execute_sql(statement)
    capsys.readouterr()
    t_env.execute_sql(insert).wait()
    printed = [line for line in capsys.readouterr().out.splitlines() if line[:2] in ("+I", "-U", "+U", "-D")]
    assert printed == [flink_line(kind, values) for kind, values in golden["output"]]
