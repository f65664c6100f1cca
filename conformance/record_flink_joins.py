"""Record Flink 2.3's changelogs of the regular-join cases (``join_cases.py``) as goldens.

Run with PyFlink 2.3's python first on PATH, from the repository root::

    python conformance/record_flink_joins.py

Every case runs with ``parallelism.default = 1`` and writes
``conformance/goldens/joins/<name>.json``::

    {"case": name, "mode": ..., "config": {...}, "query": SQL, "columns": [...],
     "types": [...], "changes": [["+I", [values...]], ...], "flink_version": FLINK_VERSION}

``changes`` are in Flink's emission order, which depends on how Flink interleaves the
two sources (not deterministic): the replay compares materialized results.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "joins")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.join_cases import CASES, query_sql  # noqa: E402
from conformance.recording import FLINK_VERSION, case_names, new_env, record_each, write_indented_json  # noqa: E402


def record(case) -> dict:
    from pyflink.table import DataTypes

    t_env = new_env(case.mode, case.config)
    schema = DataTypes.ROW([DataTypes.FIELD("k", DataTypes.INT()), DataTypes.FIELD("v", DataTypes.INT())])
    t_env.create_temporary_view("ls", t_env.from_elements(case.left, schema))
    t_env.create_temporary_view("rs", t_env.from_elements(case.right, schema))
    query = query_sql(case)
    table = t_env.sql_query(query)
    resolved = table.get_schema()
    changes = []
    with table.execute().collect() as results:
        for row in results:
            changes.append([str(row.get_row_kind()), list(row)])
    return {"case": case.name, "mode": case.mode, "config": case.config, "query": query,
            "description": case.description, "columns": resolved.get_field_names(),
            "types": [str(t) for t in resolved.get_field_data_types()], "changes": changes,
            "flink_version": FLINK_VERSION}


def main(argv: list[str] | None = None) -> int:
    cases = {case.name: case for case in CASES}
    names = case_names(argv, cases, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    return record_each(cases, names, GOLDEN_DIR, record, summary=lambda g: f"{len(g['changes'])} changes",
                       write=write_indented_json)


if __name__ == "__main__":
    sys.exit(main())
