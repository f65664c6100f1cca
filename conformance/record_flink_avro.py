"""Record Flink 2.3's Avro files for changeflow's ``avro`` format tests.

Flink's ``avro`` format is not in PyFlink's ``lib``: fetch the jar into a temporary
directory first (never commit it) and pass it::

    mvn dependency:copy -Dartifact=org.apache.flink:flink-sql-avro:2.3.0 -DoutputDirectory=<dir>
    python conformance/record_flink_avro.py <dir>/flink-sql-avro-2.3.0.jar

Each case writes the rows of ``AVRO_SQL`` to a ``filesystem`` sink with ``'format' = 'avro'``
(PyFlink 2.3, parallelism 1) and records ``conformance/goldens/avro/<case>.json``: the Avro
container file Flink wrote, base64 (its writer schema, codec and records are what the tests
compare: the sync marker is random), or Flink's error for a type it refuses.
"""

from __future__ import annotations

import base64
import glob
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "avro")
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.recording import new_env, record_each  # noqa: E402
from conformance.record_flink_sink_formats import _innermost  # noqa: E402

AVRO_COLUMNS = ("i INT, n INT NOT NULL, b BIGINT, s STRING, d DECIMAL(10, 2), dt DATE, ts TIMESTAMP(3), "
                "ok BOOLEAN, x DOUBLE, f FLOAT, bs BYTES, tm TIME, arr ARRAY<INT>, m MAP<STRING, INT>, "
                "r ROW<a INT, b STRING>")
AVRO_SQL = ("VALUES (1, 2, CAST(3 AS BIGINT), 'x', CAST(1.50 AS DECIMAL(10, 2)), DATE '2024-01-02', "
            "TIMESTAMP '2024-01-02 03:04:05.123', TRUE, CAST(1.5 AS DOUBLE), CAST(2.5 AS FLOAT), X'0102', "
            "TIME '01:02:03', ARRAY[1, 2], MAP['k', 1], ROW(7, 'y')), "
            "(CAST(NULL AS INT), 5, CAST(NULL AS BIGINT), CAST(NULL AS STRING), CAST(NULL AS DECIMAL(10, 2)), "
            "CAST(NULL AS DATE), CAST(NULL AS TIMESTAMP(3)), CAST(NULL AS BOOLEAN), CAST(NULL AS DOUBLE), "
            "CAST(NULL AS FLOAT), CAST(NULL AS BYTES), CAST(NULL AS TIME), CAST(NULL AS ARRAY<INT>), "
            "CAST(NULL AS MAP<STRING, INT>), CAST(NULL AS ROW<a INT, b STRING>))")

# case -> (columns, the query, extra WITH options)
CASES = {
    "avro_types_snappy": (AVRO_COLUMNS, AVRO_SQL, {}),
    "avro_types_deflate": (AVRO_COLUMNS, AVRO_SQL, {"avro.codec": "deflate"}),
    "avro_timestamp_6": ("ts TIMESTAMP(6)", "VALUES (TIMESTAMP '2024-01-02 03:04:05.123456')", {}),
    "avro_timestamp_ltz": ("ts TIMESTAMP_LTZ(3)", "VALUES (TO_TIMESTAMP_LTZ(1000, 3))", {}),
}


def run_case(jar: str, columns: str, query: str, options: dict) -> dict:
    tmp = tempfile.mkdtemp(prefix="avrocase_")
    try:
        t_env = new_env("streaming", {"pipeline.jars": f"file://{os.path.abspath(jar)}"})
        extra = "".join(f", '{k}' = '{v}'" for k, v in options.items())
        out = os.path.join(tmp, "out")
        t_env.execute_sql(f"CREATE TABLE snk ({columns}) WITH ('connector' = 'filesystem', 'path' = '{out}', "
                          f"'format' = 'avro'{extra})")
        try:
            t_env.execute_sql(f"INSERT INTO snk {query}").wait()
        except Exception as e:
            return {"error": _innermost(e).replace(tmp, "{tmp}")}
        files = [p for p in sorted(glob.glob(os.path.join(out, "*"))) if not os.path.basename(p).startswith(".")]
        with open(files[0], "rb") as f:
            return {"file_base64": base64.b64encode(f.read()).decode()}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    if not argv or not argv[0].endswith(".jar"):
        print(__doc__, file=sys.stderr)
        return 2
    names = argv[1:] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    return record_each(CASES, names, GOLDEN_DIR, lambda case: run_case(argv[0], *case),
                       summary=lambda g: str(g)[:200])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
