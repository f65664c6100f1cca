"""Cached intermediate results (FLIP-205): a second job over a cached stream vs recomputing it.

Usage: .venv/bin/python benchmarks/cache.py [--rows 20000] [--map-ms 1.0] [--repeats 5]
       [--out benchmarks/results/cache.json]

Pipeline (DataStream API, batch mode): ``rows`` records from a collection, a
map that takes ``map-ms`` of wall time per record (a sleep: an expensive
lookup or parse, independent of the machine's CPU load) and returns
``(x % 100, x)``. Two second jobs read that stream:

- ``light``: a filter keeping a tenth of the records, collected;
- ``keyed``: a keyed reduce (sum per key, 100 keys) collected.

Each second job is timed, in the same process, on two streams built the same
way: one ``cache()``d (its cache created beforehand by a first job, which is
timed too) and one not (every job recomputes the map). A third stream, the
same records through a map that takes no time, uncached, shows what the
uncached job costs apart from the map (the source shipped from the driver,
job scheduling, Python workers, Arrow transfers). Each figure is the
median of ``repeats`` runs, after one warm-up job that starts Spark's Python
workers. The result of every timed job is checked against the expected one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from changeflow.common import Types  # noqa: E402
from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment  # noqa: E402
from changeflow.runtime.spark import session  # noqa: E402

PAIR = Types.TUPLE([Types.INT(), Types.LONG()])


class SlowMap:
    """``x -> (x % 100, x)`` taking ``ms`` milliseconds per record."""

    def __init__(self, ms: float) -> None:
        self.seconds = ms / 1000.0

    def __call__(self, x):
        time.sleep(self.seconds)
        return x % 100, x


def light(stream):
    return sorted(r[1] for r in stream.filter(lambda r: r[1] % 10 == 0).execute_and_collect())


def keyed(stream):
    return sorted(stream.key_by(lambda r: r[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).execute_and_collect())


def timed(job, stream, expected) -> float:
    start = time.perf_counter()
    result = job(stream)
    elapsed = time.perf_counter() - start
    if result != expected:
        raise AssertionError(f"{job.__name__}: wrong result")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--map-ms", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "cache.json"))
    args = parser.parse_args()

    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark = session.get_or_create("local[2]", {"spark.sql.shuffle.partitions": "2"})
    env = StreamExecutionEnvironment.get_execution_environment(spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    rows = list(range(args.rows))
    expected = {"light": [x for x in rows if x % 10 == 0],
                "keyed": sorted((k, sum(x for x in rows if x % 100 == k)) for k in range(100))}

    def pipeline():
        return env.from_collection(rows, type_info=Types.INT()).map(SlowMap(args.map_ms), output_type=PAIR)

    timed(light, env.from_collection(rows[:100], type_info=Types.INT()).map(SlowMap(0), output_type=PAIR),
          [x for x in rows[:100] if x % 10 == 0])  # warm-up: Spark's Python workers start
    cached = pipeline().cache()
    start = time.perf_counter()
    size = len(list(cached.execute_and_collect()))  # the first job computes the map and creates the cache
    first_job_s = time.perf_counter() - start
    plain = pipeline()
    instant = env.from_collection(rows, type_info=Types.INT()).map(SlowMap(0), output_type=PAIR)
    figures = {}
    for job in (light, keyed):
        over_cache = [timed(job, cached, expected[job.__name__]) for _ in range(args.repeats)]
        recomputed = [timed(job, plain, expected[job.__name__]) for _ in range(args.repeats)]
        floor = [timed(job, instant, expected[job.__name__]) for _ in range(args.repeats)]
        figures[job.__name__] = {
            "second_job_over_cache_s": round(statistics.median(over_cache), 3),
            "second_job_recomputing_s": round(statistics.median(recomputed), 3),
            "speedup": round(statistics.median(recomputed) / statistics.median(over_cache), 1),
            "floor_job_without_map_cost_s": round(statistics.median(floor), 3),
            "runs_over_cache_s": [round(t, 3) for t in over_cache],
            "runs_recomputing_s": [round(t, 3) for t in recomputed],
        }
    env.close()
    result = {
        "first_job_creating_cache_s": round(first_job_s, 3),
        "second_jobs": figures,
        "target_speedup": 10.0,
        "config": {"rows": args.rows, "cached_records": size, "map_ms_per_record": args.map_ms,
                   "repeats": args.repeats, "master": "local[2]", "storage": "Spark cache, MEMORY_AND_DISK",
                   "machine": "2 cores shared with other jobs"},
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
