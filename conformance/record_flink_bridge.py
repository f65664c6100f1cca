"""Record PyFlink 2.3's output for the Table <-> DataStream cases as golden JSON files.

Run with PyFlink 2.3's python first on PATH (Flink starts its Python workers with
the ``python`` found on PATH), from the repository root::

    python conformance/record_flink_bridge.py            # all cases
    python conformance/record_flink_bridge.py mixed_round_trip_streaming

Each case of ``conformance/bridge_cases.py`` runs in a ``StreamExecutionEnvironment``
at parallelism 1 in the case's runtime mode, with a ``StreamTableEnvironment``
created on it. A DataStream result is collected with ``execute_and_collect()``,
a Table result with ``execute().collect()``; both are stored in
``conformance/goldens/bridge/<name>.json``::

    {"case": name, "mode": "streaming"|"batch", "ordered": bool, "description": str,
     "result": "stream"|"table"|"error", "error": str|null,
     "records": [value, ...], "flink_version": "2.3.0"}

Values are encoded by :func:`encode`: a Row as ``{"kind": "+I", "row": [...]}``,
a tuple as ``{"tuple": [...]}``, scalars as themselves.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "bridge")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance import bridge_cases  # noqa: E402  (no pyflink import there)
from conformance.bridge_cases import CASES  # noqa: E402
from conformance.recording import FLINK_VERSION, case_names, record_each, write_records_golden  # noqa: E402


def encode(v):
    """A collected record as a JSON value (works for PyFlink's and changeflow's Row)."""
    if v is None or isinstance(v, (bool, int, str, float)):
        return v
    if type(v).__name__ == "Row":
        return {"kind": str(v.get_row_kind()), "row": [encode(x) for x in v]}
    if isinstance(v, tuple):
        return {"tuple": [encode(x) for x in v]}
    if isinstance(v, list):
        return [encode(x) for x in v]
    raise TypeError(f"cannot encode collected value {v!r} of type {type(v).__name__}")


def collect(result):
    """``(kind of result, encoded records)`` of a case's DataStream or Table."""
    if hasattr(result, "execute_and_collect"):
        with result.execute_and_collect() as records:
            return "stream", [encode(r) for r in records]
    with result.execute().collect() as rows:
        return "table", [encode(r) for r in rows]


def record(c, api) -> dict:
    from pyflink.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    from pyflink.table import StreamTableEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH if c.mode == "batch" else RuntimeExecutionMode.STREAMING)
    t_env = StreamTableEnvironment.create(env)
    error, records, kind = None, [], None
    try:
        kind, records = collect(c.program(env, t_env, api))
    except Exception as e:  # Flink's error is the golden of an error case
        if c.error is None:
            raise
        if c.error not in str(e):
            raise AssertionError(f"error without {c.error!r}: {str(e)[:2000]}") from e
        error, kind = c.error, "error"
    return {"case": c.name, "mode": c.mode, "ordered": c.ordered, "description": c.description,
            "result": kind, "error": error, "records": records, "flink_version": FLINK_VERSION}


def main(argv: list[str] | None = None) -> int:
    import cloudpickle
    from pyflink.common import Row, RowKind, Types
    from pyflink.table import ChangelogMode, DataTypes, Schema
    from pyflink.table.expressions import col, lit

    names = case_names(argv, CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    # PyFlink's workers cannot import the cases module: ship its functions by value.
    cloudpickle.register_pickle_by_value(bridge_cases)
    api = SimpleNamespace(Types=Types, Row=Row, RowKind=RowKind, DataTypes=DataTypes, Schema=Schema,
                          ChangelogMode=ChangelogMode, col=col, lit=lit)
    return record_each(CASES, sorted(names), GOLDEN_DIR, lambda c: record(c, api),
                       summary=lambda g: f"{g['result']} {len(g['records'])} records", write=write_records_golden)


if __name__ == "__main__":
    sys.exit(main())
