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
from conformance.record_flink import _check_flink_version, _new_env, _write_json  # noqa: E402


def run_case(c) -> dict:
    tmp = tempfile.mkdtemp(prefix=f"partcase_{c.name}_")
    try:
        out = os.path.join(tmp, "out")
        t_env = _new_env(c.mode, {})
        t_env.execute_sql(sink_ddl(c, out))
        t_env.execute_sql(f"INSERT INTO snk {c.query}").wait()
        golden = {"directories": snapshot(out)}
        for mode in ("streaming", "batch"):
            reader = _new_env(mode, {})
            reader.execute_sql(sink_ddl(c, out, "back"))
            try:
                with reader.execute_sql("SELECT * FROM back").collect() as results:
                    golden[f"read_{mode}"] = sorted(str(list(r)) for r in results)
            except Exception as e:  # py4j's error: keep the Java message's first line
                golden[f"read_{mode}_error"] = str(e).splitlines()[0].replace(tmp, "{tmp}")
        return golden
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> int:
    unknown = [n for n in argv if n not in PARTITION_CASES]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    _check_flink_version()
    os.makedirs(GOLDEN_DIR, exist_ok=True)
    for name in argv or list(PARTITION_CASES):
        golden = run_case(PARTITION_CASES[name])
        _write_json(os.path.join(GOLDEN_DIR, f"{name}.json"), golden)
        print(f"recorded {name}: {golden}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
