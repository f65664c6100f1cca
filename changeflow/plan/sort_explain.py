"""EXPLAIN's line for a batch :class:`~changeflow.plan.nodes.Sort`, named as Flink's batch operators."""

from __future__ import annotations

from changeflow.plan.nodes import Sort


def describe_sort(node: Sort) -> str:
    """``Sort(orderBy=[..])``, ``SortLimit(orderBy=[..], offset=[o], fetch=[n], global=[true])`` or ``Limit(..)``."""
    order = ", ".join(f"{c} {'ASC' if asc else 'DESC'}" for c, asc, _ in node.order_by)
    if node.fetch is None and node.offset == 0:
        return f"Sort(orderBy=[{order}])"
    limit = f"offset=[{node.offset}], fetch=[{'unlimited' if node.fetch is None else node.fetch}], global=[true]"
    return f"SortLimit(orderBy=[{order}], {limit})" if order else f"Limit({limit})"
