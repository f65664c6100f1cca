"""Record PyFlink 2.3's results for ``conformance/table_api_cases.py`` as golden JSON files.

Run from the repository root with a Python that has apache-flink==2.3.0, first on PATH::

    python conformance/record_flink_table_api.py            # all cases
    python conformance/record_flink_table_api.py NAME ...   # some

Writes ``conformance/goldens/table_api/<case>.json``: ``{"case", "mode", "ordered",
"columns", "types", "changes": [["+I", [values]], ...]}``; an ``error`` case has
``"error"`` (the first line of Flink's message) instead; a statement-set case has
``"sinks": {name: [rows, sorted]}`` (each sink read back after the job). All cases run
in one JVM, with ``parallelism.default`` 1.
"""

from __future__ import annotations

import os
import sys
import tempfile
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "table_api")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.record_flink import resolved_schema, to_json_value  # noqa: E402
from conformance.recording import case_names, new_env, record_each, write_indented_json  # noqa: E402
from conformance.table_api_cases import CASES  # noqa: E402


def _collect(table):
    with table.execute().collect() as results:
        return [[str(r.get_row_kind()), [to_json_value(v) for v in r]] for r in results]


def record(c, E):
    with tempfile.TemporaryDirectory(prefix=f"table_api_{c.name}_") as tmp:
        E.tmp = tmp  # the case's input files (the event-time window cases read CSV files)
        return _record(c, E)


def _record(c, E):
    t_env = new_env(c.mode)
    out = {"case": c.name, "mode": c.mode, "ordered": c.ordered}
    if c.statement_set:
        with tempfile.TemporaryDirectory() as directory:
            names = c.build(t_env, E, directory)
            out["sinks"] = {n: sorted(v for _, v in _collect(t_env.from_path(n))) for n in names}
        return out
    try:
        table = c.build(t_env, E)
        out["columns"], out["types"] = resolved_schema(table)
        out["changes"] = _collect(table)
    except Exception as e:  # noqa: BLE001 - an error case records Flink's message
        if not c.error:
            raise
        text = str(e)
        lines = [ln.strip() for ln in text.splitlines() if "Exception:" in ln or ln.strip().startswith("org.")]
        out["error"] = (lines[0] if lines else text.splitlines()[0]).split("Exception: ", 1)[-1]
    return out


def main(argv: list[str] | None = None) -> int:
    names = case_names(argv, CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    import pyflink.table as table
    from pyflink.table import DataTypes, expressions, window
    E = SimpleNamespace(col=expressions.col, lit=expressions.lit, DataTypes=DataTypes, x=expressions,
                        window=window, table=table)
    return record_each(CASES, names, GOLDEN_DIR, lambda c: record(c, E),
                       write=lambda path, golden: write_indented_json(path, golden, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main())
