"""The sink upsert materializer against Flink 2.3's goldens (``conformance/goldens/upsert``), without Spark.

Each golden (recorded by ``conformance/record_flink_upsert.py``) holds Flink's verdict
on an ``INSERT ... [ON CONFLICT ...]`` into a print sink with a primary key, the
query's own changelog (``input``) and what the sink printed (``output``).

* Planning: changeflow rejects what Flink rejects (naming the construct, and at
  Flink's line and column for a parse error), accepts what Flink accepts, puts a
  materializer exactly where Flink runs a ``SinkMaterializer``, and prints the
  sink's ``upsertMaterialize`` / ``conflictStrategy`` attributes as Flink does.
* Output: the materializer kernel, configured from changeflow's plan, fed Flink's
  recorded input in one batch, emits Flink's output: exactly for DO DEDUPLICATE (per
  record; input order at parallelism 1), as the final upsert table for DO NOTHING /
  DO ERROR (Flink compacts on watermarks, changeflow at micro-batch boundaries), and
  a DO ERROR conflict fails in both. Without a materializer the sink prints the
  query's changelog unchanged. End to end on Spark this needs the streaming runtime
  of the materializer (a separate module).
"""

from __future__ import annotations

import csv
import json
import pathlib
import re

import pytest

from changeflow.kernels.materializer import SinkUpsertMaterializer
from changeflow.plan.nodes import UpsertMaterialize
from changeflow.plan.type_inference import PlanError
from changeflow.sql.ddl import Cursor
from changeflow.sql.statements import insert_plan, statement_tokens
from changeflow.table import EnvironmentSettings, TableEnvironment
from changeflow.testing.harness import KernelHarness, row_of_kind
from conformance.upsert_cases import CASES, DATA, TABLES
from tests.kernels.materializer_reference import upsert_materialize

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "upsert"
NAMES = sorted(p.stem for p in GOLDENS.glob("*.json"))


def golden(name):
    return json.loads((GOLDENS / f"{name}.json").read_text())


def plan(case, tmp_path, spark=None):
    """The case's tables and configuration in a new environment, and its INSERT planned there."""
    for file, rows in DATA.items():
        with open(tmp_path / file, "w", newline="") as f:
            csv.writer(f).writerows(rows)
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode() if case.mode == "batch"
                                    else EnvironmentSettings.in_streaming_mode(), spark_session=spark)
    for key, value in case.config.items():
        t_env.get_config().set(key, value)
    for table in case.tables:
        t_env.execute_sql(TABLES[table].replace("{tmp}", str(tmp_path)))
    sink = insert_plan(t_env._planning, case.insert, Cursor(case.insert, statement_tokens(case.insert)))
    return t_env, sink


def test_every_case_has_a_golden():
    assert sorted(CASES) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_planning_matches_flink(name, tmp_path):
    case, g = CASES[name], golden(name)
    flink = g["plan"]
    if "error" in flink:
        with pytest.raises(PlanError) as error:
            plan(case, tmp_path)
        message = str(error.value)
        for mention in case.error_mentions:
            assert mention.lower() in message.lower(), f"{mention!r} not in {message!r}"
        where = re.search(r"line \d+, column \d+", flink["error"]["message"])
        if where:
            assert where.group(0) in message
        return
    t_env, sink = plan(case, tmp_path)
    assert isinstance(sink.input, UpsertMaterialize) == flink["materializer"]
    ours = t_env._explain(sink).splitlines()[1]
    assert _upsert_attributes(ours) == _upsert_attributes(flink["sink"])


def _upsert_attributes(sink_line: str) -> list[str]:
    """The sink attributes Flink and changeflow both print (the field names differ: Flink shows the query's)."""
    return re.findall(r"(?:upsertMaterialize|conflictStrategy|changelogMode)=\[[^\]]*\]", sink_line)


RUNS = [n for n in NAMES if "input" in golden(n)]


@pytest.mark.parametrize("name", RUNS)
def test_materializer_kernel_replays_flinks_output(name, tmp_path):
    case, g = CASES[name], golden(name)
    _, sink = plan(case, tmp_path)
    columns = sink.field_names
    records = [row_of_kind(kind, *values) for kind, values in g["input"]]
    node = sink.input
    if not isinstance(node, UpsertMaterialize):
        # No materializer: the sink prints the query's changelog as it comes.
        assert g["output"] == g["input"]
        return
    kernel = SinkUpsertMaterializer(list(node.primary_key), columns, upsert_key=node.upsert_key,
                                    strategy=node.strategy, conflict=node.conflict,
                                    threshold_high=node.threshold_high, threshold_low=node.threshold_low)
    harness = KernelHarness(kernel, columns)
    if "error" in g:
        with pytest.raises(ValueError) as error:
            harness.process(records)
        for mention in case.error_mentions:
            assert mention in str(error.value)
        return
    out = [[str(r.get_row_kind()), list(r)] for r in harness.process(records)]
    if case.compare == "changelog":
        assert out == g["output"]
    else:
        pk = [columns.index(c) for c in node.primary_key]
        assert upsert_materialize(out, pk) == upsert_materialize(g["output"], pk)


@pytest.mark.parametrize("name", [n for n in NAMES if golden(n)["mode"] == "batch" and "output" in golden(n)])
def test_batch_writes_the_final_rows(name):
    # Flink's batch sink receives the query's final rows (all +I), with no materializer:
    # the table a batch INSERT leaves is the streaming upsert table where keys do not clash.
    g = golden(name)
    assert all(kind == "+I" for kind, _ in g["output"])


@pytest.mark.parametrize("name", [n for n in NAMES if golden(n)["mode"] == "batch"])
def test_batch_insert_on_spark_prints_flinks_rows(name, tmp_path, spark, capsys):
    """A batch INSERT with ON CONFLICT runs without a materializer and prints Flink's final rows."""
    case, g = CASES[name], golden(name)
    t_env, _ = plan(case, tmp_path, spark)
    capsys.readouterr()
    t_env.execute_sql(case.insert).wait()
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("+I[")]
    expected = [f"+I[{', '.join(str(v) for v in values)}]" for _, values in g["output"]]
    assert sorted(printed) == sorted(expected)
