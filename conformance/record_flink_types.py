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

import json
import os
import sys
import traceback
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "types")
FLINK_VERSION = "2.3.0"

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.type_cases import TYPE_CASES, encode  # noqa: E402  (no pyflink import there)


def _namespace():
    from pyflink.common import Row
    from pyflink.table import DataTypes
    from pyflink.table.expressions import col, lit
    return SimpleNamespace(DataTypes=DataTypes, Row=Row, col=col, lit=lit)


def _new_env(mode):
    from pyflink.table import EnvironmentSettings, TableEnvironment
    settings = EnvironmentSettings.in_batch_mode() if mode == "batch" else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.get_config().set("parallelism.default", "1")
    t_env.get_config().set("table.local-time-zone", "UTC")
    return t_env


def _java_stdout(action):
    """What ``action()`` writes to the JVM's System.out (print() and print_schema() write there)."""
    from pyflink.java_gateway import get_gateway
    jvm = get_gateway().jvm
    buf = jvm.java.io.ByteArrayOutputStream()
    stream = jvm.java.io.PrintStream(buf, True, "UTF-8")
    old = jvm.System.out
    jvm.System.setOut(stream)
    try:
        action()
        stream.flush()
    finally:
        jvm.System.setOut(old)
    return buf.toString("UTF-8")


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
        "print": _java_stdout(lambda: c.build(t_env, E).execute().print()),
        "print_schema": _java_stdout(lambda: c.build(t_env, E).print_schema()),
        "flink_version": FLINK_VERSION,
    }


def main(argv):
    names = argv or list(TYPE_CASES)
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    E = _namespace()
    envs = {}
    failed = []
    for name in names:
        c = TYPE_CASES[name]
        if c.mode not in envs:
            envs[c.mode] = _new_env(c.mode)
        t_env = envs[c.mode]
        try:
            golden = run_case(t_env, E, c)
        except Exception as e:  # report, keep going
            failed.append(name)
            print(f"FAILED {name}: {type(e).__name__}: {str(e)[:1500]}", file=sys.stderr)
            traceback.print_exc(limit=2, file=sys.stderr)
            continue
        with open(os.path.join(GOLDEN_DIR, f"{name}.json"), "w", encoding="utf-8") as f:
            json.dump(golden, f, indent=1, ensure_ascii=False)
            f.write("\n")
        print(f"recorded {name}: {golden['rows'] if golden['rows'] is None else len(golden['rows'])} rows")
        print(golden["print"], golden["print_schema"], sep="")
    if failed:
        print(f"{len(failed)} case(s) failed in Flink: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
