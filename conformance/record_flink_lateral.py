"""Record Flink 2.3's output for the Python table function cases (``conformance/lateral_cases.py``).

Run as ``conformance/record_flink.py`` (a Python with apache-flink==2.3.0 first on PATH),
from the repository root::

    python conformance/record_flink_lateral.py            # all cases
    python conformance/record_flink_lateral.py sql_left_join_lateral

Goldens go to ``conformance/goldens/lateral/<case>.json`` in the format of the Table API
goldens (see ``conformance/README.md``). A fresh TableEnvironment per case (parallelism 1),
all in one JVM.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "lateral")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.lateral_cases import CASES  # noqa: E402
from conformance.record_flink import run_case  # noqa: E402
from conformance.recording import case_names, changes_summary, new_env, record_each  # noqa: E402


def _namespace():
    from pyflink.common import Row
    from pyflink.table import DataTypes, expressions
    from pyflink.table.udf import ScalarFunction, TableFunction, udf, udtf

    def register(t_env, name, function):
        t_env.create_temporary_function(name, function)

    return SimpleNamespace(col=expressions.col, lit=expressions.lit, call=expressions.call, DataTypes=DataTypes,
                           udf=udf, udtf=udtf, Row=Row, TableFunction=TableFunction, ScalarFunction=ScalarFunction,
                           register=register)


def main(argv: list[str] | None = None) -> int:
    names = case_names(argv, CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    E = _namespace()
    return record_each(CASES, names, GOLDEN_DIR, lambda c: run_case(new_env(c.mode, {}), E, c),
                       summary=changes_summary)


if __name__ == "__main__":
    sys.exit(main())
