"""Record Flink's output for the Python aggregate function cases (``udaf_cases.py``).

Run as ``record_flink.py`` (a Python with apache-flink==2.3.0 first on PATH, from the
repository root)::

    python conformance/record_flink_udaf.py            # all cases
    python conformance/record_flink_udaf.py udtaf_top2

Goldens go to ``conformance/goldens/udaf/<case>.json`` in ``record_flink.py``'s format;
a case Flink refuses gets ``"error"`` (the first line of the innermost Java/Python
error that names the cause) and no ``changes``.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.record_flink import resolved_schema, to_json_value  # noqa: E402
from conformance.recording import FLINK_VERSION, case_names, new_env, record_each  # noqa: E402
from conformance.udaf_cases import CASES  # noqa: E402

GOLDEN_DIR = os.path.join(HERE, "goldens", "udaf")


def _namespace():
    from pyflink.common import Row
    from pyflink.table import DataTypes, expressions
    from pyflink.table.udf import AggregateFunction, TableAggregateFunction, udaf, udtaf
    return SimpleNamespace(col=expressions.col, lit=expressions.lit, DataTypes=DataTypes, Row=Row, udaf=udaf,
                           udtaf=udtaf, AggregateFunction=AggregateFunction,
                           TableAggregateFunction=TableAggregateFunction)


def _cause(error: BaseException) -> str:
    """The most specific line of a (py4j-wrapped) error: the last 'Caused by' or the message."""
    text = str(error)
    python_errors = re.findall(r"^(\w+(?:Error|Exception): .*)$", text, flags=re.M)
    if "Traceback" in text and python_errors:  # a failure in the Python worker: its exception
        return python_errors[-1]
    causes = [line.strip() for line in text.splitlines() if line.strip().startswith("Caused by:")]
    line = causes[-1] if causes else text.strip().splitlines()[0]
    return line.removeprefix("Caused by: ")


def record(c, E) -> dict:
    t_env = new_env(c.mode, c.config)
    golden = {"case": c.name, "mode": c.mode, "config": dict(c.config), "deterministic": c.deterministic,
              "description": c.description}
    try:
        table = c.build(t_env, E)
        columns, types = resolved_schema(table)
        changes = []
        with table.execute().collect() as results:
            for row in results:
                changes.append([str(row.get_row_kind()), [to_json_value(x) for x in row]])
        golden.update(columns=columns, types=types, changes=changes)
    except Exception as e:  # a refusal is a result here
        traceback.print_exc(file=sys.stderr)
        golden["error"] = _cause(e)
    golden["flink_version"] = FLINK_VERSION
    return golden


def main(argv: list[str] | None = None) -> int:
    names = case_names(argv, CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    E = _namespace()
    return record_each(CASES, names, GOLDEN_DIR, lambda c: record(c, E),
                       summary=lambda g: str(g.get("error") or len(g["changes"])))


if __name__ == "__main__":
    sys.exit(main())
