"""Record where Flink's planner puts the MiniBatchAssigner, and in which mode (issue 18).

Usage (PyFlink 2.3 on the PATH)::

    python conformance/record_flink_mini_batch_plans.py

Writes ``conformance/goldens/plans/mini_batch_assigner.json``: for each case of
:data:`CASES` its config, DDL, query and Flink's optimized execution plan
(``explain_sql``). ``tests/plan/test_mini_batch_plans.py`` plans the same query
with changeflow and checks every MiniBatchAssigner: its interval, its mode and
the operator right under it. The results of the row-time cases are SQL goldens
(``window_tumble_agg_minibatch``, ``window_tumble_minibatch_filters_watermarks``).
"""

from __future__ import annotations

import json
import os
import tempfile

DDL = ("CREATE TABLE bids (ts TIMESTAMP(3), k STRING, v INT, WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
       "WITH ('connector' = 'filesystem', 'path' = '{tmp}/bids', 'format' = 'csv')")
TUMBLE_AGG = ("SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s FROM "
              "TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
              "GROUP BY window_start, window_end, k")


def _mini_batch(latency: str) -> dict:
    return {"table.exec.mini-batch.enabled": "true", "table.exec.mini-batch.allow-latency": latency,
            "table.exec.mini-batch.size": "1000"}


CASES = [
    # A window aggregation needs a watermark: RowTime, above the WatermarkAssigner, interval = allow-latency.
    {"name": "window_aggregate_rowtime", "config": _mini_batch("10 s"), "query": TUMBLE_AGG},
    {"name": "window_aggregate_rowtime_20s", "config": _mini_batch("20 s"), "query": TUMBLE_AGG},
    # A group aggregation over a watermarked table: ProcTime, still above the WatermarkAssigner.
    {"name": "group_aggregate_over_watermarked_table", "config": _mini_batch("10 s"),
     "query": "SELECT k, COUNT(*) AS c FROM bids GROUP BY k"},
    # The other operators that need a watermark (Flink's requireWatermark) turn it RowTime too, also
    # under a group aggregation; a processing-time one does not.
    {"name": "over_rowtime", "config": _mini_batch("10 s"),
     "query": "SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s "
              "FROM bids"},
    {"name": "rowtime_deduplicate", "config": _mini_batch("10 s"),
     "query": "SELECT ts, k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn "
              "FROM bids) WHERE rn = 1"},
    {"name": "rowtime_deduplicate_under_group_aggregate", "config": _mini_batch("10 s"),
     "query": "SELECT k, COUNT(*) AS c FROM (SELECT ts, k, v FROM (SELECT *, ROW_NUMBER() OVER "
              "(PARTITION BY k ORDER BY ts ASC) AS rn FROM bids) WHERE rn = 1) GROUP BY k"},
    {"name": "window_top_n", "config": _mini_batch("10 s"),
     "query": "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY v DESC) "
              "AS rn FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rn <= 3"},
]


def _execution_plan(text: str) -> str:
    """The ``== Optimized Execution Plan ==`` section of an explain."""
    return text.split("== Optimized Execution Plan ==", 1)[1].strip()


def main() -> None:
    from pyflink.table import EnvironmentSettings, TableEnvironment
    import pyflink

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "bids"))
        for case in CASES:
            t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
            t_env.get_config().set("parallelism.default", "1")
            for key, value in case["config"].items():
                t_env.get_config().set(key, value)
            t_env.execute_sql(DDL.replace("{tmp}", tmp))
            plan = _execution_plan(t_env.explain_sql(case["query"]))
            out.append({**case, "ddl": DDL, "plan": plan.splitlines()})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens", "plans", "mini_batch_assigner.json")
    with open(path, "w") as f:
        json.dump({"cases": out, "flink_version": pyflink.version.__version__}, f, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
