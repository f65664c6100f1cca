"""Sink upsert materializer kernel benchmark, mirroring FLIP-558's SinkUpsertMaterializerBenchmark.

Usage: python benchmarks/materializer_kernel.py [--records 10000] [--batch 1000] [--repeat 2]

``records`` changes under one primary key, payload 250 bytes, retract percentage
100%: record i inserts row i, and from ``delay`` on every insert is followed by
the retraction of row ``i - delay`` (so a key's history holds about ``delay`` rows),
for delay 1, 10, 50, 100, 1000, 5000, with and without an upsert key, for every
strategy. The kernel runs over a state store that pickles every stored row and
unpickles every loaded one, as the Spark runtime's RocksDB store does, fed in
micro-batches of ``batch`` records. The figure is records per millisecond (the
best of ``repeat`` runs). Results go to ``benchmarks/results/materializer_kernel.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from changeflow.kernels.materializer import STRATEGIES, SinkUpsertMaterializer  # noqa: E402
from changeflow.kernels.state import InMemoryKeyedState  # noqa: E402
from changeflow.testing.harness import KernelHarness, delete_record, insert_record  # noqa: E402

DELAYS = (1, 10, 50, 100, 1000, 5000)
COLUMNS = ["id", "uk", "payload"]


class SerializingKeyedState:
    """A KeyedState whose stored values cost their serialized size, like a RocksDB store."""

    def __init__(self) -> None:
        self.inner = InMemoryKeyedState()
        self.bytes = 0

    def load(self, table, keys):
        return self._decoded(table, self.inner.load(table, keys))

    def scan(self, table):
        return self._decoded(table, self.inner.scan(table))

    def _decoded(self, table, frame):
        if "blob" in frame.columns:
            blobs = frame.pop("blob")
            values = [pickle.loads(b) for b in blobs]
            for i, name in enumerate(self._value_columns(table)):
                col = np.empty(len(values), dtype=object)
                for j, v in enumerate(values):
                    col[j] = v[i]
                frame[name] = col
        return frame

    def store(self, table, keys, rows):
        value_cols = [c for c in rows.columns if c not in keys.columns]
        self._columns = getattr(self, "_columns", {})
        self._columns[table] = value_cols
        blobs = [pickle.dumps(tuple(r)) for r in rows[value_cols].itertuples(index=False, name=None)]
        self.bytes += sum(len(b) for b in blobs)
        out = rows[list(keys.columns)].copy()
        col = np.empty(len(blobs), dtype=object)
        col[:] = blobs
        out["blob"] = col
        self.inner.store(table, keys, out)

    def _value_columns(self, table):
        return self._columns[table]


def workload(records: int, delay: int, payload: str):
    out, i = [], 0
    while len(out) < records:
        out.append(insert_record(1, i, payload + str(i)))
        if i >= delay and len(out) < records:
            j = i - delay
            out.append(delete_record(1, j, payload + str(j)))
        i += 1
    return out


def run(strategy: str, with_uk: bool, delay: int, records: int, batch: int) -> float:
    kernel = SinkUpsertMaterializer(["id"], COLUMNS, upsert_key=["uk"] if with_uk else None, strategy=strategy)
    harness = KernelHarness(kernel, COLUMNS, state=SerializingKeyedState(), dtypes={"id": "Int64", "uk": "Int64",
                                                                                    "payload": object})
    rows = workload(records, delay, "p" * 245)
    frames = [harness.frame(rows[i:i + batch]) for i in range(0, len(rows), batch)]
    start = time.perf_counter()
    for f in frames:
        harness.process_frame(f)
    return records / ((time.perf_counter() - start) * 1000)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=10000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--delays", default=",".join(map(str, DELAYS)))
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--per-record-check", action="store_true",
                    help="also run LEGACY without upsert key with one record per batch (state read and written per "
                         "record, as Flink's ValueState<List>), at the shortest delay >= 10 and the longest")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                  "materializer_kernel.json"))
    args = ap.parse_args()
    delays = [int(d) for d in args.delays.split(",")]
    strategies = args.strategies.split(",")
    results = []
    for with_uk in (False, True):
        for strategy in strategies:
            for delay in delays:
                ops = max(run(strategy, with_uk, delay, args.records, args.batch) for _ in range(args.repeat))
                results.append({"strategy": strategy, "has_upsert_key": with_uk, "retract_delay": delay,
                                "ops_per_ms": round(ops, 3)})
                print(f"upsert_key={with_uk!s:5} {strategy:8} delay={delay:5} {ops:9.3f} ops/ms", flush=True)
    checks = {}
    for with_uk in (False, True):
        for strategy in strategies:
            by = {r["retract_delay"]: r["ops_per_ms"] for r in results
                  if r["strategy"] == strategy and r["has_upsert_key"] == with_uk}
            longest, short = max(delays), min((d for d in delays if d >= 10), default=min(delays))
            checks[f"{strategy}/{'uk' if with_uk else 'no_uk'}"] = round(by[longest] / by[short], 3)
    doc = {"records": args.records, "batch": args.batch, "payload_bytes": 250, "results": results,
           "ratio_longest_to_delay10": checks, "note": "machine shared with other jobs"}
    if args.per_record_check:
        longest, short = max(delays), min((d for d in delays if d >= 10), default=min(delays))
        per_record = {d: run("LEGACY", False, d, args.records, 1) for d in (short, longest)}  # slow: once
        print(f"LEGACY without upsert key, one record per batch: {per_record}", flush=True)
        doc["legacy_no_uk_one_record_per_batch"] = {
            "ops_per_ms": {str(d): round(v, 3) for d, v in per_record.items()},
            "ratio_longest_to_delay10": round(per_record[longest] / per_record[short], 3)}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(doc, fh, indent=1)
    print(json.dumps(checks, indent=1))


if __name__ == "__main__":
    main()
