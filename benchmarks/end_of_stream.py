"""End-of-input operators (FLIP-331): a keyed end-of-stream reduce and a co_group, against per-record and RDD baselines.

Usage: .venv/bin/python benchmarks/end_of_stream.py [--records 10000000] [--keys 100000]
       [--per-record-records 1000000] [--cogroup-records 5000000] [--partitions 4]
       [--out benchmarks/results/end_of_stream.json]

Input: a bounded Spark DataFrame of ``records`` rows ``(k, v)``, ``k`` spread
over ``keys`` keys, ``v`` in 0..999 (``spark.range`` arithmetic: generating it
costs the same in every run). All runs in one process, one after the other:

reduce
  - **end of stream**: a STREAMING DataStream job
    ``from_source(df).map(to tuple).key_by(k).window(GlobalWindows.create_with_end_of_stream_trigger())
    .reduce(sum)``, collected (one record per key);
  - **per record**: the same reduction as a streaming keyed ``reduce`` (one
    running value per input record, Flink's streaming semantics), collected; it
    is slow, so it runs over ``per-record-records`` rows and its time is
    extrapolated linearly to ``records`` (reported as such);
  - **RDD**: ``df.rdd.map(to tuple).reduceByKey(add).collect()``.
co_group
  two inputs of ``cogroup-records`` rows each (the second keyed the same way,
  shifted), ``co_group(...).window(end of stream).apply(f)`` with ``f`` emitting
  ``(key, count of first, sum of second)`` against ``rdd1.cogroup(rdd2)`` with
  the same function.

Every result is checked against Spark's own ``groupBy`` aggregation. Each
variant but the per-record one runs ``--repeat`` times and the fastest run
counts: the machine is shared, so single runs are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pyspark.sql import functions as F  # noqa: E402

from changeflow.common import Configuration  # noqa: E402
from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment  # noqa: E402
from changeflow.datastream.window import GlobalWindows  # noqa: E402
from changeflow.runtime.spark import session  # noqa: E402

END_OF_STREAM = GlobalWindows.create_with_end_of_stream_trigger()


def frame(spark, records: int, keys: int, partitions: int, shift: int = 0):
    ids = spark.range(records, numPartitions=partitions)
    return ids.select(((F.col("id") * 7919 + shift) % keys).alias("k"), (F.col("id") % 1000).alias("v"))


def to_pair(row):
    return row.k, row.v


def first_field(pair):
    return pair[0]


def add_pairs(a, b):
    return a[0], a[1] + b[1]


def count_and_sum(first, second):
    key = first[0][0] if first else second[0][0]
    return [(key, len(first), sum(p[1] for p in second))]


REPEAT = 2  # --repeat: each variant runs this many times; the fastest run counts (the machine is shared)


def timed(label: str, run, repeat: int | None = None):
    best, result = None, None
    for _ in range(repeat or REPEAT):
        start = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - start
        print(f"{label}: {seconds:.1f} s", flush=True)
        best = seconds if best is None else min(best, seconds)
    return result, best


def environment(spark, rows_per_batch: int):
    conf = Configuration()
    conf.set_string("changeflow.source.rows-per-batch", str(rows_per_batch))
    env = StreamExecutionEnvironment.get_execution_environment(conf, spark_session=spark)
    return env.set_runtime_mode(RuntimeExecutionMode.STREAMING)


def expected_sums(df) -> dict:
    return {r.k: r.s for r in df.groupBy("k").agg(F.sum("v").alias("s")).collect()}


def bench_reduce(spark, args) -> dict:
    df = frame(spark, args.records, args.keys, args.partitions)
    expected = expected_sums(df)
    env = environment(spark, args.rows_per_batch)
    stream = env.from_source(df).map(to_pair).key_by(first_field).window(END_OF_STREAM).reduce(add_pairs)
    eos, eos_s = timed("end-of-stream window reduce (streaming job)", lambda: list(stream.execute_and_collect()))
    assert dict(eos) == expected and len(eos) == len(expected), "end-of-stream reduce differs from groupBy"

    rdd, rdd_s = timed("RDD reduceByKey", lambda: df.rdd.map(to_pair).reduceByKey(lambda a, b: a + b).collect())
    assert dict(rdd) == expected

    small = frame(spark, args.per_record_records, args.keys, args.partitions)
    small_expected = expected_sums(small)
    per_record = environment(spark, args.rows_per_batch).from_source(small).map(to_pair).key_by(first_field).reduce(
        add_pairs)
    running, per_record_s = timed(f"per-record streaming keyed reduce ({args.per_record_records:,} records)",
                                  lambda: list(per_record.execute_and_collect()), repeat=1)
    assert len(running) == args.per_record_records and dict(running) == small_expected
    extrapolated = per_record_s * args.records / args.per_record_records
    return {
        "records": args.records, "keys": args.keys,
        "end_of_stream_s": round(eos_s, 2),
        "rdd_reduce_by_key_s": round(rdd_s, 2),
        "per_record_records": args.per_record_records,
        "per_record_measured_s": round(per_record_s, 2),
        "per_record_extrapolated_s": round(extrapolated, 2),
        "end_of_stream_vs_rdd": round(eos_s / rdd_s, 2), "target_vs_rdd": "<= 1.2",
        "per_record_vs_end_of_stream": round(extrapolated / eos_s, 2), "target_vs_per_record": ">= 5",
    }


def bench_co_group(spark, args) -> dict:
    n = args.cogroup_records
    first = frame(spark, n, args.keys, args.partitions)
    second = frame(spark, n, args.keys, args.partitions, shift=13)
    counts = {r.k: r.c for r in first.groupBy("k").count().withColumnRenamed("count", "c").collect()}
    sums = expected_sums(second)
    expected = {k: (counts.get(k, 0), sums.get(k, 0)) for k in set(counts) | set(sums)}

    env = environment(spark, args.rows_per_batch)
    grouped = (env.from_source(first).map(to_pair).co_group(env.from_source(second).map(to_pair))
               .where(first_field).equal_to(first_field).window(END_OF_STREAM).apply(count_and_sum))
    eos, eos_s = timed("end-of-stream co_group (streaming job)", lambda: list(grouped.execute_and_collect()))
    assert {k: (a, b) for k, a, b in eos} == expected, "end-of-stream co_group differs from groupBy"

    def rdd_co_group():
        left, right = first.rdd.map(to_pair), second.rdd.map(to_pair)
        return left.cogroup(right).flatMap(lambda kv: count_and_sum(
            [(kv[0], v) for v in kv[1][0]], [(kv[0], v) for v in kv[1][1]])).collect()

    rdd, rdd_s = timed("RDD cogroup", rdd_co_group)
    assert {k: (a, b) for k, a, b in rdd} == expected
    return {"records_per_input": n, "keys": args.keys, "end_of_stream_s": round(eos_s, 2),
            "rdd_cogroup_s": round(rdd_s, 2), "end_of_stream_vs_rdd": round(eos_s / rdd_s, 2)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, default=100_000)
    parser.add_argument("--per-record-records", type=int, default=1_000_000)
    parser.add_argument("--cogroup-records", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--rows-per-batch", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2, help="runs per variant; the fastest counts")
    parser.add_argument("--skip", choices=["reduce", "co_group"], action="append", default=[])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "end_of_stream.json"))
    args = parser.parse_args(argv)
    global REPEAT
    REPEAT = args.repeat

    spark = session.get_or_create("local[2]")
    # Spark's workers must import this module's functions: ship them by value.
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    results = {"machine": f"{os.cpu_count()} cores, local[2], machine shared with other jobs",
               "timing": f"fastest of {args.repeat} runs per variant (per-record: one run)",
               "load_average_at_start": os.getloadavg()[0]}
    if "reduce" not in args.skip:
        results["reduce"] = bench_reduce(spark, args)
    if "co_group" not in args.skip:
        results["co_group"] = bench_co_group(spark, args)
    results["load_average_at_end"] = os.getloadavg()[0]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
