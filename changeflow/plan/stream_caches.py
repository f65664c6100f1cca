"""The registry of the caches DataStream jobs created (FLIP-205).

``DataStream.cache()`` (:mod:`changeflow.datastream.cache`) wraps a stream in a
:class:`~changeflow.plan.stream_nodes.CacheNode`; the runtime keeps the node's
records after the first job that computes them and records its handle in the
environment's :class:`CacheRegistry` (:mod:`changeflow.runtime.spark.stream_cache`).
"""

from __future__ import annotations

from typing import Any

from changeflow.plan.stream_nodes import CacheNode, Node

__all__ = ["CacheNode", "CacheRegistry"]


class CacheRegistry:
    """The created caches of one environment: node id -> (node, the runtime's handle with ``release()``).

    >>> class Handle:
    ...     released = False
    ...     def release(self):
    ...         self.released = True
    >>> registry, node, handle = CacheRegistry(), CacheNode("CacheWrite", None), Handle()
    >>> registry.put(node, handle)
    >>> registry.get(node) is handle, registry.is_cached(node)
    (True, True)
    >>> registry.invalidate(node)
    >>> handle.released, registry.get(node)
    (True, None)
    """

    def __init__(self) -> None:
        self._entries: dict[int, tuple[Node, Any]] = {}

    def get(self, node: Node) -> Any:
        entry = self._entries.get(node.id)
        return None if entry is None else entry[1]

    def is_cached(self, node: Node) -> bool:
        return node.id in self._entries

    def cached_ids(self) -> frozenset[int]:
        return frozenset(self._entries)

    def put(self, node: Node, handle: Any) -> None:
        """Records ``node``'s cache as created (its job succeeded); an earlier handle is released."""
        old = self._entries.get(node.id)
        self._entries[node.id] = (node, handle)
        if old is not None and old[1] is not handle:
            old[1].release()

    def invalidate(self, node: Node) -> None:
        entry = self._entries.pop(node.id, None)
        if entry is not None:
            entry[1].release()

    def release_all(self) -> None:
        entries, self._entries = self._entries, {}
        for _, handle in entries.values():
            handle.release()

    def __len__(self) -> int:
        return len(self._entries)
