"""Time the streaming SESSION window kernel over Nexmark q11's bids: one pass against segment by segment.

Nexmark q11 (``GROUP BY bidder, SESSION(dateTime, INTERVAL '10' SECOND)``) plans a
SESSION window table function partitioned by ``bidder`` below a window aggregation.
This feeds that kernel (no Spark) the bids of ``--events`` Nexmark events in one
micro-batch, as the Spark host hands it over: the rows with a watermark every 200 ms
of event time among them (the largest time so far - 4 s, nexmark's watermark), then
the end of input, over paged state (``--pages`` pages per bucket, as the runtime keeps
it). Two ways, same rows, same run: ``process_with_watermarks`` of the kernel (one
pass) and the contract's default (``process`` and ``on_watermark`` per segment). Reports
CPU seconds of each and checks that their outputs are equal.

    .venv/bin/python benchmarks/session_kernel.py [--events 30000 100000] [--data DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import pandas as pd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import nexmark_workload as W  # noqa: E402
from changeflow.kernels.changelog import INSERT, KIND, SEQ, SUB  # noqa: E402
from changeflow.kernels.contract import KernelBase, end_of_input_output  # noqa: E402
from changeflow.kernels.window.session_tvf import SessionWindowTableFunction  # noqa: E402
from changeflow.state.paged import DictPageStore, PagedKeyedState  # noqa: E402

COLUMNS = ["auction", "bidder", "price", "dateTime"]


def bids(events: int, data: str) -> pd.DataFrame:
    """The bids among the first ``events`` Nexmark events (``nexmark.py``'s event file, written into
    ``data`` if not there), stamped in stream order."""
    path = os.path.join(data, f"events-{events}.json")
    if not os.path.exists(path):
        W.write_events(path, events)
    with open(path, encoding="utf-8") as f:
        rows = [(b["auction"], b["bidder"], b["price"], b["dateTime"])
                for b in (json.loads(line)["bid"] for line in f) if b is not None]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["dateTime"] = pd.to_datetime(frame["dateTime"])
    frame[KIND] = np.full(len(frame), INSERT, dtype=np.int8)
    frame[SEQ] = np.arange(len(frame), dtype=np.int64)
    frame[SUB] = np.zeros(len(frame), dtype=np.int64)
    return frame


def watermarks(frame: pd.DataFrame, interval: int = 200, delay: int = 4_000) -> list[tuple[int, int]]:
    """A watermark (largest time so far - ``delay``) after the first row that moves it ``interval`` on."""
    ms = frame["dateTime"].to_numpy().astype("datetime64[ms]").astype(np.int64)
    out, last = [], None
    for position, top in enumerate(np.maximum.accumulate(ms - delay)):
        if last is None or top >= last + interval:
            out.append((position, int(top)))
            last = int(top)
    return out


def run(frame: pd.DataFrame, marks: list[tuple[int, int]], one_pass: bool, pages: int) -> tuple[float, pd.DataFrame]:
    kernel = SessionWindowTableFunction(COLUMNS, "dateTime", 10_000, ["bidder"])
    state = PagedKeyedState(DictPageStore(), ["bidder"], pages=pages)
    start = time.process_time()
    if one_pass:
        fired = kernel.process_with_watermarks([frame], marks, state)
    else:
        fired = KernelBase.process_with_watermarks(kernel, [frame], marks, state)
    state.commit()
    end = end_of_input_output(kernel, state)
    seconds = time.process_time() - start
    return seconds, pd.concat([f for f in (fired, end) if f is not None], ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, nargs="+", default=[30_000, 100_000])
    parser.add_argument("--pages", type=int, default=8)
    parser.add_argument("--data", default=tempfile.gettempdir(), help="directory of the event files")
    parser.add_argument("--out")
    args = parser.parse_args()
    results = []
    for events in args.events:
        frame = bids(events, args.data)
        marks = watermarks(frame)
        by_segment, slow = run(frame, marks, False, args.pages)
        one_pass, fast = run(frame, marks, True, args.pages)
        assert fast.equals(slow), "one pass and segment by segment differ"
        entry = {"events": events, "bids": len(frame), "watermarks": len(marks), "rows_out": len(fast),
                 "cpu_seconds_by_segment": round(by_segment, 3), "cpu_seconds_one_pass": round(one_pass, 3)}
        results.append(entry)
        print(json.dumps(entry), flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"load_average": list(os.getloadavg()), "runs": results}, f, indent=1)


if __name__ == "__main__":
    main()
