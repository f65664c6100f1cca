"""The cache lifecycle against a reference model, for random sequences of jobs, failures, losses and releases.

Spark is replaced by a fake DataFrame that counts how often its records are
computed, with Spark's caching rules: a persisted frame is computed by the
first job executing it and read afterwards, until its blocks are lost or it
is unpersisted. The model says, for each cache, whether a job over it
computes its input: only when no earlier successful job left it cached.
"""

from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark import StorageLevel

from changeflow.datastream.cache import CacheNode, CacheRegistry
from changeflow.runtime.spark.stream_cache import JobCaches

NONE = StorageLevel(False, False, False, False)


class FakeFrame:
    """A persisted-or-not DataFrame whose computations are counted in ``counter[0]``."""

    def __init__(self, counter):
        self.counter = counter
        self.level = NONE
        self.blocks = False  # the cached blocks exist

    def persist(self, level):
        self.level = level
        return self

    def unpersist(self, blocking=False):
        self.level, self.blocks = NONE, False
        return self

    @property
    def storageLevel(self):
        return self.level

    def execute(self):
        """A job runs this frame: Spark reads the blocks, or computes (and keeps them if persisted)."""
        if self.level == NONE or not self.blocks:
            self.counter[0] += 1
            self.blocks = self.level != NONE


OPS = st.sampled_from(["job", "failed_job", "invalidate", "close", "lose_blocks", "forget"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(OPS, st.integers(0, 2)), max_size=25))
def test_a_cache_is_computed_only_when_no_earlier_successful_job_left_it(steps):
    registry = CacheRegistry()
    nodes = [CacheNode(f"cache {i}", None) for i in range(3)]
    counters = [[0] for _ in nodes]
    expected = [0, 0, 0]
    registered = [False, False, False]  # the model: a successful job created it, nothing released it since
    cached = [False, False, False]  # ... and its blocks are there
    frames = {}
    for op, i in steps:
        node = nodes[i]
        if op in ("job", "failed_job"):
            caches = JobCaches(registry)
            frame = caches.translate(node, lambda i=i: FakeFrame(counters[i]))
            frame.execute()
            if not cached[i]:
                expected[i] += 1
            if op == "job":
                caches.commit()
                registered[i] = cached[i] = True
                frames[i] = frame
            else:
                caches.abandon()  # a new cache is dropped; an existing one keeps the blocks this job computed
                cached[i] = registered[i]
        elif op == "invalidate":
            registry.invalidate(node)
            registered[i] = cached[i] = False
        elif op == "close":
            registry.release_all()
            registered, cached = [False] * 3, [False] * 3
        elif op in ("lose_blocks", "forget") and cached[i]:
            # Behind the environment's back: blocks dropped (an executor lost), or the cache manager cleared.
            if op == "lose_blocks":
                frames[i].blocks = False
            else:
                frames[i].unpersist()
            cached[i] = False  # the next job recomputes it, and keeps it again; nothing told the environment
        assert [c[0] for c in counters] == expected
        assert [registry.is_cached(n) for n in nodes] == registered
    released = [f for i, f in frames.items() if not registry.is_cached(nodes[i])]
    assert all(f.level == NONE for f in released)  # every cache no longer registered was unpersisted
