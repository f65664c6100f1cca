"""PyFlink's DataStream methods that place records or shape Flink's task graph.

In Flink ``rebalance``, ``rescale``, ``shuffle``, ``forward`` and ``partition_custom`` choose
which parallel instance of the next operator gets a record, and the chaining, slot and
buffer methods shape how operators share threads and network buffers. None of them changes
what a job computes: a keyed operator still sees every record of a key in order, and a
keyless one's results are the same records in an order Flink does not define either. On
Spark the query planner places records (a shuffle before each keyed operator), so these
calls are accepted and leave the job as it is. ``broadcast()`` without descriptors is
accepted the same way (Flink's copy per parallel instance of the next operator is not
made: docs/differences.md); with ``MapStateDescriptor`` s it starts the broadcast state
pattern (:mod:`.broadcast`). ``project`` is a map to the chosen tuple fields.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from changeflow.common.typeinfo import TupleTypeInfo, TypeInformation
from changeflow.datastream.functions import KeySelector, MapFunction, Partitioner

if TYPE_CHECKING:
    from changeflow.datastream.data_stream import DataStream

__all__ = ["Partitioner", "StreamHints", "TaskHints", "check_buffer_timeout", "check_max_parallelism"]

_MAX_PARALLELISM = 32768  # Flink's UPPER_BOUND_MAX_PARALLELISM


class TaskHints:
    """Flink's chaining, slot and description hints an operator and a sink both take: no effect on results."""

    def disable_chaining(self) -> "TaskHints":
        return self

    def slot_sharing_group(self, slot_sharing_group: Any) -> "TaskHints":
        return self

    def set_description(self, description: str) -> "TaskHints":
        return self

    def set_uid_hash(self, uid_hash: str) -> "TaskHints":
        return self


class StreamHints(TaskHints):
    """The partitioning, chaining and resource methods of PyFlink's ``DataStream`` (see the module)."""

    def _rerouted(self) -> "DataStream":
        """The same records, re-partitioned in Flink (a new stream over the same operator here)."""
        raise NotImplementedError  # DataStream and KeyedStream define it

    # --- partitioning: where records go, not what they are ----------------------------------
    def rebalance(self) -> "DataStream":
        return self._rerouted()

    def rescale(self) -> "DataStream":
        return self._rerouted()

    def shuffle(self) -> "DataStream":
        return self._rerouted()

    def forward(self) -> "DataStream":
        return self._rerouted()

    def partition_custom(self, partitioner: Any, key_selector: Callable | KeySelector) -> "DataStream":
        """Accepted: the user's partitioner would only pick the parallel instance each record goes to
        (PyFlink 2.3's own fails in a local job: "The partition number should be a positive value, got -1")."""
        if not (isinstance(partitioner, Partitioner) or callable(partitioner)):
            raise TypeError("Parameter partitioner should be type of Partitioner or a callable function.")
        if not (isinstance(key_selector, KeySelector) or callable(key_selector)):
            raise TypeError("Parameter key_selector should be type of KeySelector or a callable function.")
        return self._rerouted()

    def broadcast(self, broadcast_state_descriptor: Any = None, *other_broadcast_state_descriptors: Any) -> Any:
        """With ``MapStateDescriptor`` s: a ``BroadcastStream`` to ``connect`` a stream to (:mod:`.broadcast`).
        Without: the same records, as Flink's broadcast partitioning gives them to one parallel instance
        (docs/differences.md); a ``KeyedStream`` refuses both, as in Flink."""
        from changeflow.datastream.broadcast import broadcast_stream

        return broadcast_stream(self._rerouted(), (broadcast_state_descriptor, *other_broadcast_state_descriptors))

    # --- operator hints beyond a sink's (TaskHints): no effect on results ------------------
    def start_new_chain(self) -> "StreamHints":
        return self

    def set_max_parallelism(self, max_parallelism: int) -> "StreamHints":
        check_max_parallelism(max_parallelism)
        return self

    def set_buffer_timeout(self, timeout_millis: int) -> "StreamHints":
        check_buffer_timeout(timeout_millis)
        return self

    def force_non_parallel(self) -> "StreamHints":
        return self

    def get_execution_config(self) -> Any:
        """The environment's configuration (PyFlink gives an ``ExecutionConfig``; changeflow keeps one object)."""
        return self._env.get_config()  # type: ignore[attr-defined]

    # --- project: a map to tuple fields ------------------------------------------------------
    def project(self, *field_indexes: int) -> "DataStream":
        """The records' fields at ``field_indexes``, as tuples (a tuple stream only, as in Flink)."""
        type_info: TypeInformation = self.get_type()  # type: ignore[attr-defined]
        if not isinstance(type_info, TupleTypeInfo):
            raise TypeError("Only Tuple DataStreams can be projected.")
        fields = type_info.get_field_types()
        for index in field_indexes:
            if not 0 <= index < len(fields):
                raise IndexError(f"project(): no field {index} in {type_info!r}")
        projected = TupleTypeInfo([fields[i] for i in field_indexes])
        return self._stateless("map", _Project(field_indexes), projected, "Projection")  # type: ignore[attr-defined]


class _Project(MapFunction):
    """The map behind ``project``: a picklable class (a lambda would not ship to Spark's workers)."""

    def __init__(self, field_indexes: tuple[int, ...]) -> None:
        self.field_indexes = field_indexes

    def map(self, value: Any) -> tuple:
        return tuple(value[i] for i in self.field_indexes)

    def __repr__(self) -> str:
        return f"project{self.field_indexes}"


def check_max_parallelism(max_parallelism: int) -> None:
    if not 0 < max_parallelism <= _MAX_PARALLELISM:
        raise ValueError(f"maxParallelism is out of bounds 0 < maxParallelism <= {_MAX_PARALLELISM}. "
                         f"Found: {max_parallelism}")


def check_buffer_timeout(timeout_millis: int) -> None:
    if timeout_millis < -1:
        raise ValueError("Timeout of buffer must be non-negative or -1")
