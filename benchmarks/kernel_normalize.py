"""Time the ChangelogNormalize kernel, vectorised, against its row-by-row predecessor on the same batches.

The workload is an upsert stream as an ``upsert-kafka`` topic gives it: ``--rows`` changes per
batch over ``--keys`` keys, 85% upserts (``+I``) whose value repeats the key's last one about a
tenth of the time (dropped), 15% deletes (tombstones, some of keys without a row). A first batch
finds every key new, then ``--updates`` batches change them (the steady state; the median is
reported). Kernel time excludes state I/O (a vectorised stand-in for the runtime's paged state,
kernel_group_agg.FrameState), reported apart. The baseline is what the kernel must at least do,
``df.groupby(k).last()`` over the same frame (best of three).

    .venv/bin/python benchmarks/kernel_normalize.py [--rows 1000000] [--keys 100000] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

from kernel_group_agg import FrameState, TimedState  # noqa: E402

from changeflow.kernels.normalize import ChangelogNormalize  # noqa: E402
from changeflow.kernels.normalize.rowwise import RowwiseChangelogNormalize  # noqa: E402


def make_batch(rows: int, keys: int, seed: int, first_seq: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    k = np.concatenate([np.arange(keys), rng.integers(0, keys, rows - keys)])
    rng.shuffle(k)
    kinds = np.where(rng.random(rows) < 0.15, 3, 0).astype(np.int8)
    return pd.DataFrame({
        "k": pd.array(k, dtype="Int64"),
        "v": pd.array(rng.integers(0, 10, rows), dtype="Int64"),
        "name": pd.Series(np.asarray(["n%d" % i for i in range(16)], dtype=object)[k % 16], dtype=object),
        "_kind": kinds,
        "_seq": np.arange(first_seq, first_seq + rows, dtype=np.int64),
        "_sub": np.zeros(rows, dtype=np.int64),
    })


def baseline(batch: pd.DataFrame) -> float:
    times = []
    for _ in range(3):
        t = time.perf_counter()
        batch.groupby("k").last()
        times.append(time.perf_counter() - t)
    return min(times)


def run(kernel_class, mini_batch: bool, batches: list[pd.DataFrame]) -> tuple[list[tuple[float, float, int]], list]:
    kernel = kernel_class(["k", "v", "name"], ["k"], mini_batch=mini_batch)
    state = TimedState(FrameState("k"))
    times, outputs = [], []
    for batch in batches:
        state.seconds = 0.0
        t = time.perf_counter()
        result = kernel.process(batch, state)
        total = time.perf_counter() - t
        times.append((total - state.seconds, state.seconds, len(result)))
        outputs.append(result)
    return times, outputs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--updates", type=int, default=2, help="number of update batches after the first")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    batches = [make_batch(args.rows, args.keys, s, s * args.rows) for s in range(1, args.updates + 2)]
    base = baseline(batches[1])
    report: dict = {"rows": args.rows, "keys": args.keys, "load_before": os.getloadavg()[0],
                    "groupby_last_ms": base * 1000, "modes": {}}
    print(f"{args.rows:,} rows / {args.keys:,} keys per batch; pandas groupby().last() baseline {base * 1000:.0f} ms; "
          f"load {os.getloadavg()[0]:.1f}")
    for mode, mini in (("per-row", False), ("mini-batch", True)):
        figures = {}
        outputs = {}
        for name, cls in (("row-by-row", RowwiseChangelogNormalize), ("vectorised", ChangelogNormalize)):
            times, outputs[name] = run(cls, mini, batches)
            update = float(np.median([t[0] for t in times[1:]]))
            figures[name] = {"first_batch_ms": times[0][0] * 1000, "update_batch_ms": update * 1000,
                             "state_io_ms": float(np.median([t[1] for t in times[1:]])) * 1000,
                             "changes_out": int(times[1][2])}
            print(f"  {mode:10} {name:10}: first batch {times[0][0] * 1000:6.0f} ms, update batch "
                  f"{update * 1000:6.0f} ms = {update / base:4.1f}x baseline, {int(times[1][2]):,} changes out")
        same = all(a.equals(b) for a, b in zip(outputs["row-by-row"], outputs["vectorised"], strict=True))
        ratio = figures["row-by-row"]["update_batch_ms"] / figures["vectorised"]["update_batch_ms"]
        print(f"  {mode:10} vectorised is {ratio:.1f}x faster per update batch; outputs identical: {same}")
        report["modes"][mode] = {**figures, "speedup": ratio, "identical_output": same}
    report["load_after"] = os.getloadavg()[0]
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
