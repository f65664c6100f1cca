"""Time the streaming join kernel per batch: the vectorised path against the per-record path, same run.

Workloads (no Spark; state in a frame per table, as the runtime's paged state hands
the kernel a batch's keys at once; state time is reported apart):

* ``insert``: inner join of ``orders`` (``--rows`` rows: order_id, user_id, amount)
  with ``users`` (``--rows`` rows: user_id, region), ``--keys`` distinct user ids,
  both insert-only; two batches of ``--rows`` rows per side (the second meets the
  first one's state);
* ``left``: the same as a LEFT join (users arrive after their orders for half the keys);
* ``upsert``: inner join where the second batch's users are -U/+U updates of the
  first batch's users (an upsert input, as after ``LAST_VALUE ... GROUP BY``);
* ``condition``: the inner join with a non-equi condition ``amount < region_size``.

    .venv/bin/python benchmarks/join_kernel.py [--rows 100000] [--keys 90000]

Prints and writes ``benchmarks/results/join_kernel.json``: seconds per batch for each
path (wall time of the kernel without state I/O, and CPU seconds with it: on a loaded
machine the CPU time is the steadier figure) and the wall-time speed-up.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.kernel_group_agg import FrameState, TimedState  # noqa: E402
from changeflow.kernels.join import StreamingJoin  # noqa: E402
from changeflow.table.expressions import col  # noqa: E402

RESULT = os.path.join(ROOT, "benchmarks", "results", "join_kernel.json")


def batches(workload: str, rows: int, keys: int, seed: int = 7) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    rng = np.random.default_rng(seed)
    out = []
    users_first = None
    for b in range(2):
        seq0 = b * 2 * rows
        orders = pd.DataFrame({
            "order_id": np.arange(b * rows, (b + 1) * rows, dtype=np.int64),
            "user_id": rng.integers(0, keys, rows).astype(np.int64),
            "amount": rng.integers(0, 1000, rows).astype(np.int64),
            "_kind": np.zeros(rows, dtype=np.int8),
            "_seq": seq0 + 2 * np.arange(rows, dtype=np.int64),
            "_sub": np.zeros(rows, dtype=np.int64)})
        if workload == "upsert" and b == 1:
            assert users_first is not None
            old = users_first.sample(rows // 2, random_state=seed).reset_index(drop=True)
            new = old.assign(region_size=rng.integers(0, 1000, len(old)).astype(np.int64))
            users = pd.concat([old.assign(_kind=np.int8(1)), new.assign(_kind=np.int8(2))])
            users["_seq"] = seq0 + 1 + 2 * np.tile(np.arange(len(old), dtype=np.int64), 2)
            users["_sub"] = np.repeat(np.arange(2, dtype=np.int64), len(old))
            users = users.sort_values(["_seq", "_sub"], ignore_index=True)
        else:
            ids = rng.integers(0, keys, rows).astype(np.int64) if b else np.arange(rows, dtype=np.int64) % keys
            users = pd.DataFrame({
                "user_id0": ids, "region_size": rng.integers(0, 1000, rows).astype(np.int64),
                "_kind": np.zeros(rows, dtype=np.int8),
                "_seq": seq0 + 1 + 2 * np.arange(rows, dtype=np.int64),
                "_sub": np.zeros(rows, dtype=np.int64)})
            if workload == "left" and b == 0:  # half the users come a batch later
                users = users[users["user_id0"] % 2 == 0].reset_index(drop=True)
            if b == 0:
                users_first = users.drop(columns=["_kind", "_seq", "_sub"])
        out.append((orders, users))
    return out


def kernel(workload: str, vectorised: bool) -> StreamingJoin:
    condition = col("amount") < col("region_size") if workload == "condition" else None
    return StreamingJoin("LEFT" if workload == "left" else "INNER", ["order_id", "user_id", "amount"],
                         ["user_id0", "region_size"], ["user_id"], ["user_id0"], condition,
                         key_dtypes=["int64"], vectorised=vectorised,
                         dtypes={"order_id": "Int64", "user_id": "Int64", "amount": "Int64",
                                 "user_id0": "Int64", "region_size": "Int64"})


def measure(workload: str, rows: int, keys: int, vectorised: bool) -> dict:
    state = TimedState(FrameState("_jk0"))
    join = kernel(workload, vectorised)
    seconds, cpu_seconds, outputs = [], [], []
    for orders, users in batches(workload, rows, keys):
        state.seconds = 0.0
        start, cpu = time.perf_counter(), time.process_time()
        out = join.process_sides(orders, users, state)
        seconds.append(time.perf_counter() - start - state.seconds)
        cpu_seconds.append(time.process_time() - cpu)
        outputs.append(len(out))
    return {"kernel_seconds_per_batch": [round(s, 3) for s in seconds],
            "cpu_seconds_per_batch_with_state": [round(s, 3) for s in cpu_seconds], "output_rows": outputs}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows per side and batch")
    parser.add_argument("--keys", type=int, default=90_000)
    parser.add_argument("--workloads", nargs="+", default=["insert", "left", "upsert", "condition"])
    args = parser.parse_args(argv)
    report = {"rows_per_side_per_batch": args.rows, "keys": args.keys, "batches": 2,
              "load_average_at_start": os.getloadavg()[0], "results": {}}
    for workload in args.workloads:
        fast = measure(workload, args.rows, args.keys, True)
        slow = measure(workload, args.rows, args.keys, False)
        assert fast["output_rows"] == slow["output_rows"], (fast, slow)
        speedup = [round(s / f, 1) for s, f in zip(slow["kernel_seconds_per_batch"],
                                                    fast["kernel_seconds_per_batch"], strict=True)]
        report["results"][workload] = {"vectorised": fast, "per_record": slow, "speedup": speedup}
        print(workload, json.dumps(report["results"][workload]), flush=True)
    report["load_average_at_end"] = os.getloadavg()[0]
    os.makedirs(os.path.dirname(RESULT), exist_ok=True)
    with open(RESULT, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
