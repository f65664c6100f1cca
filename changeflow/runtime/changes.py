"""What runtimes hand the front ends: changes (a row kind and the row's values) and a query's run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Protocol

from changeflow.common.change import Change

__all__ = ["Change", "LiveChanges", "QueryRun"]


class LiveChanges(Protocol):
    """A running query over unbounded input whose changes are read while it runs."""

    def changes(self) -> Iterator[Change]: ...

    def stop(self) -> None: ...


@dataclass
class QueryRun:
    """The outcome of running a query: a bounded query's changes, or a live query over unbounded input."""

    changes: list[Change] = field(default_factory=list)
    live: LiveChanges | None = None
