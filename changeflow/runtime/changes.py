"""A change as runtimes hand it to the front ends: a row kind and the row's values."""

from __future__ import annotations

from dataclasses import dataclass

from changeflow.common.row_kind import RowKind


@dataclass(frozen=True)
class Change:
    kind: RowKind
    values: tuple
