"""The Flink 2.3 half of ``benchmarks/event_time_window.py``: the same windowed query on PyFlink, timed.

Usage (with PyFlink 2.3's python; ``event_time_window.py --flink-python`` starts it)::

    python benchmarks/event_time_window_flink.py --data DIR [--parallelism 1]

``DIR`` holds the benchmark's rows as CSV files (``ts,k,v``, the same rows as its Parquet
files: PyFlink ships no Parquet format). A streaming TableEnvironment reads them with the
``filesystem`` connector and the same ``WATERMARK FOR ts AS ts - INTERVAL '2' SECOND``, runs
the same ``TUMBLE`` ``COUNT``/``SUM`` into ``blackhole``, and prints one JSON object:
``{"seconds": ...}``, the time of ``execute_sql(INSERT).wait()`` (job submission to end of
input; the JVM start is before the clock).
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--parallelism", type=int, default=1)
    args = parser.parse_args()
    from pyflink.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("parallelism.default", str(args.parallelism))
    t_env.get_config().set("table.local-time-zone", "UTC")
    t_env.execute_sql("CREATE TABLE t (ts TIMESTAMP(3), k BIGINT, v BIGINT, "
                      "WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
                      f"WITH ('connector' = 'filesystem', 'path' = '{args.data}', 'format' = 'csv')")
    t_env.execute_sql("CREATE TABLE win_out (ws TIMESTAMP(3), we TIMESTAMP(3), k BIGINT, cnt BIGINT, s BIGINT) "
                      "WITH ('connector' = 'blackhole')")
    start = time.perf_counter()
    t_env.execute_sql("INSERT INTO win_out SELECT window_start, window_end, k, COUNT(*), SUM(v) "
                      "FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
                      "GROUP BY window_start, window_end, k").wait()
    print(json.dumps({"seconds": time.perf_counter() - start}))


if __name__ == "__main__":
    main()
