"""Record what Flink 2.3 writes for the partitioned filesystem cases (``conformance/partition_cases.py``).

Run from the repository root with a Python that has apache-flink==2.3.0 first on PATH::

    python conformance/record_flink_partitions.py              # all cases
    python conformance/record_flink_partitions.py csv_batch_success_file

Each case runs in a fresh TableEnvironment of its mode (``parallelism.default`` = 1),
inserts the case's rows, and writes ``conformance/goldens/partitions/<case>.json``:
``{"directories": {relative dir: {"records": [...sorted], "marks": [...]}}, "read": [...]}``
(``marks``: the hidden files other than in-progress ones, the success files; ``read_<mode>``:
the rows, as strings, a partitioned table over the same path reads back in that mode, sorted,
or ``read_<mode>_error``, the first line of Flink's error).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GOLDEN_DIR = os.path.join(HERE, "goldens", "partitions")

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from conformance.partition_cases import PARTITION_CASES, sink_ddl, snapshot  # noqa: E402
from conformance.recording import case_names, new_env, record_each  # noqa: E402


def run_case(c) -> dict:
    tmp = tempfile.mkdtemp(prefix=f"partcase_{c.name}_")
    try:
        out = os.path.join(tmp, "out")
        t_env = new_env(c.mode, {})
        t_env.execute_sql(sink_ddl(c, out))
        t_env.execute_sql(f"INSERT INTO snk {c.query}").wait()
        golden = {"directories": snapshot(out)}
        for mode in ("streaming", "batch"):
            reader = new_env(mode, {})
            reader.execute_sql(sink_ddl(c, out, "back"))
            try:
                with reader.execute_sql("SELECT * FROM back").collect() as results:
                    golden[f"read_{mode}"] = sorted(str(list(r)) for r in results)
            except Exception as e:  # py4j's error: keep the Java message's first line
                golden[f"read_{mode}_error"] = str(e).splitlines()[0].replace(tmp, "{tmp}")
        return golden
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    names = case_names(argv, PARTITION_CASES, __doc__.split("\n\n")[0])
    if names is None:
        return 0
    return record_each(PARTITION_CASES, names, GOLDEN_DIR, run_case, summary=str)


if __name__ == "__main__":
    sys.exit(main())
