"""Where the MiniBatchAssigner goes and in which mode, against Flink's plans
(conformance/goldens/plans/mini_batch_assigner.json, recorded by
conformance/record_flink_mini_batch_plans.py). Planning only, no Spark."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from changeflow.table import EnvironmentSettings, TableEnvironment

GOLDEN = Path(__file__).resolve().parents[2] / "conformance" / "goldens" / "plans" / "mini_batch_assigner.json"
CASES = json.loads(GOLDEN.read_text())["cases"]


def _assigners(plan_lines: list[str]) -> list[tuple[str, str, str]]:
    """Each MiniBatchAssigner as (interval, mode, the operator right under it)."""
    found = []
    for i, line in enumerate(plan_lines):
        m = re.search(r"MiniBatchAssigner\(interval=\[(\w+)\], mode=\[(\w+)\]", line)
        if m:
            below = re.sub(r"^[\s:|+\-]*", "", plan_lines[i + 1]).split("(")[0]
            found.append((m.group(1), m.group(2), below))
    return found


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_mini_batch_assigner_as_flink_plans_it(case, tmp_path):
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    for key, value in case["config"].items():
        t_env.get_config().set(key, value)
    (tmp_path / "bids").mkdir()
    t_env.execute_sql(case["ddl"].replace("{tmp}", str(tmp_path)))
    ours = t_env.explain_sql(case["query"]).splitlines()
    assert _assigners(ours) == _assigners(case["plan"]) != []
