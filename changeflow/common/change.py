"""A change of a changelog as it crosses layers: a row kind and the row's values.

Runtimes hand changes to the front ends (query results) and to sink connectors;
it lives here, below all of them, so none of them imports another for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.common.row_kind import RowKind

__all__ = ["Change"]


@dataclass(frozen=True)
class Change:
    kind: RowKind
    values: tuple
