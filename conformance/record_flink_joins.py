"""Record Flink 2.3's changelogs of the regular-join cases (``join_cases.py``) as goldens.

Run with PyFlink 2.3's python first on PATH, from the repository root::

    python conformance/record_flink_joins.py

Every case runs with ``parallelism.default = 1`` and writes
``conformance/goldens/joins/<name>.json``::

    {"case": name, "mode": ..., "config": {...}, "query": SQL, "columns": [...],
     "types": [...], "changes": [["+I", [values...]], ...], "flink_version": "2.3.0"}

``changes`` are in Flink's emission order, which depends on how Flink interleaves the
two sources (not deterministic): the replay compares materialized results.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "joins")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.join_cases import CASES, query_sql  # noqa: E402


def _env(mode: str, config: dict):
    from pyflink.table import EnvironmentSettings, TableEnvironment

    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "1")
    for key, value in config.items():
        t_env.get_config().set(key, value)
    return t_env


def record(case) -> dict:
    from pyflink.table import DataTypes

    t_env = _env(case.mode, case.config)
    schema = DataTypes.ROW([DataTypes.FIELD("k", DataTypes.INT()), DataTypes.FIELD("v", DataTypes.INT())])
    t_env.create_temporary_view("ls", t_env.from_elements(case.left, schema))
    t_env.create_temporary_view("rs", t_env.from_elements(case.right, schema))
    query = query_sql(case)
    table = t_env.sql_query(query)
    resolved = table.get_schema()
    changes = []
    with table.execute().collect() as results:
        for row in results:
            changes.append([str(row.get_row_kind()), [_value(v) for v in row]])
    return {"case": case.name, "mode": case.mode, "config": case.config, "query": query,
            "description": case.description, "columns": resolved.get_field_names(),
            "types": [str(t) for t in resolved.get_field_data_types()], "changes": changes,
            "flink_version": "2.3.0"}


def _value(v):
    return v


def main() -> int:
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    names = set(sys.argv[1:])
    failed = 0
    for case in CASES:
        if names and case.name not in names:
            continue
        try:
            golden = record(case)
        except Exception as e:  # report and go on: one broken case must not hide the others
            print(f"FAILED {case.name}: {e}", file=sys.stderr)
            failed += 1
            continue
        with open(os.path.join(GOLDEN_DIR, f"{case.name}.json"), "w") as f:
            json.dump(golden, f, indent=1)
            f.write("\n")
        print(f"{case.name}: {len(golden['changes'])} changes")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
