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
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "udf")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.record_flink import run_case  # noqa: E402
from conformance.recording import case_names, changes_summary, new_env, record_each  # noqa: E402
from conformance.udf_cases import CASES  # noqa: E402


def _namespace():
    from pyflink.table import DataTypes
    from pyflink.table.expressions import call, col, lit
    from pyflink.table.udf import ScalarFunction, udf
    return SimpleNamespace(col=col, lit=lit, call=call, DataTypes=DataTypes, udf=udf, ScalarFunction=ScalarFunction)


def main(argv: list[str] | None = None) -> int:
    names = case_names(argv, CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    E = _namespace()
    return record_each(CASES, names, GOLDEN_DIR, lambda c: run_case(new_env(c.mode, c.config), E, c),
                       summary=changes_summary)


if __name__ == "__main__":
    sys.exit(main())
