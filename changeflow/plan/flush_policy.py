"""The output flush interval's policy (FLIP-365): how a buffering operator flushes.

``execution.max-flush-interval`` (and ``execution.flush.memory-buffer-only`` /
``-max-entries``) give a :class:`FlushPolicy`. The planner puts it on the
operators that buffer (:mod:`changeflow.plan.rules.buffering`); the Spark
runtime's flushers (``runtime/spark/flush.py``) carry it out. Both front ends
(Table and DataStream) read a job's policy with :func:`flush_policy`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from changeflow.config.durations import to_millis


@dataclass(frozen=True)
class FlushPolicy:
    """How a buffering operator flushes: ``interval_ms``, or in memory only with ``max_entries``."""

    interval_ms: int
    memory_only: bool = False
    max_entries: int = 10_000

    def __post_init__(self) -> None:
        if self.interval_ms <= 0:
            raise ValueError(f"execution.max-flush-interval must be positive, got {self.interval_ms} ms")
        if self.max_entries < 1:
            raise ValueError(f"execution.flush.memory-buffer-max-entries must be at least 1, got {self.max_entries}")

    def __str__(self) -> str:
        return f"{self.interval_ms}ms" + (" memory-only" if self.memory_only else "")

    def epoch(self, now_ms: int) -> int:
        """The interval ``now_ms`` falls in (intervals are aligned to multiples of the interval)."""
        return now_ms // self.interval_ms


def flushes_from_timers(policy: FlushPolicy | None) -> bool:
    """Whether buffers outlive a micro-batch, in state, flushed from timers (an interval, not memory-only).

    >>> flushes_from_timers(FlushPolicy(5000)), flushes_from_timers(FlushPolicy(5000, memory_only=True))
    (True, False)
    >>> flushes_from_timers(None)
    False
    """
    return policy is not None and not policy.memory_only


def flush_policy(configuration: Any) -> FlushPolicy | None:
    """The flush policy a job's configuration asks for, or None when ``execution.max-flush-interval`` is unset.

    >>> from changeflow.common.configuration import Configuration
    >>> conf = Configuration()
    >>> flush_policy(conf) is None
    True
    >>> _ = conf.set_string("execution.max-flush-interval", "5 s")
    >>> flush_policy(conf)
    FlushPolicy(interval_ms=5000, memory_only=False, max_entries=10000)
    """
    interval = configuration.get("execution.max-flush-interval")
    if interval is None:
        return None
    return FlushPolicy(interval_ms=to_millis(interval),
                       memory_only=bool(configuration.get("execution.flush.memory-buffer-only")),
                       max_entries=int(configuration.get("execution.flush.memory-buffer-max-entries")))


__all__ = ["FlushPolicy", "flush_policy", "flushes_from_timers"]
