"""DataStream.cache() on Spark: reuse across jobs, invalidate, close, a failed job, lost cached blocks.

The upstream map records each call as a file in a temp directory, because
Spark runs it in separate Python worker processes; counting the files tells
how often it ran over all jobs.
"""

import os
import sys
import uuid

import pytest
from pyspark import cloudpickle

from changeflow.common import Types
from changeflow.datastream import OutputTag, ProcessFunction, RuntimeExecutionMode, StreamExecutionEnvironment

# Spark's workers cannot import this test module: ship its functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

PAIR = Types.TUPLE([Types.INT(), Types.INT()])
N = 30
EXPECTED_SUMS = sorted((k, sum(2 * x for x in range(N) if x % 3 == k)) for k in range(3))


class Counted:
    """``x -> (x % 3, 2x)``, leaving one file per call in ``directory``."""

    def __init__(self, directory):
        self.directory = directory

    def __call__(self, x):
        open(os.path.join(self.directory, uuid.uuid4().hex), "w").close()
        return x % 3, 2 * x

    def calls(self):
        return len(os.listdir(self.directory))


@pytest.fixture
def pipeline(spark, tmp_path):
    """A batch environment, the counted map over N records, cached, and the map."""
    env = StreamExecutionEnvironment.get_execution_environment(spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    counted = Counted(str(tmp_path))
    cached = env.from_collection(list(range(N)), type_info=Types.INT()).map(counted, output_type=PAIR).cache()
    yield env, cached, counted
    env.close()


def sums(cached):
    """A job over the cache with a shuffle: the sum of the second field per key."""
    return sorted(cached.key_by(lambda r: r[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).execute_and_collect())


def values(cached):
    """A job over the cache without a shuffle."""
    return sorted(cached.map(lambda r: r[1]).execute_and_collect())


VALUES = [2 * x for x in range(N)]


def persisted_rdds(spark):
    return set(spark.sparkContext._jsc.getPersistentRDDs().keySet())


def test_later_jobs_read_the_cache_instead_of_recomputing(pipeline, capsys):
    env, cached, counted = pipeline
    assert sorted(cached.execute_and_collect()) == sorted((x % 3, 2 * x) for x in range(N))
    assert counted.calls() == N
    # A second job (a keyed reduce, print + execute) reads the cache: the map does not run again.
    cached.key_by(lambda r: r[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    env.execute("print")
    assert sorted(capsys.readouterr().out.splitlines()) == [f"({k},{total})" for k, total in EXPECTED_SUMS]
    assert counted.calls() == N


def test_invalidate_recomputes_and_caches_again_and_close_releases(pipeline, spark):
    env, cached, counted = pipeline
    assert values(cached) == VALUES and counted.calls() == N
    cached.invalidate()
    assert sums(cached) == EXPECTED_SUMS and counted.calls() == 2 * N  # recomputed, cached again
    assert values(cached) == VALUES and counted.calls() == 2 * N
    held = env._caches.get(cached._node).frame
    env.close()
    assert not held.storageLevel.useMemory and len(env._caches) == 0  # Spark no longer holds it
    assert values(cached) == VALUES and counted.calls() == 3 * N


def test_a_failed_job_creates_no_cache(pipeline):
    env, cached, counted = pipeline

    def fail_on_last(r):
        if r[1] == 2 * (N - 1):
            raise ValueError("no")
        return r

    with pytest.raises(Exception, match="no"):
        cached.map(fail_on_last).execute_and_collect()
    assert not env._caches.is_cached(cached._node)
    before = counted.calls()
    assert values(cached) == VALUES and counted.calls() == before + N and env._caches.is_cached(cached._node)


def test_lost_cached_blocks_are_recomputed_transparently(pipeline, spark):
    env, cached, counted = pipeline
    before = persisted_rdds(spark)
    assert values(cached) == VALUES and counted.calls() == N
    ours = persisted_rdds(spark) - before
    assert ours, "the first job persisted the cache"
    # Drop the cached blocks from every block manager behind the environment's back, as a lost
    # executor would (the cache manager still lists the DataFrame as cached).
    for rdd_id in ours:
        spark.sparkContext._jsc.sc().unpersistRDD(rdd_id, True)
    assert sums(cached) == EXPECTED_SUMS and counted.calls() == 2 * N  # recomputed from the lineage
    assert values(cached) == VALUES and counted.calls() == 2 * N  # and stored again
    # Spark's cache manager forgets the DataFrame (e.g. spark.catalog.clearCache() by other code):
    # the next job persists it again and recomputes it once.
    env._caches.get(cached._node).frame.unpersist(blocking=True)
    assert values(cached) == VALUES and counted.calls() == 3 * N


ODD = OutputTag("odd", Types.INT())


class CountedSplit(ProcessFunction):
    """Odd values to the side output ``odd``, even ones to the main output; one file per call."""

    def __init__(self, counted):
        self.counted = counted

    def process_element(self, value, ctx):
        self.counted(value)
        yield (ODD, value) if value % 2 else value


def test_a_cached_side_output_is_computed_once(spark, tmp_path):
    env = StreamExecutionEnvironment.get_execution_environment(spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    counted = Counted(str(tmp_path))
    main = env.from_collection(list(range(N)), type_info=Types.INT()).process(CountedSplit(counted), Types.INT())
    odd = main.get_side_output(ODD).cache()
    assert sorted(odd.execute_and_collect()) == list(range(1, N, 2)) and counted.calls() == N
    assert sorted(odd.map(lambda v: -v).execute_and_collect()) == sorted(-v for v in range(1, N, 2))
    assert counted.calls() == N
    env.close()


def test_a_cache_is_immutable_once_created(spark, tmp_path):
    env = StreamExecutionEnvironment.get_execution_environment(spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    path = tmp_path / "lines.txt"
    path.write_text("a\nb\n")
    lines = env.read_text_file(str(path)).cache()
    assert sorted(lines.execute_and_collect()) == ["a", "b"]
    path.write_text("changed\n")  # the source changes after the cache was created
    assert sorted(lines.map(str.upper).execute_and_collect()) == ["A", "B"]
    env.close()


def test_automatic_mode_over_an_unbounded_source_refuses_cache(spark):
    env = StreamExecutionEnvironment.get_execution_environment(spark_session=spark)
    env.set_runtime_mode(RuntimeExecutionMode.AUTOMATIC)
    unbounded = env.from_source(spark.readStream.format("rate").load())
    with pytest.raises(RuntimeError, match=r"streaming mode \(RuntimeExecutionMode.AUTOMATIC\)"):
        unbounded.map(lambda r: r).cache()
