"""Record PyFlink 2.3's output for the type cases (``conformance/type_cases.py``).

Run from the repository root with a Python that has apache-flink==2.3.0, first on PATH,
and ``TZ=UTC`` (PyFlink converts TIMESTAMP_LTZ values with the machine's zone)::

    TZ=UTC python conformance/record_flink_types.py            # all cases
    TZ=UTC python conformance/record_flink_types.py binary_strings

Writes ``conformance/goldens/types/<case>.json``::

    {"case": name, "mode": ..., "description": ..., "columns": [...],
     "types": [Flink's type string per column], "rows": [["+I", [encoded values]], ...] or null
     when PyFlink cannot collect the values, "collect_error": why (or null),
     "print": the text of execute().print(), "print_schema": the text of print_schema(),
     "flink_version": "2.3.0"}

Values are encoded by ``type_cases.encode`` (each tagged with its Python class). Every
case runs in one JVM with ``parallelism.default = 1`` and ``table.local-time-zone = UTC``;
a case that fails in Flink is reported and the run goes on (exit status 1).
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "types")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.recording import FLINK_VERSION, case_names, java_stdout, new_env, record_each, write_indented_json  # noqa: E402
from conformance.type_cases import TYPE_CASES, encode  # noqa: E402  (no pyflink import there)


def _namespace():
    from pyflink.common import Row
    from pyflink.table import DataTypes
    from pyflink.table.expressions import col, lit
    return SimpleNamespace(DataTypes=DataTypes, Row=Row, col=col, lit=lit)


def run_case(t_env, E, c):
    table = c.build(t_env, E)
    resolved = table._j_table.getResolvedSchema()
    rows, collect_error = [], None
    try:
        with table.execute().collect() as results:
            for row in results:
                rows.append([str(row.get_row_kind()), [encode(x) for x in row]])
    except Exception as e:  # PyFlink 2.3 cannot collect some types (TIMESTAMP_LTZ, ARRAY<STRING> with NULL)
        rows, collect_error = None, f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
    return {
        "case": c.name, "mode": c.mode, "description": c.description,
        "columns": [col.getName() for col in resolved.getColumns()],
        "types": [col.getDataType().toString() for col in resolved.getColumns()],
        "rows": rows, "collect_error": collect_error,
        "print": java_stdout(lambda: c.build(t_env, E).execute().print()),
        "print_schema": java_stdout(lambda: c.build(t_env, E).print_schema()),
        "flink_version": FLINK_VERSION,
    }


def main(argv: list[str] | None = None) -> int:
    names = case_names(argv, TYPE_CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    E = _namespace()
    envs = {}  # one TableEnvironment per mode, in the session zone the goldens were taken in

    def record(c):
        if c.mode not in envs:
            envs[c.mode] = new_env(c.mode, {"table.local-time-zone": "UTC"})
        return run_case(envs[c.mode], E, c)

    def summary(golden):
        rows = golden["rows"] if golden["rows"] is None else len(golden["rows"])
        return f"{rows} rows\n{golden['print']}{golden['print_schema']}"

    return record_each(TYPE_CASES, names, GOLDEN_DIR, record, summary=summary, write=write_indented_json)


if __name__ == "__main__":
    sys.exit(main())
