"""A keyed two-input operator (``DataStream.connect``) against the one-input program it replaces.

Usage: python benchmarks/connect.py [--rows 20000] [--keys 1000] [--out benchmarks/results/connect.json]

Two inputs of ``rows`` records ``(k INT, v BIGINT)`` each over ``keys`` keys, streaming mode,
one micro-batch per input; one running sum per key over both, one output per record
(``2 * rows``), collected:

- ``connect``: ``a.connect(b).key_by(k, k).process(KeyedCoProcessFunction)`` (the second input
  subtracts its negated values);
- ``union`` (the baseline): ``a.union(b.map(negate)).key_by(k).process(KeyedProcessFunction)``,
  the program a PyFlink user without ``connect`` would write when both inputs fit one type.

One session; a warm-up job first (Python workers up), then the jobs alternate
``connect, union, union, connect``; wall seconds of each ``execute()``, medians, the ratio
against the same run's baseline, and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "connect.json"))
    args = parser.parse_args()

    from changeflow.common import Configuration, Types
    from changeflow.datastream import (CollectSink, KeyedCoProcessFunction, KeyedProcessFunction,
                                       RuntimeExecutionMode, StreamExecutionEnvironment, ValueStateDescriptor)

    class Total:  # the running sum of the current key, in keyed state
        def open(self, runtime_context):
            self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))

        def add(self, key, amount):
            self.total.update((self.total.value() or 0) + amount)
            return key, self.total.value()

    class CoSum(Total, KeyedCoProcessFunction):
        def process_element1(self, value, ctx):
            yield self.add(value[0], value[1])

        def process_element2(self, value, ctx):
            yield self.add(value[0], -value[1])

    class Sum(Total, KeyedProcessFunction):
        def process_element(self, value, ctx):
            yield self.add(value[0], value[1])

    conf = Configuration()
    conf.set_string("changeflow.source.rows-per-batch", str(args.rows))
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    t = Types.TUPLE([Types.INT(), Types.LONG()])

    def run(kind: str, rows: int) -> float:
        first = env.from_collection([(i % args.keys, i) for i in range(rows)], type_info=t)
        second = env.from_collection([(i % args.keys, -i) for i in range(rows)], type_info=t)
        if kind == "connect":
            out = first.connect(second).key_by(lambda r: r[0], lambda r: r[0]).process(CoSum())
        else:
            negated = second.map(lambda r: (r[0], -r[1]), output_type=t)
            out = first.union(negated).key_by(lambda r: r[0]).process(Sum())
        sink = CollectSink()
        out.sink_to(sink)
        start = time.perf_counter()
        env.execute(kind)
        took = time.perf_counter() - start
        assert len(sink.records) == 2 * rows, (kind, len(sink.records))
        return took

    load_before = os.getloadavg()
    run("union", args.rows // 10)
    seconds: dict[str, list[float]] = {"connect": [], "union": []}
    for kind in ("connect", "union", "union", "connect"):
        seconds[kind].append(run(kind, args.rows))
    medians = {k: statistics.median(v) for k, v in seconds.items()}
    result = {"rows_per_input": args.rows, "keys": args.keys, "seconds": seconds, "median_seconds": medians,
              "connect_over_union": medians["connect"] / medians["union"],
              "load_average_before": load_before, "load_average_after": os.getloadavg()}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
