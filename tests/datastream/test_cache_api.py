"""DataStream.cache() without Spark: where it is allowed, the errors, the cache's lifecycle and its plan."""

import json

import pytest

from changeflow.common import Types
from changeflow.datastream import CachedDataStream, RuntimeExecutionMode, StreamExecutionEnvironment

PAIR = Types.TUPLE([Types.STRING(), Types.INT()])


class FakeCache:
    """Stands for the runtime's handle of a created cache."""

    def __init__(self):
        self.released = False

    def release(self):
        self.released = True


def env_in(mode):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_runtime_mode(mode)
    return env


def test_cache_in_batch_mode_returns_a_cached_stream_of_the_same_type():
    env = env_in(RuntimeExecutionMode.BATCH)
    mapped = env.from_collection([("a", 1)], type_info=PAIR).map(lambda r: r, output_type=PAIR)
    cached = mapped.cache()
    assert isinstance(cached, CachedDataStream) and cached.get_type() == PAIR
    assert cached.cache() is cached  # caching a cached stream changes nothing
    assert not env._caches.is_cached(cached._node)  # lazy: no job has computed it yet


def test_automatic_mode_over_bounded_sources_caches():
    env = env_in(RuntimeExecutionMode.AUTOMATIC)
    assert isinstance(env.from_collection([1, 2]).cache(), CachedDataStream)


def test_streaming_mode_rejects_cache_saying_why():
    env = env_in(RuntimeExecutionMode.STREAMING)
    with pytest.raises(RuntimeError, match=r"batch mode only .* streaming mode \(RuntimeExecutionMode.STREAMING\): "
                                           r"a cache holds the complete intermediate result of a bounded job"):
        env.from_collection([1]).map(lambda x: x).cache()


def test_a_job_turned_streaming_after_cache_fails_before_running():
    env = env_in(RuntimeExecutionMode.BATCH)
    cached = env.from_collection([1]).map(lambda x: x).cache()
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    with pytest.raises(RuntimeError, match="batch mode only"):
        cached.execute_and_collect()


def test_keyed_stream_and_union_are_logical_and_cannot_be_cached():
    env = env_in(RuntimeExecutionMode.BATCH)
    ds = env.from_collection([("a", 1)], type_info=PAIR)
    with pytest.raises(RuntimeError, match=r"Cache for KeyedStream is not supported: key_by\(\) is a logical "
                                           r"transformation .* cache the stream before key_by\(\), or the result "
                                           r"of an operation after it"):
        ds.key_by(lambda r: r[0]).cache()
    with pytest.raises(RuntimeError, match=r"Cache for a union is not supported: union\(\) is a logical "
                                           r"transformation .* cache its input streams"):
        ds.union(ds).cache()
    # The result of an operation after key_by is physical: it caches.
    assert isinstance(ds.key_by(lambda r: r[0]).sum(1).cache(), CachedDataStream)


def test_cached_stream_settings_belong_to_the_operation_before_cache():
    cached = env_in(RuntimeExecutionMode.BATCH).from_collection([1]).map(lambda x: x).cache()
    for call, what in ((lambda: cached.name("n"), "Set name"), (lambda: cached.uid("u"), "Set uid"),
                       (lambda: cached.set_parallelism(2), "Set parallelism"), (cached.get_name, "Get name")):
        with pytest.raises(RuntimeError, match=f"{what} for CachedDataStream is not supported"):
            call()


def test_invalidate_and_close_release_the_created_caches():
    env = env_in(RuntimeExecutionMode.BATCH)
    first = env.from_collection([1]).map(lambda x: x).cache()
    second = env.from_collection([2]).map(lambda x: x).cache()
    handles = {first._node.id: FakeCache(), second._node.id: FakeCache()}
    for stream in (first, second):
        env._caches.put(stream._node, handles[stream._node.id])  # as a successful job does
    first.invalidate()
    assert handles[first._node.id].released and not env._caches.is_cached(first._node)
    assert not handles[second._node.id].released
    first.invalidate()  # invalidating twice is harmless
    env.close()
    assert handles[second._node.id].released and len(env._caches) == 0


def _plan(env):
    return [(n["id"], n["contents"], [p["id"] for p in n.get("predecessors", [])])
            for n in json.loads(env.get_execution_plan())["nodes"]]


def test_execution_plan_shows_cache_write_then_cache_read():
    env = env_in(RuntimeExecutionMode.BATCH)
    cached = env.from_collection([("a", 1)], type_info=PAIR).map(str, output_type=PAIR).cache()
    cached.key_by(lambda r: r[0]).sum(1).print()
    # Not yet created: the job computes the map, a CacheWrite keeps its output, the sum reads the map.
    assert _plan(env) == [(1, "Source: Collection Source", []), (2, "Map(str)", [1]), (3, "CacheWrite", [2]),
                          (4, "sum(1)", [2]), (5, "Sink: Print to Std. Out", [4])]
    env._caches.put(cached._node, FakeCache())
    # Created: a CacheRead source replaces the map and its source.
    assert _plan(env) == [(1, "CacheRead", []), (2, "sum(1)", [1]), (3, "Sink: Print to Std. Out", [2])]
