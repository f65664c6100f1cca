"""INSERT ... ON CONFLICT end to end on Spark Structured Streaming, against Flink 2.3's goldens.

Three cases of ``conformance/goldens/upsert`` (one per clause Flink accepts) run as
streaming INSERTs into the print sink; what the sink prints is compared with what
Flink's print sink printed: exactly for DO DEDUPLICATE, as the final upsert table for
DO NOTHING, and a DO ERROR conflict must fail the job naming the key. They need the
streaming translation of the materializer node (a separate runtime module); until the
runtime has it they are skipped, not passed.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from conformance.upsert_cases import CASES
from tests.conformance.test_upsert_conformance import plan
from tests.kernels.materializer_reference import upsert_materialize

GOLDENS = pathlib.Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "upsert"


def run_insert(name, tmp_path, spark, capsys):
    case = CASES[name]
    t_env, _ = plan(case, tmp_path, spark)
    t_env.get_config().set("changeflow.state.buckets", "2")
    capsys.readouterr()
    try:
        t_env.execute_sql(case.insert).wait()
    except TypeError as e:
        if "no streaming translation for UpsertMaterialize" in str(e):
            pytest.skip("the streaming runtime has no translation of the sink upsert materializer yet")
        raise
    return [line for line in capsys.readouterr().out.splitlines() if line[:3] in ("+I[", "+U[", "-D[", "-U[")]


def flink_lines(name):
    g = json.loads((GOLDENS / f"{name}.json").read_text())
    return [f"{kind}[{', '.join(str(v) for v in values)}]" for kind, values in g["output"]]


def test_do_deduplicate_prints_flinks_changelog(tmp_path, spark, capsys):
    assert run_insert("dedup_upsert_key_map", tmp_path, spark, capsys) == flink_lines("dedup_upsert_key_map")


def test_do_nothing_leaves_flinks_table(tmp_path, spark, capsys):
    def table(lines):
        return upsert_materialize([(line[:2], line[3:-1].split(", ")) for line in lines], [0])

    ours = run_insert("nothing_with_watermark", tmp_path, spark, capsys)
    assert table(ours) == table(flink_lines("nothing_with_watermark"))


def test_do_error_fails_the_job_naming_the_key(tmp_path, spark, capsys):
    # (pytest's skip is a BaseException, so it passes through this check)
    with pytest.raises(Exception) as error:
        run_insert("error_on_conflict", tmp_path, spark, capsys)
    assert "DO ERROR" in str(error.value) and "product" in str(error.value)
