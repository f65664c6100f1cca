"""Record Flink 2.3's output for the Python UDF conformance cases (``conformance/udf_cases.py``).

Run from the repository root with a Python that has apache-flink==2.3.0, first on PATH
(Flink starts its Python UDF workers with the ``python`` on PATH)::

    python conformance/record_flink_udf.py              # all cases
    python conformance/record_flink_udf.py udf_pandas   # some

Writes ``conformance/goldens/udf/<case>.json`` in the Table API goldens' format
(``record_flink.py``). Each case gets a fresh TableEnvironment (cases register
functions and views), all in one JVM.
"""

from __future__ import annotations

import os
import sys
import traceback
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "udf")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.record_flink import _new_env, _write_json, run_case  # noqa: E402
from conformance.udf_cases import CASES  # noqa: E402


def _namespace():
    from pyflink.table import DataTypes
    from pyflink.table.expressions import call, col, lit
    from pyflink.table.udf import ScalarFunction, udf
    return SimpleNamespace(col=col, lit=lit, call=call, DataTypes=DataTypes, udf=udf, ScalarFunction=ScalarFunction)


def main(argv: list[str]) -> int:
    names = argv or list(CASES)
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    E = _namespace()
    failed = []
    for name in names:
        c = CASES[name]
        try:
            golden = run_case(_new_env(c.mode, c.config), E, c)
        except Exception as e:  # report, keep going
            failed.append(name)
            print(f"FAILED {name}: {type(e).__name__}: {e}", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            continue
        _write_json(os.path.join(GOLDEN_DIR, f"{name}.json"), golden)
        print(f"recorded {name} ({c.mode}): {golden['columns']} {golden['types']}")
        for kind, values in golden["changes"]:
            print(f"    {kind} {values}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
