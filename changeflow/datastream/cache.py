"""Cached intermediate results of DataStream jobs (FLIP-205): ``DataStream.cache()`` and ``CachedDataStream``.

``stream.cache()`` marks ``stream``'s records to be kept after the first job
that computes them; every later job of the same environment reads them
instead of recomputing ``stream``'s inputs::

    >>> from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
    >>> env = StreamExecutionEnvironment.get_execution_environment()
    >>> _ = env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    >>> words = env.from_collection(["a b", "c"]).flat_map(str.split).cache()
    >>> type(words).__name__, env._caches.is_cached(words._node)
    ('CachedDataStream', False)

The cache is created lazily, by the first job (``execute()``,
``execute_and_collect()``) that computes it, and is immutable from then on.
``CachedDataStream.invalidate()`` releases it (a later job recomputes and
caches it again); ``StreamExecutionEnvironment.close()`` releases every cache
of the environment. How the records are kept, and how a lost cache is
recomputed, is the runtime's business (:mod:`changeflow.runtime.spark.stream_cache`).

The seed's rules, as Flink applies them:

- only bounded (batch) jobs cache: in STREAMING mode ``cache()`` raises;
- only a physical operation can be cached: ``key_by`` and ``union`` only say
  how records are partitioned or merged, so ``KeyedStream.cache()`` and a
  union's ``cache()`` raise, naming what to cache instead;
- a reader of the cache must not assume how it is partitioned.

This module imports no Spark; :class:`CacheRegistry` keeps whatever handle
the runtime stores (an object with ``release()``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

from changeflow.datastream import graph
from changeflow.datastream.data_stream import DataStream, KeyedStream
from changeflow.plan.stream_caches import CacheNode, CacheRegistry
from changeflow.plan.stream_walks import graph_inputs

if TYPE_CHECKING:
    from changeflow.datastream.environment import StreamExecutionEnvironment

__all__ = ["CacheNode", "CacheRegistry", "CachedDataStream", "cache"]

# Flink's operator names of a cache's producer and consumer (CacheTransformationTranslator).
CACHE_WRITE = "CacheWrite"
CACHE_READ = "CacheRead"


class CachedDataStream(DataStream):
    """A :class:`DataStream` whose records are cached by the first job computing them (PyFlink's name).

    Later jobs of the same environment read the cache instead of recomputing
    the stream's inputs; :meth:`invalidate` releases it. As in PyFlink, the
    cache's operator cannot be renamed or re-parallelised: it is the cached
    operation's, which was set before ``cache()``.
    """

    def invalidate(self) -> None:
        """Releases the cached records; a later job using this stream recomputes and caches them again."""
        self._env._caches.invalidate(self._node)

    def cache(self) -> "CachedDataStream":
        """Already cached: this stream itself."""
        return self

    def _unsupported(self, what: str):
        raise RuntimeError(f"{what} for CachedDataStream is not supported: set it on the operation before cache()")

    def set_parallelism(self, parallelism: int) -> "DataStream":
        self._unsupported("Set parallelism")

    def name(self, name: str) -> "DataStream":
        self._unsupported("Set name")

    def get_name(self) -> str:
        self._unsupported("Get name")

    def uid(self, uid: str) -> "DataStream":
        self._unsupported("Set uid")


def cache(stream: DataStream) -> CachedDataStream:
    """``stream.cache()``: checks the seed's rules and wraps ``stream`` in a :class:`CacheNode`."""
    if isinstance(stream, KeyedStream):
        raise RuntimeError(
            "Cache for KeyedStream is not supported: key_by() is a logical transformation (it only says how "
            "records are partitioned), so caching it would cache its input; cache the stream before key_by(), "
            "or the result of an operation after it (e.g. reduce())")
    if isinstance(stream._node, graph.UnionNode):
        raise RuntimeError(
            "Cache for a union is not supported: union() is a logical transformation (it only merges streams); "
            "cache its input streams, or the result of an operation after it")
    check_batch(stream._env, [stream._node])
    node = CacheNode(CACHE_WRITE, stream.get_type(), input=stream._node)
    return CachedDataStream(stream._env, node)


def check_batch(env: "StreamExecutionEnvironment", nodes: list[graph.Node]) -> None:
    """Raises unless a job over ``nodes`` runs in batch mode (caching needs a bounded job's complete result)."""
    if env.is_streaming(nodes):
        raise RuntimeError(
            f"DataStream.cache() is supported in batch mode only (RuntimeExecutionMode.BATCH, or AUTOMATIC with "
            f"bounded sources), but this job runs in streaming mode (RuntimeExecutionMode.{env._mode.name}): "
            "a cache holds the complete intermediate result of a bounded job for later jobs to read (FLIP-205), "
            "and a streaming job's result is never complete")


def cache_nodes(roots: list[graph.Node]) -> list[CacheNode]:
    """The cache nodes under ``roots``, each once."""
    seen: dict[int, graph.Node] = {}
    found: list[CacheNode] = []
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen[n.id] = n
        if isinstance(n, CacheNode):
            found.append(n)
        stack.extend(graph_inputs(n))  # a Table read as a stream is a source here
    return found


def plan_entry(node: CacheNode, cached: bool, visit: Callable[[graph.Node], int], numbers: Iterator[int],
               nodes: list[dict], parallelism: int) -> int:
    """Adds ``node`` to an execution plan as Flink translates it; returns the plan id its consumers read.

    Not yet cached, the job computes the input and a ``CacheWrite`` operator
    keeps its records, while consumers read the input directly. Cached, a
    ``CacheRead`` source replaces the input and everything under it: none of it runs.
    """
    if cached:
        number = next(numbers)
        nodes.append({"id": number, "type": CACHE_READ, "pact": "Data Source", "contents": CACHE_READ,
                      "parallelism": parallelism})
        return number
    upstream = visit(node.input)
    nodes.append({"id": next(numbers), "type": CACHE_WRITE, "pact": "Operator", "contents": CACHE_WRITE,
                  "parallelism": parallelism,
                  "predecessors": [{"id": upstream, "ship_strategy": "FORWARD", "side": "second"}]})
    return upstream
