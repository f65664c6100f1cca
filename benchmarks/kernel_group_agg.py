"""Time the group-aggregate kernel against a plain pandas ``groupby`` on the same data.

The workload is the design's reference batch: 4M rows over 400k keys, ``SUM(v)``
and ``COUNT(v)`` per key, as one hash bucket would see it inside Spark. Each
mode processes a first batch that finds every key new, then ``--updates``
batches that update every key (the steady state of a streaming query; the median
is reported). Kernel time excludes state I/O, which is reported separately (the
Spark runtime has its own paged state); the baseline is
``df.groupby(k)[v].agg(["sum", "count"])`` on the same frame, best of three (a
warm pandas; its first run in a process is about twice as slow).

The first batch of a fresh process is slower than the later ones mostly because
the memory it allocates is new to the process (page faults); a Spark Python
worker is reused across micro-batches, so the later batches are the steady state.

    .venv/bin/python benchmarks/kernel_group_agg.py [--rows 4000000] [--keys 400000]
        [--state frame|memory] [--retractions 0.25]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from changeflow.common.types import DataTypes  # noqa: E402
from changeflow.kernels.aggregate import AggCall, GroupAggregate  # noqa: E402
from changeflow.kernels.state import InMemoryKeyedState  # noqa: E402


class TimedState:
    """Wraps a KeyedState and adds up the time spent in it."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.seconds = 0.0

    def load(self, table, keys):
        t = time.perf_counter()
        try:
            return self.inner.load(table, keys)
        finally:
            self.seconds += time.perf_counter() - t

    def store(self, table, keys, rows):
        t = time.perf_counter()
        try:
            return self.inner.store(table, keys, rows)
        finally:
            self.seconds += time.perf_counter() - t

    def scan(self, table):
        t = time.perf_counter()
        try:
            return self.inner.scan(table)
        finally:
            self.seconds += time.perf_counter() - t


class FrameState:
    """A minimal vectorised KeyedState (one DataFrame per table, single int key).

    Stands in for the runtime's paged state so the benchmark measures the kernel
    rather than InMemoryKeyedState's per-key Python dicts.
    """

    def __init__(self, key: str) -> None:
        self.key = key
        self.tables: dict[str, pd.DataFrame] = {}

    def load(self, table, keys):
        frame = self.tables.get(table)
        if frame is None:
            return keys.iloc[:0]
        return frame[frame[self.key].isin(keys[self.key])].reset_index(drop=True)

    def store(self, table, keys, rows):
        frame = self.tables.get(table)
        kept = frame[~frame[self.key].isin(keys[self.key])] if frame is not None else None
        self.tables[table] = rows if kept is None or not len(kept) else pd.concat([kept, rows], ignore_index=True)

    def scan(self, table):
        frame = self.tables.get(table)
        return frame.reset_index(drop=True) if frame is not None else pd.DataFrame()


def make_batch(rows: int, keys: int, seed: int, shuffled: bool, first_seq: int,
               retractions: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    kinds = np.zeros(rows, dtype=np.int8)
    if retractions:  # -U rows (their values need not match: only the cost is measured)
        kinds[rng.random(rows) < retractions] = 1
    # Every key appears at least once so that batch 2 updates all of them.
    k = np.concatenate([np.arange(keys), rng.integers(0, keys, rows - keys)])
    rng.shuffle(k)
    seq = np.arange(first_seq, first_seq + rows, dtype=np.int64)
    if shuffled:  # as if read from a shuffle: 8 interleaved runs
        seq = np.concatenate([seq[i::8] for i in range(8)])
    return pd.DataFrame(
        {
            "k": pd.array(k, dtype="Int64"),
            "v": pd.array(rng.integers(0, 1000, rows), dtype="Int64"),
            "_kind": kinds,
            "_seq": seq,
            "_sub": np.zeros(rows, dtype=np.int64),
        }
    )


def baseline(batch: pd.DataFrame) -> float:
    times = []
    for _ in range(3):
        t = time.perf_counter()
        batch.groupby("k")["v"].agg(["sum", "count"])
        times.append(time.perf_counter() - t)
    return min(times)


def run(mode: str, mini_batch: bool, batches: list[pd.DataFrame], state_kind: str) -> list[tuple[float, float, int]]:
    calls = [AggCall("sum", "v", DataTypes.BIGINT(), "s"), AggCall("count", "v", DataTypes.BIGINT(), "c")]
    kernel = GroupAggregate(["k"], calls, mini_batch=mini_batch, input_insert_only=False)
    state = TimedState(FrameState("k") if state_kind == "frame" else InMemoryKeyedState())
    out = []
    for batch in batches:
        state.seconds = 0.0
        t = time.perf_counter()
        result = kernel.process(batch, state)
        total = time.perf_counter() - t
        out.append((total - state.seconds, state.seconds, len(result)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--keys", type=int, default=400_000)
    parser.add_argument("--state", choices=["frame", "memory"], default="frame",
                        help="frame: a vectorised stand-in; memory: InMemoryKeyedState (per-key dicts)")
    parser.add_argument("--retractions", type=float, default=0.0, help="fraction of -U rows in update batches")
    parser.add_argument("--updates", type=int, default=3, help="number of update batches after the first")
    args = parser.parse_args()

    for shuffled in (False, True):
        batches = [make_batch(args.rows, args.keys, s, shuffled, s * args.rows, args.retractions if s > 1 else 0.0)
                   for s in range(1, args.updates + 2)]
        base = baseline(batches[0])
        order = "8 interleaved runs" if shuffled else "in order"
        print(f"\n{args.rows:,} rows / {args.keys:,} keys, input {order}, {args.retractions:.0%} retractions; "
              f"pandas groupby sum+count baseline: {base * 1000:.0f} ms")
        for name, mini in (("mini-batch", True), ("per-row", False)):
            results = run(name, mini, batches, args.state)
            first, updates = results[0], results[1:]
            rows = [("first batch (new keys)", first)]
            if updates:
                rows.append((f"update batch (median of {len(updates)})",
                             tuple(float(np.median([u[i] for u in updates])) for i in range(3))))
            for label, (kernel_s, state_s, emitted) in rows:
                print(f"  {name:10} {label:28}: kernel {kernel_s * 1000:6.0f} ms = {kernel_s / base:4.1f}x baseline, "
                      f"state I/O {state_s * 1000:5.0f} ms, {int(emitted):,} changes out")


if __name__ == "__main__":
    main()
