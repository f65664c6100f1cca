"""Record Flink 2.3's records for the sink-format cases (``conformance/sink_format_cases.py``).

Run from the repository root with a Python that has apache-flink==2.3.0 first on PATH
(PyFlink's ``lib`` folder ships ``flink-json``, which holds the three formats)::

    python conformance/record_flink_sink_formats.py              # all cases
    python conformance/record_flink_sink_formats.py debezium_sink_two_level

Each case runs in a fresh streaming TableEnvironment (``parallelism.default`` = 1) and
writes ``conformance/goldens/sink_formats/<case>.json``: ``{"records": [...]}``, the lines of
the sink's files in order, or ``{"error": ...}``, the first line of the innermost message.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "sink_formats")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.recording import case_names, new_env, record_each  # noqa: E402
from conformance.sink_format_cases import SINK_CASES, create_source, sink_ddl  # noqa: E402


def _innermost(e: Exception) -> str:
    """The message Flink's user sees last: the deepest 'Caused by' (or the first line)."""
    text = str(e)
    causes = [line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("Caused by: ") and ": " in line]
    if causes:
        return causes[-1]
    for line in text.splitlines():
        if "Exception: " in line:
            return line.split("Exception: ", 1)[1]
    return text.splitlines()[0]


def run_case(c) -> dict:
    tmp = tempfile.mkdtemp(prefix=f"sinkcase_{c.name}_")
    try:
        t_env = new_env("streaming", {})
        create_source(t_env, tmp)
        out = os.path.join(tmp, "out")
        try:
            t_env.execute_sql(sink_ddl(c, out))
            t_env.execute_sql(f"INSERT INTO snk {c.query}").wait()
        except Exception as e:  # py4j's error: the Java message
            if not c.error:
                raise
            return {"error": _innermost(e).replace(tmp, "{tmp}")}
        if c.error:
            raise AssertionError(f"{c.name}: Flink accepted it")
        records = []
        for f in sorted(p for p in glob.glob(os.path.join(out, "**", "*"), recursive=True)
                        if os.path.isfile(p) and not os.path.basename(p).startswith((".", "_"))):
            with open(f, encoding="utf-8") as fh:
                records += fh.read().splitlines()
        return {"records": records}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    names = case_names(argv, SINK_CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    return record_each(SINK_CASES, names, GOLDEN_DIR, run_case, summary=str)


if __name__ == "__main__":
    sys.exit(main())
